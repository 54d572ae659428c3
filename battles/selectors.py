"""Reads of text battles. Everything shown before the vote goes through here,
so blindness has one place to hold: identities only appear once a vote exists."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Prefetch

from arena.inputs import parse_uuid
from arena.modes import Figure
from arena.queries import one_or_none
from arena.steps import StepStatus, failed_for_good
from battles.models import (
    MAX_MESSAGES,
    Battle,
    Position,
    Response,
    Share,
    Thread,
    Turn,
    Vote,
    position_of,
)
from battles.streams import response_meta


def _battle_queryset():
    return Battle.objects.select_related("model_a", "model_b", "vote", "share").prefetch_related(
        Prefetch("turns", queryset=Turn.objects.prefetch_related("responses"))
    )


def battle_get(*, battle_id) -> Battle:
    return _battle_queryset().get(pk=battle_id)


def battle_visible(*, battle_id, session_key: str | None) -> Battle | None:
    """The battle if this visitor may see it: its owner, or anyone once it is voted."""
    battle_id = parse_uuid(battle_id)
    if battle_id is None:
        return None
    battle = one_or_none(_battle_queryset().filter(pk=battle_id))
    if battle is None:
        return None
    if session_key and battle.session_key == session_key:
        return battle
    return battle if battle_vote_of(battle) is not None else None


def battle_owned(*, battle_id, session_key: str | None, whole: bool = False) -> Battle | None:
    """The battle if ``session_key`` owns it, else None. With its two models only (what a
    write needs before its service locks the battle and reads the rest), or ``whole`` as a
    page shows it."""
    battle_id = parse_uuid(battle_id)
    if battle_id is None or not session_key:
        return None
    battles = _battle_queryset() if whole else Battle.objects.select_related("model_a",
                                                                            "model_b")
    return one_or_none(battles.filter(pk=battle_id, session_key=session_key))


def battle_vote_of(battle: Battle) -> Vote | None:
    try:
        return battle.vote
    except Vote.DoesNotExist:
        return None


def battle_share_of(battle: Battle) -> Share | None:
    try:
        return battle.share
    except Share.DoesNotExist:
        return None


def share_get(*, token: str) -> Share | None:
    """A shared battle's share, by its link's token; None once revoked (or never voted)."""
    if not token or len(token) > Share._meta.get_field("token").max_length:
        return None
    return one_or_none(Share.objects.filter(token=token, battle__vote__isnull=False))


def battle_list_for_session(*, session_key: str | None, limit: int = 50) -> list[Battle]:
    if not session_key:
        return []
    return list(
        Battle.objects.filter(session_key=session_key)
        .select_related("vote")
        .annotate(message_count=Count("turns"))
        .order_by("-last_active_at")[:limit]
    )


def thread_owned(*, thread_id, session_key: str | None) -> Thread | None:
    """The visitor's own session (thread); nobody else's, even voted."""
    thread_id = parse_uuid(thread_id)
    if thread_id is None or not session_key:
        return None
    return one_or_none(Thread.objects.filter(pk=thread_id, session_key=session_key))


def thread_list_for_session(*, session_key: str | None, limit: int = 50,
                            offset: int = 0) -> tuple[list[Thread], int]:
    """A page of the visitor's sessions, latest activity first, each with ``battle_count``;
    and how many there are in all."""
    if not session_key:
        return [], 0
    threads = Thread.objects.filter(session_key=session_key)
    page = threads.annotate(battle_count=Count("battles")).order_by(
        "-last_active_at", "-id")[offset:offset + limit]
    return list(page), threads.count()


def thread_battles(*, thread: Thread) -> list[Battle]:
    """The session's battles, first to last, with everything a view of each needs."""
    return list(_battle_queryset().filter(thread=thread).order_by("created_at", "id"))


def thread_battle_summaries(*, thread: Thread) -> list[Battle]:
    """The session's battles, first to last, each with ``message_count`` and its vote."""
    return list(Battle.objects.filter(thread=thread).select_related("vote")
                .annotate(message_count=Count("turns")).order_by("created_at", "id"))


def battle_streaming_responses(*, battle: Battle) -> list[tuple[str, dict]]:
    """(stream id, stream meta) of answers still being written, for the socket's catch-up."""
    return [
        (str(response.id), response_meta(response, battle.position_of(response.slot)))
        for turn in battle.turns.all()
        for response in turn.responses.all()
        if not response.is_finished
    ]


@dataclass(frozen=True)
class SideView:
    position: str
    response: Response


