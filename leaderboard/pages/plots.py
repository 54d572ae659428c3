"""Server-side SVG plots of a board (no chart library, no JavaScript).

Each function takes plain data and returns a standalone, well-formed SVG document (it
parses as XML). Colours come from classes styled in ``static/css/leaderboard.css`` with
the site's CSS variables, so inline SVG follows the light or dark theme; cell colours are
fixed hues at partial opacity, which read on both backgrounds. Every model gets exactly
one ``class="mark"`` element in the per-model charts.

The four plots follow FastChat's leaderboard notebook: confidence intervals, the fraction
of wins for every pair (non-tied battles), battle counts per pair, and the average
(predicted) win rate against all other models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from django.utils.safestring import SafeString, mark_safe

SVG_NS = "http://www.w3.org/2000/svg"
ROW = 20
LABEL_CHARS = 28


@dataclass(frozen=True)
class Interval:
    name: str
    rating: float
    lower: float
    upper: float
    provisional: bool = False


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _short(name: str, limit: int = LABEL_CHARS) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _num(x: float) -> str:
    return f"{x:.1f}" if math.isfinite(x) else "0"


def _svg(width: float, height: float, title: str, body: list[str], *, kind: str) -> SafeString:
    ident = f"lb-plot-{kind}-title"
    head = (
        f'<svg xmlns="{SVG_NS}" class="lb-plot lb-plot-{kind}" role="img" '
        f'viewBox="0 0 {_num(width)} {_num(height)}" width="{_num(width)}" '
        f'height="{_num(height)}" aria-labelledby="{ident}" data-plot="{kind}">'
        f'<title id="{ident}">{escape(title)}</title>'
    )
    return mark_safe(head + "".join(body) + "</svg>")  # noqa: S308 - every value is escaped


def _ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick values covering [lo, hi]."""
    span = hi - lo
    if span <= 0 or not math.isfinite(span):
        return [lo]
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out = []
    v = first
    while v <= hi + 1e-9:
        out.append(round(v, 10))
        v += step
    return out


def _empty(title: str, kind: str, message: str) -> SafeString:
    return _svg(
        480, 60, title,
        [f'<text class="lb-note" x="240" y="34" text-anchor="middle">{escape(message)}</text>'],
        kind=kind,
    )


def confidence_interval_chart(points: Sequence[Interval], *, title: str) -> SafeString:
    """One row per model, best first: a dot at the rating, a whisker over the interval."""
    if not points:
        return _empty(title, "ci", "No rated models yet.")
    label_w, plot_w, right, top = 220, 420, 50, 14
    height = top + ROW * len(points) + 44
    lo = min(p.lower for p in points)
    hi = max(p.upper for p in points)
    pad = max((hi - lo) * 0.05, 5.0)
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    body = []
    axis_y = top + ROW * len(points) + 4
    for t in _ticks(lo, hi):
        body.append(
            f'<line class="lb-grid" x1="{_num(x(t))}" x2="{_num(x(t))}" y1="{top - 6}" '
            f'y2="{_num(axis_y)}"/>'
            f'<text class="lb-tick" x="{_num(x(t))}" y="{_num(axis_y + 16)}" '
            f'text-anchor="middle">{t:g}</text>'
        )
    body.append(
        f'<text class="lb-axis-label" x="{label_w + plot_w // 2}" y="{_num(axis_y + 34)}" '
        f'text-anchor="middle">Rating (dot) and 95% interval (line)</text>'
    )
    for i, p in enumerate(points):
        cy = top + ROW * i + ROW / 2
        name = escape(p.name)
        cls = "mark provisional" if p.provisional else "mark"
        body.append(
            f'<g class="lb-row"><title>{name}: {p.rating:.1f} '
            f'(+{p.upper - p.rating:.1f}/−{p.rating - p.lower:.1f})</title>'
            f'<text class="lb-label" x="{label_w - 8}" y="{_num(cy + 4)}" '
            f'text-anchor="end">{escape(_short(p.name))}</text>'
            f'<line class="lb-whisker" x1="{_num(x(p.lower))}" x2="{_num(x(p.upper))}" '
            f'y1="{_num(cy)}" y2="{_num(cy)}"/>'
            f'<circle class="{cls}" cx="{_num(x(p.rating))}" cy="{_num(cy)}" r="4" '
            f'data-model="{_attr(p.name)}"/>'
            f'<text class="lb-value" x="{label_w + plot_w + 8}" y="{_num(cy + 4)}">'
            f"{p.rating:.0f}</text></g>"
        )
    return _svg(label_w + plot_w + right, height, title, body, kind="ci")


