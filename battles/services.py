"""Writes of text battles: create, follow up, retry a side, regenerate both, stop, vote.

Every rule a person can break has a message constant here; views, the API and
the tests use the same constants.
"""

from __future__ import annotations

import logging
import random

from django.conf import settings
from django.db import transaction
from django.template.defaultfilters import pluralize
from django.utils import timezone

from arena.contests.leaks import leaked_identity
from arena.contests.voting import require_choice, vote_once, vote_outcome
from arena.errors import RuleError
from arena.inputs import check_storable, clean_text, parse_uuid
from arena.llm import estimate_tokens
from arena.llm.context import BYTES_PER_TOKEN, estimate_input_tokens, fits, input_budget
from arena.ratelimit import provider_budget
from arena.selectors import model_list_available
from arena.steps import StepStatus, failed_for_good, step_enqueue
from arena.streaming import stop_stream_sync
from battles import rows
from battles.categories import classify_after_vote, tag_multi_turn
from battles.integrity import COUNTED_VOTES
from battles.models import (
    MAX_MESSAGES,
    Battle,
    Position,
    Response,
    Slot,
    SupersededAnswer,
    Thread,
    Turn,
    Vote,
    VoteChoice,
)
from battles.selection import battle_pair_pick
from battles.signals import battle_vote_recorded
from battles.streams import announce_stopped

logger = logging.getLogger(__name__)

PROMPT_EMPTY = "Write a prompt first: it cannot be empty."
PROMPT_TOO_LONG = "The prompt is too long: at most {limit:,} characters (it has {length:,})."
NOT_ENOUGH_MODELS = (
    "Fewer than two models are available right now, so no battle can start. "
    "Start the local models or set a provider key, then try again."
)
MESSAGE_LIMIT_REACHED = (
    f"This battle has reached its limit of {MAX_MESSAGES} messages "
    f"(the first prompt and {MAX_MESSAGES - 1} follow-ups). Vote, or start a new battle."
)
# Named limits, never models: the battle is blind until the vote.
PROMPT_OVER_CONTEXT = (
    "The prompt is too long for the models here: it is about {tokens:,} tokens, and a battle "
    "needs two models that read it, which here means at most {limit:,} tokens (about "
    "{chars:,} characters) with room for their answers. Shorten it and send it again."
)
# The same words whichever side it is, and no figure: a side's own token count or budget
# next to the models' public context windows would say which model it is.
CONVERSATION_OVER_CONTEXT = (
    "With this message the conversation would be longer than one of the two models reads "
    "with room for its answer. Start a new battle to ask it, or send something shorter."
)
BATTLE_ALREADY_VOTED = "This battle has already been voted on."
BATTLE_NOT_FOUND = "Battle not found."
ANSWERS_NOT_READY = "Both answers must be complete before you can do that."
ANSWER_FAILED = (
    "An answer failed: retry that side, vote “Both are bad”, or start a new battle.")
# Kept, shown, but not rated: a provider's failure says nothing of the model's answers.
ANSWER_FAILED_VOTE = "an answer failed to generate"
NOT_FAILED = "Only a failed answer can be retried."
TITLE_TOO_LONG = "The title is too long: at most {limit} characters (it has {length})."
TITLE_LIMIT = 120
NOTHING_TO_STOP = "Both answers are already complete: there is nothing to stop."
REGENERATE_WHILE_WRITING = (
    "The answers are still being written: wait until they finish, or stop them, then "
    "regenerate.")
REGENERATE_LIMIT = (
    "These answers were already regenerated {limit} time{plural}, the most a message may be: "
    "vote, follow up, or start a new battle.")
REGENERATE_OFF = "Regenerating answers is turned off here."


def _clean_prompt(prompt: str) -> str:
    return clean_text(prompt, empty=PROMPT_EMPTY, too_long=PROMPT_TOO_LONG, field="The prompt")


def _locked(battle_id) -> Battle:
    """The battle under its row lock, with its models and its vote if any (``_voted``)."""
    return (Battle.objects.select_for_update(of=("self",))
            .select_related("model_a", "model_b", "vote").get(pk=battle_id))


def _voted(battle: Battle) -> bool:
    """A battle from :func:`_locked` has a vote (read with it: no query)."""
    return hasattr(battle, "vote")


