"""Model and user text that tries to hurt, through the pages that show it, in a real Chromium:
script tags, javascript: and data: links, event handlers, an image from another host, SVG,
CSS that covers the page, an endless word. Battles, panels, debates, the leaderboard, a
model's page and the admin (voice transcripts: agents/tests/test_browser.py). Nothing executes
(no dialog, no script), nothing is fetched from another host, the Content-Security-Policy
reports nothing it had to block, and the layout holds (no sideways scrolling)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from testkit.browser import assert_unhurt as unhurt
from testkit.browser import browser_page, watch_page
from testkit.live import keyless

pytestmark = pytest.mark.browser
PHONE = 390  # px: the viewport's width, past which nothing may scroll sideways
DESK = 1280  # px: a staff member's screen

HOSTILE = "\n\n".join([
    "<script>alert('script')</script> **bold**",
    "[click](javascript:alert('link')) [data](data:text/html,<script>alert(1)</script>)",
    '<img src=x onerror="alert(\'img\')"> ![tracker](https://tracker.example/pixel.png)',
    "<svg onload=\"alert('svg')\"><circle r=5 /></svg>",
    '<style>body{display:none}</style> <div style="position:fixed;inset:0;z-index:99">x</div>',
    "| a | b |\n|---|---|\n| <b onclick=alert(1)>x</b> | y |",
    "W" * 3000,
])


@pytest.fixture
def hostile_site(asgi_live_server, celery_worker, two_models, fake_openai) -> str:
    fake_openai.reply_text = HOSTILE
    keyless(fake_openai, two_models)
    return asgi_live_server


@pytest.fixture
def watched(chromium, hostile_site, monkeypatch) -> Iterator[tuple[object, dict]]:
    """A phone-sized page that records dialogs, requests to other hosts and CSP reports."""
    with browser_page(chromium, hostile_site, monkeypatch,
                      viewport={"width": PHONE, "height": 844}) as page:
        yield page, watch_page(page)


def assert_unhurt(page, seen: dict) -> None:
    unhurt(page, seen, width=PHONE)


def test_a_hostile_answer_and_prompt_on_the_battle_page(watched):
    from playwright.sync_api import expect

    page, seen = watched
    page.goto("/battle/")
    page.get_by_test_id("prompt").fill("<script>alert('prompt')</script> Tell me <b>x</b>")
    page.get_by_test_id("submit").click()
    for position in ("left", "right"):
        side = page.locator(f"#turn-1 [data-testid=side-{position}]")
        expect(side).to_have_attribute("data-status", "done")
        expect(side.locator(".body.markdown")).to_contain_text("bold")
    expect(page.get_by_test_id("vote-left_better")).to_be_enabled()
    assert_unhurt(page, seen)
    page.screenshot(path="/tmp/hostile-battle.png", full_page=True)
    page.get_by_test_id("vote-tie").click()
    expect(page.locator("#reveal-slot")).to_contain_text("Alphamodel")
    assert_unhurt(page, seen)


def test_hostile_answers_on_the_panel_page(watched):
    from playwright.sync_api import expect

    page, seen = watched
    page.goto("/panel/")
    clarify = page.get_by_test_id("clarify")
    if clarify.is_enabled():
        clarify.uncheck()
    page.locator("#question").fill("<img src=x onerror=alert('q')> Which is best?")
    page.get_by_test_id("ask").click()
    # The judges cannot rank hostile text: the panel ends with or without a verdict.
    expect(page.get_by_test_id("progress")).to_have_attribute("data-status",
                                                              re.compile("done|failed"))
    expect(page.locator(".markdown").first).to_contain_text("bold")
    assert_unhurt(page, seen)
    page.screenshot(path="/tmp/hostile-panel.png", full_page=True)


HOSTILE_NAME = "<img src=x onerror=\"alert('name')\"><script>alert(1)</script>" + "M" * 120


def test_a_hostile_model_name_on_the_leaderboard_and_its_page(watched):
    """A models file is written by people too: a name with markup shows as text (and fits
    the name's 200 characters, which PostgreSQL enforces)."""
    from playwright.sync_api import expect

    from arena.models import AIModel
    from leaderboard.models import RunTrigger
    from leaderboard.runs.services import ratings_run
    from leaderboard.tests.factories import make_votes

    make_votes([("hostile", "plain", "model_a", 30), ("plain", "hostile", "tie", 10)])
    AIModel.objects.filter(slug="hostile").update(name=HOSTILE_NAME,
                                                  organization="<b onclick=alert(2)>Org</b>")
    ratings_run(trigger=RunTrigger.COMMAND)
    page, seen = watched
    for path in ("/leaderboard/", "/models/hostile/"):
        page.goto(path)
        expect(page.locator("main")).to_contain_text("<script>alert(1)</script>")
        assert_unhurt(page, seen)
        assert page.evaluate("document.querySelectorAll('main script, main img').length") == 0
    page.screenshot(path="/tmp/hostile-model-page.png", full_page=True)


def test_a_hostile_debate_on_its_page(watched, two_models):
    """Speeches, reflections, claims, evidence (with a javascript: URL), the judge's reasons
    and a person's own motion, all hostile, on the debate page before and after a vote."""
    from playwright.sync_api import expect

    from debates.models import (
        Debate,
        DebateStatus,
        DebateTurn,
        FactCheck,
        JudgeEvaluation,
        Persona,
        Topic,
    )

    alpha, beta = two_models
    topic = Topic.objects.create(motion="<script>alert('motion')</script> Ban <b>x</b>",
                                 category="<i onmouseover=alert(1)>Hostile</i>",
                                 is_approved=False, proposed_by="someone")
    personas = [Persona.objects.create(name=f"<img src=x onerror=alert('{n}')>", traits=[],
                                       description="x", speaking_style="x") for n in "ab"]
    debate = Debate.objects.create(
        topic=topic, model_a=alpha, model_b=beta, persona_a=personas[0], persona_b=personas[1],
        model_a_position="pro", status=DebateStatus.COMPLETED, judge_model=alpha,
        ai_winner="pro", ai_consensus=True, is_listed=False, rounds=1)
    for position, speaker in (("pro", alpha), ("con", beta)):
        turn = DebateTurn.objects.create(debate=debate, round=1, position=position,
                                         speaker=speaker, speech=HOSTILE, reflection=HOSTILE,
                                         critique=HOSTILE)
        FactCheck.objects.create(
            turn=turn, claim="<script>alert('claim')</script>" + "C" * 500,
            claim_type="statistical", verdict="false",
            explanation="<a href=javascript:alert(1)>see</a>",
            evidence=[{"title": "<svg onload=alert(1)>", "url": "javascript:alert('url')",
                       "content": HOSTILE, "score": 0.5}])
    for order in ("pro_first", "con_first"):
        JudgeEvaluation.objects.create(
            debate=debate, judge=alpha, order=order, winner="pro", logical_coherence=5,
            rebuttal_strength=5, factuality=5, justification=HOSTILE,
            flagged_fallacies=[{"speaker": "con", "fallacy": "<script>x</script>",
                                "quote": "<img src=x onerror=alert(3)>"}])
    page, seen = watched
    page.goto(f"/debates/{debate.pk}/")
    expect(page.get_by_test_id("verdict-block")).to_be_visible()
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    expect(page.locator("main")).to_contain_text("<script>alert('motion')</script>")
    expect(page.locator(".speech-text").first).to_contain_text("bold")
    assert_unhurt(page, seen)
    page.screenshot(path="/tmp/hostile-debate.png")
    page.get_by_test_id("vote-pro").click()
    expect(page.get_by_test_id("your-vote")).to_contain_text("PRO")
    expect(page.locator("main")).to_contain_text("Alphamodel")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert_unhurt(page, seen)


def test_hostile_text_in_the_admin(chromium, asgi_live_server, monkeypatch, two_models,
                                   django_user_model):
    """Staff read what models and visitors wrote in the admin: a battle's prompt and answers,
    a debate's motion and speeches, a voice call's transcript, a visitor flag's reason and a
    panel's question, all hostile, in a real Chromium with the staff session."""
    from playwright.sync_api import expect

    from agents.library import library_load
    from agents.models import (
        AgentBattle,
        AgentConfiguration,
        AgentConversation,
        Provider,
        Scenario,
    )
    from arena.models import VisitorFlag
    from battles.tests.factories import answered_battle
    from debates.models import Debate, DebateTurn, Persona, Topic
    from panels.models import Panel

    alpha, beta = two_models
    battle = answered_battle(prompt=HOSTILE, model_a=alpha, model_b=beta)
    battle.turns.get().responses.update(text=HOSTILE)
    topic = Topic.objects.create(motion=HOSTILE, category="x")
    personas = [Persona.objects.create(name=f"<script>alert('{n}')</script>", traits=[],
                                       description="x", speaking_style="x") for n in "ab"]
    debate = Debate.objects.create(topic=topic, model_a=alpha, model_b=beta,
                                   persona_a=personas[0], persona_b=personas[1],
                                   model_a_position="pro")
    DebateTurn.objects.create(debate=debate, round=1, position="pro", speaker=alpha,
                              speech=HOSTILE)
    library_load()
    configs = [AgentConfiguration.objects.create(slug=f"hostile-{n}", name=f"<b>{n}</b>",
                                                 provider=Provider.ECHO)
               for n in "ab"]
    call = AgentBattle.objects.create(scenario=Scenario.objects.first(), config_a=configs[0],
                                      config_b=configs[1])
    AgentConversation.objects.create(battle=call, agent_config=configs[0],
                                     scenario=call.scenario, agent_label="a",
                                     transcript_full=HOSTILE, end_reason=HOSTILE[:200])
    VisitorFlag.objects.create(mode="battles", visitor="session:<script>alert(1)</script>",
                               reason=HOSTILE)
    Panel.objects.create(question=HOSTILE, status="done")
    django_user_model.objects.create_superuser("staff", "staff@example.com", "a long passphrase")

    with browser_page(chromium, asgi_live_server, monkeypatch,
                      viewport={"width": DESK, "height": 900}) as page:
        seen = watch_page(page)
        page.goto("/admin/login/")
        page.fill("#id_username", "staff")
        page.fill("#id_password", "a long passphrase")
        page.click("input[type=submit]")
        expect(page.locator("#user-tools")).to_contain_text("staff")
        turn = battle.turns.get()
        for path in (f"/admin/battles/turn/{turn.pk}/change/",
                     f"/admin/battles/response/{turn.responses.first().pk}/change/",
                     "/admin/debates/topic/", f"/admin/debates/debate/{debate.pk}/change/",
                     f"/admin/agents/agentbattle/{call.pk}/change/",
                     "/admin/arena/visitorflag/", "/admin/panels/panel/"):
            page.goto(path)
            expect(page.locator("#content")).to_be_visible()
            unhurt(page, seen, width=DESK)
            # Only the admin's own markup: no element the hostile text tried to make.
            assert page.evaluate("document.querySelectorAll('[onerror], [onload], [onclick], "
                                 "[onmouseover], img[src=x], #content style').length") == 0, path
        page.screenshot(path="/tmp/hostile-admin.png")
