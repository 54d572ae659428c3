"""Model output is untrusted: Markdown is rendered without raw HTML, then sanitised.

Images are not rendered: ``![alt](url)`` shows as a link to the URL, so a model's answer
never makes a viewer's browser fetch a third party (a tracker, or a picture of a model's
name past the text-only identity filter).

The same rules run in the browser while an answer streams (static/js/arena-markdown.js:
markdown-it with these options, DOMPurify with :data:`POLICY`, handed to the page by
:func:`markdown_policy`); this server render stays the source of truth once it ends."""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
    ["table", "strikethrough"]
).disable("image")
POLICY = {
    "tags": sorted({
        "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol",
        "li", "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th",
        "td",
    }),
    "attributes": {"a": ["href", "title"], "th": ["style"],
                   "td": ["style"], "code": ["class"]},
    "url_schemes": ["http", "https", "mailto"],
    "link_rel": "nofollow noopener noreferrer",
}


def render_markdown(text: str) -> str:
    html = _md.render(text or "")
    return nh3.clean(
        html,
        tags=set(POLICY["tags"]),
        attributes={tag: set(names) for tag, names in POLICY["attributes"].items()},
        url_schemes=set(POLICY["url_schemes"]),
        link_rel=POLICY["link_rel"],
    )


def markdown_policy() -> dict:
    """What the browser's live render needs to match this one."""
    return POLICY


def markdown_style(text: str) -> dict[str, int]:
    """How much Markdown styling an answer uses, for style control: headers, list items and
    bold spans, counted from markdown-it's parse (so nothing inside code counts)."""
    counts = {"headers": 0, "lists": 0, "bold": 0}
    kinds = {"heading_open": "headers", "list_item_open": "lists", "strong_open": "bold"}

    def walk(tokens) -> None:
        for token in tokens:
            if token.type in kinds:
                counts[kinds[token.type]] += 1
            if token.children:
                walk(token.children)

    walk(_md.parse(text or ""))
    return counts
