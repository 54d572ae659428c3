"""The fact-checker against the fake provider: claims checked concurrently, the time limit,
a failing search, ranges a grammar cannot enforce."""

import asyncio
import json

import pytest

from arena.llm import LLMSchemaViolation
from debates.evidence import Evidence, SearchError
from debates.factcheck import NOT_CHECKED, check_speech, factuality, rule_claims
from debates.tests.debate_support import EXTRACT_MARK, DebateScript

CLAIMS = ["Alpha rose 5 percent in 2001", "Beta fell in 1999", "Gamma was founded in 1950"]
SPEECH = ". ".join(CLAIMS) + "."


class TogetherSearch:
    """Answers only once ``expected`` searches are in flight at the same time: a checker
    that searched one claim after another would never get an answer."""

    name = "together"

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.in_flight = 0
        self.most = 0
        self.all_in = asyncio.Event()

    async def search(self, query: str, *, max_results: int = 3):
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if self.in_flight >= self.expected:
            self.all_in.set()
        await self.all_in.wait()
        self.in_flight -= 1
        return [Evidence("Record", "https://example.org", f"It is recorded that {query}.")]


class NeverSearch:
    name = "never"

    async def search(self, query: str, *, max_results: int = 3):
        await asyncio.Event().wait()  # never answers


class BrokenSearch:
    name = "broken"

    async def search(self, query: str, *, max_results: int = 3):
        raise SearchError("Tavily refused the API key (401).")


@pytest.fixture
def checker(fake_openai):
    fake_openai.reply_text = DebateScript(verdicts=dict.fromkeys(CLAIMS, "verified"))
    return fake_openai.endpoint("checker")


def test_the_claims_of_a_turn_are_checked_concurrently(checker):
    search = TogetherSearch(expected=3)
    report = asyncio.run(asyncio.wait_for(check_speech(checker, search, SPEECH), 30))
    assert search.most == 3
    assert [r.claim.text for r in report.results] == CLAIMS
    assert all(r.verdict == "verified" and r.evidence for r in report.results)
    assert report.tokens > 0


def test_a_claim_not_settled_in_time_is_unverifiable(checker, settings):
    settings.ARENA_FACTCHECK_CLAIM_SECONDS = 0.3
    report = asyncio.run(check_speech(checker, NeverSearch(), SPEECH))
    assert [r.verdict for r in report.results] == ["unverifiable"] * 3
    assert all("Not settled within 0.3 s" in r.explanation for r in report.results)


def test_a_failing_search_leaves_the_claim_unverifiable_with_the_reason(checker):
    report = asyncio.run(check_speech(checker, BrokenSearch(), SPEECH))
    assert {r.verdict for r in report.results} == {"unverifiable"}
    assert "refused the API key" in report.results[0].explanation


def test_out_of_range_confidences_are_clamped_not_rejected(fake_openai):
    claims = [{"text": c, "type": "statistical", "confidence": -1} for c in CLAIMS[:1]]

    def reply(rec):
        text = rec.messages[-1]["content"]
        if "List the checkable" in text:
            return json.dumps({"claims": claims})
        return json.dumps({"verdict": "false", "confidence": 7, "explanation": "No."})

    fake_openai.reply_text = reply
    report = asyncio.run(check_speech(fake_openai.endpoint("checker"), TogetherSearch(1),
                                      SPEECH))
    [result] = report.results
    assert result.claim.confidence == 0.0 and result.confidence == 1.0
    assert result.verdict == "false"


def test_claims_that_cannot_be_extracted_give_an_empty_report_saying_why(fake_openai):
    fake_openai.reply_text = lambda rec: "No JSON here at all."
    report = asyncio.run(check_speech(fake_openai.endpoint("checker"), TogetherSearch(1),
                                      SPEECH))
    assert report.results == []
    assert report.note == NOT_CHECKED.format(reason=LLMSchemaViolation.default_user_message)
    assert "required property" not in report.note and "JSON" not in report.note


def test_factuality():
    assert factuality([]) is None and factuality(["unverifiable"]) is None
    assert factuality(["verified", "false", "misleading", "unverifiable"]) == 0.5


def test_a_small_embedded_checker_is_not_asked_for_the_claims(fake_openai):
    """SmolLM2's lists of claims held the claim types ("Statistical") or timestamps; the
    sentences with a year, a figure or a name are the claims instead, and only their
    verdicts are asked of the model."""
    speech = ("Nuclear power is clean. France gets about 70 percent of its power from it. "
              "The Paris Agreement was adopted in 2015 by many nations. I feel strongly.")
    claims = rule_claims(speech)
    assert [(c.text, c.type) for c in claims] == [
        ("The Paris Agreement was adopted in 2015 by many nations", "historical"),
        ("France gets about 70 percent of its power from it", "statistical")]
    fake_openai.reply_text = lambda rec: json.dumps(
        {"verdict": "verified", "confidence": 0.7, "explanation": "The evidence says so."})
    endpoint = fake_openai.endpoint("checker", local_key="smollm2")
    report = asyncio.run(check_speech(endpoint, TogetherSearch(1), speech))
    assert [r.claim.text for r in report.results] == [c.text for c in claims]
    assert not any(EXTRACT_MARK in r.messages[-1]["content"] for r in fake_openai.chat_requests)
