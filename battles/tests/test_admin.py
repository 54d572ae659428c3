import pytest
from django.core.management import call_command

from arena.services import models_sync
from battles.models import Battle


@pytest.mark.django_db
def test_admin_lists_battles_votes_and_models(admin_client):
    models_sync()
    call_command("seed_demo", "--battles", "5", stdout=None)
    battle = Battle.objects.first()
    for url in ("/admin/battles/battle/", f"/admin/battles/battle/{battle.pk}/change/",
                "/admin/battles/thread/", f"/admin/battles/thread/{battle.thread_id}/change/",
                "/admin/battles/vote/", "/admin/battles/response/",
                "/admin/arena/aimodel/"):
        response = admin_client.get(url)
        assert response.status_code == 200, url
    models_page = admin_client.get("/admin/arena/aimodel/").content.decode()
    assert "environment variable OPENAI_API_KEY is not set" in models_page
