"""The image card of a shared battle: a PNG of 1200 × 630 (the size link previews use; X,
Facebook, LinkedIn and Slack show no SVG), drawn on the server with Pillow.

It shows what the shared page shows, after the vote: the first prompt, who fought on each
side, and the verdict; the side the vote chose is outlined. Colours are fixed (an image has no
theme). Long text is wrapped and cut with an ellipsis to the pixel, never past its box.

The text is drawn in Pillow's own scalable font (Aileron, embedded in Pillow: nothing is
fetched, nothing read from the system). It has ASCII and a little punctuation only, so other
letters are folded to those it has (é → e, ß → ss, — → -), and a run of characters it cannot
draw at all (Chinese, Cyrillic, emoji) becomes one "…" rather than a row of empty boxes; the
page's title, which a link preview prints beside the card, still carries them.
"""

from __future__ import annotations

import bisect
import functools
import io
import itertools
import math
import re
import unicodedata
from collections.abc import Iterator
from typing import TYPE_CHECKING

from django.template.defaultfilters import pluralize

from arena.contests.voting import VoteChoice
from battles.models import Position
from battles.selectors import BattleView

if TYPE_CHECKING:
    from PIL.ImageDraw import ImageDraw
    from PIL.ImageFont import FreeTypeFont

WIDTH, HEIGHT = 1200, 630
MARGIN = 70
PROMPT_SIZE, PROMPT_LEADING, PROMPT_LINES = 38, 48, 3
SIDE_WIDTH, SIDE_TOP, SIDE_BOTTOM, SIDE_PAD = 500, 330, 500, 30
SIDES = {Position.LEFT: MARGIN, Position.RIGHT: WIDTH - MARGIN - SIDE_WIDTH}
GROUND, PANEL, EDGE = "#111827", "#1f2937", "#374151"
INK, MUTED, GOLD = "#f9fafb", "#9ca3af", "#facc15"
WINNERS = {VoteChoice.LEFT_BETTER: Position.LEFT, VoteChoice.RIGHT_BETTER: Position.RIGHT}
ELLIPSIS = "…"
# Ellipses with only spaces or punctuation between them (a Chinese sentence's commas fold to
# ASCII ones) read as one.
ELLIPSES = re.compile(r"…(?:[\s,.;:!?]*…)+")
NOT_A_CHARACTER = "\U0010fffd"  # private use: the font draws its "missing" box for it
# Letters and signs that Unicode does not decompose into ones the font has.
FOLDS = str.maketrans({
    "ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "ł": "l",
    "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i",
    "‐": "-", "‑": "-", "–": "-", "—": "-", "―": "-", "−": "-", "‚": ",", "„": "“",
    "×": "x", "÷": "/", "•": "·", "′": "'", "″": '"',
})


@functools.cache
def _font(size: int) -> FreeTypeFont:
    from PIL import ImageFont  # noqa: PLC0415 - Pillow: the first card loads it, not setup

    return ImageFont.load_default(size=size)


@functools.lru_cache(maxsize=4096)
def _drawable(char: str) -> bool:
    """Whether the font has a glyph for the character (else it draws its "missing" box)."""
    font = _font(PROMPT_SIZE)
    mask, missing = font.getmask(char), font.getmask(NOT_A_CHARACTER)
    return mask.size != missing.size or bytes(mask) != bytes(missing)


def card_text(text: str) -> str:
    """The text on one line in what the font can draw (see the module's docstring)."""
    out: list[str] = []
    for char in " ".join(text.split()):
        if not _drawable(char):
            char = "".join(c for c in unicodedata.normalize("NFKD", char.translate(FOLDS))
                           if _drawable(c))
        if char:
            out.append(char)
        elif not out or out[-1] != ELLIPSIS:
            out.append(ELLIPSIS)
    return ELLIPSES.sub(ELLIPSIS, "".join(out))


def _fitting(text: str, font: FreeTypeFont, width: float) -> int:
    """How many of the text's first characters fit in ``width`` pixels (at least one)."""
    fits = bisect.bisect_right(range(1, len(text) + 1), width,
                               key=lambda n: font.getlength(text[:n]))
    return max(fits, 1)


def clip(text: str, font: FreeTypeFont, width: float) -> str:
    """The text if it fits in ``width`` pixels, else as much as fits, then an ellipsis."""
    if font.getlength(text) <= width:
        return text
    return text[:_fitting(text, font, width - font.getlength(ELLIPSIS))].rstrip() + ELLIPSIS