def _add_turn(battle: Battle, prompt: str, index: int) -> Turn:
    turn = Turn.objects.create(battle=battle, index=index, prompt=prompt)
    _ask_both(turn)
    return turn


def _ask_both(turn: Turn) -> None:
    """Both answers of the turn, new and queued at once: neither side is asked first."""
    for response in Response.objects.bulk_create(
            [Response(turn=turn, slot=slot) for slot in (Slot.A, Slot.B)]):
        step_enqueue(response)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _title(text: str) -> str:
    return _one_line(text)[:TITLE_LIMIT]


def thread_create(*, session_key: str, title: str = "") -> Thread:
    """A new, empty session; without a title it takes its first battle's prompt."""
    title = check_storable(_one_line(title or ""), field="The title")
    if len(title) > TITLE_LIMIT:
        raise RuleError(TITLE_TOO_LONG.format(limit=TITLE_LIMIT, length=len(title)), status=422)
    return Thread.objects.create(session_key=session_key, title=title)


def battle_create(
    *, session_key: str, prompt: str, thread: Thread | None = None,
    rng: random.Random | None = None,
) -> tuple[Battle, Turn]:
    """Start a battle between two random available models and ask both the first prompt;
    in ``thread`` (a session of this visitor), else in a new session of its own."""
    text = _clean_prompt(prompt)
    candidates = model_list_available()
    if len(candidates) < 2:
        raise RuleError(NOT_ENOUGH_MODELS, status=503)
    fitting = [m for m in candidates if fits(m, [text])]
    if len(fitting) < 2:  # the limit: what the second-largest budget of them reads
        limit = max(sorted((input_budget(m) or 0 for m in candidates), reverse=True)[1], 0)
        raise RuleError(PROMPT_OVER_CONTEXT.format(
            tokens=estimate_input_tokens([text]), limit=limit,
            chars=limit * BYTES_PER_TOKEN), status=422)
    rng = rng or random.SystemRandom()
    model_a, model_b = battle_pair_pick(fitting, rng=rng)
    provider_budget([model_a.provider, model_b.provider])
    title = _title(text)
    with transaction.atomic():
        joined = thread is not None
        if thread is None:  # a new session: titled and active now, as it is created
            thread = Thread.objects.create(session_key=session_key, title=title)
        elif thread.session_key != session_key:
            raise ValueError("a battle joins only a session of its own visitor")
        battle = Battle.objects.create(
            session_key=session_key,
            thread=thread,
            model_a=model_a,
            model_b=model_b,
            model_a_position=rng.choice([Position.LEFT, Position.RIGHT]),
            title=title,
        )
        turn = _add_turn(battle, text, 1)
        if joined:
            Thread.objects.filter(pk=thread.pk, title="").update(title=title)
            Thread.objects.filter(pk=thread.pk).update(last_active_at=battle.last_active_at)
    logger.info("battle %s created", battle.id)
    return battle, turn


def battle_follow_up(*, battle: Battle, prompt: str) -> Turn:
    """Ask both models a follow-up; each sees only its own side of the conversation."""
    text = _clean_prompt(prompt)
    with transaction.atomic():
        battle = _locked(battle.pk)
        if _voted(battle):
            raise RuleError(BATTLE_ALREADY_VOTED, status=409)
        turns = list(battle.turns.prefetch_related("responses"))
        if len(turns) >= MAX_MESSAGES:
            raise RuleError(MESSAGE_LIMIT_REACHED, status=409)
        _require_answers_complete([r.status for t in turns for r in t.responses.all()])
        _require_context_room(battle, turns, text)
        provider_budget([battle.model_a.provider, battle.model_b.provider])
        turn = _add_turn(battle, text, len(turns) + 1)
        tag_multi_turn(battle)
        rows.touch(battle, timezone.now())
    return turn


def _require_context_room(battle: Battle, turns: list[Turn], prompt: str) -> None:
    """Each model is sent the prompts and its own answers: both must still fit."""
    for slot, model in ((Slot.A, battle.model_a), (Slot.B, battle.model_b)):
        texts = [t.prompt for t in turns] + [r.text for t in turns for r in t.responses.all()
                                             if r.slot == slot] + [prompt]
        if not fits(model, texts):
            raise RuleError(CONVERSATION_OVER_CONTEXT, status=422)


