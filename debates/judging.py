"""The judge: seed 004's rubric and JSON verdict, asked twice with the order swapped.

Both orders are asked at once. Each is tried up to ``MAX_JUDGE_TRIES`` times (a provider
failure or a reply outside the schema); the consensus rule is :func:`consensus`.

The seed asks for a justification of 100 words or more. The schema says so to the model (its
``description``), but does not enforce it as a length: a grammar-bound model that runs short
would then give no verdict at all. Instead a verdict whose justification is under
``MIN_JUSTIFICATION_WORDS`` is asked for again, with the count stated, up to
``MAX_SHORT_REASKS`` times. A re-ask asks for words, not a second opinion: the first verdict
(winner, scores, fallacies) stands, and only a longer justification is taken from a re-ask. If
it is still short after the last, the longest is kept and marked short
(``justification_short``), and the page and the API say so.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from arena.llm import LLMError, ModelEndpoint, complete_json

MAX_JUDGE_TRIES = 3  # the first try and two retries (seed 004)
MIN_JUSTIFICATION_WORDS = 100  # seed 004: "<100+ word explanation>"
MAX_SHORT_REASKS = 2
SHORT_REASK = ("Your justification has {words} words; the rubric asks for at least {least}. "
               "Reply again with the whole JSON verdict, its justification at least {least} "
               "words long: explain how each side's arguments, rebuttals and claims weighed in "
               "your decision.")
FALLACIES = ["strawman", "false dichotomy", "ad hominem", "slippery slope", "appeal to emotion",
             "appeal to authority", "hasty generalization", "circular reasoning",
             "red herring", "whataboutism", "other"]

VERDICT_SCHEMA = {
    "type": "object",
    "properties": {
        "winner": {"type": "string", "enum": ["pro", "con", "tie"]},
        "scores": {
            "type": "object",
            # 1-10, clamped after (a grammar cannot enforce a number's range)
            "properties": {k: {"type": "integer"}
                           for k in ("logical_coherence", "rebuttal_strength", "factuality")},
            "required": ["logical_coherence", "rebuttal_strength", "factuality"],
            "additionalProperties": False,
        },
        "justification": {
            "type": "string", "minLength": 20, "maxLength": 4000,
            "description": f"At least {MIN_JUSTIFICATION_WORDS} words: why the winner won, "
                           "weighing both sides' arguments, rebuttals and fact-checked claims."},
        "flagged_fallacies": {
            "type": "array", "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {"speaker": {"type": "string", "enum": ["pro", "con"]},
                               "fallacy": {"type": "string", "enum": FALLACIES},
                               "quote": {"type": "string", "maxLength": 300}},
                "required": ["speaker", "fallacy"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["winner", "scores", "justification", "flagged_fallacies"],
    "additionalProperties": False,
}

JUDGE_PROMPT = """You are an impartial debate adjudicator with expertise in formal argumentation.

TASK: Evaluate this debate and determine the winner.

RUBRIC:
1. Logical Coherence (1-10): Internal consistency, absence of contradictions
2. Rebuttal Strength (1-10): Direct engagement with opponent's points
3. Factuality (1-10): Accuracy of claims (refer to fact-check logs)

INSTRUCTIONS:
- Do NOT use your own knowledge to fill gaps for debaters
- Focus on what was actually argued, not what could have been argued
- Penalize logical fallacies heavily
- Reward direct clash and engagement
- Consider the debate holistically, not just final speeches

OUTPUT FORMAT:
{{
  "winner": "pro" | "con" | "tie",
  "scores": {{
    "logical_coherence": <1-10>,
    "rebuttal_strength": <1-10>,
    "factuality": <1-10>
  }},
  "justification": "<100+ word explanation>",
  "flagged_fallacies": [{{"speaker": "pro" | "con", "fallacy": "<name>", "quote": "..."}}]
}}
The scores are for the side you name as the winner (for a tie: the debate as a whole).

MOTION: {motion}

{transcript}

