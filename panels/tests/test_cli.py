"""``manage.py panel`` through call_command, with a real worker and the fake providers."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from panels.models import Panel, PanelOrigin, PanelStatus
from panels.tests.panel_support import failing, panel_setup


@pytest.fixture
def panel_models(celery_worker, fake_openai, fake_anthropic, settings, monkeypatch):
    yield panel_setup(fake_openai, fake_anthropic, settings, monkeypatch)


class FakeTerminal(io.StringIO):
    """stdin of a person at a terminal, typing ``lines``."""

    def isatty(self) -> bool:
        return True


def panel_command(*args, stdin=None, monkeypatch=None):
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", stdin)
    call_command("panel", *args, "--worker", "external", "--timeout", "60", stdout=out,
                 stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_panel_from_the_command_line(panel_models, fake_openai, fake_anthropic):
    out = io.StringIO()
    # The default: find the running worker by its heartbeat (the test's worker beats).
    call_command("panel", "What is 2+2?", "--no-clarify", "--timeout", "60", stdout=out)
    out = out.getvalue()
    assert "Starting a Celery worker" not in out
    panel = Panel.objects.get()
    assert panel.status == PanelStatus.DONE and panel.origin == PanelOrigin.CLI
    # Key status: at most a four-character prefix, never the key.
    assert "sk-f…" in out
    for server in (fake_openai, fake_anthropic):
        assert server.api_key not in out and server.api_key[:5] not in out
    for text in ("Providers and keys", "Judge: Alpha Model (ranked itself 1 of 3)",
                 "Judge: Gamma Model (ranked itself 3 of 3)", "Final leaderboard: average rank",
                 "without self-votes", "Winner: Alpha Model", "Kendall's W: 1.00",
                 "answers", "judgements", "3/3", f"/panel/{panel.id}/"):
        assert text in out, text
    assert out.index("Final leaderboard") > out.index("Judge: Beta Model")


def test_json_output_is_the_whole_result(panel_models):
    out, err = panel_command("What is 2+2?", "--json", "--models", "alpha-7b", "beta-3b")
    data = json.loads(out)
    assert data["status"] == "done"
    assert [a["model_id"] for a in data["answers"]] == ["alpha-7b", "beta-3b"]
    assert data["verdict"]["standings"][0]["model_id"] == "alpha-7b"
    assert "Final leaderboard" in err  # the display goes to stderr


def test_auto_question(panel_models):
    script, _ = panel_models
    out, _ = panel_command("--auto")
    assert Panel.objects.get().question == script.generated
    assert script.generated in out


def test_no_question_without_a_terminal_is_an_error(panel_models):
    with pytest.raises(CommandError, match="Give a QUESTION, or --auto"):
        panel_command()


def test_fewer_than_two_answers_fails_the_command(panel_models, fake_anthropic):
    failing(fake_anthropic)
    with pytest.raises(CommandError, match="Only 1 of 2 models answered"):
        panel_command("Hi", "--models", "alpha-7b", "gamma-1b")


def test_unknown_models_fail_before_anything_runs(panel_models):
    with pytest.raises(CommandError, match="Unknown model id"):
        panel_command("Hi", "--models", "alpha-7b", "nope")
    assert not Panel.objects.exists()


def test_interactive_clarification_at_a_terminal(panel_models, monkeypatch):
    script, _ = panel_models
    script.clarify_replies = ["Which base do you mean?", "Decimal digits or words?"]
    script.refined = ["What is 2+2 in base ten?", "What is 2+2 in base ten, as digits?"]
    terminal = FakeTerminal("What is 2+2?\nbase ten\nas digits\n")
    out, _ = panel_command(stdin=terminal, monkeypatch=monkeypatch)
    panel = Panel.objects.get()
    assert [r.person_answer for r in panel.rounds.all()] == ["base ten", "as digits", ""]
    assert panel.question == "What is 2+2 in base ten, as digits?"
    assert "Which base do you mean?" in out and panel.status == PanelStatus.DONE


def test_no_clarification_when_not_a_terminal(panel_models):
    panel_command("What is 2+2?")
    assert not Panel.objects.get().rounds.exists()
