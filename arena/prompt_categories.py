"""Prompt categories, as LMArena publishes them and the real vote data carries them.

A prompt is classified once: fast deterministic rules first (the language, with py3langid's
bundled model; a longer query, over 500 tokens; code fences, code syntax and a programming
language named with a coding verb; math notation; a request for a poem, story, song...;
constraints on the answer's length, format or words), then, for the judgement calls, a model
through the platform's structured output: the prompt's one main kind (which may add creative
writing or instruction following that the rules did not see, in any language) and
LMArena's hard-prompt criteria (a prompt is hard when it meets at least 6 of the 7).
Multi-turn is not a property of one prompt: the mode adds it when a conversation goes on.

Without a classifier model (or when it fails) the rules' categories stand alone and the
classification says why.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from arena.llm.errors import LLMError
from arena.llm.types import ChatMessage, ModelEndpoint, estimate_tokens

CATEGORY_TITLES = {
    "coding": "Coding",
    "math": "Math",
    "creative_writing": "Creative writing",
    "instruction_following": "Instruction following",
    "hard_prompt": "Hard prompts",
    "multi_turn": "Multi-turn",
    "long_query": "Longer query",
}
# Stored as bits of one integer (a battle's and its vote's ``categories``), in this order.
CATEGORY_BITS = {name: 1 << i for i, name in enumerate(CATEGORY_TITLES)}
LANGUAGE_PREFIX = "lang-"
LANGUAGE_NAMES = {
    "en": "English", "zh": "Chinese", "es": "Spanish", "fr": "French", "de": "German",
    "ru": "Russian", "ja": "Japanese", "ko": "Korean", "pt": "Portuguese", "it": "Italian",
    "ar": "Arabic", "hi": "Hindi", "vi": "Vietnamese", "pl": "Polish", "nl": "Dutch",
    "tr": "Turkish", "uk": "Ukrainian", "id": "Indonesian", "fa": "Persian", "he": "Hebrew",
}
UNKNOWN_LANGUAGE = "und"
LONG_QUERY_TOKENS = 500
HARD_CRITERIA = ("specificity", "domain_knowledge", "complexity", "problem_solving",
                 "creativity", "technical_accuracy", "real_world")
HARD_MIN_CRITERIA = 6
MAX_PROMPT_CHARS = 4000  # what the classifier model is shown
LANGUAGE_MIN_CONFIDENCE = 0.25  # the bundled model knows ~100 languages: short prompts spread

_FENCE = re.compile(r"```")
_CODE_SYNTAX = re.compile(
    r"(^\s*(def|class|import|from \S+ import|#include|public (static )?\w+|fn|func|package)\b"
    r"|\bfunction\s*\w*\s*\(|=>\s*[{(]|console\.log\(|System\.out\.|\bprintf?\("
    r"|^\s*(SELECT|INSERT|UPDATE|CREATE TABLE)\b.*|;\s*$|\{\s*$)",
    re.MULTILINE)
_LANGUAGES = (r"(python|javascript|typescript|java|c\+\+|c#|rust|golang|go|kotlin|swift|php|"
              r"ruby|sql|bash|powershell|regex|html|css|react|django|haskell|scala|matlab)"
              r"(?![\w+#])")
_CODE_WORDS = re.compile(
    _LANGUAGES + r".{0,80}\b(code|function|script|program|class|method|query|bug|error|"
    r"compile|implement\w*)\b"
    r"|\b(code|function|script|program|implement|design|build|debug|fix|refactor|write)\b"
    r".{0,60}\b(in|using|with) " + _LANGUAGES,
    re.IGNORECASE | re.DOTALL)
# Names that mean code whatever surrounds them (unlike Java, Go, Rust or Swift).
_CODE_TERMS = re.compile(
    r"\b(python|javascript|typescript|golang|kotlin|php|sql|bash|powershell|regexp?|html|css|"
    r"haskell|matlab|numpy|pandas|django|flask|node\.js|c\+\+|c#|linked list|"
    r"binary (search )?tree|hash ?map|time complexity|big-o|stack trace|segfault|"
    r"compiler error|api endpoint|git (merge|rebase|commit))(?![\w+#])",
    re.IGNORECASE)
_MATH_NOTATION = re.compile(
    r"\$[^$\n]+\$|\\(frac|int|sum|sqrt|lim|prod|binom|cdot|leq|geq|infty)\b"
    r"|\b\d+\s*[-+*/^×÷]\s*\d+\s*=|\b[a-z]\s*\^\s*\d|\b\d*[a-z]\s*[-+]\s*\d+\s*=\s*\d"
    r"|[∫∑√∞≤≥π]",
    re.IGNORECASE)
_MATH_WORDS = re.compile(
    r"\b(solve|integral|derivative|differentiate|equation|theorem|prove that|probability|"
    r"polynomial|matrix|eigen\w*|logarithm|factori[sz]e|arithmetic|calculate)\b",
    re.IGNORECASE)
_CREATIVE = re.compile(
    r"\b(write|compose|create|make up|tell|give)\b.{0,40}\b(poem|haiku|limerick|sonnet|"
    r"story|stories|tale|fable|song|lyrics|rap|screenplay|script for|joke|verse|ode)s?\b",
    re.IGNORECASE | re.DOTALL)
_NUMBER = r"(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|fifty|hundred)"
_UNITS = r"(words?|sentences?|lines?|bullet points?|bullets|paragraphs?|characters|items|steps)"
_INSTRUCTIONS = re.compile(
    r"\b(exactly|at most|no more than|at least|under|fewer than|less than|within)\s+"
    + _NUMBER + r"\s+" + _UNITS + r"\b"
    r"|\bin (" + _NUMBER[1:-1] + r")\s+" + _UNITS + r"\b"
    r"|\b(format(ted)?|answer|respond|reply|output|return)\b.{0,30}\b(as|in) (json|yaml|csv|xml|"
    r"a table|markdown|bullet points|a numbered list|all caps|lowercase|uppercase)\b"
    r"|\b(do not|don't|never|without) (use|using|mention|mentioning|include|including)\b"
    r"|\b(only|just) (answer|reply|respond|output) with\b"
    r"|\b(answer|reply|respond) (only|just) with\b"
    r"|\bstart (each|every|your) \w+ with\b|\bend (it|your answer) with\b",
    re.IGNORECASE | re.DOTALL)
KINDS = ("coding", "math", "creative_writing", "instruction_following", "question", "other")
# What the model may add. Coding and math are the rules' (code and notation are plain to see,
# and the default 0.5B coder model calls a haiku "coding"): offering them as kinds still
# gives the model somewhere to put such prompts other than the judgement calls.
MODEL_DECIDES = frozenset({"creative_writing", "instruction_following"})

JUDGEMENT_SCHEMA = {
    "type": "object",
    "properties": {
        "kind": {"enum": list(KINDS)},
        "hard_prompt_criteria": {"type": "array", "items": {"enum": list(HARD_CRITERIA)},
                                 "uniqueItems": True, "maxItems": len(HARD_CRITERIA)},
    },
    "required": ["kind", "hard_prompt_criteria"],
    "additionalProperties": False,
}

# One kind rather than a yes/no per category, and the criteria as a list: a small local
# model (the default is a 0.5B one) says yes to most yes/no questions, and it answers a
# one-of choice with far fewer tokens.
JUDGEMENT_PROMPT = """What kind of request is this user prompt? Reply in JSON.

