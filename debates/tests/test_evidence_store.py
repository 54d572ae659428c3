"""The local evidence store: full-text search on the database the run uses (SQLite FTS5 or
PostgreSQL's own), kept in step with the evidence table."""

import asyncio

import pytest

from debates.evidence_store import LocalEvidenceSearch, search_evidence, search_terms
from debates.models import Evidence, Topic


def test_search_terms_drop_stopwords_and_short_words():
    assert search_terms("The Paris Agreement was adopted in 2015 by 196 parties") == [
        "paris", "agreement", "adopted", "2015", "196", "parties"]
    assert search_terms("a an of it") == []


@pytest.mark.django_db(transaction=True)
class TestSearch:
    @pytest.fixture
    def docs(self):
        Evidence.objects.all().delete()  # the seeded library, if this test runs first
        topic = Topic.objects.create(motion="m", category="Science")
        return [
            Evidence.objects.create(topic=topic, title="Climate accord",
                                    content="The Paris Agreement was adopted in December 2015 "
                                            "by 196 parties."),
            Evidence.objects.create(topic=topic, title="Moon rock",
                                    content="Apollo missions returned 382 kg of lunar rock."),
            Evidence.objects.create(topic=topic, title="Kyoto",
                                    content="The Kyoto Protocol was adopted in 1997."),
        ]

    def test_the_best_match_comes_first(self, docs):
        found = search_evidence("When was the Paris Agreement adopted?", max_results=3)
        assert found[0].title == "Climate accord" and found[0].score > 0
        assert "Moon rock" not in [e.title for e in found]

    def test_stemming_and_any_word_matches(self, docs):
        titles = [e.title for e in search_evidence("missions returning rocks")]
        assert titles == ["Moon rock"]

    def test_updates_and_deletes_are_searched_at_once(self, docs):
        moon = docs[1]
        moon.content = "Saturn has 146 known moons."
        moon.save()
        assert [e.title for e in search_evidence("Saturn moons")] == ["Moon rock"]
        assert search_evidence("Apollo lunar") == []
        moon.delete()
        assert search_evidence("Saturn moons") == []

    def test_nothing_to_search_for_finds_nothing(self, docs):
        assert search_evidence("the of and") == []
        assert search_evidence('"; DROP TABLE debates_evidence; --') == []
        assert Evidence.objects.count() == 3

    def test_the_async_backend(self, docs):
        found = asyncio.run(LocalEvidenceSearch().search("Kyoto Protocol", max_results=1))
        assert [e.title for e in found] == ["Kyoto"]
