"""Template filters every mode's pages use."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince

from arena.markdown import render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> str:
    """Render untrusted model Markdown to sanitised HTML."""
    return mark_safe(render_markdown(text))  # noqa: S308 - nh3 has sanitised it


@register.filter
def ago(moment: datetime | None) -> str:
    """How long ago, in words: "just now" under a minute, else "3 minutes ago"."""
    if moment is None:
        return ""
    if timezone.now() - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment)} ago"
