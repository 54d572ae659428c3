"""The identity-leak filter against a determined visitor (issue 33, finding 4): hypothesis
writes every configured model's names and aliases the ways a reader still reads them
(Markdown splitting a word, invisible and joining characters, combining accents, HTML
entities, look-alike letters, fullwidth forms, case, a hyphen over a line break) inside a
sentence where a model names itself, and the filter catches every one; plain sentences
name nobody, whichever two configured models battle."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from arena.contests.leaks import fold, identity_terms, leaked_identity
from arena.model_config import load_model_specs
from arena.models import AIModel

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u180e", "\u3164"]
COMBINING = ["\u0300", "\u0301", "\u0302", "\u0308", "\u0327", "\u030a"]
# Letters drawn like Latin ones (Cyrillic, Greek): kept where the filter's own folding reads
# them as the letter (tested apart: the confusables data is the library's).
LOOKALIKES = {
    "a": "\u0430", "c": "\u0441", "e": "\u0435", "i": "\u0456", "o": "\u043e\u03bf",
    "p": "\u0440", "x": "\u0445", "y": "\u0443", "A": "\u0410\u0391", "B": "\u0412\u0392",
    "C": "\u0421", "E": "\u0415\u0395", "H": "\u041d\u0397", "K": "\u041a\u039a",
    "M": "\u041c\u039c", "O": "\u041e\u039f", "P": "\u0420\u03a1", "T": "\u0422\u03a4",
    "X": "\u0425\u03a7",
}
SENTENCES = ["I am {name}.", "Hello! I'm {name}, your AI assistant.",
             "This answer was written by {name}, a language model.",
             "As {name}, I can help with that.", "You are chatting with {name}."]
PLAIN = [
    "I am a language model.", "I am a helpful assistant.", "Gemini is a constellation.",
    "Thanks to the open AI community for the data.", "Two llamas and an alpaca.",
    "The metadata is missing.", "A local model answered.", "Here is a haiku about rivers.",
    "Paris is the capital of France.", "Let me think step by step.",
    "I cannot browse the internet, but I can explain the idea.",
    "The corp-\norate world moved on.", "Claude Monet painted water lilies.",
]


def configured_models() -> list[AIModel]:
    return [AIModel(slug=spec.slug, name=spec.name, api_model=spec.api_model,
                    organization=spec.organization, provider=spec.provider,
                    aliases=list(spec.aliases))
            for spec in load_model_specs(settings.BASE_DIR / "fixtures" / "models.yaml")]


MODELS = configured_models()
NAMES = [(m, term.shown) for m in MODELS for term in identity_terms(m)]


def lookalikes(char: str) -> list[str]:
    return [c for c in LOOKALIKES.get(char, "") if fold(c) == char]


@st.composite
def disguised(draw, name: str) -> str:
    """``name`` as a reader still reads it."""
    out = []
    for char in name:
        if char.isalpha():
            char = draw(st.sampled_from([char, char.swapcase()]))
            choices = [char, *lookalikes(char)]
            if char.isascii():
                choices.append(chr(ord(char) + 0xFEE0))  # fullwidth
            if draw(st.booleans()):
                choices.append(f"&#{ord(char)};")
                choices.append(f"&#x{ord(char):x};")
            char = draw(st.sampled_from(choices))
            if draw(st.integers(0, 4)) == 0:
                char += draw(st.sampled_from(COMBINING))
        elif char.isdigit() and draw(st.booleans()):
            char = chr(ord(char) + 0xFEE0)
        if out and draw(st.integers(0, 3)) == 0:
            out.append(draw(st.sampled_from(INVISIBLE)))
        out.append(char)
    text = "".join(out)
    # Markdown that splits the word, or a hyphen over a line break, at one place (a code
    # span shows an entity as it is written: not with one).
    cuts = [i for i in range(1, len(out)) if out[i - 1][-1:].isalnum() and out[i][:1].isalnum()]
    if cuts:
        cut = len("".join(out[:draw(st.sampled_from(cuts))]))
        head, tail = text[:cut], text[cut:]
        splits = [f"**{head}**{tail}", f"{head}*{tail}*", f"{head}-\n{tail}", text]
        if "&#" not in text:
            splits.append(f"`{head}`{tail}")
        text = draw(st.sampled_from(splits))
    return text


@hypothesis_settings(max_examples=600, deadline=None, derandomize=True, database=None,
                     suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_disguise_of_a_configured_name_gets_through(data):
    model, name = data.draw(st.sampled_from(NAMES))
    sentence = data.draw(st.sampled_from(SENTENCES))
    text = sentence.format(name=data.draw(disguised(name)))
    assert leaked_identity([text], [model]) is not None, (text, unicodedata.name(text[0], ""))


@pytest.mark.parametrize("sentence", PLAIN)
def test_plain_sentences_name_no_configured_model(sentence):
    for pair in itertools.combinations(MODELS, 2):
        assert leaked_identity([sentence], list(pair)) is None, (sentence, pair)


def test_every_configured_model_has_names_to_look_for():
    assert len(MODELS) >= 8 and all(identity_terms(m) for m in MODELS)
