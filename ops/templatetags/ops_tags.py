"""How the operations page writes its numbers: a missing figure is a dash, never 0."""

from __future__ import annotations

from django import template

register = template.Library()
DASH = "–"


@register.filter
def percent(value: float | None) -> str:
    """0.0421 → "4.2%"; None (nothing to divide) → a dash."""
    return DASH if value is None else f"{value:.1%}"


@register.filter
def duration(ms: float | None) -> str:
    """Milliseconds as a person reads them: "840 ms", "12.4 s", "3.5 min"."""
    if ms is None:
        return DASH
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


@register.filter
def usd(value: float | None) -> str:
    return DASH if value is None else f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


@register.filter
def window(figures: dict, key: str):  # noqa: ANN201 - whatever the dict holds
    """``figures|window:"hour"``: a window's figures in a template."""
    return figures.get(key)
