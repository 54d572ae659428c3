"""A call's verdict agrees with itself and with the transcript (the newcomer saw "✓ succeeded"
beside "Slots 25 %", "Hallucinations 0" for an invented booking reference, and a silent
1-second call scored "succeeded, coherence 90 %" with the judge's placeholder as its reason)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agents.judgement import (
    INVENTED,
    NO_INDEPENDENT_JUDGE,
    NO_REASON,
    NOTHING_SAID,
    agent_models,
    call_verdict,
    independent_judge,
    unsupported_references,
)
from agents.slots import Line

ALL = {"day": True, "time": True, "name": True}
JUDGED = {"task_success": True, "coherence": 0.9, "instruction_following": 0.8,
          "hallucination_count": 0, "reason": "The booking was confirmed."}
TALK = [Line("agent", "Shear Delight, how can I help?"),
        Line("user", "A haircut on Tuesday at three for John Smith."),
        Line("agent", "Booked: Tuesday at 3 pm for John Smith.")]


def test_a_call_where_the_caller_never_spoke_is_not_scored():
    verdict = call_verdict(lines=[Line("agent", "Hello?")], slots={"day": False},
                           accuracy=0.0, invented=[], judged=JUDGED)
    assert verdict == {"task_success": None, "coherence": None, "instruction_following": None,
                       "hallucination_count": None, "judge_reason": NOTHING_SAID}


def test_success_needs_every_required_slot():
    verdict = call_verdict(lines=TALK, slots={"day": True, "time": False, "name": False},
                           accuracy=1 / 3, invented=[], judged=JUDGED)
    assert verdict["task_success"] is False
    assert verdict["judge_reason"].startswith("Not achieved: the agent never captured time, name.")
    assert verdict["coherence"] == 0.9  # the judge's own scores stand
    assert call_verdict(lines=TALK, slots=ALL, accuracy=1.0, invented=[],
                        judged=JUDGED)["task_success"] is True


def test_an_invented_reference_is_a_hallucination_whatever_the_judge_counted():
    lines = [*TALK, Line("agent", "Your booking reference is BK-88123. See you Tuesday.")]
    sources = ["Tool results: [{'status': 'booked', 'reference': 'SD-4471'}]"]
    invented = unsupported_references(lines, sources)
    assert invented == ["BK-88123"]
    verdict = call_verdict(lines=lines, slots=ALL, accuracy=1.0, invented=invented,
                           judged=JUDGED)
    assert verdict["hallucination_count"] == 1
    assert INVENTED.format(items="“BK-88123”") in verdict["judge_reason"]


@pytest.mark.parametrize("said", [
    "Your reference is SD-4471.",  # the tool's own result
    "I have you down for Tuesday at 3 pm.",  # times and days are slots, not references
    "We are open 9 am to 6 pm, call 555 0199 if needed",  # the caller gave that number
])
def test_what_a_tool_the_scenario_or_the_caller_gave_is_not_invented(said):
    lines = [Line("user", "my number is 555-0199"), Line("agent", said)]
    assert unsupported_references(lines, ["{'reference': 'SD-4471'}"]) == []


@pytest.mark.parametrize("reason", ["", "One or two sentences", "one or two sentences.", "..."])
def test_a_placeholder_is_not_a_reason(reason):
    verdict = call_verdict(lines=TALK, slots=ALL, accuracy=1.0, invented=[],
                           judged={**JUDGED, "reason": reason})
    assert verdict["judge_reason"] == NO_REASON


def test_without_an_independent_judge_the_arenas_checks_stand_and_say_why():
    verdict = call_verdict(lines=TALK, slots={"day": True, "time": False}, accuracy=0.5,
                           invented=["X9-1"], judged=None, judge_missing=True)
    assert verdict["task_success"] is False and verdict["coherence"] is None
    assert verdict["hallucination_count"] == 1
    assert verdict["judge_reason"].endswith(NO_INDEPENDENT_JUDGE)
    complete = call_verdict(lines=TALK, slots=ALL, accuracy=1.0, invented=[], judged=None,
                            judge_missing=True)
    assert complete["task_success"] is None  # nobody judged the success criteria


def _model(slug: str, api_model: str = "") -> SimpleNamespace:
    return SimpleNamespace(slug=slug, api_model=api_model or f"{slug}-api")


def _config(llm: str) -> SimpleNamespace:
    return SimpleNamespace(components_json={"llm": llm}, config_json={"llm": llm})


def test_no_agent_judges_its_own_call():
    agents = agent_models(_config("smollm2-135m"), _config("qwen2.5-coder-0.5b"))
    local = [_model("qwen2.5-coder-0.5b"), _model("smollm2-135m")]
    assert independent_judge(local, "", agents) is None
    assert independent_judge(local, "smollm2-135m", agents) is None  # even when configured
    judge = _model("gpt-4o-mini")
    assert independent_judge([*local, judge], "smollm2-135m", agents) is judge
    managed = agent_models(SimpleNamespace(components_json={"llm": "gpt-4.1"},
                                           config_json={"model": "GPT-4o-mini"}))
    assert independent_judge([_model("openai-4o", "gpt-4o-mini"), _model("other")], "",
                             managed).slug == "other"
