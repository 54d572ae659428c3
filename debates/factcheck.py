"""The fact-checker: claims out of a speech, each checked against evidence by a model.

1. The checking model lists the speech's verifiable claims through structured output
   (text, type, confidence).
2. Every claim at once: the search backend finds evidence; the model compares the claim with
   it and gives a verdict (``verified | false | unverifiable | misleading``). A claim with no
   evidence is ``unverifiable`` without asking; a claim not settled within
   ``ARENA_FACTCHECK_CLAIM_SECONDS`` (10 s) is ``unverifiable`` too.

Nothing here raises for a provider or search failure: a claim that could not be checked is
``unverifiable`` with the reason in its explanation; claims that could not be extracted give
an empty report with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field

from django.conf import settings

from arena.llm import LLMError, ModelEndpoint, complete_json
from debates.evidence import Evidence, SearchBackend, SearchError

logger = logging.getLogger(__name__)

MAX_CLAIMS = 5
CLAIM_TYPES = ["statistical", "historical", "scientific", "definitional"]
VERDICTS = ["verified", "false", "unverifiable", "misleading"]
# How much a verdict counts towards factuality; unverifiable claims do not count.
VERDICT_SCORE = {"verified": 1.0, "misleading": 0.5, "false": 0.0}

CLAIMS_SCHEMA = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array", "maxItems": MAX_CLAIMS,
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 5, "maxLength": 400},
                    "type": {"type": "string", "enum": CLAIM_TYPES},
                    "confidence": {"type": "number"},
                },
                "required": ["text", "type", "confidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["claims"],
    "additionalProperties": False,
}

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": VERDICTS},
        "confidence": {"type": "number"},
        "explanation": {"type": "string", "maxLength": 600},
    },
    "required": ["verdict", "confidence", "explanation"],
    "additionalProperties": False,
}

NOT_CHECKED = "This speech was not fact-checked: {reason}"

EXTRACT_PROMPT = """List the checkable factual claims in this debate speech: statistics,
historical facts, scientific findings and definitions that a search could confirm or refute.
Skip opinions, predictions and value judgements. At most {max_claims} claims; none is fine.
For each: the claim restated on its own, its type (statistical, historical, scientific or
definitional) and how confident you are (0 to 1) that it is a checkable factual claim.

SPEECH:
{speech}"""

VERIFY_PROMPT = """Check one claim against the evidence below, and nothing else (do not use
your own knowledge to fill gaps).
- verified: the evidence supports the claim.
- false: the evidence contradicts the claim.
- misleading: partly true, but the evidence shows it leaves out or distorts something.
- unverifiable: the evidence neither supports nor contradicts it.
Give your confidence (0 to 1) and a one- or two-sentence explanation.

CLAIM: {claim}

