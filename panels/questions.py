"""Question tools of seed 003, run by the configured question model
(``ARENA_PANEL_QUESTION_MODEL``): an auto-generated challenging question, and clarification
of a person's question for up to ``ARENA_PANEL_MAX_CLARIFICATION_ROUNDS`` rounds (5).

Prompt building and reply parsing, all pure; the calls are question steps
(:class:`panels.models.QuestionStep`, run in :mod:`panels.steps`).
"""

from __future__ import annotations

import re

MAX_QUESTION_CHARS = 2000

GENERATE_PROMPT = (
    "Please come up with a challenging, nuanced question that I can ask a number of AI "
    "models to evaluate their intelligence. Answer only with the question, no explanation."
)

CLARIFY_PROMPT = """A person wants to ask several AI models this question:

{question}

Is the question clear and specific enough to be answered well?
If it is, reply with exactly one word: CLEAR
If it is not, reply with up to three short clarifying questions for the person, one per
line, and nothing else."""

REFINE_PROMPT = """A person wants to ask several AI models a question.

Question: {question}

Clarifying questions asked: {asked}

The person's answers: {answers}

Rewrite the question as one clear, self-contained question that includes what the answers
add. Reply with only the rewritten question."""

_PREFIX = re.compile(r"^\s*(?:\*\*)?(?:question|refined question|rewritten question)\s*:"
                     r"\s*(?:\*\*)?\s*", re.IGNORECASE)
_CLEAR = re.compile(r"^\W*clear\b", re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z]*\s*|\s*```$")


def clean_question(text: str) -> str:
    """The question in a model's reply: the first paragraph, without a "Question:" prefix,
    code fences or wrapping quotes, at most :data:`MAX_QUESTION_CHARS` characters."""
    text = _FENCE.sub("", (text or "").strip()).strip()
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    first = _PREFIX.sub("", paragraphs[0] if paragraphs else "").strip()
    if len(first) >= 2 and first[0] == first[-1] and first[0] in "\"'\u201c":
        first = first[1:-1].strip()
    if first.startswith("\u201c") and first.endswith("\u201d"):
        first = first[1:-1].strip()
    return first[:MAX_QUESTION_CHARS]


def reply_is_clear(reply: str) -> bool:
    """CLEAR (the word, at the start), or a reply that asks nothing (no question mark)."""
    text = (reply or "").strip()
    return bool(_CLEAR.match(text)) or "?" not in text


def build_clarify_prompt(question: str) -> str:
    return CLARIFY_PROMPT.format(question=question.strip())


def build_refine_prompt(question: str, asked: str, answers: str) -> str:
    return REFINE_PROMPT.format(question=question.strip(), asked=asked.strip(),
                                answers=answers.strip())
