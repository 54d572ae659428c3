"""The privacy page, and the daily clean-up of what expired anonymous sessions left behind."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from accounts.deletion import ANONYMISED, REMOVED, orphan_keys
from accounts.tests.me_support import models, signed_in_client, voted_battle
from arena.celery import app
from arena.tasks import sessions_clear_expired
from battles.models import Battle, Thread, Turn, Vote
from battles.tests.factories import answered_battle
from releases.tests.support import visitor

pytestmark = pytest.mark.django_db
LONG_AGO = timezone.now() - timedelta(seconds=settings.SESSION_COOKIE_AGE + 86400)


def test_the_privacy_page_says_what_is_kept_for_how_long_and_how_to_export_and_delete():
    page = Client().get("/privacy/")
    assert page.status_code == 200
    html = page.content.decode()
    days = f"{settings.SESSION_COOKIE_AGE // 86400} days"
    for said in ("e-mail address", "account id", "votes", days, 'href="/me/export"',
                 "DELETE /api/me", "daily clean-up"):
        assert said in html, said
    assert 'href="/privacy/"' in Client().get("/").content.decode()  # the footer


def expired_visitor(client: Client) -> str:
    """A visitor whose session has expired, with an old voted and an old unvoted battle."""
    key = visitor(client)
    a, b = models(2)
    voted = voted_battle(key, a, b, prompt="Voted long ago")
    unvoted = answered_battle(session_key=key, prompt="Typed long ago, never voted")
    Battle.objects.filter(session_key=key).update(created_at=LONG_AGO, last_active_at=LONG_AGO)
    Thread.objects.filter(session_key=key).update(created_at=LONG_AGO, last_active_at=LONG_AGO)
    Vote.objects.filter(session_key=key).update(created_at=LONG_AGO)
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(1))
    return key, voted, unvoted


def test_the_daily_session_clean_up_anonymises_what_expired_visitors_left():
    assert (settings.CELERY_BEAT_SCHEDULE["arena-sessions-clear-expired"]["task"]
            == sessions_clear_expired.name)
    gone, voted, unvoted = expired_visitor(Client())
    live_client = Client()
    live = visitor(live_client)
    Battle.objects.filter(pk=answered_battle(session_key=live, prompt="Still mine").pk).update(
        created_at=LONG_AGO, last_active_at=LONG_AGO)  # old, but the session lives on
    _user, _client, account = signed_in_client()
    answered_battle(session_key=account, prompt="An account's own")
    assert orphan_keys() == {gone}

    app.tasks[sessions_clear_expired.name].apply()

    assert not Session.objects.filter(session_key=gone).exists()
    assert not Battle.objects.filter(session_key=gone).exists()
    new_key = Battle.objects.get(pk=voted.pk).session_key
    assert new_key.startswith(ANONYMISED)
    assert Vote.objects.get(battle=voted).session_key == new_key
    # A voted battle is public: it stays as it was; one nobody can open any more is blanked.
    assert Turn.objects.get(battle=voted).prompt == "Voted long ago"
    assert Turn.objects.get(battle=unvoted).prompt == REMOVED
    assert Battle.objects.get(pk=unvoted.pk).session_key == new_key
    # The living: untouched.
    assert Turn.objects.get(prompt="Still mine").battle.session_key == live
    assert Turn.objects.get(prompt="An account's own").battle.session_key == account
    # Anonymised rows are never taken for an orphan again.
    assert orphan_keys() == set()


def test_an_expired_visitor_active_within_the_session_age_is_left_for_now():
    client = Client()
    key = visitor(client)
    answered_battle(session_key=key, prompt="Yesterday")
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(1))
    assert orphan_keys() == set()


def test_rows_under_keys_no_session_was_issued_with_are_never_orphans():
    a, b = models(2)
    for key in ("demo", ANONYMISED + "x" * 32):
        voted_battle(key, a, b)
    Battle.objects.update(created_at=LONG_AGO, last_active_at=LONG_AGO)
    Thread.objects.update(created_at=LONG_AGO, last_active_at=LONG_AGO)
    Vote.objects.update(created_at=LONG_AGO)
    assert orphan_keys() == set()