@dataclass(frozen=True)
class TurnView:
    turn: Turn
    left: Response
    right: Response

    @property
    def sides(self) -> list[SideView]:
        return [SideView(Position.LEFT, self.left), SideView(Position.RIGHT, self.right)]


@dataclass(frozen=True)
class BattleView:
    battle: Battle
    turns: list[TurnView]
    vote: Vote | None

    @property
    def message_count(self) -> int:
        return len(self.turns)

    @property
    def max_messages(self) -> int:
        return MAX_MESSAGES

    @property
    def all_done(self) -> bool:
        return all(
            side.response.status == StepStatus.DONE for t in self.turns for side in t.sides
        )

    @property
    def failed(self) -> bool:
        """Every answer finished, and at least one failed for good (no retry running)."""
        return failed_for_good(side.response.status for t in self.turns for side in t.sides)

    @property
    def can_vote(self) -> bool:
        return self.vote is None and self.all_done

    @property
    def can_vote_both_bad(self) -> bool:
        """A failed answer still leaves the person a verdict: both are bad."""
        return self.vote is None and (self.all_done or self.failed)

    @property
    def regenerations_left(self) -> int:
        """How many more times both answers of the latest message may be written again."""
        if not self.turns:
            return 0
        return max(settings.ARENA_BATTLE_REGENERATIONS - self.turns[-1].turn.regenerations, 0)

    @property
    def can_regenerate(self) -> bool:
        """Unvoted, both latest answers finished (done, stopped or failed), and a round left."""
        latest = self.turns[-1].sides if self.turns else []
        return (self.vote is None and bool(latest) and self.regenerations_left > 0
                and all(side.response.is_finished for side in latest))

    @property
    def share(self) -> Share | None:
        return battle_share_of(self.battle)

    @property
    def can_follow_up(self) -> bool:
        return self.can_vote and self.message_count < MAX_MESSAGES

    @property
    def revealed(self) -> dict | None:
        """Who was who, only once the vote exists."""
        if self.vote is None:
            return None
        battle = self.battle
        left = battle.model_a if battle.model_a_position == Position.LEFT else battle.model_b
        right = battle.model_b if left == battle.model_a else battle.model_a
        return {"left": left, "right": right}

    @property
    def totals(self) -> dict[str, dict]:
        return battle_totals(self)


@dataclass(frozen=True)
class TurnAnswer:
    """One answer of a turn as the JSON API shows it (no model objects: read on every wait)."""

    position: str
    status: str
    error: str
    text: str
    cut_at_limit: bool
    stopped: bool
    session_id: str  # the battle's session (Thread)


def turn_answers(*, turn_id) -> list[TurnAnswer]:
    """One turn's answers by screen position, left first (one query)."""
    rows = (Response.objects.filter(turn_id=turn_id).order_by()
            .values_list("slot", "status", "error", "text", "cut_at_limit", "stopped",
                         "turn__battle__model_a_position", "turn__battle__thread_id"))
    answers = [TurnAnswer(position_of(slot, a_position), status, error, text, cut, stopped,
                          str(thread_id))
               for slot, status, error, text, cut, stopped, a_position, thread_id in rows]
    return sorted(answers, key=lambda answer: answer.position != Position.LEFT)


def battle_view(*, battle: Battle) -> BattleView:
    turns = []
    for turn in battle.turns.all():
        by_slot = {r.slot: r for r in turn.responses.all()}
        turns.append(
            TurnView(
                turn=turn,
                left=by_slot[battle.slot_at(Position.LEFT)],
                right=by_slot[battle.slot_at(Position.RIGHT)],
            )
        )
    return BattleView(battle=battle, turns=turns, vote=battle_vote_of(battle))


def battle_totals(view: BattleView) -> dict[str, dict]:
    """Per side after the vote: total latency and tokens over every turn."""
    totals = {}
    for position in (Position.LEFT, Position.RIGHT):
        responses = [getattr(t, position) for t in view.turns]
        totals[position] = {
            "latency_ms": sum(r.latency_ms or 0 for r in responses),
            "output_tokens": sum(r.output_tokens or 0 for r in responses),
            "input_tokens": sum(r.input_tokens or 0 for r in responses),
        }
    return totals


def home_figures() -> list[Figure]:
    return [Figure("battles fought", Battle.objects.count()),
            Figure("votes cast", Vote.objects.count())]


def shared_battle_view(*, token: str) -> tuple[Share, BattleView] | None:
    """What a share link shows, for the public page, its card and ``GET /api/shares/{token}``:
    the share and the battle's view; None for an unknown or revoked link."""
    share = share_get(token=token)
    if share is None:
        return None
    return share, battle_view(battle=battle_get(battle_id=share.battle_id))
