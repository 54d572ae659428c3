"""The ids a release publishes: opaque keyed hashes of a contest's or a vote's real id, never
the id itself.

A real id opens the contest (a voted battle at ``/battle/<id>/``, an unlisted debate or a
private panel by its id) and with it text whose voter did not let it be published, or a
still-blind debate's models. A keyed hash (HMAC under ``SECRET_KEY``) is the same in every
release, so the rows of one contest group together across releases, and nobody without the
key can turn it back into the id or guess it from one.
"""

from __future__ import annotations

from django.utils.crypto import salted_hmac

CONTEST_SALT = "arena.releases.contest"
VOTE_SALT = "arena.releases.vote"
LENGTH = 20  # hex digits: 80 bits, far beyond any arena's number of contests


def contest_key(mode: str, pk) -> str:
    """The published ``contest_id`` of the contest ``pk`` of ``mode``."""
    return _key(CONTEST_SALT, mode, pk)


def vote_key(mode: str, pk) -> str:
    """The published ``id`` of the vote (or panel outcome) ``pk`` of ``mode``."""
    return _key(VOTE_SALT, mode, pk)


def _key(salt: str, mode: str, pk) -> str:
    return salted_hmac(salt, f"{mode}:{pk}", algorithm="sha256").hexdigest()[:LENGTH]
