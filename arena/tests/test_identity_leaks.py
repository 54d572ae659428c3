"""The identity-leak filter (arena/contests/leaks.py), table-driven: every way of naming a
model that must be caught, and the plain text that must not be."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.contests.leaks import identity_terms, leaked_identity
from arena.model_config import ModelConfigError, load_model_specs
from arena.models import AIModel


def model(slug, name, organization, *, api_model=None, provider=None, aliases=()):
    return AIModel(slug=slug, name=name, organization=organization,
                   api_model=api_model or slug, provider=provider or organization,
                   aliases=list(aliases))


NAMER = model("namer-7b", "Namer 7B", "Namer Labs", api_model="namer-7b-chat")
GPT = model("gpt-4o", "GPT-4o", "OpenAI")
CLAUDE = model("claude-3-haiku", "Claude 3 Haiku", "Anthropic",
               api_model="claude-3-haiku-20240307")
GEMINI = model("gemini-2.5-pro", "Gemini 2.5 Pro", "Google")
LLAMA = model("llama-3.1-8b", "Llama 3.1 8B", "Meta", provider="Groq")
QWEN = model("qwen2.5-coder-0.5b", "Qwen2.5 Coder 0.5B", "Alibaba",
             provider="Local (llama.cpp)")
MISTRAL = model("mistral-small", "Mistral Small", "Mistral")
DEEPSEEK = model("deepseek-chat", "DeepSeek V3", "DeepSeek")
SMOL = model("smollm2-135m", "SmolLM2 135M", "Hugging Face", aliases=["SmolLM"])
CUSTOM = model("house-model", "House Model", "Acme", aliases=["ChatGPT"])
ALPHA = model("alpha-chat", "Alpha Chat", "AlphaCorp")

FLAGGED = [
    # text, model, the term reported
    ("I am NamerBot, at your service.", NAMER, "Namer"),
    ("Built by NamerLabs.", NAMER, "Namer Labs"),
    ("Built by Namer Labs.", NAMER, "Namer Labs"),
    ("I'm GPT4o.", GPT, "gpt-4o"),
    ("As gpt-4o I think", GPT, "gpt-4o"),
    ("I am GPT 4o.", GPT, "gpt-4o"),
    ("I am Claude3.", CLAUDE, "Claude"),
    ("Signed, N.a.m.e.r", NAMER, "Namer"),
    ("Signed, N a m e r", NAMER, "Namer"),
    ("I am ChatGPT.", GPT, "ChatGPT"),
    ("I am Сlаudе (Cyrillic letters).", CLAUDE, "Claude"),
    ("ＧＰＴ－４ｏ in fullwidth", GPT, "gpt-4o"),
    ("Ask Gemini instead", GEMINI, "Gemini"),
    ("Google trained me", GEMINI, "Google"),
    ("I run on Llama weights", LLAMA, "Llama"),
    ("I am Qwen, a coding model", QWEN, "Qwen"),
    ("Made by Alibaba Cloud", QWEN, "Alibaba"),
    ("Mixtral says hi", MISTRAL, "Mixtral"),
    ("DeepSeek here", DEEPSEEK, "DeepSeek"),
    ("I am SmolLM, a small model", SMOL, "SmolLM"),
    ("I am ChatGPT", CUSTOM, "ChatGPT"),  # an alias from the models file
    ("claude-3-haiku-20240307 speaking", CLAUDE, "claude-3-haiku-20240307"),
    # Issue 33: what the reader sees, not the bytes. Markdown that splits a word...
    ("I am **Al**pha **Ch**at, made by **Alph**aCorp.", ALPHA, "alpha-chat"),
    ("Made by `Alph`aCorp", ALPHA, "AlphaCorp"),
    ("Made by Alph*aCorp*", ALPHA, "AlphaCorp"),
    # ...characters nobody sees (zero-width space, word joiner, ZWNJ, ZWJ, soft hyphen, BOM)...
    ("Made by Alpha\u200bCorp", ALPHA, "AlphaCorp"),
    ("Made by Alpha\u2060Corp", ALPHA, "AlphaCorp"),
    ("Made by Al\u200cpha\u200dCorp", ALPHA, "AlphaCorp"),
    ("Made by Alpha\u00adCorp", ALPHA, "AlphaCorp"),
    ("Made by \ufeffAlphaCorp", ALPHA, "AlphaCorp"),
    ("Made by Alpha\u3164Corp", ALPHA, "AlphaCorp"),  # a Hangul filler: a blank letter
    # ...combining accents, HTML entities, a word hyphenated over a line break...
    ("Made by A\u0301lpha\u0308Co\u0327rp", ALPHA, "AlphaCorp"),
    ("Made by &#65;lpha&#x43;orp", ALPHA, "AlphaCorp"),
    ("Made by Alpha&shy;Corp", ALPHA, "Alpha"),  # as written "Alpha", as shown "AlphaCorp"
    ("Made by Alph-\naCorp", ALPHA, "AlphaCorp"),
    # ...and a name's capitalised parts written apart.
    ("Made by Alpha Corp", ALPHA, "AlphaCorp"),
    ("I was trained by Open AI.", GPT, "OpenAI"),
    ("I'm Chat GPT.", GPT, "ChatGPT"),
    # A word with an everyday sense names the model where the text speaks of one.
    ("I am Gemini, built to help.", GEMINI, "Gemini"),
    ("Gemini 2 can answer that.", GEMINI, "Gemini"),
    ("Claude is the model writing this.", CLAUDE, "Claude"),
]

NOT_FLAGGED = [
    ("I am a helpful assistant.", GPT),
    ("Thanks to the open AI community for the data.", GPT),
    ("Claudette wrote a letter.", CLAUDE),
    ("The metadata is missing.", LLAMA),
    ("Two llamas and an alpaca.", LLAMA),
    ("A gem in the mine.", GEMINI),
    ("The rename failed.", NAMER),
    ("A local model answered.", QWEN),
    ("An unrelated answer about coders", QWEN),
    ("I am a language model", GPT),
    ("I am a language model", GEMINI),
    ("Gemini is a constellation", GEMINI),
    ("Claude Monet painted water lilies.", CLAUDE),
    ("The mistral blew down the valley all night.", MISTRAL),
    ("That joke is very meta.", LLAMA),
    ("Thanks to the open AI community for the data.", GPT),
    ("The corp-\norate world.", ALPHA),
]


@pytest.mark.parametrize(("text", "model", "term"), FLAGGED)
def test_a_name_in_any_disguise_is_caught(text, model, term):
    assert leaked_identity([text], [model]) == term


@pytest.mark.parametrize(("text", "model"), NOT_FLAGGED)
def test_plain_text_names_nobody(text, model):
    assert leaked_identity([text], [model]) is None


def test_generic_provider_words_are_not_terms():
    shown = {t.shown for t in identity_terms(QWEN)}
    assert "Local (llama.cpp)" not in shown
    assert {"Qwen", "Alibaba", "qwen2.5-coder-0.5b"} <= shown


def test_every_text_and_either_model_are_searched():
    assert leaked_identity(["hello", "Made by Anthropic"], [GPT, CLAUDE]) == "Anthropic"


def test_a_long_conversation_is_searched_to_its_end():
    text = "A perfectly ordinary sentence about nothing in particular. " * 500  # ~30,000 chars
    assert leaked_identity([text], [NAMER, GPT]) is None
    assert leaked_identity([text + " I am ChatGPT."], [NAMER, GPT]) == "ChatGPT"


def test_the_models_file_takes_aliases(tmp_path):
    good = tmp_path / "models.yaml"
    good.write_text("models:\n  - {id: m1, name: M1, model: m1, base_url: 'http://x/v1', "
                    "aliases: [ChatGPT, Bot One]}\n")
    assert load_model_specs(good)[0].aliases == ("ChatGPT", "Bot One")
    bad = tmp_path / "bad.yaml"
    bad.write_text("models:\n  - {id: m1, name: M1, model: m1, base_url: 'http://x/v1', "
                   "aliases: ChatGPT}\n")
    with pytest.raises(ModelConfigError, match="model 'm1': aliases must be a list of names"):
        load_model_specs(bad)


@pytest.mark.django_db
def test_seeded_aliases_reach_the_registry():
    from arena.services import models_sync

    models_sync()
    assert AIModel.objects.get(pk="smollm2-135m").aliases == ["SmolLM"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_the_quick_letter_check_keeps_exactly_the_letters_squash_keeps(text):
    """leaked_identity skips a term whose letters are not in its quick string: that string
    must be squash()'s own, or a name could slip past."""
    from arena.contests.leaks import _ALNUM_RUN, fold, squash

    folded = fold(text)
    assert "".join(map(str.lower, "".join(_ALNUM_RUN.findall(folded)))) == squash(text).chars
