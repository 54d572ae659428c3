"""The columns of a release, after LMArena's public human-preference releases where they fit:
one row per counted vote, the two models, the winner (``model_a``, ``model_b``, ``tie``,
``both_bad``), the time, language, turns, the categories (one true/false column each, as
``rate --category NAME`` reads them) and each side's style counts (as ``rate --style-control``
reads them), and the conversations (JSON) of the voters who let them be published.
"""

from __future__ import annotations

import pyarrow as pa

from arena.prompt_categories import CATEGORY_TITLES

STYLE = ("tokens_a", "tokens_b", "headers_a", "headers_b", "lists_a", "lists_b", "bold_a",
         "bold_b")
CATEGORIES = tuple(CATEGORY_TITLES)

FIELDS = [
    pa.field("id", pa.string()),
    pa.field("contest_id", pa.string()),
    pa.field("mode", pa.string()),
    pa.field("board", pa.string()),
    pa.field("voter", pa.string()),  # human, or ai (a panel's judges)
    pa.field("synthetic", pa.bool_()),  # a demo battle's made-up vote (seed_demo)
    pa.field("judge", pa.string()),  # the judging model of an AI-judged outcome
    pa.field("model_a", pa.string()),
    pa.field("model_b", pa.string()),
    pa.field("winner", pa.string()),
    pa.field("timestamp", pa.string()),  # ISO 8601 UTC, microseconds: sorts as text
    pa.field("date", pa.string()),
    pa.field("language", pa.string()),
    pa.field("turns", pa.int32()),
    *(pa.field(name, pa.bool_()) for name in CATEGORIES),
    *(pa.field(name, pa.int64()) for name in STYLE),
    pa.field("publish_text", pa.bool_()),
    pa.field("conversation_a", pa.string()),  # JSON [{"role", "content"}]; "" unpublished
    pa.field("conversation_b", pa.string()),
]
SCHEMA = pa.schema(FIELDS)
COLUMNS = tuple(SCHEMA.names)
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
