"""Tests of the whole arena (every mode at once): hostile input, faults, load checks."""

import pytest
from django.conf import settings
from django.test import Client

from battles.tests.conftest import two_models  # noqa: F401 - the fixture, shared
from testkit.visitors import visitor_session_key


@pytest.fixture
def visitor(two_models) -> tuple[Client, str]:  # noqa: F811 - the fixture above
    """A visitor with a session of the server's own, whose browser checks nothing."""
    key = visitor_session_key()
    client = Client(enforce_csrf_checks=True)
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    return client, key