kind, the one that fits best:
- "coding": write, explain, review or debug code
- "math": a calculation or mathematical reasoning
- "creative_writing": original creative text such as a story, poem, song or joke
- "instruction_following": strict rules on the answer's form (an exact length, format or words)
- "question": asks for facts or an explanation
- "other": anything else

hard_prompt_criteria: which of these the prompt clearly meets (often none):
specificity (asks for one specific output), domain_knowledge (needs expert knowledge),
complexity (several parts or levels), problem_solving (needs active problem solving),
creativity (needs a creative approach), technical_accuracy (must be technically precise),
real_world (a real-world application)

Examples:
"Write a limerick about a cat" ->
{{"kind": "creative_writing", "hard_prompt_criteria": ["creativity"]}}
"What year did WW2 end?" -> {{"kind": "question", "hard_prompt_criteria": []}}

Prompt: {prompt}"""


@dataclass(frozen=True)
class Classification:
    categories: frozenset[str]
    language: str  # ISO 639-1 code, or "und" when unsure
    method: str  # "rules" or "rules+model"
    note: str = ""  # why the model did not take part, if it did not

    @property
    def tags(self) -> frozenset[str]:
        """The categories plus the language as one tag (``lang-en``), when it is known."""
        return frozenset(category_tags(category_bits(self.categories), self.language))


def category_bits(tags) -> int:
    """The bits of the categories among ``tags`` (a language tag has none)."""
    return sum(CATEGORY_BITS[t] for t in set(tags) if t in CATEGORY_BITS)


def category_tags(bits: int, language: str = "") -> set[str]:
    """The categories of ``bits``, plus the language's tag when it is known."""
    tags = {name for name, bit in CATEGORY_BITS.items() if bits & bit}
    if language and language != UNKNOWN_LANGUAGE:
        tags.add(LANGUAGE_PREFIX + language)
    return tags


