"""The voice page in a real Chromium whose microphone is a WAV file of eSpeak NG speech
(Chromium's fake capture device): talk to both offline agents through daphne and the proxy,
vote, and watch the metrics arrive from a real Celery worker. Every wait is Playwright's
auto-waiting (``expect``)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.library import library_load
from agents.models import AgentConfiguration, AgentConversation, AgentVote, Scenario
from agents.speech.audio import silence, write_wav
from agents.tests.fakes import FakeRetell, FakeVapi
from agents.tests.voice_support import CALLER_LINE, VoiceScript, local_agents, speech
from testkit.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Chromium,
    assert_unhurt,
    browser_ms,
    browser_page,
    watch_page,
)
from testkit.live import daphne_server
from testkit.ratings import quiet_rating_runs

pytestmark = pytest.mark.browser
SCREENSHOT = Path("/tmp/voice.png")


def text_frames(page) -> list[str]:  # noqa: ANN001 - a Playwright page
    """Every text frame the page's sockets receive, as they arrive."""
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(
        f if isinstance(f, str) else "")))
    return frames


@pytest.fixture(scope="module")
def microphone_chromium(chromium, tmp_path_factory) -> Iterator[Chromium]:
    """A second Chromium whose microphone plays the caller's line, then listens (looped)."""
    wav = tmp_path_factory.mktemp("microphone") / "caller.wav"
    write_wav(wav, silence(3000) + speech(CALLER_LINE) + silence(25_000))
    chromium.wake()
    browser = chromium.browser.browser_type.launch(
        executable_path=str(CHROMIUM), headless=True,
        args=[*CHROMIUM_ARGS, "--use-fake-ui-for-media-stream",
              "--use-fake-device-for-media-stream", f"--use-file-for-fake-audio-capture={wav}",
              "--autoplay-policy=no-user-gesture-required"])
    chromium.park()
    handle = Chromium(browser, chromium.loop)
    try:
        yield handle
    finally:
        handle.wake()
        browser.close()
        handle.park()


@pytest.fixture
def agents(asgi_live_server, celery_worker, fake_openai, settings, monkeypatch):
    """Two offline agents whose LLM is the fake server (keyless: daphne started before the
    key was set); the worker reads the recordings where daphne writes them."""
    quiet_rating_runs(monkeypatch)
    settings.ARENA_VOICE_MEDIA_DIR = Path(settings.VAR_DIR) / "media" / "voice"
    fake_openai.reply_text = VoiceScript()
    fake_openai.api_key = None
    configs = local_agents(fake_openai)
    Scenario.objects.exclude(slug="haircut-appointment").update(active=False)
    return configs


def test_talk_to_both_agents_vote_and_watch_the_metrics_arrive(
        microphone_chromium, agents, asgi_live_server, monkeypatch):
    from playwright.sync_api import expect

    with browser_page(microphone_chromium, asgi_live_server, monkeypatch,
                      viewport={"width": 1280, "height": 900}) as page:
        frames = text_frames(page)
        page.goto("/voice/")
        expect(page.get_by_test_id("offline-note")).to_be_visible()
        page.get_by_test_id("start").click()
        expect(page.get_by_test_id("scenario")).to_contain_text("Haircut appointment")
        transcript = page.get_by_test_id("transcript")
        for label in ("a", "b"):
            page.get_by_test_id(f"talk-{label}").click()
            expect(page.get_by_test_id("call")).to_contain_text(f"Agent {label.upper()}")
            # The agent greets, hears the caller's line (the microphone loops it) and answers.
            expect(transcript.locator("li[data-role=user]").first).to_contain_text(
                re.compile("john smith", re.I))
            expect(transcript.locator("li[data-role=agent]").nth(1)).to_contain_text(
                "booked Tuesday")
            expect(page.get_by_test_id("agent-state")).to_have_text("listening")  # it spoke
            page.get_by_test_id("end").click()
            if label == "a":
                expect(page.get_by_test_id("transition")).to_contain_text("1 turn")
        expect(page.get_by_test_id("vote-form")).to_be_visible()
        page.check("input[name=overall][value=b]")
        page.check("input[name=speed][value=a]")
        page.get_by_test_id("vote").click()
        expect(page.get_by_test_id("reveal-a")).to_contain_text("Local voice-")
        expect(page.get_by_test_id("reveal-a")).to_contain_text("offline demo agent")
        expect(page.get_by_test_id("metrics-status")).to_have_attribute(
            "data-status", "complete", timeout=browser_ms(120))
        for label in ("a", "b"):
            expect(page.get_by_test_id(f"latency-{label}")).to_contain_text(
                re.compile(r"avg \d+ ms"))
            expect(page.get_by_test_id(f"task-{label}")).to_contain_text("succeeded")
            expect(page.get_by_test_id(f"slots-{label}")).to_contain_text("✓ name")
        page.screenshot(path=str(SCREENSHOT), full_page=True)
    vote = AgentVote.objects.get()
    assert vote.overall == "b" and vote.sub_votes_json == {"speed": "a"}
    # Nothing that travelled before the vote named an agent.
    names = [c.name for c in agents] + [c.slug for c in agents]
    assert frames and not [n for n in names for f in frames if n in f]


