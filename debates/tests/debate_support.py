"""Scripted fake-provider behaviour for debate tests, and helpers to run debates.

One :class:`DebateScript` is the ``reply_text`` of the fake OpenAI server. It tells the
requests apart by their prompt: a debater's turn (answered in the three tags, or as scripted),
claim extraction, claim verification, a strict-mode rewrite and the judge (whose winner may
depend on the order it read the debate in).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from arena.models import AIModel, ProviderKind
from debates.models import Debate, Evidence, Persona, Topic
from testkit.live import worker_idle
from testkit.ratings import quiet_rating_runs  # noqa: F401 - the debate tests import it here
from testkit.registry import make_model  # noqa: F401 - the debate tests import it here
from testkit.waiting import wait_for

TURN_MARK = "Reflect-Critique-Refine methodology"
EXTRACT_MARK = "List the checkable factual claims"
VERIFY_MARK = "Check one claim against the evidence"
REVISE_MARK = "A fact-checker found a false claim"
JUDGE_MARK = "impartial debate adjudicator"
FALSE_CLAIM = "The Moon is made of green cheese according to NASA"
TRUE_CLAIM = "The Paris Agreement was adopted in 2015"


def speech_of(model: str, position: str, round_: str, *, claim: str = TRUE_CLAIM) -> str:
    return (f"<reflection>They argue X (as {position} in round {round_}).</reflection>\n"
            f"<critique>They offer no evidence.</critique>\n"
            f"<speech>Speaker-{position}-{round_} argues. {claim}. That settles it.</speech>")


def justification(winner: str, words: int = 120) -> str:
    """A justification of ``words`` words (seed 004 asks for 100 or more)."""
    opening = f"The {winner} side engaged directly with every point made."
    filler = ["Its", "rebuttals", "answered", "the", "strongest", "claims", "and", "its",
              "facts", "held", "up", "under", "checking"]
    return " ".join([*opening.split(), *(filler * words)][:words])


def judge_reply(winner: str, words: int = 120) -> str:
    return json.dumps({
        "winner": winner,
        "scores": {"logical_coherence": 7, "rebuttal_strength": 6, "factuality": 8},
        "justification": justification(winner, words),
        "flagged_fallacies": [{"speaker": "con", "fallacy": "strawman", "quote": "X"}],
    })


@dataclass
class DebateScript:
    # winner by reading order ("pro_first"/"con_first") per judge api model; default pro.
    judge_winners: dict[str, dict[str, str]] = field(default_factory=dict)
    judge_failures: dict[str, int] = field(default_factory=dict)  # api model -> bad replies
    # The length in words of each judge reply's justification, in the order asked (a re-ask
    # for a longer one included); 120 once these run out.
    justification_words: list[int] = field(default_factory=list)
    claims_of: dict[str, str] = field(default_factory=dict)  # "pro-1" -> the claim made
    verdicts: dict[str, str] = field(default_factory=dict)  # claim -> verdict
    turn_replies: dict[str, str] = field(default_factory=dict)  # "pro-1" -> whole reply
    seen: list[tuple[str, str]] = field(default_factory=list)  # (kind, api model)
    prompts: list[str] = field(default_factory=list)

    def __call__(self, rec) -> str:
        text = "\n".join(m["content"] for m in rec.messages if m["role"] == "user")
        last = [m["content"] for m in rec.messages if m["role"] == "user"][-1]
        model = rec.model
        if REVISE_MARK in last:
            self.seen.append(("revise", model))
            position, round_ = self._where(text)
            return speech_of(model, position, round_, claim="The sky often looks blue")
        if TURN_MARK in text:
            self.seen.append(("turn", model))
            self.prompts.append(text)
            position, round_ = self._where(text)
            key = f"{position}-{round_}"
            if key in self.turn_replies:
                return self.turn_replies[key]
            planted = re.search(r"in these words, and build your case on it: \u201c(.*?)\.\u201d",
                                text)
            if planted:  # a calibration debate's weak side, told to state a false claim
                return speech_of(model, position, round_, claim=planted.group(1))
            return speech_of(model, position, round_,
                             claim=self.claims_of.get(key, TRUE_CLAIM))
        if EXTRACT_MARK in text:
            self.seen.append(("extract", model))
            claims = [c for c in (TRUE_CLAIM, FALSE_CLAIM, "The sky often looks blue",
                                  *self.verdicts) if c in text]
            return json.dumps({"claims": [{"text": c, "type": "historical", "confidence": 0.9}
                                          for c in claims]})
        if VERIFY_MARK in text:
            self.seen.append(("verify", model))
            claim = re.search(r"CLAIM: (.*)", text).group(1)
            verdict = self.verdicts.get(claim, "false" if claim == FALSE_CLAIM else "verified")
            return json.dumps({"verdict": verdict, "confidence": 0.8,
                               "explanation": f"The evidence says otherwise: {verdict}."})
        if JUDGE_MARK in text:
            self.seen.append(("judge", model))
            order = ("con_first" if text.index("ROUND 1 - CON") < text.index("ROUND 1 - PRO")
                     else "pro_first")
            failures = self.judge_failures.get(model, 0)
            if failures:
                self.judge_failures[model] = failures - 1
                return "I refuse to give JSON."
            words = self.justification_words.pop(0) if self.justification_words else 120
            return judge_reply(self.judge_winners.get(model, {}).get(order, "pro"), words)
        return "unexpected request"

    @staticmethod
    def _where(text: str) -> tuple[str, str]:
        position = re.search(r"Your Position: (PRO|CON)", text).group(1).lower()
        round_ = re.search(r"Round: (\d+) of", text).group(1)
        return position, round_




def library() -> tuple[Topic, Persona, Persona]:
    """A topic with evidence and two personas of the test's own (the seeded library is
    there too)."""
    topic = Topic.objects.create(motion="This house would ban cars from city centres",
                                 category="Environment")
    Evidence.objects.create(topic=topic, title="Paris Agreement",
                            content="The Paris Agreement was adopted in December 2015.")
    Evidence.objects.create(topic=topic, title="The Moon",
                            content="NASA: the Moon is made of rock; its crust is anorthosite.")
    Evidence.objects.create(topic=topic, title="Rayleigh scattering",
                            content="The sky often looks blue because air scatters blue light "
                                    "more than red light.")
    first = Persona.objects.create(name="Tester One", description="a careful tester",
                                   traits=["careful"], speaking_style="plainly")
    second = Persona.objects.create(name="Tester Two", description="a bold tester",
                                    traits=["bold"], speaking_style="boldly")
    return topic, first, second




def wait_debate(debate_id, statuses=("completed", "failed"), timeout: float = 30.0) -> Debate:
    debate = wait_for(lambda: Debate.objects.filter(pk=debate_id, status__in=statuses).first(),
                      timeout)
    wait_for(worker_idle, timeout)
    return debate


def debate_row(**fields) -> Debate:
    """A debate in progress with one speech, written directly (no worker, no provider)."""
    from debates.models import DebateStatus, DebateTurn

    topic, first, second = library()
    models = [AIModel.objects.create(slug=slug, name=slug, api_model=slug, provider="P",
                                     provider_kind=ProviderKind.OPENAI)
              for slug in ("row-a", "row-b")]
    debate = Debate.objects.create(topic=topic, model_a=models[0], model_b=models[1],
                                   persona_a=first, persona_b=second, model_a_position="pro",
                                   status=DebateStatus.IN_PROGRESS, judge_model=models[0],
                                   **fields)
    DebateTurn.objects.create(debate=debate, round=1, position="pro", speaker=models[0],
                              speech="An opening.")
    return debate


def completed_debate(template: Debate, model_a=None, model_b=None, *, ai: str = "pro",
                     crowd: str = "pro", days_ago: int = 0,
                     factuality: tuple[float, float] | None = None, **fields) -> Debate:
    """A completed debate like ``template`` (its topic and personas), written directly, with
    the judge's and the crowd's results; with ``factuality``, a fact-checked speech a side."""
    from datetime import timedelta

    from django.utils import timezone

    from debates.models import DebateStatus, DebateTurn

    model_a, model_b = model_a or template.model_a, model_b or template.model_b
    debate = Debate.objects.create(**{
        "topic": template.topic, "model_a": model_a, "model_b": model_b,
        "persona_a": template.persona_a, "persona_b": template.persona_b,
        "model_a_position": "pro", "status": DebateStatus.COMPLETED, "ai_winner": ai,
        "human_winner": crowd, "created_at": timezone.now() - timedelta(days=days_ago),
        **fields})
    debate.ai_outcome, debate.crowd_outcome = debate.outcome_of(ai), debate.outcome_of(crowd)
    debate.save()
    if factuality:
        for position, model, value in (("pro", model_a, factuality[0]),
                                       ("con", model_b, factuality[1])):
            DebateTurn.objects.create(debate=debate, round=1, position=position, speaker=model,
                                      speech="A speech.", factuality=value)
    return debate
