"""The voice page's server side and the admin: what a visitor sees when no two agents can
take calls, and the staff pages for scenarios, agents and battles."""

from __future__ import annotations

import pytest

from agents.library import library_load
from agents.models import AgentConfiguration, Scenario

pytestmark = pytest.mark.django_db


def test_the_voice_page_says_why_no_battle_can_start(client, monkeypatch):
    library_load()
    monkeypatch.delenv("VAPI_API_KEY", raising=False)
    page = client.get("/voice/").content.decode()
    assert 'data-testid="not-ready"' in page and 'data-testid="start"' not in page
    assert "Vapi needs VAPI_API_KEY in the environment." in page
    assert "python3 dev.py run" in page  # the next step


def test_the_voice_page_offers_a_battle_when_two_agents_can_talk(client):
    library_load()
    AgentConfiguration.objects.update(active=False)
    for n in "ab":
        AgentConfiguration.objects.create(slug=f"echo-{n}", name=f"Echo {n}", provider="echo")
    page = client.get("/voice/").content.decode()
    assert 'data-testid="start"' in page and "pcm-capture-worklet" in page
    assert 'data-testid="offline-note"' not in page  # echo agents are not the offline demo


def test_admin_lists_scenarios_agents_and_battles(admin_client):
    library_load()
    scenarios = admin_client.get("/admin/agents/scenario/").content.decode()
    assert "Haircut appointment" in scenarios and Scenario.objects.count() == 10
    agents = admin_client.get("/admin/agents/agentconfiguration/").content.decode()
    assert "Vapi Default" in agents and "needs VAPI_API_KEY" in agents
    scenario = Scenario.objects.get(slug="billing-dispute")
    assert admin_client.get(f"/admin/agents/scenario/{scenario.pk}/change/").status_code == 200
    assert admin_client.get("/admin/agents/agentbattle/").status_code == 200


@pytest.mark.parametrize(("page", "first"), [("scenario", "slug"),
                                             ("agentconfiguration", "slug")])
def test_an_admin_add_page_opens_with_the_models_own_fields(admin_client, page, first):
    """The inherited created_at (arena.models.CreatedAtModel) comes last, not first."""
    form = admin_client.get(f"/admin/agents/{page}/add/").content.decode()
    assert form.index(f'name="{first}"') < form.index('name="created_at_0"')