def bar_chart(names: Sequence[str], values: Sequence[float], *, title: str,
              kind: str = "winrate", percent: bool = True) -> SafeString:
    """Horizontal bars, one per model, in the order given (values in 0..1 if ``percent``)."""
    if not names:
        return _empty(title, kind, "No rated models yet.")
    label_w, plot_w, right, top = 220, 380, 60, 14
    height = top + ROW * len(names) + 30
    vmax = 1.0 if percent else max(max(values), 1e-9)

    def w(v: float) -> float:
        return max(v, 0.0) / vmax * plot_w

    body = []
    axis_y = top + ROW * len(names) + 4
    for t in _ticks(0.0, vmax, 5):
        label = f"{t:.0%}" if percent else f"{t:g}"
        body.append(
            f'<line class="lb-grid" x1="{_num(label_w + w(t))}" x2="{_num(label_w + w(t))}" '
            f'y1="{top - 6}" y2="{_num(axis_y)}"/>'
            f'<text class="lb-tick" x="{_num(label_w + w(t))}" y="{_num(axis_y + 16)}" '
            f'text-anchor="middle">{label}</text>'
        )
    for i, (name, v) in enumerate(zip(names, values, strict=True)):
        y = top + ROW * i + 3
        text = f"{v:.1%}" if percent else _num(v)
        body.append(
            f'<g class="lb-row"><title>{escape(name)}: {text}</title>'
            f'<text class="lb-label" x="{label_w - 8}" y="{_num(y + 11)}" '
            f'text-anchor="end">{escape(_short(name))}</text>'
            f'<rect class="mark lb-bar" x="{label_w}" y="{_num(y)}" width="{_num(w(v))}" '
            f'height="{ROW - 6}" data-model="{_attr(name)}"/>'
            f'<text class="lb-value" x="{_num(label_w + w(v) + 6)}" y="{_num(y + 11)}">'
            f"{text}</text></g>"
        )
    return _svg(label_w + plot_w + right, height, title, body, kind=kind)


def _win_fill(v: float) -> tuple[str, float]:
    """Blue above one half, orange below; opacity grows with the distance from ½."""
    strength = min(abs(v - 0.5) * 2.0, 1.0)
    hue = "#3b82f6" if v >= 0.5 else "#f97316"
    return hue, 0.12 + 0.78 * strength


def heatmap(
    names: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    title: str,
    kind: str,
    fmt: str = "fraction",
) -> SafeString:
    """An n × n matrix: rows are "model", columns "opponent"; None is a pair never met.

    ``fmt`` "fraction" colours around ½ (blue: row model wins more) and prints 0.xx;
    "count" shades by count and prints integers.
    """
    n = len(names)
    if n < 2:
        return _empty(title, kind, "Too few rated models for a pairwise plot.")
    cell = 34 if n <= 12 else 28 if n <= 20 else 22
    longest = max(len(_short(name, 22)) for name in names)
    label_w = 16 + 7 * max(len(_short(name, 26)) for name in names)
    top = 16 + int(longest * 6.2 * 0.82)  # column labels are rotated by 55°
    width = label_w + cell * n + 10 + int(longest * 6.2 * 0.58)  # rotated labels lean right
    height = top + cell * n + 10
    vmax = max((v for row in values for v in row if v is not None), default=1) or 1
    body = []
    for j, name in enumerate(names):
        cx = label_w + cell * j + cell / 2
        body.append(
            f'<text class="lb-label lb-col" transform="translate({_num(cx + 4)},{top - 6}) '
            f'rotate(-55)">{escape(_short(name, 22))}</text>'
        )
    for i, name in enumerate(names):
        y = top + cell * i
        body.append(
            f'<text class="lb-label lb-rowlabel" x="{label_w - 6}" y="{_num(y + cell / 2 + 4)}" '
            f'text-anchor="end" data-model="{_attr(name)}">{escape(_short(name, 26))}</text>'
        )
        for j, v in enumerate(values[i]):
            x = label_w + cell * j
            if i == j or v is None:
                body.append(
                    f'<rect class="cell lb-empty" x="{x}" y="{y}" width="{cell}" '
                    f'height="{cell}"/>'
                )
                continue
            if fmt == "fraction":
                fill, opacity = _win_fill(v)
                label = f"{v:.2f}"
                tip = f"{names[i]} beat {names[j]} in {v:.0%} of non-tied battles"
            else:
                fill, opacity = "#8b5cf6", 0.1 + 0.85 * (v / vmax)
                label = f"{int(v)}"
                tip = f"{names[i]} vs {names[j]}: {int(v)} battles"
            body.append(
                f'<g><title>{escape(tip)}</title>'
                f'<rect class="cell" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="{fill}" fill-opacity="{opacity:.2f}"/>'
                f'<text class="lb-cell" x="{_num(x + cell / 2)}" y="{_num(y + cell / 2 + 4)}" '
                f'text-anchor="middle">{label}</text></g>'
            )
    return _svg(width, height, title, body, kind=kind)


