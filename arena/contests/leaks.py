"""Does a conversation name a contestant? FastChat's identity filter, judged on what a reader
sees.

A vote whose prompts or answers name either model does not count for ratings. Each text is
read twice, as written and as the page shows it (:func:`rendered`: Markdown and HTML entities
resolved, so ``**Al**pha`` and ``&#65;lpha`` are "Alpha"), and names are matched the way a
person reads them, not byte for byte:

* characters nobody sees are dropped (zero-width space and joiners, word joiner, soft hyphen,
  byte-order mark, blank "filler" letters), and so are combining accents ("Ålphâ");
* text is normalised with NFKC (fullwidth letters, ligatures) and Unicode confusables are
  folded to Latin (Cyrillic "а" for "a", Greek "ο" for "o"): ``confusable_homoglyphs``;
* case, punctuation and joins do not hide a name: "NamerBot", "NamerLabs", "GPT4o",
  "gpt-4o", "GPT 4o", "Claude3", "N.a.m.e.r", "N a m e r", a word hyphenated over a line
  break ("Alph-⏎aCorp"), and a name's capitalised parts written apart ("Open AI");
* but a name must stand as words of its own: "claudette", "metadata" and "the open AI
  community" (two ordinary words) name nobody. A match may cross a space only where the
  name itself has one ("Namer Labs"), between a word and a number ("GPT 4o"), between
  single spelled-out letters ("N a m e r"), or between capitalised parts ("Chat GPT");
* a name that is also an everyday word (:data:`EVERYDAY`: "Gemini is a constellation",
  "Claude Monet") names the model only where the text speaks of a model or of itself: a
  version next to it ("Gemini 2"), the word before it asking or crediting someone ("ask
  Claude", "made by Meta"), or, in the same sentence, "I"/"my"/"we" or words such as
  model, AI, assistant, trained.

The terms of a model: its id, API name, display name and its first word, organisation,
provider, the ``aliases`` of the models file, and the usual names of its organisation's
models (OpenAI → ChatGPT, GPT; Anthropic → Claude; ...).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import nh3
from confusable_homoglyphs import confusables

from arena.markdown import render_markdown

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
# Names that are also everyday words (a constellation, a painter's first name, a wind, an
# animal, an adjective): they count only where the text speaks of a model or of itself.
EVERYDAY = frozenset({"gemini", "gemma", "claude", "llama", "mistral", "meta", "bard", "phi",
                      "falcon", "grok"})
MIN_TERM_LENGTH = 3
JOINERS = frozenset("-_./'’:+")  # inside one name: "gpt-4o", "claude_3", "n.a.m.e.r"
_ALNUM_RUN = re.compile(r"[^\W_]+")  # str.isalnum() characters, as squash() keeps them
# Letters that draw nothing (Hangul fillers): isalnum() is true of them, so they would
# split a name the way an invisible format character (category Cf) does.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
_HYPHENATED = re.compile(r"(?<=[^\W_])-[ \t]*\r?\n[ \t]*(?=[^\W_])")  # "Alph-⏎aCorp"
_SENTENCE_END = re.compile(r"[.!?;\n]")
# What can join or change letters when Markdown is rendered: emphasis, code spans, entities,
# escapes, strikethrough, links. A text without any reads as it is written.
_MARKUP = re.compile(r"[*_`&\\~\[<]")
# In the sentence: the speaker, or a model spoken of.
_SELF_OR_MODEL = re.compile(
    r"\b(i|i'm|i’m|im|me|my|myself|we|our|us|model|models|ai|assistant|chatbot|bot|llm|"
    r"trained|weights|version)\b")
# The word right before the name: someone asked, used or credited.
_ASKED_OR_CREDITED = frozenset({"ask", "asking", "try", "use", "using", "with", "by", "am",
                                "called", "named", "as", "from"})


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """A non-ASCII letter as the Latin letter it looks like (or itself)."""
    found = confusables.is_confusable(char, preferred_aliases=["latin"], greedy=True)
    for entry in found or ():
        for glyph in entry["homoglyphs"]:
            if glyph["c"].isascii() and glyph["c"].isalnum():
                return glyph["c"]
    return char


def _seen(char: str) -> bool:
    """Whether a character shows as something: not a format character (zero-width ones,
    joiners, the soft hyphen), a combining mark or a blank letter."""
    return unicodedata.category(char) not in ("Cf", "Mn", "Me") and char not in BLANK_LETTERS


def fold(text: str) -> str:
    """What a reader reads: invisible characters and accents dropped, a word hyphenated over
    a line break joined, NFKC, confusables folded to Latin."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = unicodedata.normalize("NFKC", "".join(c for c in text if _seen(c)))
    text = _HYPHENATED.sub("", text)
    if text.isascii():
        return text
    return "".join(c if c.isascii() or not c.isalnum() else _fold_char(c) for c in text)


def rendered(text: str) -> str:
    """The text a page shows of ``text``: its Markdown rendered, tags dropped, entities
    resolved (``**Al**pha`` and ``&#65;lpha`` read "Alpha")."""
    return html.unescape(nh3.clean(render_markdown(text), tags=set()))


