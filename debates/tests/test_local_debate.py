"""A two-round debate between the two embedded models, as a newcomer's arena runs it: the real
SmolLM2 and Qwen on the CPU, every step run here as a plain function. How long it takes is
measured by ``benchmarks/local_debate.py``; this checks what a reader gets."""

from __future__ import annotations

import re

import pytest

from arena.local_models.files import prepare_model
from arena.local_models.serving import LocalModelFleet
from arena.local_models.specs import LOCAL_MODELS
from arena.services import models_sync
from arena.tests.test_local_models import free_port
from debates import services
from debates.models import DebateStatus
from debates.tests.debate_support import library

pytestmark = [pytest.mark.local_model, pytest.mark.django_db(transaction=True)]

# What the prompt said that a small model copied: its labels, its request, list numbers, and
# "The motion:" as a label at the start (within a sentence, "I oppose the motion: ..." is
# the speech's own).
ECHOES = re.compile(r"\[round|your opponent \((?:pro|con)\)|now write your|<speech>|"
                    r"^\s*\d+\.|^\s*the motion:", re.IGNORECASE | re.MULTILINE)


@pytest.fixture
def local_models(monkeypatch, tmp_path):
    for key in LOCAL_MODELS:
        status = prepare_model(LOCAL_MODELS[key])  # joins Qwen's parts, checks the hash
        assert status.available, status.reason
    ports = {key: free_port() for key in LOCAL_MODELS}
    for key, port in ports.items():
        monkeypatch.setenv(LOCAL_MODELS[key].port_env, str(port))
    with LocalModelFleet(list(LOCAL_MODELS), ports=ports) as fleet:
        assert fleet.unavailable == {}
        models_sync(include_local=True)
        yield


def test_a_debate_between_the_two_local_models_reads_as_a_debate(local_models, step_sends,
                                                                  settings):
    settings.ARENA_DEBATE_JUDGE_MODEL = ""
    topic, first, second = library()
    debate = services.debate_create(
        session_key="newcomer", model_a="smollm2-135m", model_b="qwen2.5-coder-0.5b",
        topic_id=str(topic.pk), persona_a=str(first.pk), persona_b=str(second.pk), rounds=2,
        word_limit=80)
    step_sends.run_sent()
    debate.refresh_from_db()
    assert debate.status == DebateStatus.COMPLETED, debate.error
    turns = list(debate.turns.order_by("round", "created_at"))
    assert [(t.round, t.position) for t in turns] == [(1, "pro"), (1, "con"), (2, "pro"),
                                                     (2, "con")]
    for turn in turns:
        assert 5 <= len(turn.speech.split()) <= 80, turn.speech
        assert not turn.tags_missing and "\n" not in turn.speech
        assert not ECHOES.search(turn.speech), turn.speech
    # Both models debate, so neither judges: the crowd decides.
    assert debate.judge_model_id is None and not debate.ai_winner
    for step in debate.steps.filter(kind="fact_check"):
        assert "required property" not in step.note and "JSON" not in step.note
