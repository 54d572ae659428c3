"""Keep a test's votes from starting real rating runs."""

from __future__ import annotations


def quiet_rating_runs(monkeypatch, runs: list | None = None) -> list:  # noqa: ANN001
    """Record the leaderboard's debounced runs (as ``(board_name,)``) instead of sending
    them: the test reads which runs its votes asked for, and neither waits for them nor
    has them change the board under it."""
    from leaderboard.runs import services as leaderboard_services

    runs = [] if runs is None else runs
    monkeypatch.setattr(leaderboard_services, "run_send",
                        lambda board_name, **kwargs: runs.append((board_name,)))
    return runs