def _require_answers_complete(statuses: list[str]) -> None:
    """The statuses of every answer of the battle: 409 unless all are done."""
    if StepStatus.FAILED in statuses:
        raise RuleError(ANSWER_FAILED, status=409)
    if any(s != StepStatus.DONE for s in statuses):
        raise RuleError(ANSWERS_NOT_READY, status=409)


def response_retry(*, battle: Battle, position: str) -> Response:
    """Regenerate the failed answer of the latest turn at one screen position."""
    with transaction.atomic():
        battle = _locked(battle.pk)
        if _voted(battle):
            raise RuleError(BATTLE_ALREADY_VOTED, status=409)
        turn = battle.turns.order_by("-index").first()
        response = turn.responses.select_for_update().get(slot=battle.slot_at(position))
        if response.status != StepStatus.FAILED:
            raise RuleError(NOT_FAILED, status=409)
        provider_budget([battle.model_in(response.slot).provider])
        response.status = StepStatus.PENDING
        response.error = ""
        response.text = ""
        response.generation += 1
        response.save(update_fields=["status", "error", "text", "generation", "updated_at"])
        step_enqueue(response)
    return response


def battle_regenerate(*, battle: Battle) -> Turn:
    """Write both answers of the latest turn again: the same models at the same positions,
    asked together, so that nothing singles out a side (a side alone is :func:`response_retry`,
    for a failure). The answers replaced are kept as :class:`SupersededAnswer` rows, never shown
    nor counted; the new ones are new rows (new stream ids), and the vote is on them. At most
    ``ARENA_BATTLE_REGENERATIONS`` times per turn."""
    limit = settings.ARENA_BATTLE_REGENERATIONS
    with transaction.atomic():
        battle = _locked(battle.pk)
        if _voted(battle):
            raise RuleError(BATTLE_ALREADY_VOTED, status=409)
        turn = battle.turns.select_for_update().order_by("-index").first()
        old = list(turn.responses.all())
        if not all(response.is_finished for response in old):
            raise RuleError(REGENERATE_WHILE_WRITING, status=409)
        if limit == 0:
            raise RuleError(REGENERATE_OFF, status=409)
        if turn.regenerations >= limit:
            raise RuleError(REGENERATE_LIMIT.format(limit=limit, plural=pluralize(limit)),
                            status=409)
        provider_budget([battle.model_a.provider, battle.model_b.provider])
        turn.regenerations += 1
        turn.save(update_fields=["regenerations"])
        SupersededAnswer.objects.bulk_create(
            [SupersededAnswer.of(response, round=turn.regenerations) for response in old])
        Response.objects.filter(pk__in=[response.pk for response in old]).delete()
        _ask_both(turn)
        rows.touch(battle, timezone.now())
    logger.info("battle %s: turn %d regenerated (%d)", battle.id, turn.index,
                turn.regenerations)
    return turn


def _stopped_text(response: Response, text: str) -> list[str]:
    """A stopped answer's text, its tokens estimated from it (the provider reports usage only
    at the end) and its style counts; the fields set."""
    response.text = text
    response.output_tokens = estimate_tokens(text) if text else 0
    style = response.style_fields(text)
    for name, value in style.items():
        setattr(response, name, value)
    return ["text", "output_tokens", *style]


def stopped_answer_keep_written(*, response_id, written: str) -> bool:
    """A stopped answer keeps all its pages were sent (``written``, the writer's
    :attr:`arena.streaming.StreamRelay.written`) when the stop read less: Redis had restarted
    empty, and the writer had not written the text again yet. Whether it changed."""
    with transaction.atomic():
        response = Response.objects.select_for_update().get(pk=response_id)  # after the stop
        if not (response.stopped and len(written) > len(response.text)
                and written.startswith(response.text)):
            return False
        response.save(update_fields=[*_stopped_text(response, written), "updated_at"])
    logger.warning("answer %s: its stop read less than its page was sent (Redis restarted); it "
                   "keeps the %d characters sent", response_id, len(written))
    return True