EVIDENCE:
{evidence}"""


def unit(value: float) -> float:
    """A confidence in [0, 1]. The schemas leave ranges out on purpose: llama.cpp's grammar
    cannot enforce a number's range, so a small model's -1 would fail a whole check."""
    return min(max(float(value), 0.0), 1.0)


@dataclass(frozen=True)
class Claim:
    text: str
    type: str
    confidence: float


@dataclass
class CheckResult:
    claim: Claim
    verdict: str
    confidence: float
    explanation: str
    evidence: list[Evidence] = field(default_factory=list)
    latency_ms: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class TurnReport:
    results: list[CheckResult]
    note: str = ""  # why no claims were checked, when that is the case
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def false_claims(self) -> list[CheckResult]:
        return [r for r in self.results if r.verdict == "false"]


def factuality(verdicts: list[str]) -> float | None:
    """The share of checkable claims that held: verified 1, misleading ½, false 0;
    unverifiable claims do not count. None when no claim could be settled."""
    scores = [VERDICT_SCORE[v] for v in verdicts if v in VERDICT_SCORE]
    return round(sum(scores) / len(scores), 4) if scores else None


_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_FIGURE = re.compile(r"\d|\bper ?cent\b|%", re.IGNORECASE)
_NAME = re.compile(r"(?<=\w )[A-Z][a-z]+")  # a capitalised word inside a sentence


def rule_claims(speech: str) -> list[Claim]:
    """The checkable sentences of a speech, found without a model: those with a year, a
    figure or a name in them, the most specific first. For the embedded small models, whose
    lists of claims held the claim types ("Statistical") or timestamps instead of claims."""
    found = []
    for sentence in _SENTENCES.split(" ".join(speech.split())):
        words = len(sentence.split())
        if not 5 <= words <= 40:
            continue
        year, figure = _YEAR.search(sentence), _FIGURE.search(sentence)
        names = len(_NAME.findall(sentence))
        if not (year or figure or names):
            continue
        kind = "historical" if year else "statistical" if figure else "definitional"
        weight = 2 * bool(year) + 2 * bool(figure) + min(names, 2)
        found.append((weight, Claim(sentence.rstrip("."), kind, min(0.5 + weight / 10, 0.9))))
    found.sort(key=lambda item: -item[0])
    return [claim for _weight, claim in found[:MAX_CLAIMS]]


async def extract_claims(endpoint: ModelEndpoint, speech: str) -> tuple[list[Claim], int, float]:
    """The speech's claims, with the tokens and cost of asking (an embedded small model is
    not asked: :func:`rule_claims`)."""
    if endpoint.local_key:
        return rule_claims(speech), 0, 0.0
    prompt = EXTRACT_PROMPT.format(max_claims=MAX_CLAIMS, speech=speech)
    result = await complete_json(endpoint, [{"role": "user", "content": prompt}], CLAIMS_SCHEMA,
                                 name="claims")
    seen: set[str] = set()
    claims = []
    for item in result.data["claims"]:
        text = " ".join(item["text"].split())
        if text.lower() not in seen:
            seen.add(text.lower())
            claims.append(Claim(text, item["type"], unit(item["confidence"])))
    usage = result.completion
    return claims, usage.input_tokens + usage.output_tokens, usage.cost_usd


def _evidence_text(items: list[Evidence]) -> str:
    return "\n\n".join(f"[{i}] {e.title}\n{e.content}" for i, e in enumerate(items, 1))


async def verify_claim(endpoint: ModelEndpoint, backend: SearchBackend, claim: Claim) -> (
        CheckResult):
    started = time.monotonic()
    try:
        evidence = await backend.search(claim.text, max_results=3)
    except SearchError as exc:
        return CheckResult(claim, "unverifiable", 0.0, f"The search failed: {exc}")
    if not evidence:
        return CheckResult(claim, "unverifiable", 0.0,
                           f"No evidence was found ({backend.name} search).")
    prompt = VERIFY_PROMPT.format(claim=claim.text, evidence=_evidence_text(evidence))
    try:
        result = await complete_json(endpoint, [{"role": "user", "content": prompt}],
                                     VERDICT_SCHEMA, name="verdict")
    except LLMError as exc:
        return CheckResult(claim, "unverifiable", 0.0,
                           f"The checking model could not be asked: {exc.user_message}",
                           evidence)
    data, usage = result.data, result.completion
    return CheckResult(
        claim, data["verdict"], unit(data["confidence"]), data["explanation"].strip(),
        evidence, latency_ms=round((time.monotonic() - started) * 1000),
        tokens=usage.input_tokens + usage.output_tokens, cost_usd=usage.cost_usd)


async def _verify_in_time(endpoint: ModelEndpoint, backend: SearchBackend, claim: Claim,
                          seconds: float) -> CheckResult:
    try:
        return await asyncio.wait_for(verify_claim(endpoint, backend, claim), seconds)
    except TimeoutError:
        return CheckResult(claim, "unverifiable", 0.0,
                           f"Not settled within {seconds:g} s.",
                           latency_ms=round(seconds * 1000))


async def check_speech(endpoint: ModelEndpoint, backend: SearchBackend, speech: str) -> (
        TurnReport):
    """Extract the speech's claims and check them all concurrently."""
    try:
        claims, tokens, cost = await extract_claims(endpoint, speech)
    except LLMError as exc:
        return TurnReport([], note=NOT_CHECKED.format(reason=exc.user_message))
    seconds = settings.ARENA_FACTCHECK_CLAIM_SECONDS
    results = list(await asyncio.gather(
        *(_verify_in_time(endpoint, backend, claim, seconds) for claim in claims)))
    return TurnReport(results, tokens=tokens + sum(r.tokens for r in results),
                      cost_usd=cost + sum(r.cost_usd for r in results))
