"""Test helpers. Fake LLM provider servers: :mod:`arena.testing.fake_providers`; their pytest
fixtures: :mod:`arena.testing.fixtures`. Kept import-free so pytest plugins here load fast."""
