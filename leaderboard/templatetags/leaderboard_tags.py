"""Template tags of the leaderboard page.

``{% leaderboard_rows rows %}`` renders the table rows in Python: a board of 200 models
has over 2,000 cells, and Django's template engine spends ~15 ms on them where string
formatting spends ~1 ms. Every value is escaped.
"""

from __future__ import annotations

from urllib.parse import quote

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_BADGE = ' <span class="badge">deprecated</span>'


def _figure(value: float | None) -> str:
    return "\u2013" if value is None else f"{value:.2f}"


@register.simple_tag
def leaderboard_rows(rows, *, provisional: bool = False, link: bool = False,
                     glicko: bool = False, metrics=()) -> SafeString:
    """The rows; with ``link``, each model's name links to its page (``/models/<id>/``);
    with ``glicko``, RD and volatility beside the rating; ``metrics``: the board's own
    figures, as ``(sort, figure)`` pairs."""
    out = []
    for row in rows:
        e = row.e
        badge = _BADGE if e.deprecated else ""
        cls = ' class="deprecated"' if e.deprecated else ""
        rank = "" if provisional else f'<td class="num">{row.rank}</td>'
        name = escape(e.name)
        if link:
            name = f'<a href="/models/{quote(e.subject, safe="")}/">{name}</a>'
        out.append(
            f'<tr data-model="{escape(e.subject)}"{cls}>{rank}'
            f'<td class="lb-model">{name}{badge}</td>'
            f'<td class="num lb-score">{row.rating_display}</td>'
            f'<td class="num lb-ci">{row.ci_display}</td>'
            + (f'<td class="num nowrap lb-glicko">{row.glicko_display}</td>' if glicko else "")
            + "".join(f'<td class="num lb-{sort}">{_figure(row.metrics.get(figure))}</td>'
                      for sort, figure in metrics)
            + f'<td class="num wide-only">{row.elo_display}</td>'
            f'<td class="num">{e.votes}</td>'
            f'<td class="num wide-only">{row.win_rate_display}</td>'
            f'<td class="num wide-only">{e.both_bad}</td>'
            f'<td class="wide-only">{escape(e.organization)}</td>'
            f'<td class="wide-only">{escape(e.license)}</td></tr>'
        )
    return mark_safe("\n".join(out))  # noqa: S308 - every value above is escaped or numeric
