"""Deleting a person's account and personal data (``POST /me/delete``, ``DELETE /api/me``),
and cleaning what expired anonymous sessions left behind (the daily session clean-up).

What is personal, and what becomes of it:

* the account: the user, its e-mail addresses, its provider accounts, its profile, API
  tokens and sign-ins, and every session it signed in with — deleted;
* what the person typed or said: a text battle's prompts, titles and answers (answers quote
  and follow the prompt), a panel's question and the person's clarifications, a motion they
  proposed that staff never took into the public pool, a voice battle's recordings and
  transcripts — blanked (:data:`REMOVED`), the rows kept;
* their contests and votes — kept as anonymised records: every mode's rows under the
  person's key move to a fresh random key that no session, account or token holds
  (:func:`arena.visitor_merge.visitor_merge`). A vote keeps its pair, result, style counts,
  categories and whether it counts, which is all a rating run reads, so the public boards
  computed before and after are the same.

An anonymous visitor's session lasts ``SESSION_COOKIE_AGE``; once Django's ``clearsessions``
has deleted it, its rows are owned by a key nobody holds. :func:`orphans_clean` (run by the
same daily task) blanks what such a visitor typed in contests nobody can open any more (a
text battle never voted on, a private panel, a voice battle never voted on), and moves the
rest to a fresh key, as a deletion does; rows touched within ``SESSION_COOKIE_AGE`` are left.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from accounts.models import Profile, new_visitor_key
from accounts.services import profile_of, sign_out_everywhere
from agents.models import AgentBattle, AgentConversation, recordings_dir
from arena.modes import counted_votes
from arena.visitor_merge import session_fields, visitor_merge
from battles.models import Battle, Response, SupersededAnswer, Thread, Turn
from debates.models import Topic
from panels.models import ClarificationRound, Panel

logger = logging.getLogger(__name__)

REMOVED = "[removed]"
# The start of a key that anonymised records stand under: no session key (32 letters and
# digits) or account key looks like it, so such rows are never taken for an orphan again.
ANONYMISED = "anon:"
ISSUED_KEY = r"^[a-z0-9]{32}$"  # a session's key (arena.sessions) or an account's (Profile)
BANNED = "the voter was banned (the account was deleted since)"
CONFIRMATION = "delete my account"  # what the form's confirmation field must say
NOT_CONFIRMED = f'Type "{CONFIRMATION}" to confirm: the account cannot be restored.'


def anonymous_key() -> str:
    return ANONYMISED + new_visitor_key()


def _recordings_remove(conversations) -> None:
    base = recordings_dir()
    for user_path, agent_path in conversations.values_list("user_audio_path",
                                                           "agent_audio_path"):
        for path in (user_path, agent_path):
            if path:
                (base / path).unlink(missing_ok=True)
    conversations.update(transcript_full="", turns_json=[], tool_calls_json=[],
                         user_audio_path="", agent_audio_path="")


def personal_text_blank(*, key: str, unvoted_only: bool = False) -> None:
    """Blank what the visitor typed or said in their contests (all of them, or only those
    nobody else can open: never voted on, private)."""
    battles = Battle.objects.filter(session_key=key)
    voice = AgentBattle.objects.filter(session_key=key)
    panels = Panel.objects.filter(session_key=key)
    if unvoted_only:
        battles = battles.filter(vote__isnull=True)
        voice = voice.filter(vote__isnull=True)
        panels = panels.filter(is_public=False)
    Turn.objects.filter(battle__in=battles).update(prompt=REMOVED)
    Response.objects.filter(turn__battle__in=battles).update(text="")
    SupersededAnswer.objects.filter(turn__battle__in=battles).update(text="")
    battles.update(title=REMOVED)
    threads = Thread.objects.filter(session_key=key)
    if unvoted_only:
        threads = threads.exclude(battles__vote__isnull=False)
    threads.update(title=REMOVED)
    ClarificationRound.objects.filter(panel__in=panels).update(
        question=REMOVED, person_answer="", refined_question="")
    panels.update(question=REMOVED, original_question=REMOVED)
    if not unvoted_only:
        Topic.objects.filter(proposed_by=key, is_approved=False).update(motion=REMOVED)
    _recordings_remove(AgentConversation.objects.filter(battle__in=voice))


def _banned_votes_mark(key: str) -> None:
    """A banned person's votes stop counting (kept, marked), as the ban's next rating run
    would do: once the account is gone nothing would say whose they were."""
    for votes in counted_votes():
        rows = votes.model.objects.filter(**{votes.session: key}, counts_for_rating=True)
        changed = list(rows.values_list("pk", flat=True))
        rows.update(counts_for_rating=False, exclusion_reason=BANNED)
        if changed and votes.recounted:
            votes.recounted(votes.model.objects.filter(pk__in=changed))


def account_delete(*, user) -> str:
    """Delete the account and its personal data (see the module's docstring); the fresh key
    its anonymised records now stand under (kept by no one: for the tests and the log)."""
    profile = profile_of(user)
    key, fresh = profile.visitor_key, anonymous_key()
    with transaction.atomic():
        if profile.banned:
            _banned_votes_mark(key)
        personal_text_blank(key=key)
        moved = visitor_merge(key, fresh)
        sign_out_everywhere(user)
        user.delete()  # e-mail addresses, provider accounts, profile, tokens, sign-ins
    logger.info("an account was deleted: %d rows anonymised", moved)
    return fresh




def orphan_keys(*, now=None) -> set[str]:
    """Keys owning rows that no live session and no account holds, whose newest row is older
    than ``SESSION_COOKIE_AGE``."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.SESSION_COOKIE_AGE)
    live = Session.objects.filter(expire_date__gt=now).values("session_key")
    accounts = Profile.objects.values("visitor_key")
    keys: set[str] = set()
    recent: set[str] = set()
    for model, field in session_fields():
        # Only keys a session was issued with: not the demo battles' own "demo", nor an
        # empty key (a command's debate), nor records already anonymised.
        rows = (model.objects.filter(**{f"{field}__regex": ISSUED_KEY})
                .exclude(**{f"{field}__in": live}).exclude(**{f"{field}__in": accounts}))
        names = {f.name for f in model._meta.get_fields()}
        stamp = next((n for n in ("last_active_at", "updated_at", "created_at") if n in names),
                     None)
        if stamp is None:
            keys |= set(rows.values_list(field, flat=True).distinct())
            continue
        for owner, newest in rows.values_list(field).annotate(newest=Max(stamp)).order_by():
            keys.add(owner)
            if newest >= cutoff:
                recent.add(owner)
    return keys - recent


def orphans_clean(*, now=None) -> int:
    """Blank what expired anonymous visitors typed in contests nobody can open, and move
    their rows to fresh keys; how many visitors' rows were cleaned."""
    keys = orphan_keys(now=now)
    for key in keys:
        with transaction.atomic():
            personal_text_blank(key=key, unvoted_only=True)
            visitor_merge(key, anonymous_key())
    if keys:
        logger.info("rows of %d expired anonymous visitors cleaned and anonymised", len(keys))
    return len(keys)