def category_title(tag: str) -> str:
    if tag.startswith(LANGUAGE_PREFIX):
        code = tag[len(LANGUAGE_PREFIX):]
        return f"Language: {LANGUAGE_NAMES.get(code, code)}"
    return CATEGORY_TITLES.get(tag, tag.replace("_", " ").capitalize())


@functools.cache
def _language_identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier  # noqa: PLC0415 - not in manage.py rate

    return LanguageIdentifier.from_model_file(
        MODEL_FILE, norm_probs=True, min_confidence=LANGUAGE_MIN_CONFIDENCE)


def prompt_language(prompt: str) -> str:
    """The prompt's language (ISO 639-1), with code blocks left out; "und" when unsure."""
    text = re.sub(r"```.*?(```|$)", " ", prompt, flags=re.DOTALL).strip()
    if len(text) < 8:
        return UNKNOWN_LANGUAGE
    language, _confidence = _language_identifier().classify(text)
    return language


def rule_categories(prompt: str) -> set[str]:
    """What the deterministic rules can say about one prompt."""
    found = set()
    if estimate_tokens(prompt) > LONG_QUERY_TOKENS:
        found.add("long_query")
    if _FENCE.search(prompt) or len(_CODE_SYNTAX.findall(prompt)) >= 2 \
            or _CODE_WORDS.search(prompt) or _CODE_TERMS.search(prompt):
        found.add("coding")
    if _MATH_NOTATION.search(prompt) or (_MATH_WORDS.search(prompt)
                                         and re.search(r"\d", prompt)):
        found.add("math")
    if _CREATIVE.search(prompt):
        found.add("creative_writing")
    if _INSTRUCTIONS.search(prompt):
        found.add("instruction_following")
    return found


def judgement_messages(prompt: str) -> list[ChatMessage]:
    return [{"role": "user",
             "content": JUDGEMENT_PROMPT.format(prompt=prompt[:MAX_PROMPT_CHARS])}]


def categories_from_judgement(data: dict) -> set[str]:
    """The categories a (schema-valid) judgement gives: its kind when that is one of the
    judgement calls (:data:`MODEL_DECIDES`), and ``hard_prompt`` when it names at least 6 of
    the 7 criteria."""
    found = {data["kind"]} & MODEL_DECIDES
    if len(set(data.get("hard_prompt_criteria") or ()) & set(HARD_CRITERIA)) \
            >= HARD_MIN_CRITERIA:
        found.add("hard_prompt")
    return found


def classify_by_rules(prompt: str, *, note: str = "") -> Classification:
    """The rules alone (no model call): ``note`` says why."""
    return Classification(frozenset(rule_categories(prompt)), prompt_language(prompt), "rules",
                          note)


async def classify_prompt(prompt: str, endpoint: ModelEndpoint | None, *,
                          unavailable: str = "") -> Classification:
    """Rules, then the classifier model at ``endpoint`` (None: rules only, ``unavailable``
    says why). A model that fails leaves the rules' categories and says what happened."""
    if endpoint is None:
        return classify_by_rules(prompt, note=unavailable or "no classifier model is configured")
    from arena.llm.structured import complete_json  # noqa: PLC0415 - the provider SDKs load here

    rules = classify_by_rules(prompt)
    try:
        result = await complete_json(endpoint, judgement_messages(prompt), JUDGEMENT_SCHEMA,
                                     name="categories")
    except LLMError as exc:
        return Classification(rules.categories, rules.language, "rules",
                              f"the classifier model failed: {exc.user_message}")
    return Classification(rules.categories | categories_from_judgement(result.data),
                          rules.language, "rules+model")
