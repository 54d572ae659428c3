"""Sharing a voted battle: a public, read-only link with an image card.

The link carries a random token made when the person presses Share, not the battle's id, so
it is never derived from anything else the arena shows, and revoking it (:func:`battle_unshare`)
ends it for good; sharing again makes a new one. Only a voted battle can be shared: before the
vote the battle is blind, and a share shows who was who.
"""

from __future__ import annotations

import logging
import secrets

from django.db import transaction
from django.urls import reverse

from arena.errors import RuleError
from battles.models import Battle, Share, Vote

logger = logging.getLogger(__name__)

SHARE_NOT_VOTED = "Only a voted battle can be shared: vote first, then share it."
SHARE_NOT_FOUND = ("This battle has no public link: it was never shared, or its link was "
                   "revoked.")
TOKEN_BYTES = 16  # 128 random bits: 22 URL-safe characters


def battle_share(*, battle: Battle) -> Share:
    """The voted battle's public link: made by the first call, the same one after."""
    with transaction.atomic():
        battle = Battle.objects.select_for_update().get(pk=battle.pk)
        if not Vote.objects.filter(battle=battle).exists():
            raise RuleError(SHARE_NOT_VOTED, status=409)
        share, made = Share.objects.get_or_create(
            battle=battle, defaults={"token": secrets.token_urlsafe(TOKEN_BYTES)})
    if made:
        logger.info("battle %s shared", battle.id)
    return share


def battle_unshare(*, battle: Battle) -> None:
    """Revoke the battle's public link: its page, card and JSON answer 404 from now on."""
    deleted, _ = Share.objects.filter(battle=battle).delete()
    if not deleted:
        raise RuleError(SHARE_NOT_FOUND, status=404)
    logger.info("battle %s no longer shared", battle.id)


def share_paths(share: Share) -> dict[str, str]:
    """The share's page and card, as paths (an interface makes them absolute)."""
    return {"url": reverse("battles:shared", args=[share.token]),
            "image_url": reverse("battles:shared_card", args=[share.token])}
