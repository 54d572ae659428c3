import logging

from arena import modes

logger = logging.getLogger(__name__)


class LeaderboardConfig(modes.ModeConfig):
    name = "leaderboard"
    mode = modes.Mode(
        key="leaderboard", label="Leaderboard", path="leaderboard/", order=90,
        summary="Every verdict rated: Bradley–Terry with intervals, Elo and Glicko-2.",
        urls="leaderboard.pages.urls", api_router="leaderboard.pages.api.router",
        figures="leaderboard.pages.stats.home_figures",
        beat="leaderboard.tasks.BEAT",  # hourly, on the hour: a crontab
    )

    def ready(self) -> None:
        from django.utils.module_loading import autodiscover_modules

        from leaderboard.boards import boards

        # Every installed app's boards.py registers its boards (the leaderboard imports no mode).
        autodiscover_modules("boards")
        for board in boards():
            if board.signal is not None:
                board.signal.connect(
                    _receiver(board.name), weak=False, dispatch_uid=f"leaderboard:{board.name}"
                )


def _receiver(board_name: str):
    def on_outcome(sender, **kwargs) -> None:
        from leaderboard.boards import get_board
        from leaderboard.runs.services import outcome_recorded

        try:
            outcome = get_board(board_name).outcome_from_signal(**kwargs)
            if outcome is not None:
                outcome_recorded(board_name=board_name, outcome=outcome)
        except Exception:
            # The vote is committed and safe; the next rating run (and its Elo replay check)
            # catches up. Never let the leaderboard break the voter's response.
            logger.exception("leaderboard could not take an outcome of board %s", board_name)

    return on_outcome