def pair_matrices(
    n: int, pairs: Sequence[Sequence[int]]
) -> tuple[list[list[float | None]], list[list[float | None]]]:
    """From ``[i, j, wins_i, wins_j, ties, both_bad]`` rows: (win fraction, battle counts).

    Win fraction of row i over column j is wins_i / (wins_i + wins_j) over non-tied
    battles (None when they never had one); counts include ties and both-bad votes.
    """
    frac: list[list[float | None]] = [[None] * n for _ in range(n)]
    count: list[list[float | None]] = [[None] * n for _ in range(n)]
    for i, j, wi, wj, ties, bb in pairs:
        if i >= n or j >= n:
            continue
        total = wi + wj + ties + bb
        count[i][j] = count[j][i] = total
        decided = wi + wj
        if decided:
            frac[i][j] = wi / decided
            frac[j][i] = wj / decided
    return frac, count


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]  # one per x label; None: no value there (a gap)


SERIES_COLOURS = 6  # lb-series-0 … lb-series-5 in leaderboard.css


def line_chart(series: Sequence[Series], x_labels: Sequence[str], *, title: str, kind: str,
               y_label: str, width: int = 480, height: int = 200,
               empty: str = "Nothing to plot yet.") -> SafeString:
    """Lines over shared x positions (oldest left), a dot per value, y from 0 (counts and
    uncertainties: a rise from 0 reads true); a legend names each line. Every label is shown
    when there are few, else about six of them."""
    points = [v for s in series for v in s.values if v is not None]
    if not points or not x_labels:
        return _empty(title, kind, empty)
    left, right, top = 48, 12, 12
    legend = 18 * ((len(series) + 2) // 3) if len(series) > 1 else 0
    bottom = 36 + legend
    plot_w, plot_h = width - left - right, height - top - bottom
    ticks = _ticks(0.0, max(max(points), 1e-9), 4)
    if ticks[-1] < max(points) and len(ticks) > 1:  # a gridline above the highest value
        ticks.append(round(ticks[-1] + ticks[1] - ticks[0], 10))
    hi = max(ticks[-1], max(points))
    n = len(x_labels)

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h - v / hi * plot_h

    body = []
    for t in ticks:
        body.append(
            f'<line class="lb-grid" x1="{left}" x2="{left + plot_w}" y1="{_num(y(t))}" '
            f'y2="{_num(y(t))}"/><text class="lb-tick" x="{left - 6}" y="{_num(y(t) + 4)}" '
            f'text-anchor="end">{t:g}</text>')
    step = max(1, math.ceil(n / 6))
    for i, label in enumerate(x_labels):
        if i % step == 0 or (i == n - 1 and n <= 12):
            # The end labels lean inwards, so that they stay inside the plot.
            anchor = "middle" if n == 1 else "start" if i == 0 else "end" if i == n - 1 \
                else "middle"
            body.append(f'<text class="lb-tick" x="{_num(x(i))}" y="{top + plot_h + 16}" '
                        f'text-anchor="{anchor}">{escape(label)}</text>')
    body.append(f'<text class="lb-axis-label" transform="translate(12,{_num(top + plot_h / 2)}) '
                f'rotate(-90)" text-anchor="middle">{escape(y_label)}</text>')
    for k, s in enumerate(series):
        cls = f"lb-series-{k % SERIES_COLOURS}"
        known = [(i, v) for i, v in enumerate(s.values) if v is not None]
        path = " ".join(f"{_num(x(i))},{_num(y(v))}" for i, v in known)
        dots = "".join(
            f'<circle class="mark" cx="{_num(x(i))}" cy="{_num(y(v))}" r="3">'
            f"<title>{escape(s.name)}, {escape(x_labels[i])}: {v:g}</title></circle>"
            for i, v in known)
        body.append(f'<g class="lb-line {cls}" data-series="{_attr(s.name)}">'
                    f'<polyline points="{path}"/>{dots}</g>')
        if legend:
            lx, ly = left + (k % 3) * (plot_w / 3), height - legend + 4 + 18 * (k // 3)
            body.append(f'<g class="lb-legend {cls}"><rect x="{_num(lx)}" y="{_num(ly)}" '
                        f'width="10" height="10"/><text x="{_num(lx + 14)}" y="{_num(ly + 9)}">'
                        f"{escape(_short(s.name, 18))}</text></g>")
    return _svg(width, height, title, body, kind=kind)
