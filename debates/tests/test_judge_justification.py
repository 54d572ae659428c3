"""Seed 004's judge justification of 100 words or more: in the verdict's schema, asked for
again when short (at most MAX_SHORT_REASKS times), and kept and marked when still short."""

import json

import pytest
from django.db import transaction
from django.test import Client

from debates.judging import (
    MAX_SHORT_REASKS,
    MIN_JUSTIFICATION_WORDS,
    SHORT_REASK,
    VERDICT_SCHEMA,
    JudgeResult,
    Speech,
    judge_once,
)
from debates.models import JudgeEvaluation
from debates.tests.debate_support import DebateScript, debate_row, judge_reply, justification
from debates.verdicts import debate_record_verdicts

SPEECHES = [Speech(1, "pro", "Cars poison the air."), Speech(1, "con", "Shops need cars.")]


def judge_requests(fake_openai):
    return [r for r in fake_openai.chat_requests
            if any("impartial debate adjudicator" in m["content"] for m in r.body["messages"])]


async def test_the_schema_asks_for_100_words(fake_openai):
    fake_openai.reply_text = DebateScript()
    result = await judge_once(fake_openai.endpoint("judge"), "Ban cars", SPEECHES, [],
                              "pro_first")
    described = VERDICT_SCHEMA["properties"]["justification"]["description"]
    assert described.startswith(f"At least {MIN_JUSTIFICATION_WORDS} words")
    sent = fake_openai.chat_requests[-1].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["justification"]["description"] == described
    assert (result.reasks, result.justification_short) == (0, False)  # 120 words: no re-ask


async def test_a_short_justification_is_asked_for_again_and_the_long_one_kept(fake_openai):
    fake_openai.reply_text = DebateScript(justification_words=[30, 130])
    result = await judge_once(fake_openai.endpoint("judge"), "Ban cars", SPEECHES, [],
                              "pro_first")
    assert result.winner == "pro" and result.reasks == 1 and not result.justification_short
    assert result.justification == justification("pro", 130)
    first, again = judge_requests(fake_openai)
    assert again.body["messages"][-1]["content"] == SHORT_REASK.format(
        words=30, least=MIN_JUSTIFICATION_WORDS)
    assert again.body["messages"][-2]["role"] == "assistant"  # its short answer, shown back
    assert result.tokens > 0


async def test_still_short_after_the_re_asks_is_kept_and_marked(fake_openai):
    fake_openai.reply_text = DebateScript(justification_words=[30, 40, 50, 60])
    result = await judge_once(fake_openai.endpoint("judge"), "Ban cars", SPEECHES, [],
                              "con_first")
    assert len(judge_requests(fake_openai)) == 1 + MAX_SHORT_REASKS  # bounded
    assert result.winner == "pro" and result.scores["factuality"] == 8  # the verdict stands
    assert result.reasks == MAX_SHORT_REASKS and result.justification_short
    assert result.justification == justification("pro", 50)


@pytest.mark.django_db
def test_the_api_and_the_page_say_a_justification_is_short():
    debate = debate_row()
    short = JudgeResult(order="pro_first", winner="pro", justification=justification("pro", 50),
                        scores={"logical_coherence": 6, "rebuttal_strength": 6,
                                "factuality": 6}, attempts=1, reasks=2,
                        justification_short=True)
    full = JudgeResult(order="con_first", winner="pro", justification=justification("pro"),
                       scores=short.scores, attempts=1)
    with transaction.atomic():
        debate_record_verdicts(debate_id=debate.pk, results=[
            ("primary", debate.judge_model, short), ("primary", debate.judge_model, full)])
    assert JudgeEvaluation.objects.filter(justification_short=True).count() == 1
    evaluations = {e["order"]: e for e in
                   Client().get(f"/api/debates/{debate.pk}").json()["evaluations"]}
    assert evaluations["pro_first"]["justification_short"] is True
    assert evaluations["pro_first"]["justification_words"] == 50
    assert evaluations["pro_first"]["justification_reasks"] == 2
    assert evaluations["con_first"]["justification_short"] is False
    assert evaluations["con_first"]["justification_words"] == 120
    html = Client().get(f"/debates/{debate.pk}/").content.decode()
    assert html.count('data-testid="justification-short"') == 1
    assert "50 words, under the 100 asked for, even after the judge was asked 2 more times" \
        in html


async def test_a_re_ask_keeps_the_first_verdict_and_only_a_longer_justification(fake_openai):
    # The re-ask is for words: a reply naming another winner (and other scores) must not
    # change the verdict, and a later, shorter reply must not lose the longer justification.
    replies = [judge_reply("pro", 30),
               json.dumps({"winner": "con",
                           "scores": {"logical_coherence": 2, "rebuttal_strength": 2,
                                      "factuality": 2},
                           "justification": justification("con", 60),
                           "flagged_fallacies": []}),
               judge_reply("tie", 40)]
    fake_openai.reply_text = lambda request: replies.pop(0)
    result = await judge_once(fake_openai.endpoint("judge"), "Ban cars", SPEECHES, [],
                              "pro_first")
    assert result.reasks == MAX_SHORT_REASKS and result.justification_short
    assert result.winner == "pro"  # the verdict stands
    assert result.scores == {"logical_coherence": 7, "rebuttal_strength": 6, "factuality": 8}
    assert result.fallacies == [{"speaker": "con", "fallacy": "strawman", "quote": "X"}]
    assert result.justification == justification("con", 60)  # the longest, not the last
    last = judge_requests(fake_openai)[-1].body["messages"]
    assert last[-1]["content"] == SHORT_REASK.format(words=60, least=MIN_JUSTIFICATION_WORDS)
