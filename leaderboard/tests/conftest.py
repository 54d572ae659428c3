import pytest
from django.core.cache import cache

from leaderboard import boards as registry
from leaderboard.boards import board_names
from leaderboard.runs.services import DEBOUNCE_KEY, LOCK_KEY


def _clear_keys() -> None:
    for name in board_names():
        cache.delete_many([DEBOUNCE_KEY.format(board=name), LOCK_KEY.format(board=name)])


@pytest.fixture(autouse=True)
def _only_the_text_board(monkeypatch):
    """These tests rate the text board; other modes' boards (and their half-made tables
    while they are being built) stay out of them. Boards a test registers vanish after it."""
    monkeypatch.setattr(registry, "_registry", {"text": registry.get_board("text")})


@pytest.fixture(autouse=True)
def _leaderboard_redis_keys(_only_the_text_board):
    """Debounce and lock keys live in the real Redis: start and end every test clean."""
    _clear_keys()
    yield
    _clear_keys()


@pytest.fixture
def scheduled(monkeypatch):
    """Record debounced runs instead of sending them to the broker: [(args, countdown)]."""
    from leaderboard.runs import services

    calls = []
    monkeypatch.setattr(services, "run_send",
                        lambda board_name, countdown: calls.append(((board_name,), countdown)))
    return calls


# Four models with enough votes to rate three (delta stays provisional): the shared
# board of the API and page tests.
SMALL_BOARD = [
    ("alpha", "beta", "model_a", 20),
    ("alpha", "gamma", "model_a", 20),
    ("beta", "gamma", "model_a", 14),
    ("gamma", "beta", "model_a", 6),
    ("beta", "alpha", "both_bad", 3),
    ("delta", "gamma", "tie", 2),
]


@pytest.fixture
def board(db):
    from arena.models import AIModel
    from leaderboard.models import RunTrigger
    from leaderboard.runs import services

    from .factories import make_votes

    make_votes(SMALL_BOARD)
    AIModel.objects.filter(slug="alpha").update(organization="Acme", license="MIT")
    AIModel.objects.filter(slug="beta").update(organization="Acme", license="Apache-2.0")
    AIModel.objects.filter(slug="gamma").update(organization="Zeta", license="MIT")
    services.ratings_run(trigger=RunTrigger.COMMAND)
