"""A call's verdict that agrees with itself and with the transcript.

The LLM judge's words are one input, not the verdict: the arena's own checks come first and
bound what the judge may claim.

* A call in which the caller never spoke has nothing to judge: no task success, no scores.
* Success needs every required slot captured (joint goal accuracy 1): a judge's "succeeded"
  beside "Slots 25 %" becomes "not achieved", with the missing details named.
* A reference, code or number the agent stated that no tool result, the scenario or the
  caller gave is counted as a hallucination, whatever the judge counted (the judge counted
  0 for an invented booking reference).
* A reason that is empty or repeats the instructions ("One or two sentences") is not one.
* The judge is never the language model of either agent (:func:`independent_judge`); with
  none available the call gets the arena's own checks and says why it was not judged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from agents.slots import Line

NOTHING_SAID = "The caller never spoke, so there was no task to judge."
NO_INDEPENDENT_JUDGE = ("Not judged: every available model is one of the two agents' own "
                        "language models, and no agent judges its own call. The checks of "
                        "slots, references and hand-offs below are the arena's own.")
MISSING_SLOTS = "Not achieved: the agent never captured {names}."
INVENTED = "The agent stated {items}, which no tool result, the scenario or the caller gave."
NO_REASON = "The judge gave no reason."
PLACEHOLDERS = ("one or two sentences", "reason", "n/a", "none")

# What an agent could invent that a check can see: a code mixing letters and digits
# (SD-4471, AB12C) or a number of four digits or more (a reference, a phone number).
_REFERENCE = re.compile(r"\b(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]+"
                        r"(?:-[A-Za-z0-9]+)+\b|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{4,}"
                        r"\b|\b\d[\d ,.-]{2,}\d\b")


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def unsupported_references(lines: Iterable[Line], sources: Iterable[str]) -> list[str]:
    """The references and long numbers the agent said that appear in none of ``sources``
    (tool results, the scenario's texts, what the caller said), in order, once each."""
    lines = list(lines)
    known = _key(" ".join([*sources, *(line.text for line in lines if line.role == "user")]))
    found: list[str] = []
    for line in lines:
        if line.role != "agent":
            continue
        for match in _REFERENCE.finditer(line.text):
            item = match.group(0).strip(" ,.-")
            key = _key(item)
            if len(key) >= 4 and key not in known and item not in found and not (
                    key.isdigit() and len(key) < 4):
                found.append(item)
    return found


def scenario_sources(scenario, tool_calls: list[dict]) -> list[str]:  # noqa: ANN001 - Scenario
    return [scenario.system_prompt, scenario.first_message or "",
            scenario.description_for_user, scenario.success_criteria,
            json.dumps([c.get("result") for c in tool_calls])]


def _reason(text: str) -> str:
    cleaned = (text or "").strip()
    bare = cleaned.lower().strip(" .")
    if not bare or bare in PLACEHOLDERS:
        return NO_REASON
    return cleaned[:1000]


def call_verdict(*, lines: list[Line], slots: dict[str, bool], accuracy: float,
                 invented: list[str], judged: dict | None, judge_missing: bool = False) -> dict:
    """The evaluation's verdict columns from the arena's checks and the judge's reply
    (``judged``: task_success, coherence, instruction_following, hallucination_count,
    reason; None when no judge was asked)."""
    if not any(line.role == "user" for line in lines):
        return {"task_success": None, "coherence": None, "instruction_following": None,
                "hallucination_count": None, "judge_reason": NOTHING_SAID}
    notes: list[str] = []
    missing = [name for name, captured in slots.items() if not captured]
    if missing:
        notes.append(MISSING_SLOTS.format(names=", ".join(missing)))
    if invented:
        notes.append(INVENTED.format(items=", ".join(f"“{item}”" for item in invented)))
    if judged is None:
        return {"task_success": False if missing or accuracy < 1 else None,
                "coherence": None, "instruction_following": None,
                "hallucination_count": len(invented),
                "judge_reason": " ".join([*notes, NO_INDEPENDENT_JUDGE if judge_missing
                                          else NO_REASON])}
    success = bool(judged["task_success"]) and not missing and accuracy >= 1
    return {
        "task_success": success,
        "coherence": judged["coherence"],
        "instruction_following": judged["instruction_following"],
        "hallucination_count": max(int(judged["hallucination_count"]), len(invented)),
        "judge_reason": " ".join([*notes, _reason(judged["reason"])]),
    }


def agent_models(*configurations) -> set[str]:
    """The language models behind the agents, as the models file names them (lower case)."""
    names: set[str] = set()
    for configuration in configurations:
        components = configuration.components_json or {}
        config = configuration.config_json or {}
        for value in (components.get("llm"), config.get("llm"), config.get("model")):
            if isinstance(value, str) and value:
                names.add(value.lower())
    return names


def independent_judge(available: list, wanted: str, agents: set[str]):  # noqa: ANN001, ANN201
    """The judge among ``available`` models: ``wanted`` (the configured one) unless it is an
    agent's own model, else the first that is not; None when every one is."""
    def independent(model) -> bool:  # noqa: ANN001 - an AIModel
        return model.slug.lower() not in agents and model.api_model.lower() not in agents

    ordered = sorted(available, key=lambda m: m.slug != wanted)
    return next((m for m in ordered if independent(m)), None)
