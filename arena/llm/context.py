"""Will a conversation fit a model's context window? Checked before a call, so that a person
hears "too long" at once instead of a provider's HTTP 400 after the wait.

The count is an upper estimate, not a tokenizer: one token per 3 bytes of UTF-8 (English
averages about 4 characters per token with BPE tokenizers; Chinese or Japanese about one
character, 3 bytes, per token) plus a few tokens per message for the chat template. A
prompt refused by it is at most about a third shorter than one the model could have taken.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

BYTES_PER_TOKEN = 3  # of UTF-8: an estimate from above (see the module's note)
MESSAGE_OVERHEAD = 8  # role markers and separators of a chat template, per message


def estimate_input_tokens(texts: Iterable[str]) -> int:
    """Tokens these messages take at most (see the module's note)."""
    return sum(math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN) + MESSAGE_OVERHEAD
               for text in texts)


def input_budget(model) -> int | None:
    """Tokens of conversation ``model`` (an ``AIModel``) reads with room left for its longest
    answer and its system prompt; None when its context window is not known."""
    if not model.context_tokens:
        return None
    return model.context_tokens - model.max_tokens - estimate_input_tokens([model.system_prompt])


def fits(model, texts: Iterable[str]) -> bool:
    budget = input_budget(model)
    return budget is None or estimate_input_tokens(texts) <= budget
