"""Prompt categories, as LMArena publishes them and the real vote data carries them.

A prompt is classified once: fast deterministic rules first (the language, with py3langid's
bundled model; a longer query, over 500 tokens; code fences and code syntax; math notation),
then, for the judgement calls, a model through the platform's structured output: creative
writing, instruction following and LMArena's hard-prompt criteria (a prompt is hard when it
meets at least 6 of the 7), which may also add coding or math that the rules did not see.
Multi-turn is not a property of one prompt: the mode adds it when a conversation goes on.

Without a classifier model (or when it fails) the rules' categories stand alone and the
classification says why.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from arena.llm import ChatMessage, LLMError, ModelEndpoint, complete_json, estimate_tokens

CATEGORY_TITLES = {
    "coding": "Coding",
    "math": "Math",
    "creative_writing": "Creative writing",
    "instruction_following": "Instruction following",
    "hard_prompt": "Hard prompts",
    "multi_turn": "Multi-turn",
    "long_query": "Longer query",
}
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
_CODE_WORDS = re.compile(
    r"\b(python|javascript|typescript|java|c\+\+|c#|rust|golang|kotlin|swift|php|ruby|sql|"
    r"bash|shell script|regex|html|css|react|django)\b.{0,80}\b(code|function|script|program|"
    r"class|method|query|bug|error|compile|implement)|\b(code|function|script|program|"
    r"implement)\b.{0,40}\b(in|using) (python|javascript|typescript|java|c\+\+|c#|rust|go|"
    r"kotlin|swift|php|ruby|sql|bash)\b",
    re.IGNORECASE | re.DOTALL)
_MATH_NOTATION = re.compile(
    r"\$[^$\n]+\$|\\(frac|int|sum|sqrt|lim|prod|binom|cdot|leq|geq|infty)\b"
    r"|\b\d+\s*[-+*/^×÷]\s*\d+\s*=|\b[a-z]\s*\^\s*\d|\b\d*[a-z]\s*[-+]\s*\d+\s*=\s*\d"
    r"|[∫∑√∞≤≥π]",
    re.IGNORECASE)
_MATH_WORDS = re.compile(
    r"\b(solve|integral|derivative|differentiate|equation|theorem|prove that|probability|"
    r"polynomial|matrix|eigen\w*|logarithm|factori[sz]e|arithmetic|calculate)\b",
    re.IGNORECASE)

JUDGEMENT_SCHEMA = {
    "type": "object",
    "properties": {
        "coding": {"type": "boolean"},
        "math": {"type": "boolean"},
        "creative_writing": {"type": "boolean"},
        "instruction_following": {"type": "boolean"},
        "hard_prompt_criteria": {
            "type": "object",
            "properties": {name: {"type": "boolean"} for name in HARD_CRITERIA},
            "required": list(HARD_CRITERIA),
            "additionalProperties": False,
        },
    },
    "required": ["coding", "math", "creative_writing", "instruction_following",
                 "hard_prompt_criteria"],
    "additionalProperties": False,
}

JUDGEMENT_PROMPT = """Classify the user prompt below. Answer with JSON only.

- coding: it asks to write, explain, review or debug code.
- math: it needs mathematical reasoning or calculation.
- creative_writing: it asks for original creative text (a story, poem, song, script, joke).
- instruction_following: it gives specific instructions on the answer's form or content
  (a length, a format, words to use or avoid, steps to follow).
- hard_prompt_criteria, one true/false each:
  specificity (asks for a specific output), domain_knowledge (needs expert knowledge),
  complexity (has several parts or levels), problem_solving (needs active problem solving),
  creativity (needs a creative approach), technical_accuracy (the answer must be technically
  precise), real_world (relates to a real-world application).

<prompt>
{prompt}
</prompt>"""


@dataclass(frozen=True)
class Classification:
    categories: frozenset[str]
    language: str  # ISO 639-1 code, or "und" when unsure
    method: str  # "rules" or "rules+model"
    note: str = ""  # why the model did not take part, if it did not

    @property
    def tags(self) -> frozenset[str]:
        """The categories plus the language as one tag (``lang-en``), when it is known."""
        if self.language == UNKNOWN_LANGUAGE:
            return self.categories
        return self.categories | {LANGUAGE_PREFIX + self.language}


def category_title(tag: str) -> str:
    if tag.startswith(LANGUAGE_PREFIX):
        code = tag[len(LANGUAGE_PREFIX):]
        return f"Language: {LANGUAGE_NAMES.get(code, code)}"
    return CATEGORY_TITLES.get(tag, tag.replace("_", " ").capitalize())


@functools.cache
def _language_identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

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
            or _CODE_WORDS.search(prompt):
        found.add("coding")
    if _MATH_NOTATION.search(prompt) or (_MATH_WORDS.search(prompt)
                                         and re.search(r"\d", prompt)):
        found.add("math")
    return found


def judgement_messages(prompt: str) -> list[ChatMessage]:
    return [{"role": "user",
             "content": JUDGEMENT_PROMPT.format(prompt=prompt[:MAX_PROMPT_CHARS])}]


def categories_from_judgement(data: dict) -> set[str]:
    """The categories a (schema-valid) judgement gives."""
    found = {name for name in ("coding", "math", "creative_writing", "instruction_following")
             if data.get(name) is True}
    criteria = data.get("hard_prompt_criteria") or {}
    if sum(criteria.get(name) is True for name in HARD_CRITERIA) >= HARD_MIN_CRITERIA:
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
    rules = classify_by_rules(prompt)
    try:
        result = await complete_json(endpoint, judgement_messages(prompt), JUDGEMENT_SCHEMA,
                                     name="categories")
    except LLMError as exc:
        return Classification(rules.categories, rules.language, "rules",
                              f"the classifier model failed: {exc.user_message}")
    return Classification(rules.categories | categories_from_judgement(result.data),
                          rules.language, "rules+model")
