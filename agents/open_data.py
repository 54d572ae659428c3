"""What a data release publishes of voice battles: every counted overall vote on the ``agent``
board (the architecture boards are its subsets) between the two agent configurations, with
both calls' transcripts when the voter let them be published. The language is the caller's, read
from what they said in both calls; a call has no prompt categories (they classify a written
prompt), so those columns stay false."""

from __future__ import annotations

from agents.models import AgentConversation, AgentVote
from arena.prompt_categories import prompt_language
from releases.sources import Source, register_source, removed_by_reason, rows_in_batches


def agent_release_rows(until):
    votes = (AgentVote.objects.filter(counts_for_rating=True, created_at__lt=until)
             .select_related("battle__config_a", "battle__config_b").order_by("created_at", "pk"))
    yield from rows_in_batches(votes, _rows)


def _rows(votes: list[AgentVote]):
    """The rows of a batch of votes, with their battles' calls read in one query."""
    calls: dict = {}
    for call in AgentConversation.objects.filter(battle_id__in=[v.battle_id for v in votes]):
        calls.setdefault(call.battle_id, {})[call.agent_label] = call
    for vote in votes:
        battle = vote.battle
        labelled = calls.get(battle.pk, {})
        row = {"id": vote.pk, "contest_id": battle.pk, "model_a": battle.config_a.slug,
               "model_b": battle.config_b.slug, "winner": vote.winner,
               "created_at": vote.created_at, "publish_text": vote.publish_text,
               "turns": max((c.total_turns for c in labelled.values()), default=0),
               "language": prompt_language(" ".join(
                   t.get("text", "") for call in labelled.values() for t in call.turns_json
                   if t.get("role") == "user"))}
        if vote.publish_text:
            for label in ("a", "b"):
                call = labelled.get(label)
                row[f"conversation_{label}"] = [
                    {"role": "user" if t.get("role") == "user" else "assistant",
                     "content": t.get("text", "")}
                    for t in (call.turns_json if call else [])]
        yield row


def agent_release_removed(until) -> dict[str, int]:
    return removed_by_reason(AgentVote.objects.filter(counts_for_rating=False,
                                                      created_at__lt=until)
                             .values_list("exclusion_reason", flat=True))


AGENT_SOURCE = register_source(Source(
    board="agent", mode="voice", rows=agent_release_rows, removed=agent_release_removed,
    note="Bradley–Terry; the agent-<architecture> boards rate the battles between two agents "
         "of one architecture"))
