"""A debater's turn: the Reflect-Critique-Refine prompt (seed 004) and reading the reply.

The reply holds ``<reflection>``, ``<critique>`` and ``<speech>``; models forget tags, close
them wrongly or add prose around them, so :func:`parse_turn` is forgiving: a missing
``<speech>`` makes the whole text (without the other sections) the speech, and says so.
:func:`cut_to_words` enforces the word limit at a sentence boundary.

The embedded models (135M and 0.5B parameters) cannot follow that: they repeated the
transcript's labels ("[round 1] Your opponent (PRO): …"), never wrote the tags, and took
minutes writing three sections. They get the compact turn (:func:`compact_turn_messages`):
the persona and the rules as the system prompt, the opponent's last speech quoted, and a
request for the speech alone, whose reply :func:`parse_compact` cleans of echoed labels.
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

COMPACT_SYSTEM = """You are {name}, {description}, speaking in a formal debate.
Speak {speaking_style}. Be {traits}. Stay in character and argue with reasons and facts.
Write only your speech: plain sentences, no headings, no lists, no labels, no stage
directions, at most {word_limit} words."""

COMPACT_TURN = """The motion: "{motion}"
You argue {stance} the motion.
{opponent}
Now give your speech {stance} the motion ({round_note}), in at most {word_limit} words."""

COMPACT_OPPONENT = "Your opponent just said:\n\"{speech}\"\nAnswer their main point first."
COMPACT_FIRST = "You speak first: set out your two strongest reasons."
COMPACT_REVISION = """That speech stated something false:
{findings}
Give the speech again without it, in at most {word_limit} words."""

# What a small model echoes of its prompt or of a transcript: the opponent's words under
# their label (the line goes), and labels at the start of a line (the label goes).
_ECHOED_OPPONENT = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:your )?opponent\b[^:\n]{0,40}:.*$\n?",
                              re.IGNORECASE | re.MULTILINE)
_ECHO = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:(?:your )?(?:opponent|speech|you|pro|con|"
                   r"round \d+|rebuttal|opening|closing)[^:\n]{0,40}:|\*\*[^*\n]{1,40}:\*\*)\s*",
                   re.IGNORECASE | re.MULTILINE)

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


def compact_turn_messages(brief: SpeakerBrief, opponent_last: str | None) -> list[ChatMessage]:
    """A small model's turn: the persona and the rules, then the opponent's last speech (not
    the whole transcript, whose labels it copied) and the request for a speech alone. The
    system prompt goes first as the leading user text, so llama.cpp's prompt cache keeps it
    between the debater's turns."""
    stance = "for" if brief.position == "pro" else "against"
    system = COMPACT_SYSTEM.format(
        name=brief.name, description=brief.description.rstrip("."),
        speaking_style=brief.speaking_style.rstrip(".") or "plainly",
        traits=", ".join(brief.traits) or "yourself", word_limit=brief.word_limit)
    if brief.coaching:
        system += f"\n{brief.coaching}"
    opponent = (COMPACT_OPPONENT.format(speech=" ".join(opponent_last.split()))
                if opponent_last else COMPACT_FIRST)
    last = brief.round == brief.rounds and brief.rounds > 1
    turn = COMPACT_TURN.format(
        motion=brief.motion, stance=stance, opponent=opponent, word_limit=brief.word_limit,
        round_note="your closing speech" if last else f"round {brief.round} of {brief.rounds}")
    return [{"role": "user", "content": f"{system}\n\n{turn}"}]


def compact_revision_messages(original: list[ChatMessage], reply: str, findings: list[str],
                              word_limit: int) -> list[ChatMessage]:
    return [*original, {"role": "assistant", "content": reply},
            {"role": "user", "content": COMPACT_REVISION.format(
                findings="\n".join(f"- {f}" for f in findings), word_limit=word_limit)}]


def parse_compact(text: str) -> ParsedTurn:
    """A compact reply is the speech: tags, quotes around it and labels a small model echoes
    at the start of a line ("Speech:", "[Round 1] CON:") are taken off."""
    speech = _ANY_TAG.sub("", text or "")
    speech = _ECHO.sub("", _ECHOED_OPPONENT.sub("", speech)).strip()
    if len(speech) > 1 and speech[0] in "\"“" and speech[-1] in "\"”":
        speech = speech[1:-1].strip()
    return ParsedTurn("", "", speech, tags_missing=False)
