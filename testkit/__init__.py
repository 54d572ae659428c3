"""Test helpers. Fake LLM provider servers: :mod:`testkit.fake_providers`; their pytest
fixtures: :mod:`testkit.fixtures`. Kept import-free so pytest plugins here load fast."""
