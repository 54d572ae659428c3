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
from collections.abc import Iterable
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

COMPACT_SYSTEM = ("You are {name}, {description}, debating {stance} the motion \"{motion}\". "
                  "Speak {speaking_style} and stay in character. Answer in one short "
                  "paragraph of plain sentences, at most {word_limit} words, with no lists "
                  "and no headings.")
COMPACT_FIRST = "Open the debate: give two reasons {stance} the motion."
COMPACT_OPPONENT = ("Your opponent said: \"{speech}\" Answer their point, then give one more "
                    "reason {stance} the motion.")
COMPACT_CLOSING = ("Your opponent said: \"{speech}\" This is your closing speech: answer their "
                   "point and sum up why you are {stance} the motion.")
# Asked once more when a reply was nothing but what it was told: the request again without the
# opponent's words, whose "Your opponent said:" a small model copies as its whole reply (7 of
# 40 SmolLM2 closing replies; 0 of 40 asked this way).
COMPACT_OWN_WORDS = {
    "first": "Open the debate in your own words: give two reasons {stance} the motion.",
    "opponent": "In your own words, give one more reason {stance} the motion.",
    "closing": "This is your closing speech: sum up, in your own words, why you are {stance} "
               "the motion.",
}
COMPACT_REVISION = ("That speech stated something false: {findings} Give the speech again "
                    "without it, at most {word_limit} words.")

# What a small model echoes of its prompt or of a transcript: the opponent's words under
# their label (the line goes), and labels at the start of a line (the label goes).
_ECHOED_OPPONENT = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:your )?opponent\b[^:\n]{0,40}:.*$\n?",
                              re.IGNORECASE | re.MULTILINE)
_ECHO = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:(?:your )?(?:opponent|speech|you|pro|con|"
                   r"round \d+|rebuttal|opening|closing|(?:(?:one more |two )?reasons? )?"
                   r"(?:for|against) the motion)[^:\n]{0,40}:|(?:the )?motion\s*:|"
                   r"\*\*[^*\n]{1,40}:\*\*)\s*",
                   re.IGNORECASE | re.MULTILINE)
# What a chat model says before the speech it was asked for ("I'll rephrase it for you:",
# "Sure! Here is my speech:"): only at the very start, and only a line about the reply itself.
_PREAMBLE = re.compile(r"^\s*(?:(?:sure|certainly|okay|of course)\b[,!.]?\s*)?(?:(?:here(?: is|'s)"
                       r"|i'll|i will|let me)\b[^:\n]{0,50}?\b(?:rephrase|speech|turn|response|"
                       r"answer|version|argument)\b[^:\n]{0,20}:\s*)?", re.IGNORECASE)

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


def compact_system(brief: SpeakerBrief) -> str:
    """A small model's system prompt for its turn: who it is, its side, the rules (they keep
    to a short paragraph better there than in a long request they copy back)."""
    system = COMPACT_SYSTEM.format(
        name=brief.name, description=brief.description.rstrip("."), motion=brief.motion,
        stance="for" if brief.position == "pro" else "against",
        speaking_style=brief.speaking_style.rstrip(".") or "plainly",
        word_limit=brief.word_limit)
    return f"{system} {brief.coaching}" if brief.coaching else system


def _compact_kind(brief: SpeakerBrief, opponent_last: str | None) -> str:
    if not opponent_last:
        return "first"
    return "closing" if brief.round == brief.rounds and brief.rounds > 1 else "opponent"


def compact_turn_messages(brief: SpeakerBrief, opponent_last: str | None) -> list[ChatMessage]:
    """A small model's turn: a short request, quoting the opponent's last speech (not the
    whole transcript, whose labels it copied); its system prompt is :func:`compact_system`."""
    stance = "for" if brief.position == "pro" else "against"
    ask = {"first": COMPACT_FIRST, "opponent": COMPACT_OPPONENT, "closing": COMPACT_CLOSING}[
        _compact_kind(brief, opponent_last)]
    return [{"role": "user", "content": ask.format(
        speech=" ".join((opponent_last or "").split()), stance=stance)}]


def compact_own_words_messages(brief: SpeakerBrief,
                               opponent_last: str | None) -> list[ChatMessage]:
    """The same turn asked once more, in so many words and without the opponent's speech
    (:data:`COMPACT_OWN_WORDS`), after a reply that was all echo."""
    stance = "for" if brief.position == "pro" else "against"
    return [{"role": "user", "content": COMPACT_OWN_WORDS[
        _compact_kind(brief, opponent_last)].format(stance=stance)}]


def compact_revision_messages(original: list[ChatMessage], reply: str, findings: list[str],
                              word_limit: int) -> list[ChatMessage]:
    return [*original, {"role": "assistant", "content": reply},
            {"role": "user", "content": COMPACT_REVISION.format(
                findings=" ".join(findings), word_limit=word_limit)}]


_LIST_MARK = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s*", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?\u2026])[\"'\u201d\u2019)]*\s+")
_QUOTE = re.compile(r"[\"\u201c\u201d]")  # a quoted speech's sentences are sentences too


def _key(sentence: str) -> str:
    return re.sub(r"\W+", " ", sentence).strip().casefold()


def parse_compact(text: str, *, prompt: Iterable[str] = ()) -> ParsedTurn:
    """A compact reply is the speech, as one paragraph: tags, a chat preamble ("I'll rephrase
    it for you:"), quotes around it, labels a small model echoes at the start of a line
    ("Speech:", "[Round 1] CON:"), list numbers, a
    sentence said twice and a sentence copied from its ``prompt`` are taken off."""
    speech = _ANY_TAG.sub("", text or "")
    speech = _ECHO.sub("", _ECHOED_OPPONENT.sub("", speech))
    unprefaced = _PREAMBLE.sub("", speech, count=1)
    if unprefaced != speech:
        unprefaced = unprefaced[:1].upper() + unprefaced[1:]
    speech = " ".join(_LIST_MARK.sub("", unprefaced).split())
    if len(speech) > 1 and speech[0] in "\"\u201c" and (
            speech[-1] in "\"\u201d" or not any(q in speech[1:] for q in "\"\u201d")):
        # quoted whole, or opened and never closed (the quote ran past the word limit)
        speech = speech[1:-1 if speech[-1] in "\"\u201d" else None].strip()
    copied = {_key(s) for part in prompt for quoted in _QUOTE.split(part)
              for s in _SENTENCE.split(quoted)}
    kept: list[str] = []
    seen: set[str] = set()
    for sentence in _SENTENCE.split(speech):
        key = _key(sentence)
        if key and key not in seen and key not in copied:
            seen.add(key)
            kept.append(sentence.strip())
    return ParsedTurn("", "", " ".join(kept), tags_missing=False)
