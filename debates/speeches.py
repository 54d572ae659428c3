"""A debater's turn: the Reflect-Critique-Refine prompt (seed 004) and reading the reply.

The reply holds ``<reflection>``, ``<critique>`` and ``<speech>``; models forget tags, close
them wrongly or add prose around them, so :func:`parse_turn` is forgiving: a missing
``<speech>`` makes the whole text (without the other sections) the speech, and says so.
:func:`cut_to_words` enforces the word limit at a sentence boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena.llm import ChatMessage

_SECTION = r"<{tag}\s*>(.*?)(?:</{tag}\s*>|(?=<(?:reflection|critique|speech)\s*>)|\Z)"
_ANY_TAG = re.compile(r"</?(?:reflection|critique|speech)\s*>", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s|$)")

TURN_PROMPT = """You are {name}, {description}.
Background: {background}

DEBATE CONTEXT:
Motion: {motion}
Your Position: {position_label} (you argue {stance} the motion)
Round: {round} of {rounds}

TASK: Generate a debate turn using Reflect-Critique-Refine methodology.

PHASE 1 - REFLECTION:
Analyze your opponent's previous speech. Output your analysis in <reflection> tags.
- What is their central thesis?
- What evidence do they provide?
- What is their strongest point?

PHASE 2 - CRITIQUE:
Identify weaknesses in their argument. Output in <critique> tags.
- Logical fallacies (strawman, false dichotomy, ad hominem, etc.)
- Factual inaccuracies
- Unsupported claims
- Internal contradictions

PHASE 3 - REFINEMENT:
Construct your rebuttal targeting the identified weaknesses. Output in <speech> tags.
- Address their strongest point directly
- Provide counter-evidence
- Maintain your persona's voice and style
- Stay within {word_limit} words

CONSTRAINTS:
- Maintain character consistency with {traits}
- Use {speaking_style}
- Do not break the fourth wall
- Focus on logical argumentation, not personal attacks"""

# Calibration (manage.py debate_calibrate): one side argues its best, the other is handicapped.
STRONG_NOTE = ("Argue as well as you can: a clear thesis, accurate evidence, and a direct "
               "answer to your opponent's strongest point.")
HANDICAPS = {
    "off_topic": ("Do not argue the motion: talk about an unrelated subject of your choice "
                  "and never answer your opponent."),
    "fallacious": ("Argue only with logical fallacies: attack your opponent personally, "
                   "misrepresent what they said, and offer false dilemmas instead of evidence."),
    "false_claims": ("State this as an established fact in your speech, in these words, and "
                     "build your case on it: \u201c{claim}.\u201d"),
}

OPENING_NOTE = ("You speak first: there is no opposing speech yet. In <reflection> and "
                "<critique>, anticipate the other side's strongest case instead.")

REVISION_PROMPT = """A fact-checker found a false claim in your speech:
{findings}
Write the turn again in the same format (<reflection>, <critique>, <speech>), without the
false claim, still within {word_limit} words."""


@dataclass(frozen=True)
class SpeakerBrief:
    name: str
    description: str
    background: str
    traits: list[str]
    speaking_style: str
    motion: str
    position: str  # "pro" | "con"
    round: int
    rounds: int
    word_limit: int
    coaching: str = ""  # calibration only: STRONG_NOTE or a HANDICAPS entry


@dataclass(frozen=True)
class ParsedTurn:
    reflection: str
    critique: str
    speech: str
    tags_missing: bool


def turn_system_prompt(brief: SpeakerBrief) -> str:
    return TURN_PROMPT.format(
        name=brief.name, description=brief.description.rstrip("."),
        background=brief.background or "-", motion=brief.motion,
        position_label=brief.position.upper(),
        stance="for" if brief.position == "pro" else "against",
        round=brief.round, rounds=brief.rounds, word_limit=brief.word_limit,
        traits=", ".join(brief.traits) or "your character",
        speaking_style=brief.speaking_style.rstrip("."),
    )


def turn_messages(brief: SpeakerBrief, transcript: list[tuple[str, str, str]]) -> list[
        ChatMessage]:
    """The debater's conversation: the debate so far as one user message.

    ``transcript`` is ``(label, position, speech)`` per earlier speech, oldest first; the
    debater sees its own earlier speeches and its opponent's, labelled by position.
    """
    lines = [turn_system_prompt(brief)]
    if brief.coaching:
        lines += ["", f"SPECIAL INSTRUCTION: {brief.coaching}"]
    lines += ["", "THE DEBATE SO FAR:"]
    if not transcript:
        lines += ["(nothing yet)", "", OPENING_NOTE]
    for label, position, speech in transcript:
        who = "You" if position == brief.position else "Your opponent"
        lines += [f"[{label}] {who} ({position.upper()}):", speech, ""]
    lines += ["", f"Now write your round {brief.round} turn as {brief.position.upper()}."]
    return [{"role": "user", "content": "\n".join(lines)}]


def revision_messages(original: list[ChatMessage], reply: str, findings: list[str],
                      word_limit: int) -> list[ChatMessage]:
    return [*original, {"role": "assistant", "content": reply},
            {"role": "user", "content": REVISION_PROMPT.format(
                findings="\n".join(f"- {f}" for f in findings), word_limit=word_limit)}]


def _section(tag: str, text: str) -> str | None:
    match = re.search(_SECTION.format(tag=tag), text, re.IGNORECASE | re.DOTALL)
    return match.group(1).strip() if match else None


def parse_turn(text: str) -> ParsedTurn:
    """The three sections of a reply. Without a ``<speech>`` section the speech is the
    reply minus the other sections (``tags_missing``), so nothing the model said is lost."""
    reflection = _section("reflection", text) or ""
    critique = _section("critique", text) or ""
    speech = _section("speech", text)
    if speech:
        return ParsedTurn(reflection, critique, speech, tags_missing=False)
    rest = text
    for tag in ("reflection", "critique"):
        rest = re.sub(_SECTION.format(tag=tag), "", rest, flags=re.IGNORECASE | re.DOTALL)
    rest = _ANY_TAG.sub("", rest).strip() or _ANY_TAG.sub("", text).strip()
    return ParsedTurn(reflection, critique, rest, tags_missing=True)


def cut_to_words(text: str, limit: int) -> tuple[str, bool]:
    """``(text, was_cut)``: at most ``limit`` words, ending at the last sentence end inside
    the limit (or at the limit with an ellipsis when no sentence ends there)."""
    words = text.split()
    if len(words) <= limit:
        return text, False
    # The character offset where word number ``limit`` ends, in the original spacing.
    matches = list(re.finditer(r"\S+", text))
    head = text[:matches[limit - 1].end()]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends:
        return head[:ends[-1]].strip(), True
    return head.rstrip(",;:- ") + "…", True
