"""What a data release publishes of text battles: every counted vote of the ``text`` board
(releases.sources), with its battle's turns as the two conversations when the voter let them
be published."""

from __future__ import annotations

from arena.prompt_categories import category_tags
from battles.boards import COUNTED
from battles.models import Response, Turn, Vote
from releases.sources import Source, register_source, removed_by_reason, rows_in_batches


def text_release_rows(until):
    votes = (COUNTED.filter(created_at__lt=until).order_by("created_at", "pk")
             .values("pk", "battle_id", "model_a_id", "model_b_id", "winner", "created_at",
                     "categories", "language", "publish_text", "battle__is_demo",
                     *Vote.STYLE_FIELDS))
    yield from rows_in_batches(votes, _rows)


def _rows(votes: list[dict]):
    battles = [v["battle_id"] for v in votes]
    turns: dict = {}
    for battle_id, prompt in (Turn.objects.filter(battle_id__in=battles)
                              .order_by("index").values_list("battle_id", "prompt")):
        turns.setdefault(battle_id, []).append(prompt)
    published = [v["battle_id"] for v in votes if v["publish_text"]]
    answers: dict = {}
    for battle_id, slot, text in (Response.objects.filter(turn__battle_id__in=published)
                                  .order_by("turn__index")
                                  .values_list("turn__battle_id", "slot", "text")):
        answers.setdefault((battle_id, slot), []).append(text)
    for vote in votes:
        battle = vote["battle_id"]
        prompts = turns.get(battle, [])
        row = {key: vote[key] for key in ("winner", "created_at", "language", "publish_text",
                                          *Vote.STYLE_FIELDS)}
        row.update(id=vote["pk"], contest_id=battle, model_a=vote["model_a_id"],
                   model_b=vote["model_b_id"], turns=len(prompts),
                   categories=category_tags(vote["categories"]),
                   synthetic=vote["battle__is_demo"])
        if vote["publish_text"]:
            row["conversation_a"] = _conversation(prompts, answers.get((battle, "a"), []))
            row["conversation_b"] = _conversation(prompts, answers.get((battle, "b"), []))
        yield row


def _conversation(prompts: list[str], texts: list[str]) -> list[dict]:
    messages = []
    for prompt, text in zip(prompts, texts, strict=False):
        messages += [{"role": "user", "content": prompt},
                     {"role": "assistant", "content": text}]
    return messages


def text_release_removed(until) -> dict[str, int]:
    return removed_by_reason(Vote.objects.filter(counts_for_rating=False, created_at__lt=until)
                             .values_list("exclusion_reason", flat=True))


TEXT_SOURCE = register_source(Source(
    board="text", mode="battle", rows=text_release_rows, removed=text_release_removed,
    note="Bradley–Terry (sandwich intervals), with style control and category boards",
    reproduces=("text",)))