def test_without_a_microphone_the_page_says_what_to_do(chromium, agents, asgi_live_server,
                                                       monkeypatch):
    from playwright.sync_api import expect

    with browser_page(chromium, asgi_live_server, monkeypatch,
                      viewport={"width": 390, "height": 900}) as page:
        page.goto("/voice/")
        page.get_by_test_id("start").click()
        page.get_by_test_id("talk-a").click()
        error = page.get_by_test_id("error")
        expect(error).to_contain_text(re.compile("microphone", re.I))
        expect(error).to_contain_text("Talk again")
        expect(page.get_by_test_id("talk-a")).to_be_visible()  # the next step is still there
    assert not AgentVote.objects.exists()


HOSTILE_REPLY = ("<script>alert('agent')</script> <img src=x onerror=alert(1)> "
                 "[call](javascript:alert(2)) <b onclick=alert(3)>booked</b> "
                 + "https://tracker.example/" + "a" * 60)


def test_a_hostile_agent_reply_in_the_live_transcript(microphone_chromium, agents,
                                                      asgi_live_server, fake_openai,
                                                      monkeypatch):
    """What an agent says reaches the page as text: nothing it says executes or loads, and
    the transcript keeps to a phone's width."""
    from playwright.sync_api import expect

    fake_openai.reply_text = HOSTILE_REPLY
    with browser_page(microphone_chromium, asgi_live_server, monkeypatch,
                      viewport={"width": 390, "height": 900}) as page:
        seen = watch_page(page)
        page.goto("/voice/")
        page.get_by_test_id("start").click()
        page.get_by_test_id("talk-a").click()
        answer = page.get_by_test_id("transcript").locator("li[data-role=agent]").nth(1)
        expect(answer).to_contain_text("<script>alert('agent')</script>")
        expect(answer).to_contain_text("<b onclick=alert(3)>booked</b>")
        page.screenshot(path="/tmp/hostile-voice.png")
        assert_unhurt(page, seen, width=390)
        page.get_by_test_id("end").click()
        expect(page.get_by_test_id("talk-b")).to_be_visible()
        assert_unhurt(page, seen, width=390)
        assert page.evaluate("document.querySelectorAll('[onerror], [onclick], "
                             "img[src=x]').length") == 0


@pytest.fixture(scope="module")
def managed_arena(test_process_env) -> Iterator[tuple[str, FakeVapi, FakeRetell]]:
    """daphne as it runs with real keys, its Vapi and Retell being the fakes."""
    with FakeVapi() as vapi, FakeRetell() as retell:
        env = {**test_process_env, "VAPI_API_KEY": vapi.api_key,
               "VAPI_BASE_URL": vapi.base_url, "RETELL_API_KEY": retell.api_key,
               "RETELL_BASE_URL": retell.base_url, "RETELL_LIVEKIT_URL": retell.livekit_url,
               "ARENA_RETELL_MEDIA_LEG": "agents.tests.fakes.FakeMediaLeg"}
        with daphne_server(env) as base_url:
            yield base_url, vapi, retell


