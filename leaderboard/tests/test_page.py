"""/leaderboard/: the page, its htmx fragments, filters, sorting, search and the toggle."""

import re

import pytest
from django.test import Client

from arena.models import AIModel, ModelStatus
from leaderboard.models import RunTrigger
from leaderboard.runs import services

pytestmark = pytest.mark.django_db

def table_models(html: str) -> list[str]:
    table = html.split('data-testid="leaderboard-table"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-model="([^"]+)"', table)


def test_the_page_shows_ranks_scores_intervals_and_the_last_run(board):
    response = Client().get("/leaderboard/")
    html = response.content.decode()
    assert response.status_code == 200
    assert table_models(html) == ["alpha", "beta", "gamma"]
    assert re.search(r"\+\d+/\u2212\d+", html)  # the interval as +x/−y
    assert 'data-testid="last-run"' in html and ">65</strong> votes counted" in html
    assert 'data-testid="tab-text"' in html
    provisional = html.split('data-testid="provisional"', 1)[1]
    assert 'data-model="delta"' in provisional
    assert "weak prior (1000 ± 200)" in provisional
    for kind in ("ci", "winrate", "winfraction", "battles"):
        assert f'data-plot="{kind}"' in html


def test_filters_sort_and_search_on_the_page(board):
    client = Client()
    html = client.get("/leaderboard/", {"organization": "Acme"}).content.decode()
    assert table_models(html) == ["alpha", "beta"]
    html = client.get("/leaderboard/", {"license": "MIT"}).content.decode()
    assert table_models(html) == ["alpha", "gamma"]
    html = client.get("/leaderboard/", {"q": "bet"}).content.decode()
    assert table_models(html) == ["beta"]
    html = client.get("/leaderboard/", {"sort": "rating", "order": "asc"}).content.decode()
    assert table_models(html) == ["gamma", "beta", "alpha"]
    # votes: alpha 43, beta 43, gamma 42; equal counts fall back to the better score
    html = client.get("/leaderboard/", {"sort": "votes"}).content.decode()
    assert table_models(html) == ["alpha", "beta", "gamma"]
    html = client.get("/leaderboard/", {"sort": "votes", "order": "asc"}).content.decode()
    assert table_models(html) == ["gamma", "alpha", "beta"]
    html = client.get("/leaderboard/", {"sort": "win_rate", "order": "asc"}).content.decode()
    assert table_models(html) == ["gamma", "beta", "alpha"]


def test_htmx_requests_get_only_the_fragment_they_target(board):
    client = Client()
    results = client.get(
        "/leaderboard/", {"q": "gam"}, headers={"HX-Request": "true", "HX-Target": "lb-results"}
    ).content.decode()
    assert results.lstrip().startswith('<div id="lb-results"')
    assert "<html" not in results and table_models(results) == ["gamma"]
    board_html = client.get(
        "/leaderboard/", {"board": "text"}, headers={"HX-Request": "true", "HX-Target": "lb-board"}
    ).content.decode()
    assert board_html.lstrip().startswith('<section id="lb-board"') and "<html" not in board_html


def test_the_deprecated_toggle(board):
    AIModel.objects.filter(slug="alpha").update(status=ModelStatus.DEPRECATED)
    services.ratings_run(trigger=RunTrigger.COMMAND)
    client = Client()
    assert table_models(client.get("/leaderboard/").content.decode()) == ["beta", "gamma"]
    html = client.get("/leaderboard/", {"deprecated": "1"}).content.decode()
    assert table_models(html) == ["alpha", "beta", "gamma"] and "deprecated</span>" in html


def test_sort_links_keep_the_filters_and_flip_the_order(board):
    html = Client().get("/leaderboard/", {"organization": "Acme"}).content.decode()
    link = re.search(r'href="([^"]+)"[^>]*data-testid="sort-rating"', html).group(1)
    assert "organization=Acme" in link and "order=asc" in link


def test_an_empty_board_explains_itself():
    html = Client().get("/leaderboard/").content.decode()
    assert 'data-testid="no-snapshot"' in html


def test_bad_parameters(board):
    assert Client().get("/leaderboard/", {"board": "nope"}).status_code == 404
    response = Client().get("/leaderboard/", {"sort": "nope"})
    assert response.status_code == 400 and "nope" in response.content.decode()


def test_a_first_vote_reads_as_one_vote_and_explains_why_nobody_is_ranked():
    """A new arena's board after its first vote: "1 vote counted", and an empty ranking
    that says every model is still provisional (not "no model matches these filters")."""
    from .factories import make_votes

    make_votes([("alpha", "beta", "model_a", 1)])
    services.ratings_run(trigger=RunTrigger.VOTES, boards=["text"])
    html = Client().get("/leaderboard/").content.decode()
    assert ">1</strong> vote counted" in html
    empty = html.split('data-testid="no-rows">', 1)[1].split("</td>", 1)[0]
    assert "No model is ranked yet" in empty and "5 votes" in empty
    assert "provisional below" in empty
    filtered = Client().get("/leaderboard/", {"q": "zzz"}).content.decode()
    assert "No rated model matches these filters." in filtered


def test_a_board_whose_votes_wait_for_their_run_says_so_and_reads_itself_until_it_is_in(
        scheduled, django_capture_on_commit_callbacks):
    """A newcomer who opens the board right after voting saw "No ratings yet" and had to
    reload after the run (20 s later). The page says the votes are being counted and asks,
    every few seconds, whether the run is in: the same line while it waits, the board once
    it is in."""
    from leaderboard.tasks import ratings_run_board
    from leaderboard.tests.test_debounce import cast

    assert 'data-testid="rating-soon"' not in Client().get("/leaderboard/").content.decode()
    cast(2, django_capture_on_commit_callbacks)  # two votes: a run is scheduled
    page = Client().get("/leaderboard/").content.decode()
    assert "No ratings yet" in page
    soon = page.split('data-testid="rating-soon"', 1)[1].split("</p>", 1)[0]
    assert 'hx-trigger="every 5s"' in soon and 'hx-include="#lb-form"' in soon
    htmx = {"HX-Request": "true", "HX-Target": "lb-rating-soon"}

    waiting = Client().get("/leaderboard/", headers=htmx)
    assert waiting.content.decode().lstrip().startswith('<p id="lb-rating-soon"')
    assert "HX-Retarget" not in waiting

    ratings_run_board.run("text")  # the worker, when the countdown ends
    done = Client().get("/leaderboard/", headers=htmx)
    assert (done["HX-Retarget"], done["HX-Reswap"]) == ("#lb-board", "outerHTML")
    board = done.content.decode()
    assert board.lstrip().startswith('<section id="lb-board"')
    assert ">2</strong> votes counted" in board and 'data-testid="rating-soon"' not in board
