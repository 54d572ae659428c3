"""The debate library in fixtures/debates/: what migration 0002 loads."""

import pytest
import yaml
from django.core.management import call_command

from debates.models import Evidence, Persona, Topic
from debates.topics import LIBRARY_DIR


def test_the_library_files_hold_what_seed_004_asks():
    topics = yaml.safe_load((LIBRARY_DIR / "topics.yaml").read_text())["topics"]
    personas = yaml.safe_load((LIBRARY_DIR / "personas.yaml").read_text())["personas"]
    assert len(topics) >= 24 and all(t["balanced"] for t in topics)
    assert len({t["category"] for t in topics}) >= 8
    assert {t["difficulty"] for t in topics} == {"easy", "medium", "hard"}
    assert all(t["evidence"] for t in topics) and len({t["motion"] for t in topics}) == len(
        topics)
    assert len({p["name"] for p in personas}) == len(personas) >= 8


@pytest.mark.django_db(transaction=True)
def test_loading_twice_changes_nothing(capsys):
    Topic.objects.all().delete()
    Persona.objects.all().delete()
    Evidence.objects.all().delete()
    call_command("load_debate_library")
    counts = (Topic.objects.count(), Evidence.objects.count(), Persona.objects.count())
    assert counts[0] >= 24 and counts[1] > counts[0] and counts[2] >= 8
    call_command("load_debate_library")
    assert (Topic.objects.count(), Evidence.objects.count(), Persona.objects.count()) == counts
    assert "0 topics created, 0 evidence created, 0 personas created" in capsys.readouterr().out
    assert Topic.objects.filter(is_approved=True, retired_at__isnull=True).count() == counts[0]