def test_a_vapi_agent_against_a_retell_agent_in_the_page(
        microphone_chromium, managed_arena, transactional_db, celery_worker, settings,
        monkeypatch):
    from playwright.sync_api import expect

    base_url, vapi, retell = managed_arena
    quiet_rating_runs(monkeypatch)
    settings.ARENA_VOICE_MEDIA_DIR = Path(settings.VAR_DIR) / "media" / "voice"
    library_load()
    AgentConfiguration.objects.exclude(slug__in=["vapi-default", "retell-default"]).update(
        active=False)
    Scenario.objects.exclude(slug="haircut-appointment").update(active=False)
    with browser_page(microphone_chromium, base_url, monkeypatch,
                      viewport={"width": 1280, "height": 900}) as page:
        frames = text_frames(page)
        page.goto("/voice/")
        page.get_by_test_id("start").click()
        transcript = page.get_by_test_id("transcript")
        for label in ("a", "b"):
            page.get_by_test_id(f"talk-{label}").click()
            expect(page.get_by_test_id("call")).to_contain_text(f"Agent {label.upper()}")
            expect(transcript.locator("li[data-role=user]").first).to_contain_text(
                "John Smith")
            expect(transcript.locator("li[data-role=agent]").nth(1)).to_contain_text(
                "booked Tuesday")
            expect(page.get_by_test_id("agent-state")).to_have_text("listening")
            page.get_by_test_id("end").click()
        page.check("input[name=overall][value=a]")
        page.get_by_test_id("vote").click()
        for label in ("a", "b"):
            expect(page.get_by_test_id(f"reveal-{label}")).to_contain_text(
                re.compile("Vapi Default|Retell Default"))
        reveals = page.get_by_test_id("reveal-a").inner_text() + \
            page.get_by_test_id("reveal-b").inner_text()
        assert "Vapi Default" in reveals and "Retell Default" in reveals
        for label in ("a", "b"):  # Vapi's and Retell's own figures beside the measured ones
            expect(page.get_by_test_id(f"provider-latency-{label}")).to_have_text(
                "avg 880 ms · p50 880 ms", timeout=browser_ms(60))
            # What the recordings measured, as the page shows it: a greeting that a busy
            # machine delays runs into the caller's line and on into the answer, which the
            # VAD then hears as the agent talking over the caller (no answered turn).
            latency = page.get_by_test_id(f"latency-{label}")
            expect(latency).to_contain_text(re.compile(r"avg \d+ ms|no answered turns"),
                                            timeout=browser_ms(60))
            measured = AgentConversation.objects.get(agent_label=label).avg_response_latency_ms
            expect(latency).to_contain_text("no answered turns" if measured is None
                                            else f"avg {math.floor(measured + 0.5)} ms")
        page.screenshot(path="/tmp/voice-managed.png", full_page=True)
    assert len(vapi.calls) == 1 and len(retell.calls) == 1
    assert all(c["status"] == "ended" for c in [*vapi.calls.values(), *retell.calls.values()])
    assert AgentVote.objects.get().overall == "a"
    names = ["Vapi", "Retell", "vapi-default", "retell-default", vapi.api_key, retell.api_key]
    assert frames and not [n for n in names for f in frames if n in f]


SHOTS = Path("/tmp/shots-voice37")
# True once a lane of the live waveform (0: the caller's, 1: the agent's) holds a trace that
# swings, not a flat line: the canvas's own pixels, read back.
LANE_SWINGS = """lane => {
  const canvas = document.querySelector("[data-testid=waveform]");
  if (!canvas.width || !canvas.height) return false;
  const half = Math.floor(canvas.height / 2);
  const pixels = canvas.getContext("2d").getImageData(0, lane * half, canvas.width, half).data;
  let low = Infinity, high = -Infinity;
  for (let y = 3; y < half - 3; y++) {
    for (let x = 0; x < canvas.width; x += 2) {
      if (pixels[(y * canvas.width + x) * 4 + 3] > 0) {
        low = Math.min(low, y);
        high = Math.max(high, y);
      }
    }
  }
  return high - low > half * 0.15;
}"""


