"""The Tavily backend against a fake Tavily server that speaks its documented protocol."""

import asyncio

import pytest

from debates.evidence import SearchError
from debates.search_tavily import TavilySearch, tavily_from_settings
from testkit.fake_tavily import FakeTavilyServer

CORPUS = [
    {"title": "Paris Agreement", "url": "https://unfccc.int/paris",
     "content": "The Paris Agreement was adopted in December 2015 by 196 parties."},
    {"title": "Kyoto Protocol", "url": "https://unfccc.int/kyoto",
     "content": "The Kyoto Protocol was adopted in 1997."},
    {"title": "Empty", "url": "https://example.org/empty", "content": "   "},
]


@pytest.fixture
def tavily():
    with FakeTavilyServer(corpus=CORPUS) as server:
        yield server


def search(server, query="When was the Paris Agreement adopted?", **kwargs):
    backend = TavilySearch(api_key=server.api_key, base_url=server.base_url, **kwargs)
    return asyncio.run(backend.search(query, max_results=2))


def test_results_best_first_and_the_documented_request(tavily):
    found = search(tavily)
    assert [e.title for e in found] == ["Paris Agreement", "Kyoto Protocol"]
    assert found[0].score > found[1].score and found[0].url == "https://unfccc.int/paris"
    [request] = tavily.requests
    assert request["path"] == "/search"
    assert request["headers"]["Authorization"] == f"Bearer {tavily.api_key}"
    assert request["body"] == {"query": "When was the Paris Agreement adopted?",
                               "search_depth": "basic", "max_results": 2,
                               "include_answer": False, "include_raw_content": False}


def test_results_without_content_are_skipped(tavily):
    assert [e.title for e in search(tavily, "Empty example")] == []


@pytest.mark.parametrize(("status", "words"), [
    (400, "malformed"), (429, "rate limit"), (432, "plan limit"),
    (433, "pay-as-you-go"), (500, "failed (500)"), (503, "failed (503)")])
def test_each_error_status_says_what_happened(tavily, status, words):
    tavily.script(status)
    with pytest.raises(SearchError) as raised:
        search(tavily)
    assert words in str(raised.value) and tavily.api_key not in str(raised.value)


def test_a_wrong_key_is_a_401_that_never_shows_the_key(tavily):
    backend = TavilySearch(api_key="tvly-wrong-key", base_url=tavily.base_url)
    with pytest.raises(SearchError) as raised:
        asyncio.run(backend.search("anything"))
    assert "refused the API key (401)" in str(raised.value)
    assert "tvly-wrong-key" not in str(raised.value) and "tvly-wrong-key" not in repr(backend)


def test_junk_and_a_hang(tavily):
    tavily.script("junk")
    with pytest.raises(SearchError, match="not a search result"):
        search(tavily)
    tavily.script("hang")
    with pytest.raises(SearchError, match="did not answer within 0.3 s"):
        search(tavily, timeout=0.3)


def test_nothing_listening_is_a_clear_error():
    server = FakeTavilyServer().start()
    url = server.base_url
    server.stop()
    backend = TavilySearch(api_key="k", base_url=url)
    with pytest.raises(SearchError, match="could not be reached"):
        asyncio.run(backend.search("x"))


def test_settings_choose_tavily_only_with_a_key(monkeypatch, settings):
    from debates.search import search_backend

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    settings.ARENA_FACTCHECK_SEARCH = "tavily"
    assert tavily_from_settings() is None and search_backend().name == "local"
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-from-env")
    settings.TAVILY_BASE_URL = "http://127.0.0.1:9"
    backend = search_backend()
    assert backend.name == "tavily" and backend.base_url == "http://127.0.0.1:9"
    settings.ARENA_FACTCHECK_SEARCH = "local"
    assert search_backend().name == "local"