@dataclass(frozen=True)
class Squashed:
    """Text as lowercase letters and digits only, with what separated them."""

    text: str  # the folded text the characters come from
    chars: str
    at: tuple[int, ...]  # where char i stands in ``text``
    spaced: tuple[bool, ...]  # a space (not a joiner) stands before char i
    starts: tuple[bool, ...]  # char i starts a word (after a separator, a case or digit change)
    capital: tuple[bool, ...]  # char i is written as a capital
    token_length: tuple[int, ...]  # length of the separator-delimited token holding char i
    token_start: tuple[int, ...]  # index where that token starts


def squash(text: str) -> Squashed:
    folded = fold(text)
    chars: list[str] = []
    at: list[int] = []
    spaced: list[bool] = []
    starts: list[bool] = []
    token_of: list[int] = []
    token_starts: list[int] = []
    separator: str | None = "start"
    previous = ""
    for index, char in enumerate(folded):
        if not char.isalnum():
            if separator != "space":
                separator = "join" if char in JOINERS and separator is None else "space"
            continue
        camel = previous.islower() and char.isupper()
        digit_change = bool(previous) and previous.isdigit() != char.isdigit()
        if separator is not None:
            token_starts.append(len(chars))
        chars.append(char.lower())
        at.append(index)
        spaced.append(separator in ("space", "start"))
        starts.append(separator is not None or camel or digit_change)
        token_of.append(len(token_starts) - 1)
        separator, previous = None, char
    ends = [*token_starts[1:], len(chars)]
    return Squashed(
        text=folded, chars="".join(chars), at=tuple(at), spaced=tuple(spaced),
        starts=tuple(starts), capital=tuple(folded[i].isupper() for i in at),
        token_length=tuple(ends[t] - token_starts[t] for t in token_of),
        token_start=tuple(token_starts[t] for t in token_of),
    )


@dataclass(frozen=True)
class Term:
    shown: str  # as written in the registry or file
    chars: str  # squashed
    breaks: frozenset[int]  # positions in ``chars`` where the term itself has a separator
    camels: frozenset[int]  # positions where it turns from a small letter to a capital
    everyday: bool  # also an everyday word (EVERYDAY)


def make_term(shown: str) -> Term | None:
    squashed = squash(shown)
    if len(squashed.chars) < MIN_TERM_LENGTH or squashed.chars in GENERIC:
        return None
    breaks = frozenset(i for i in range(1, len(squashed.chars)) if squashed.token_start[i] == i)
    camels = frozenset(i for i in range(1, len(squashed.chars))
                       if squashed.capital[i] and not squashed.capital[i - 1])
    return Term(shown=shown.strip(), chars=squashed.chars, breaks=breaks, camels=camels,
                everyday=squashed.chars in EVERYDAY)


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
        capitalised_parts = (k in term.camels and text.capital[p]
                             and text.capital[text.token_start[p - 1]])
        if not (spelled_out or capitalised_parts
                or _letter_digit(text.chars[p - 1], text.chars[p])):
            return False
    return True


def _speaks_of_a_model(text: Squashed, i: int, end: int) -> bool:
    """Whether an everyday word at chars ``i:end`` is used as a model's name (see above)."""
    if end < len(text.chars) and text.chars[end].isdigit():
        return True  # a version: "Gemini 2", "Claude3"
    start, stop = text.at[i], text.at[end - 1] + 1
    before = text.text[:start].lower().split()
    if before and before[-1].strip("\"'“”‘’(") in _ASKED_OR_CREDITED:
        return True
    opened = max((m.end() for m in _SENTENCE_END.finditer(text.text, 0, start)), default=0)
    closed = _SENTENCE_END.search(text.text, stop)
    sentence = text.text[opened:closed.start() if closed else len(text.text)].lower()
    return _SELF_OR_MODEL.search(sentence) is not None


def find_term(text: Squashed, term: Term) -> bool:
    i = text.chars.find(term.chars)
    while i != -1:
        end = i + len(term.chars)
        if _matches_at(text, term, i) and (not term.everyday
                                           or _speaks_of_a_model(text, i, end)):
            return True
        i = text.chars.find(term.chars, i + 1)
    return False


def leaked_identity(texts: Sequence[str], models: Sequence) -> str | None:
    """The first identifying term of any of ``models`` found in ``texts``, read as written
    and as rendered (the term as it is written), else None.

    A term can only match where its letters stand together in the text's letters and digits
    (:func:`squash`'s ``chars``, made here in C at a fraction of the cost); the word rules
    are checked only for the terms that do."""
    raw = "\n".join(texts)
    shown = "\n".join(rendered(t) if _MARKUP.search(t) else t for t in texts)
    for text in (raw, shown) if shown != raw else (raw,):
        folded = fold(text)
        letters = "".join(map(str.lower, "".join(_ALNUM_RUN.findall(folded))))
        squashed = None
        for model in models:
            for term in identity_terms(model):
                if term.chars not in letters:
                    continue
                squashed = squashed or squash(text)
                if find_term(squashed, term):
                    return term.shown
    return None
