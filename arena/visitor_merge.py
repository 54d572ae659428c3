"""What a visitor did moves to another key: when a session's key is rotated, and when a person
signs in (what they did anonymously moves to their account's key).

Every column holding a visitor's key is declared by its mode (``Mode.session_fields``); a mode
whose rows need more than a move declares ``Mode.merge_visitor`` (a dotted path of a callable
``(old_key, new_key)``, run first: the debates' points are added, not moved). A row whose move
would break a unique constraint (the new key already voted on that debate) stays with the old
key; when it is a vote, it is marked as not counting, so a contest voted on both anonymously
and signed in counts once, and nothing is deleted. The key's integrity flags and ban move
with it. The merge is one transaction and running it again changes nothing.
"""

from __future__ import annotations

from django.apps import apps
from django.db import models, transaction
from django.utils.module_loading import import_string

from arena.modes import modes

VOTED_TWICE = "the same person voted on this contest again, signed in"


def session_fields() -> list[tuple[type[models.Model], str]]:
    found = []
    for mode in modes():
        for dotted in mode.session_fields:
            app_label, model_name, field = dotted.split(".")
            found.append((apps.get_model(app_label, model_name), field))
    return found


def _unique_partners(model: type[models.Model], field: str) -> list[tuple[str, ...]]:
    """For each unique constraint ``field`` is part of, its other fields (() when ``field``
    is unique alone)."""
    groups = [tuple(c.fields) for c in model._meta.constraints
              if isinstance(c, models.UniqueConstraint) and c.fields and c.condition is None]
    groups += [tuple(g) for g in model._meta.unique_together]
    if model._meta.get_field(field).unique:
        groups.append((field,))
    return [tuple(f for f in group if f != field) for group in groups if field in group]


def _move(model: type[models.Model], field: str, old: str, new: str) -> int:
    rows = model.objects.filter(**{field: old})
    for partners in _unique_partners(model, field):
        taken = model.objects.filter(**{field: new})
        if partners:
            taken_values = set(taken.values_list(*partners))
            clashing = [pk for pk, *values in rows.values_list("pk", *partners)
                        if tuple(values) in taken_values]
        else:
            clashing = list(rows.values_list("pk", flat=True)) if taken.exists() else []
        if clashing:
            if hasattr(model, "counts_for_rating"):
                model.objects.filter(pk__in=clashing).update(
                    counts_for_rating=False, exclusion_reason=VOTED_TWICE)
            rows = rows.exclude(pk__in=clashing)
    return rows.update(**{field: new})


def _move_standing(old: str, new: str) -> None:
    """What staff and the integrity sweep decided about the old key follows it: its flags
    (one per mode: the new key's own flag in a mode wins) and its ban (unless the new key
    has one), so neither a session's rotation nor a sign-in clears them."""
    flags, bans = apps.get_model("arena", "VisitorFlag"), apps.get_model("arena", "VoterBan")
    before, after = f"session:{old}", f"session:{new}"
    taken = flags.objects.filter(visitor=after).values("mode")
    flags.objects.filter(visitor=before).exclude(mode__in=taken).update(visitor=after)
    if not bans.objects.filter(visitor=after).exists():
        bans.objects.filter(visitor=before).update(visitor=after)


def visitor_merge(old: str, new: str) -> int:
    """Move everything ``old`` owns to ``new`` (see the module's docstring); how many rows
    moved."""
    if not old or not new or old == new:
        return 0
    moved = 0
    with transaction.atomic():
        for mode in modes():
            if mode.merge_visitor:
                import_string(mode.merge_visitor)(old, new)
        for model, field in session_fields():
            moved += _move(model, field, old, new)
        _move_standing(old, new)
    return moved
