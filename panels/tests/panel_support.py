"""Scripted fake-provider behaviour for panel tests: answers, judges, question tools.

One :class:`PanelScript` is the ``reply_text`` of the fake servers. It tells requests apart by
their prompt: a judge prompt is answered with a ranking built from the labels in the prompt
(so each judge's own shuffled order is honoured), clarification and question prompts from
scripted lists, anything else is an answer carrying a marker per model (no model names).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from panels.models import Panel
from testkit.fake_providers import Behaviour
from testkit.live import worker_idle
from testkit.ratings import quiet_rating_runs
from testkit.registry import make_model
from testkit.waiting import wait_for

JUDGE_MARK = "You are judging a competition"
CLARIFY_MARK = "Is the question clear and specific enough"
REFINE_MARK = "Rewrite the question as one clear"
GENERATE_MARK = "come up with a challenging, nuanced question"
_RESPONSE = re.compile(r"Response ([A-Z]):\n(.*?)\n\(end of Response \1\)", re.DOTALL)
_MARKER = re.compile(r"Marker-([\w.]+) says")


def answer_text(api_model: str) -> str:
    """An answer that names no model: its marker is the model's first word reversed."""
    return f"Marker-{api_model.split('-')[0][::-1]} says: the answer is **four**."


def labels_in(messages: list[dict]) -> dict[str, str]:
    """``{label: model's first word}`` from the judge prompt (the first user message)."""
    first = next(m["content"] for m in messages if m["role"] == "user")
    return {label: _MARKER.search(text).group(1)[::-1]
            for label, text in _RESPONSE.findall(first)}


def _place(marker: str, preference: list[str]) -> int:
    """Where a model goes in ``preference``; models it does not name go last."""
    return preference.index(marker) if marker in preference else len(preference)


def ranking_reply(labels: dict[str, str], preference: list[str]) -> str:
    """A valid reply ranking the labels by ``preference`` (markers, best first)."""
    order = sorted(labels, key=lambda label: _place(labels[label], preference))
    return f'After weighing them: {{"results": {json.dumps(order)}}}'


@dataclass
class PanelScript:
    preference: list[str] = field(default_factory=lambda: ["alpha", "beta", "gamma"])
    # judge marker -> replies to use in turn (callables get the label map); then valid.
    judge_replies: dict[str, list] = field(default_factory=dict)
    clarify_replies: list[str] = field(default_factory=list)
    refined: list[str] = field(default_factory=list)
    generated: str = "What limits the speed of light in a vacuum?"
    answers: dict[str, str] = field(default_factory=dict)  # model's first word -> answer
    judge_prompts: list[tuple[str, list[dict]]] = field(default_factory=list)
    rating_runs: list[tuple] = field(default_factory=list)

    def __call__(self, rec) -> str:
        messages = rec.messages
        first = next((m["content"] for m in messages if m["role"] == "user"), "")
        marker = rec.model.split("-")[0]
        if JUDGE_MARK in first:
            self.judge_prompts.append((marker, messages))
            labels = labels_in(messages)
            script = self.judge_replies.get(marker) or []
            attempt = sum(1 for m in messages if m["role"] == "assistant")
            if attempt < len(script):
                reply = script[attempt]
                return reply(labels) if callable(reply) else reply
            return ranking_reply(labels, self.preference)
        if CLARIFY_MARK in first:
            return self.clarify_replies.pop(0) if self.clarify_replies else "CLEAR"
        if REFINE_MARK in first:
            return self.refined.pop(0) if self.refined else "A refined question?"
        if GENERATE_MARK in first:
            return self.generated
        return self.answers.get(marker) or answer_text(rec.model)


def self_first(labels: dict[str, str], judge: str, preference: list[str]) -> str:
    """A judge that ranks itself first, then the others by ``preference``."""
    order = sorted(labels, key=lambda lb: (labels[lb] != judge, _place(labels[lb], preference)))
    return json.dumps({"results": order})






def wait_finished(panel_id, timeout: float = 30.0) -> Panel:
    """The panel once it is finished and the worker has no task left running (the last
    step's after-commit work, such as the leaderboard's online Elo, is done too)."""
    def finished():
        panel = Panel.objects.get(pk=panel_id)
        return panel if panel.is_finished else None

    panel = wait_for(finished, timeout)
    wait_for(worker_idle, timeout)
    return panel


def wait_status(panel_id, status: str, timeout: float = 30.0) -> Panel:
    return wait_for(lambda: Panel.objects.filter(pk=panel_id, status=status).first(), timeout)


def failing(server) -> None:
    """Every request to ``server`` fails at once (HTTP 400 is not retried)."""
    server.default = Behaviour.status(400, "This model is switched off.")


def panel_setup(fake_openai, fake_anthropic, settings, monkeypatch,
                script: PanelScript | None = None):
    """Three models (two behind the OpenAI fake, one behind the Anthropic fake) answering and
    judging by ``script``; alpha is also the question model. Returns (script, models).

    Debounced leaderboard runs are recorded in ``script.rating_runs`` instead of being sent:
    sent, they would run 20 s later, in the middle of another test.
    """
    script = script or PanelScript()
    for server in (fake_openai, fake_anthropic):
        server.reply_text = script
    settings.ARENA_PANEL_QUESTION_MODEL = "alpha-7b"
    settings.ARENA_PANELS_PER_MINUTE = 0
    quiet_rating_runs(monkeypatch, script.rating_runs)
    models = [make_model(fake_openai, "alpha-7b"), make_model(fake_openai, "beta-3b"),
              make_model(fake_anthropic, "gamma-1b")]
    return script, models
