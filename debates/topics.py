"""Motions and the debate library (topics, personas, evidence from ``fixtures/debates/``).

A person's own motion is sanitised (no markup, no control characters, whitespace folded) and
limited in words; it is used once, for their debate, and joins the public pool only when
staff approve it (admin action).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import nh3
import yaml
from django.apps import apps as global_apps
from django.conf import settings
from django.db import transaction

from arena.errors import RuleError

MOTION_MAX_WORDS = 40
MOTION_MAX_CHARS = 300
MOTION_MIN_WORDS = 4
MOTION_EMPTY = "Write a motion to debate, e.g. \u201cThis house would ban homework.\u201d"
MOTION_TOO_LONG = "A motion has at most {limit} words (this one has {count})."
MOTION_TOO_SHORT = "A motion needs at least {limit} words, stated as a claim to argue."
MOTION_CHARS = "A motion has at most {limit} characters (this one has {count})."

LIBRARY_DIR = Path(settings.BASE_DIR) / "fixtures" / "debates"


def clean_motion(text: str | None) -> str:
    """The motion as plain text, or :class:`RuleError` (400/422) saying what is wrong."""
    plain = nh3.clean(text or "", tags=set())  # markup goes, its text stays (escaped)
    plain = plain.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    plain = "".join(c for c in plain if unicodedata.category(c)[0] != "C" or c in "\n\t")
    plain = re.sub(r"\s+", " ", unicodedata.normalize("NFC", plain)).strip()
    if not plain:
        raise RuleError(MOTION_EMPTY, status=400)
    words = len(plain.split())
    if words > MOTION_MAX_WORDS:
        raise RuleError(MOTION_TOO_LONG.format(limit=MOTION_MAX_WORDS, count=words), status=422)
    if words < MOTION_MIN_WORDS:
        raise RuleError(MOTION_TOO_SHORT.format(limit=MOTION_MIN_WORDS), status=422)
    if len(plain) > MOTION_MAX_CHARS:
        raise RuleError(MOTION_CHARS.format(limit=MOTION_MAX_CHARS, count=len(plain)),
                        status=422)
    return plain


def planted_claims(directory: Path | None = None) -> list[str]:
    """The false claims the calibration plants (``calibration.yaml``)."""
    path = (directory or LIBRARY_DIR) / "calibration.yaml"
    return [item["claim"] for item in yaml.safe_load(path.read_text())["claims"]]


def library_load(*, directory: Path | None = None, apps=None) -> dict[str, int]:
    """Upsert the topics (with their evidence) and personas of the library files; returns
    how many of each were created. ``apps``: a migration's app registry."""
    directory = directory or LIBRARY_DIR
    if apps is None:
        apps = global_apps
    topic_model = apps.get_model("debates", "Topic")
    evidence_model = apps.get_model("debates", "Evidence")
    persona_model = apps.get_model("debates", "Persona")
    topics = yaml.safe_load((directory / "topics.yaml").read_text())["topics"]
    personas = yaml.safe_load((directory / "personas.yaml").read_text())["personas"]
    planted = yaml.safe_load((directory / "calibration.yaml").read_text())["claims"]
    created = {"topics": 0, "evidence": 0, "personas": 0}
    with transaction.atomic():
        for item in topics:
            topic, new = topic_model.objects.update_or_create(
                motion=item["motion"].strip(),
                defaults={"category": item["category"], "difficulty": item["difficulty"],
                          "is_balanced": item.get("balanced", True), "is_approved": True})
            created["topics"] += new
            for doc in item.get("evidence", []):
                _, new = evidence_model.objects.update_or_create(
                    topic=topic, title=doc["title"].strip(),
                    defaults={"source": doc.get("source", ""), "url": doc.get("url", ""),
                              "content": " ".join(doc["content"].split())})
                created["evidence"] += new
        for item in planted:  # refutations of the calibration's planted claims
            doc = item["evidence"]
            _, new = evidence_model.objects.update_or_create(
                topic=None, title=doc["title"].strip(),
                defaults={"source": doc.get("source", ""), "url": doc.get("url", ""),
                          "content": " ".join(doc["content"].split())})
            created["evidence"] += new
        for item in personas:
            _, new = persona_model.objects.update_or_create(
                name=item["name"].strip(),
                defaults={"description": item["description"], "traits": item["traits"],
                          "speaking_style": item["speaking_style"],
                          "background": item.get("background", ""), "is_active": True})
            created["personas"] += new
    return created
