"""Tests of the whole arena (every mode at once): hostile input, faults, load checks."""

from battles.tests.conftest import two_models  # noqa: F401 - the fixture, shared