def _talk(page, label: str, width: int) -> None:  # noqa: ANN001 - a Playwright page
    from playwright.sync_api import expect

    page.get_by_test_id(f"talk-{label}").click()
    expect(page.get_by_test_id("waveform")).to_be_visible()
    # Both voices are drawn as they are heard: the greeting, then the caller's line.
    page.wait_for_function(LANE_SWINGS, arg=1, polling="raf", timeout=browser_ms(60))
    page.wait_for_function(LANE_SWINGS, arg=0, polling="raf", timeout=browser_ms(60))
    if label == "a":
        page.screenshot(path=str(SHOTS / f"voice-call-{width}.png"), full_page=True)
    transcript = page.get_by_test_id("transcript")
    expect(transcript.locator("li[data-role=agent]").nth(1)).to_contain_text("booked Tuesday")
    expect(page.get_by_test_id("agent-state")).to_have_text("listening")
    page.get_by_test_id("end").click()


@pytest.mark.parametrize("width", [1280, 390])
def test_both_voices_are_drawn_live_and_both_calls_replay_before_the_vote(
        microphone_chromium, agents, asgi_live_server, monkeypatch, width):
    from playwright.sync_api import expect

    SHOTS.mkdir(exist_ok=True)
    with browser_page(microphone_chromium, asgi_live_server, monkeypatch,
                      viewport={"width": width, "height": 900}) as page:
        seen = watch_page(page)
        page.goto("/voice/")
        page.get_by_test_id("start").click()
        for label in ("a", "b"):
            _talk(page, label, width)
        expect(page.get_by_test_id("vote-form")).to_be_visible()
        for label in ("a", "b"):
            player = page.get_by_test_id(f"replay-{label}")
            expect(player).to_have_attribute("src", re.compile(rf"/recordings/{label}-call\.wav$"))
            player.evaluate("audio => audio.play()")
            # It plays: the recording arrived whole and the clock moves.
            page.wait_for_function(
                "audio => audio.currentTime > 0.3 && audio.duration > 2",
                arg=player.element_handle(), timeout=browser_ms(30))
            player.evaluate("audio => audio.pause()")
        page.screenshot(path=str(SHOTS / f"voice-vote-{width}.png"), full_page=True)
        page.check("input[name=overall][value=a]")
        page.check("input[name=naturalness][value=b]")
        page.get_by_test_id("vote").click()
        for label in ("a", "b"):
            expect(page.get_by_test_id(f"live-latency-{label}")).to_contain_text(
                re.compile(r"avg \d+ ms · p50 \d+ ms · p95 \d+ ms \(1 answer\)"))
        page.screenshot(path=str(SHOTS / f"voice-reveal-{width}.png"), full_page=True)
        assert_unhurt(page, seen, width=width)
    assert AgentVote.objects.get().sub_votes_json == {"naturalness": "b"}


@pytest.mark.parametrize("width", [1280, 390])
def test_win_rates_on_the_voice_board_and_a_models_page(chromium, asgi_live_server, fake_openai,
                                                        monkeypatch, width):
    from playwright.sync_api import expect

    from agents.tests.test_win_rates import _voted

    quiet_rating_runs(monkeypatch)
    configs = local_agents(fake_openai)
    for overall, speed in (("a", "a"), ("b", "a"), ("tie", "b")):
        _voted(*configs, overall, speed=speed, helpfulness="a")
    SHOTS.mkdir(exist_ok=True)
    with browser_page(chromium, asgi_live_server, monkeypatch,
                      viewport={"width": width, "height": 900}) as page:
        seen = watch_page(page)
        page.goto("/leaderboard/?board=agent")
        rates = page.get_by_test_id("voice-win-rates")
        expect(rates.locator("tr[data-agent=voice-one] td[data-dimension=speed]")).to_contain_text(
            "67% n=3")
        expect(rates.locator("tr[data-agent=voice-one] td[data-dimension=naturalness]")) \
            .to_have_text("no votes")
        rates.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"voice-board-{width}.png"), full_page=True)
        assert_unhurt(page, seen, width=width)
        page.goto("/models/voice-two-llm/")
        expect(page.get_by_test_id("voice-win-rates")).to_contain_text(
            "Voice agents built on this model")
        expect(page.locator("tr[data-agent=voice-two] td[data-dimension=helpfulness]")) \
            .to_contain_text("0% n=3")
        page.screenshot(path=str(SHOTS / f"voice-model-page-{width}.png"), full_page=True)
        assert_unhurt(page, seen, width=width)