FACT-CHECK LOG:
{fact_checks}"""


@dataclass(frozen=True)
class Speech:
    round: int
    position: str
    text: str


@dataclass
class JudgeResult:
    order: str  # "pro_first" | "con_first"
    winner: str = ""  # "" when every try failed
    scores: dict = field(default_factory=dict)
    justification: str = ""
    fallacies: list = field(default_factory=list)
    attempts: int = 0
    error: str = ""
    latency_ms: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    reasks: int = 0  # asked again for a longer justification
    justification_short: bool = False  # still under MIN_JUSTIFICATION_WORDS after the re-asks

    def take(self, data: dict) -> None:
        self.winner = data["winner"]
        self.scores = {k: min(max(int(v), 1), 10) for k, v in data["scores"].items()}
        self.justification = data["justification"].strip()
        self.fallacies, self.error = data["flagged_fallacies"], ""

    def take_longer_justification(self, data: dict) -> None:
        """A re-ask's reply: only its justification, and only if longer than the one held.
        The verdict (winner, scores, fallacies) stays the first one's: the re-ask asked for
        words, not for a second opinion, and the page says the verdict stands."""
        text = data["justification"].strip()
        if words(text) > words(self.justification):
            self.justification = text

    def count(self, usage) -> None:
        if usage is not None:
            self.tokens += usage.input_tokens + usage.output_tokens
            self.cost_usd += usage.cost_usd


def words(text: str) -> int:
    return len(text.split())


def transcript_text(speeches: list[Speech], order: str) -> str:
    """The transcript with clear speaker labels; ``con_first`` lists each round's con
    speech before the pro one (the order the judge reads them in is all that changes)."""
    first = "con" if order == "con_first" else "pro"
    rank = {first: 0, ("pro" if first == "con" else "con"): 1}
    lines = []
    for speech in sorted(speeches, key=lambda s: (s.round, rank[s.position])):
        lines += [f"ROUND {speech.round} - {speech.position.upper()}:", speech.text, ""]
    return "\n".join(lines).strip()


def judge_prompt(motion: str, speeches: list[Speech], fact_checks: list[str],
                 order: str) -> str:
    return JUDGE_PROMPT.format(motion=motion, transcript=transcript_text(speeches, order),
                               fact_checks="\n".join(fact_checks) or "(no claims checked)")


async def judge_once(endpoint: ModelEndpoint, motion: str, speeches: list[Speech],
                     fact_checks: list[str], order: str) -> JudgeResult:
    """One order, retried up to ``MAX_JUDGE_TRIES`` times, its justification asked for again
    while short (:data:`MAX_SHORT_REASKS`); never raises for a failure."""
    result = JudgeResult(order=order)
    started = time.monotonic()
    messages = [{"role": "user", "content": judge_prompt(motion, speeches, fact_checks, order)}]
    for attempt in range(1, MAX_JUDGE_TRIES + 1):
        result.attempts = attempt
        try:
            reply = await complete_json(endpoint, messages, VERDICT_SCHEMA, name="verdict")
        except LLMError as exc:
            result.error = exc.user_message
            result.count(getattr(exc, "completion", None))
            continue
        result.count(reply.completion)
        result.take(reply.data)
        await _lengthen(endpoint, messages, reply.completion.text, result)
        break
    result.latency_ms = round((time.monotonic() - started) * 1000)
    return result


async def _lengthen(endpoint: ModelEndpoint, messages: list, answer: str,
                    result: JudgeResult) -> None:
    """Ask again while the justification is short. A re-ask changes only the justification,
    and only to a longer one: the first verdict (winner, scores, fallacies) stands, and a
    re-ask that fails or comes back shorter keeps what is in hand. Still short after the
    last: the longest is kept and marked."""
    answered = words(result.justification)  # in the answer shown back to the judge
    while words(result.justification) < MIN_JUSTIFICATION_WORDS:
        if result.reasks == MAX_SHORT_REASKS:
            result.justification_short = True
            return
        result.reasks += 1
        asked = [*messages, {"role": "assistant", "content": answer},
                 {"role": "user",
                  "content": SHORT_REASK.format(words=answered, least=MIN_JUSTIFICATION_WORDS)}]
        try:
            reply = await complete_json(endpoint, asked, VERDICT_SCHEMA, name="verdict")
        except LLMError as exc:
            result.count(getattr(exc, "completion", None))
            continue  # the same conversation is asked again, not one with the exchange twice
        messages = asked
        result.count(reply.completion)
        result.take_longer_justification(reply.data)
        answer, answered = reply.completion.text, words(reply.data["justification"])


async def judge_both_orders(endpoint: ModelEndpoint, motion: str, speeches: list[Speech],
                            fact_checks: list[str]) -> list[JudgeResult]:
    return list(await asyncio.gather(
        *(judge_once(endpoint, motion, speeches, fact_checks, order)
          for order in ("pro_first", "con_first"))))


def consensus(first: str, second: str) -> tuple[str, bool]:
    """``(winner, agreed)`` of two valid verdicts: the same winner stands; disagreement is a
    tie unless a tiebreaker decides (the caller's choice)."""
    return (first, True) if first == second else ("tie", False)
