"""Deterministic checks of a conversation against its scenario: joint goal accuracy (which
required slots the agent captured and said back, or passed to a tool), containment (resolved
without handing the caller on) and turns to completion."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

ESCALATION = re.compile(
    r"\b(transfer(ring)? you|put you through|human agent|a real person|escalat\w*|"
    r"connect you (to|with) (a|my) (supervisor|manager|colleague)|call (you )?back later)\b",
    re.IGNORECASE)


@dataclass(frozen=True)
class Line:
    role: str  # "user" or "agent"
    text: str


def _found(slot: dict, text: str) -> bool:
    patterns = slot.get("patterns") or [re.escape(str(slot.get("value", "")))]
    return any(re.search(p, text, re.IGNORECASE) for p in patterns if p)


def slot_report(slots: list[dict], lines: list[Line], tool_calls: list[dict]) -> dict:
    """``{"accuracy": 0..1, "slots": {name: bool}, "turns_to_completion": n | None}``.

    A slot counts when the agent said it or sent it to a tool: the caller saying it is not
    enough, the agent has to have captured it.
    """
    tool_text = " ".join(json.dumps(c.get("arguments", {})) for c in tool_calls)
    captured = {s["name"]: _found(s, tool_text) for s in slots}
    completed_at = None
    caller_turns = 0
    for line in lines:
        if line.role == "user":
            caller_turns += 1
            continue
        for slot in slots:
            if not captured[slot["name"]] and _found(slot, line.text):
                captured[slot["name"]] = True
        if completed_at is None and slots and all(captured.values()):
            completed_at = caller_turns
    accuracy = sum(captured.values()) / len(slots) if slots else 1.0
    return {"accuracy": round(accuracy, 3), "slots": captured,
            "turns_to_completion": completed_at}


def contained(lines: list[Line]) -> bool:
    """Resolved without handing the caller to someone else."""
    return not any(line.role == "agent" and ESCALATION.search(line.text) for line in lines)


def parse_transcript(text: str) -> list[Line]:
    """The ``caller: ...`` / ``agent: ...`` lines of a transcript."""
    lines = []
    for raw in text.splitlines():
        role, _, said = raw.partition(":")
        if role.strip() in ("caller", "agent") and said.strip():
            lines.append(Line("user" if role.strip() == "caller" else "agent", said.strip()))
    return lines


def format_transcript(lines: list[Line]) -> str:
    return "\n".join(f"{'caller' if line.role == 'user' else 'agent'}: {line.text}"
                     for line in lines)
