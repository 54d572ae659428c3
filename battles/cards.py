"""The image card of a shared battle: a server-drawn SVG (1200 × 630, the size link previews
use), like the leaderboard's plots: no drawing library, every value escaped.

It shows the first prompt, who fought on each side, and the verdict; the side the vote chose
is outlined. Colours are fixed (an image has no theme).
"""

from __future__ import annotations

import textwrap
from html import escape

from django.template.defaultfilters import pluralize

from arena.contests.voting import VoteChoice
from battles.models import Position
from battles.selectors import BattleView

SVG_NS = "http://www.w3.org/2000/svg"
WIDTH, HEIGHT = 1200, 630
PROMPT_CHARS, PROMPT_LINES = 46, 3
NAME_CHARS = 26
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
WINNERS = {VoteChoice.LEFT_BETTER: Position.LEFT, VoteChoice.RIGHT_BETTER: Position.RIGHT}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _lines(text: str) -> list[str]:
    lines = textwrap.wrap(" ".join(text.split()), PROMPT_CHARS) or [""]
    if len(lines) > PROMPT_LINES:
        lines = [*lines[: PROMPT_LINES - 1], _short(lines[PROMPT_LINES - 1] + " …", PROMPT_CHARS)]
    return lines


def _text(x: int, y: int, text: str, *, size: int, fill: str, weight: str = "normal",
          anchor: str = "start") -> str:
    return (f'<text x="{x}" y="{y}" font-size="{size}" font-weight="{weight}" fill="{fill}" '
            f'text-anchor="{anchor}">{escape(text)}</text>')


def _side(view: BattleView, position: str, x: int, winner: str | None) -> list[str]:
    model = view.revealed[position]
    chosen = winner == position
    label = "Assistant A (left)" if position == Position.LEFT else "Assistant B (right)"
    outline = 'stroke="#facc15" stroke-width="6" data-winner="true"' if chosen else (
        'stroke="#374151" stroke-width="2"')
    body = [
        f'<rect x="{x}" y="330" width="500" height="170" rx="18" fill="#1f2937" {outline} '
        f'data-side="{position}"/>',
        _text(x + 30, 375, label, size=24, fill="#9ca3af"),
        _text(x + 30, 425, _short(model.name, NAME_CHARS), size=40, fill="#f9fafb",
              weight="bold"),
        _text(x + 30, 470, _short(model.organization, NAME_CHARS + 10), size=24,
              fill="#9ca3af"),
    ]
    if chosen:
        body.append(_text(x + 470, 375, "★ winner", size=24, fill="#facc15", weight="bold",
                          anchor="end"))
    return body


def battle_card_svg(view: BattleView) -> str:
    """The card of a voted battle as a standalone SVG document."""
    vote = view.vote
    winner = WINNERS.get(vote.choice)
    prompt = view.turns[0].turn.prompt if view.turns else ""
    title = f"Text battle: {view.revealed['left'].name} vs {view.revealed['right'].name}"
    body = [
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#111827"/>',
        _text(70, 90, "⚔ Arena · blind text battle", size=30, fill="#facc15", weight="bold"),
        *(_text(70, 160 + 48 * i, line, size=38, fill="#f9fafb")
          for i, line in enumerate(_lines(f"“{prompt}”"))),
        *_side(view, Position.LEFT, 70, winner),
        *_side(view, Position.RIGHT, 630, winner),
        _text(70, 570, f"Verdict: {vote.get_choice_display()}", size=30, fill="#f9fafb",
              weight="bold"),
        _text(WIDTH - 70, 570, f"{view.message_count} message{pluralize(view.message_count)}",
              size=26, fill="#9ca3af", anchor="end"),
    ]
    return (f'<svg xmlns="{SVG_NS}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
            f'height="{HEIGHT}" role="img" aria-labelledby="card-title" '
            f'font-family="{escape(FONT, quote=True)}"><title id="card-title">{escape(title)}'
            f'</title>{"".join(body)}</svg>')