def _lines(text: str, font: FreeTypeFont, width: float) -> Iterator[str]:
    """Lines of at most ``width`` pixels, broken at spaces (inside a word only when the word
    is wider than a line); made one at a time, so a long text costs only the lines taken."""
    line = ""
    for word in text.split(" "):
        while word:
            joined = f"{line} {word}" if line else word
            if font.getlength(joined) <= width:
                line, word = joined, ""
            elif line:
                yield line
                line = ""
            else:
                cut = _fitting(word, font, width)
                yield word[:cut]
                word = word[cut:]
    if line:
        yield line


def wrap(text: str, font: FreeTypeFont, width: float, most: int) -> list[str]:
    """At most ``most`` lines of the text; the last ends with an ellipsis if some is left."""
    lines = list(itertools.islice(_lines(text, font, width), most + 1)) or [""]
    if len(lines) > most:
        lines = [*lines[:most - 1], clip(lines[most - 1] + ELLIPSIS, font, width)]
    return lines


def _write(draw: ImageDraw, xy: tuple[float, float], text: str, *, size: int, fill: str,
           bold: bool = False, anchor: str = "ls") -> None:
    """Text at a baseline point (``ls``: left, ``rs``: right). The font has one weight: bold
    is the text drawn again a pixel to the right (a stroke all round blots the small sizes)."""
    x, y = xy
    for dx in (0, 1) if bold else (0,):
        draw.text((x + dx, y), text, font=_font(size), fill=fill, anchor=anchor)


def _star(draw: ImageDraw, cx: float, cy: float, radius: float) -> None:
    points = [(cx + r * math.sin(i * math.pi / 5), cy - r * math.cos(i * math.pi / 5))
              for i, r in zip(range(10), itertools.cycle((radius, radius * 0.45)), strict=False)]
    draw.polygon(points, fill=GOLD)


def _side(draw: ImageDraw, view: BattleView, position: str, winner: str | None) -> None:
    x, model = SIDES[position], view.revealed[position]
    chosen = winner == position
    room = SIDE_WIDTH - 2 * SIDE_PAD
    draw.rounded_rectangle((x, SIDE_TOP, x + SIDE_WIDTH, SIDE_BOTTOM), radius=18, fill=PANEL,
                           outline=GOLD if chosen else EDGE, width=6 if chosen else 2)
    label = "Assistant A (left)" if position == Position.LEFT else "Assistant B (right)"
    _write(draw, (x + SIDE_PAD, 375), label, size=24, fill=MUTED)
    _write(draw, (x + SIDE_PAD, 425), clip(card_text(model.name), _font(40), room), size=40,
           fill=INK, bold=True)
    _write(draw, (x + SIDE_PAD, 470), clip(card_text(model.organization), _font(24), room),
           size=24, fill=MUTED)
    if chosen:
        right = x + SIDE_WIDTH - SIDE_PAD
        _write(draw, (right, 375), "winner", size=24, fill=GOLD, bold=True, anchor="rs")
        _star(draw, right - _font(24).getlength("winner") - 16, 366, 11)


def battle_card_png(view: BattleView) -> bytes:
    """The card of a voted battle, as PNG bytes."""
    from PIL import Image, ImageDraw  # noqa: PLC0415 - Pillow: the first card loads it, not setup

    vote = view.vote
    winner = WINNERS.get(vote.choice)
    prompt = view.turns[0].turn.prompt if view.turns else ""
    image = Image.new("RGB", (WIDTH, HEIGHT), GROUND)
    draw = ImageDraw.Draw(image)
    _write(draw, (MARGIN, 90), "Arena · blind text battle", size=30, fill=GOLD, bold=True)
    lines = wrap(f"“{card_text(prompt)}”", _font(PROMPT_SIZE), WIDTH - 2 * MARGIN, PROMPT_LINES)
    for i, line in enumerate(lines):
        _write(draw, (MARGIN, 160 + PROMPT_LEADING * i), line, size=PROMPT_SIZE, fill=INK)
    for position in SIDES:
        _side(draw, view, position, winner)
    _write(draw, (MARGIN, 570), f"Verdict: {vote.get_choice_display()}", size=30, fill=INK,
           bold=True)
    _write(draw, (WIDTH - MARGIN, 570),
           f"{view.message_count} message{pluralize(view.message_count)}", size=26, fill=MUTED,
           anchor="rs")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
