"""Does a conversation name a contestant? FastChat's identity filter, made hard to dodge.

A vote whose prompts or answers name either model does not count for ratings. Names are
matched the way a person would read them, not byte for byte:

* text is normalised with NFKC (fullwidth letters, ligatures) and Unicode confusables are
  folded to Latin (Cyrillic "а" for "a", Greek "ο" for "o"): ``confusable_homoglyphs``;
* case, punctuation and joins do not hide a name: "NamerBot", "NamerLabs", "GPT4o",
  "gpt-4o", "GPT 4o", "Claude3", "N.a.m.e.r", "N a m e r";
* but a name must stand as words of its own: "claudette", "metadata" and "the open AI
  community" (two ordinary words) name nobody. A match may cross a space only where the
  name itself has one ("Namer Labs"), between a word and a number ("GPT 4o"), or between
  single spelled-out letters ("N a m e r").

The terms of a model: its id, API name, display name and its first word, organisation,
provider, the ``aliases`` of the models file, and the usual names of its organisation's
models (OpenAI → ChatGPT, GPT; Anthropic → Claude; ...).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from confusable_homoglyphs import confusables

# The names people use for an organisation's models, beside the organisation's own name.
ORGANIZATION_ALIASES: dict[str, tuple[str, ...]] = {
    "openai": ("ChatGPT", "GPT"),
    "anthropic": ("Claude",),
    "google": ("Gemini", "Bard"),
    "meta": ("Llama",),
    "alibaba": ("Qwen",),
    "mistral": ("Mistral", "Mixtral"),
    "mistral ai": ("Mistral", "Mixtral"),
    "deepseek": ("DeepSeek",),
}
# Words that say nothing about which model answered.
GENERIC = {"local", "localllamacpp", "llamacpp", "ollama", "openaicompatible", "openai_compatible",
           "instruct", "chat", "model", "assistant"}
MIN_TERM_LENGTH = 3
JOINERS = frozenset("-_./'’:+")  # inside one name: "gpt-4o", "claude_3", "n.a.m.e.r"
_ALNUM_RUN = re.compile(r"[^\W_]+")  # str.isalnum() characters, as squash() keeps them


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """A non-ASCII letter as the Latin letter it looks like (or itself)."""
    found = confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True)
    for entry in found or ():
        for glyph in entry["homoglyphs"]:
            if glyph["c"].isascii() and glyph["c"].isalnum():
                return glyph["c"]
    return char


def fold(text: str) -> str:
    """NFKC, confusables folded to Latin."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text
    return "".join(c if c.isascii() or not c.isalnum() else _fold_char(c) for c in text)


@dataclass(frozen=True)
class Squashed:
    """Text as lowercase letters and digits only, with what separated them."""

    chars: str
    spaced: tuple[bool, ...]  # a space (not a joiner) stands before char i
    starts: tuple[bool, ...]  # char i starts a word (after a separator, a case or digit change)
    token_length: tuple[int, ...]  # length of the separator-delimited token holding char i
    token_start: tuple[int, ...]  # index where that token starts


def squash(text: str) -> Squashed:
    chars: list[str] = []
    spaced: list[bool] = []
    starts: list[bool] = []
    token_of: list[int] = []
    token_starts: list[int] = []
    separator: str | None = "start"
    previous = ""
    for char in fold(text):
        if not char.isalnum():
            if separator != "space":
                separator = "join" if char in JOINERS and separator is None else "space"
            continue
        camel = previous.islower() and char.isupper()
        digit_change = bool(previous) and previous.isdigit() != char.isdigit()
        if separator is not None:
            token_starts.append(len(chars))
        chars.append(char.lower())
        spaced.append(separator in ("space", "start"))
        starts.append(separator is not None or camel or digit_change)
        token_of.append(len(token_starts) - 1)
        separator, previous = None, char
    ends = [*token_starts[1:], len(chars)]
    return Squashed(
        chars="".join(chars), spaced=tuple(spaced), starts=tuple(starts),
        token_length=tuple(ends[t] - token_starts[t] for t in token_of),
        token_start=tuple(token_starts[t] for t in token_of),
    )


@dataclass(frozen=True)
class Term:
    shown: str  # as written in the registry or file
    chars: str  # squashed
    breaks: frozenset[int]  # positions in ``chars`` where the term itself has a separator


def make_term(shown: str) -> Term | None:
    squashed = squash(shown)
    if len(squashed.chars) < MIN_TERM_LENGTH or squashed.chars in GENERIC:
        return None
    breaks = frozenset(i for i in range(1, len(squashed.chars)) if squashed.token_start[i] == i)
    return Term(shown=shown.strip(), chars=squashed.chars, breaks=breaks)


def identity_terms(model) -> list[Term]:  # noqa: ANN001 - arena.models.AIModel
    """Every term that would tell a voter which model this is, longest first."""
    return _terms((model.slug, model.api_model, model.name, model.organization or "",
                   model.provider, *(getattr(model, "aliases", None) or [])))


@lru_cache(maxsize=1024)
def _terms(names: tuple[str, ...]) -> list[Term]:
    slug, api_model, name, organization, provider, *aliases = names
    first_word = re.split(r"[\s/:]+", name.strip())[0] if name.strip() else ""
    letters = re.match(r"[A-Za-z]+", first_word)
    names = (slug, api_model, name, organization, provider, *aliases,
             first_word, letters.group(0) if letters else "",
             *ORGANIZATION_ALIASES.get(organization.strip().lower(), ()))
    terms: dict[str, Term] = {}
    for name in names:
        term = make_term(name or "")
        if term is not None and term.chars not in terms:
            terms[term.chars] = term
    return sorted(terms.values(), key=lambda t: len(t.chars), reverse=True)


def _letter_digit(a: str, b: str) -> bool:
    return a.isdigit() != b.isdigit()


def _matches_at(text: Squashed, term: Term, i: int) -> bool:
    end = i + len(term.chars)
    if not text.starts[i] or (end < len(text.chars) and not text.starts[end]):
        return False
    for k in range(1, len(term.chars)):
        p = i + k
        if not text.spaced[p] or k in term.breaks:
            continue
        spelled_out = text.token_length[p - 1] == 1 and text.token_length[p] == 1
        if not (spelled_out or _letter_digit(text.chars[p - 1], text.chars[p])):
            return False
    return True


def find_term(text: Squashed, term: Term) -> bool:
    i = text.chars.find(term.chars)
    while i != -1:
        if _matches_at(text, term, i):
            return True
        i = text.chars.find(term.chars, i + 1)
    return False


def leaked_identity(texts: Sequence[str], models: Sequence) -> str | None:
    """The first identifying term of any of ``models`` found in ``texts`` (as the term is
    written), else None.

    A term can only match where its letters stand together in the text's letters and digits
    (:func:`squash`'s ``chars``, made here in C at a fraction of the cost); the word rules
    are checked only for the terms that do."""
    text = fold("\n".join(texts))
    letters = "".join(map(str.lower, "".join(_ALNUM_RUN.findall(text))))
    squashed = None
    for model in models:
        for term in identity_terms(model):
            if term.chars not in letters:
                continue
            squashed = squashed or squash(text)
            if find_term(squashed, term):
                return term.shown
    return None
