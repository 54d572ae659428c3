"""Seed 001's own paths from a real browser: a client of the seed on the site (its fetches
carry the browser's own Origin and cookie, as the write guard wants them) runs a session
from its first prompt to the vote, and the API docs page lists the paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from battles.tests.conftest import IDENTIFYING
from testkit.browser import browser_page
from testkit.live import keyless

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots-seed001")

# What a client of lmarena-clone calls, in order, with the browser's cookies; every answer.
SEED_CLIENT = """async () => {
  const json = {'Content-Type': 'application/json'};
  const call = async (method, path, body) => {
    const r = await fetch(path, {method, headers: json, credentials: 'same-origin',
                                 body: body === undefined ? undefined : JSON.stringify(body)});
    return {status: r.status, body: await r.json()};
  };
  const created = await call('POST', '/api/sessions', {prompt: 'Name a mountain.'});
  const sid = created.body.session_id;
  const listed = await call('GET', '/api/sessions');
  const mine = await call('GET', `/api/sessions/user/${listed.body.user_id}`);
  const before = await call('GET', `/api/battles/session/${sid}`);
  const vote = await call('POST', '/api/votes', {battle_id: created.body.battle_id,
                                                 vote: 'right_better'});
  const again = await call('POST', '/api/votes', {battle_id: created.body.battle_id,
                                                  vote: 'tie'});
  const after = await call('GET', `/api/battles/session/${sid}`);
  return {created, listed, mine, before, vote, again, after};
}"""


@pytest.fixture
def arena(asgi_live_server, celery_worker, two_models, fake_openai) -> str:
    """The live site at the fake's own pace (the conftest's ``page`` opens it)."""
    keyless(fake_openai, two_models)
    return asgi_live_server


def test_a_seed_client_in_the_browser_runs_a_session_to_its_vote(page, two_models):
    page.goto("/api/docs")
    seen = page.evaluate(SEED_CLIENT)
    created, before, after = seen["created"], seen["before"], seen["after"]
    assert created["status"] == 201, created
    assert [r["position"] for r in created["body"]["responses"]] == ["left", "right"]
    assert seen["listed"]["body"]["user_id"] == created["body"]["user_id"]
    assert seen["mine"]["status"] == 200
    assert [s["session_id"] for s in seen["mine"]["body"]["sessions"]] == [
        created["body"]["session_id"]]
    unvoted = before["body"]["battles"][0]
    assert (unvoted["status"], unvoted["left_model_id"]) == ("ongoing", None)
    for term in IDENTIFYING:
        assert term.lower() not in str(created).lower() + str(before).lower()
    assert seen["vote"]["status"] == 200
    assert set(seen["vote"]["body"]["revealed_models"].values()) == {m.slug for m in two_models}
    assert seen["again"]["status"] == 409
    voted = after["body"]["battles"][0]
    assert (voted["status"], voted["vote"]) == ("voted", "right_better")
    assert voted["right_model_id"] == seen["vote"]["body"]["revealed_models"]["right"]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_api_docs_list_seed_001s_paths(chromium, arena, monkeypatch, width):
    with browser_page(chromium, arena, monkeypatch, viewport={"width": width, "height": 900},
                      is_mobile=width < 500) as page:
        page.goto("/api/docs")
        section = page.locator("#operations-tag-seed_001")
        expect(section).to_be_visible()
        for path in ("/api/battles/session/{sid}", "/api/votes"):
            expect(page.locator(f"[data-path='{path}']").first).to_be_visible()
        expect(page.locator("[data-path='/api/sessions/user/{user_id}']").first
               ).to_be_visible()
        vote = page.locator("[id^='operations-seed_001-'][id$='submit_vote']")
        vote.locator(".opblock-summary").first.click()
        expect(page.get_by_text('"battle_id": "string"').first).to_be_visible()
        section.scroll_into_view_if_needed()
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / f"api-docs-seed-001-{width}.png"))
