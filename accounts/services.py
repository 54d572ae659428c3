"""Accounts' rules: the anonymous visitor's work moved to the account at sign-in, and signing
out everywhere."""

from __future__ import annotations

import logging

from django.contrib.sessions.models import Session
from django.db import transaction
from django.http import HttpRequest

from accounts.bans import account_ban_sync
from accounts.models import Profile, SignIn
from arena.sessions import ACCOUNT_KEY
from arena.visitor_merge import visitor_merge

logger = logging.getLogger(__name__)


def profile_of(user) -> Profile:
    profile, _ = Profile.objects.get_or_create(user=user)
    return profile


def account_signed_in(request: HttpRequest, user) -> int:
    """After Django's ``login`` (which gave the session a new key, its rows moved with it):
    what the visitor did anonymously moves to the account's key, in one transaction, and the
    session names that key from now on; a ban that came with those rows is the account's now.
    Idempotent; how many rows moved."""
    session = request.session
    with transaction.atomic():
        profile = profile_of(user)
        anonymous = session.session_key if not session.get(ACCOUNT_KEY) else None
        moved = visitor_merge(anonymous, profile.visitor_key) if anonymous else 0
        account_ban_sync(user=user)
        session[ACCOUNT_KEY] = profile.visitor_key
        session.save()
        SignIn.objects.create(user=user, session_key=session.session_key)
    if moved:
        logger.info("account %s: %d rows of the anonymous visitor moved to it", user.pk, moved)
    return moved


def sign_out_everywhere(user) -> int:
    """End every session the person signed in with; how many."""
    keys = list(SignIn.objects.filter(user=user).values_list("session_key", flat=True))
    with transaction.atomic():
        ended, _ = Session.objects.filter(session_key__in=keys).delete()
        SignIn.objects.filter(user=user).delete()
    return ended
