"""The JSON APIs' error answer, ``{"detail": "..."}``, as their OpenAPI schemas document it.

Apart from :mod:`arena.errors`, whose rule error the models and services raise: those load
at ``django.setup()``, and this needs django-ninja (with pydantic), which only the API does."""

from __future__ import annotations

from ninja import Schema


class ErrorOut(Schema):
    detail: str


def errors(*statuses: int) -> dict[int, type[ErrorOut]]:
    """OpenAPI entries for the error statuses an operation can answer with."""
    return dict.fromkeys(statuses, ErrorOut)