def battle_stop(*, battle: Battle) -> Turn:
    """Stop the answers of the latest turn still being written; each keeps what it wrote.

    A stopped answer is finished (done, ``stopped``) with the text its stream had sent; its
    generation is bumped, so its job can neither claim nor save any more, and the job ends its
    provider call at its next chunk.
    """
    with transaction.atomic():
        battle = _locked(battle.pk)
        if _voted(battle):
            raise RuleError(BATTLE_ALREADY_VOTED, status=409)
        turn = battle.turns.order_by("-index").first()
        unfinished = [r for r in turn.responses.select_for_update()
                      if r.status in (StepStatus.PENDING, StepStatus.RUNNING)]
        if not unfinished:
            raise RuleError(NOTHING_TO_STOP, status=409)
        now = timezone.now()
        for response in unfinished:
            was_running = response.status == StepStatus.RUNNING
            text_fields = _stopped_text(response, stop_stream_sync(str(response.id)))
            response.status = StepStatus.DONE
            response.stopped = True
            response.error = ""
            # What it cost so far: written since its claim (which set updated_at), in tokens
            # estimated from the text (the provider reports usage only at the end).
            if was_running:
                response.latency_ms = int((now - response.updated_at).total_seconds() * 1000)
            response.lease_expires_at = None
            response.generation += 1
            response.save(update_fields=["status", "stopped", "error", "latency_ms",
                                         "lease_expires_at", "generation", "updated_at",
                                         *text_fields])
            transaction.on_commit(lambda r=response: announce_stopped(battle, r))
        rows.touch(battle, timezone.now())
    logger.info("battle %s: %d answers stopped", battle.id, len(unfinished))
    return turn


def battle_vote(*, battle_id, session_key: str, choice: str, voter: str = "",
                publish_text: bool = False) -> Vote:
    """Record the one vote of the session's battle (404 if the session does not own it),
    reveal the models (the vote's ``battle`` has them), update the online Elo. ``voter``: the
    client address as :func:`arena.contests.flags.visitor_of_address` keys it (the daily cap
    on counted votes applies to it as well as to the session). ``publish_text``: the voter
    lets the battle's prompts and answers be published in the open data releases. Its reads
    and writes are :mod:`battles.rows`' plain statements: it is the busiest write."""
    require_choice(choice)
    battle_id = parse_uuid(battle_id)

    def lock() -> rows.Ballot:
        ballot = (rows.ballot_locked(battle_id, session_key)
                  if battle_id and session_key else None)
        if ballot is None:
            raise RuleError(BATTLE_NOT_FOUND, status=404)
        return ballot

    def record(ballot: rows.Ballot) -> Vote:
        battle = ballot.battle
        winner, score_a, score_b = vote_outcome(choice, a_position=battle.model_a_position)
        answers = rows.answers(battle)
        statuses = [a.status for a in answers]
        failed = failed_for_good(statuses)
        if not (failed and choice == VoteChoice.BOTH_BAD):
            _require_answers_complete(statuses)
        rows.touch(battle, timezone.now())
        eligibility = ({"counts_for_rating": False, "exclusion_reason": ANSWER_FAILED_VOTE}
                       if failed else _rating_eligibility(battle, answers))
        if eligibility["counts_for_rating"]:
            eligibility.update(COUNTED_VOTES.eligibility(session_key=session_key, voter=voter))
        if ballot.unclassified:
            classify_after_vote()
        return rows.vote_insert(Vote(
            battle=battle, choice=choice, winner=winner, score_a=score_a, score_b=score_b,
            voter=voter, categories_pending=ballot.unclassified, publish_text=publish_text,
            **eligibility,
            **Vote.facts_of(battle), **Vote.style_sums(answers)))

    vote = vote_once(
        lock=lock,
        has_vote=lambda ballot: ballot.voted,
        record=record,
        already_voted=BATTLE_ALREADY_VOTED,
        announce=lambda v: battle_vote_recorded.send(sender=Vote, vote=v),
    )
    logger.info("battle %s voted %s", vote.battle_id, choice)
    return vote


def _rating_eligibility(battle: Battle, answers: list[rows.Answer]) -> dict:
    """A vote whose conversation names either model does not count (FastChat's rule). The
    answers regenerated away count as read: the voter saw them before pressing Regenerate."""
    prompts = {a.turn_index: a.prompt for a in answers}
    replaced = SupersededAnswer.objects.filter(turn__battle=battle).values_list("text", flat=True)
    texts = list(prompts.values()) + [a.text for a in answers] + list(replaced)
    leaked = leaked_identity(texts, [battle.model_a, battle.model_b])
    return {
        "counts_for_rating": leaked is None,
        "exclusion_reason": f"the conversation names a model ({leaked!r})" if leaked else "",
    }
