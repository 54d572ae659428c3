"""Steps in tests without a worker: what the services send is recorded, then run here, in
this process, as the plain step functions the tasks call.

    def test_...(step_sends):
        panel = services.panel_create(question="...")   # sends the answers' tasks
        step_sends.run_sent()                           # runs them and what they send

Each mode's step models are also described for the platform's lifecycle test
(``tests/test_step_lifecycle.py``) by a :class:`StepCase` in ``<mode>/tests/step_cases.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.utils.module_loading import import_string


def step_function(task_name: str) -> Callable:
    """The function under the step task ``task_name`` (:func:`arena.steps.step_task`), without
    the task's connection handling (which would end a test's transaction); a plain task sent
    the same way (a failed debate's alert notice) is its own function."""
    run = import_string(task_name).run
    return getattr(run, "__wrapped__", run)


class StepSends:
    """The tasks sent (``arena.steps.send_task``), as ``(task name, args)``, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list]] = []
        self._next = 0

    def __call__(self, name: str, args: list, *, countdown: float | None = None) -> None:
        self.calls.append((name, list(args)))

    def of(self, task: str) -> list[list]:
        """The arguments of every send of ``task`` (its name's last part)."""
        return [args for name, args in self.calls if name.rsplit(".", 1)[-1] == task]

    def run_sent(self, *, until: Callable[[], object] | None = None, limit: int = 500) -> int:
        """Run every job sent since the last run, in order, and the jobs those send, until
        none is left (or ``until()`` is true after one); how many ran. Run them where their
        sends are committed (a transactional test, or inside
        ``django_capture_on_commit_callbacks(execute=True)``)."""
        ran = 0
        while self._next < len(self.calls) and not (ran and until is not None and until()):
            name, args = self.calls[self._next]
            self._next += 1
            step_function(name)(*args)
            ran += 1
            assert ran < limit, "the steps keep sending steps"
        return ran


@pytest.fixture
def step_sends(monkeypatch: pytest.MonkeyPatch) -> StepSends:
    """Tasks are recorded instead of going to the broker (run them with ``run_sent``)."""
    import arena.steps

    sends = StepSends()
    monkeypatch.setattr(arena.steps, "send_task", sends)
    return sends


@dataclass
class StepCase:
    """One step model, as the platform's lifecycle test drives it.

    ``work``: the mode's :class:`arena.steps.StepWork` (the test replaces its work);
    ``make()``: a waiting step (generation 0) and its contest, at the point where this step
    is the one the contest waits for; ``run(pk, generation)``: the mode's step function (what
    its task calls); ``moved_on(step)``: asserts that the contest went on as the mode says
    once this step failed.
    """

    work: object
    make: Callable[[], object]
    run: Callable[[str, int], None]
    moved_on: Callable[[object], None]
