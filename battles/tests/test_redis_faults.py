"""Redis killed and paused while a battle's answers stream, in a real Chromium against daphne
and a Celery worker of the test's own (each its own process, on a redis-server the test
controls): the worker lives through both and finishes both answers, the page's stream picks
up where it was (its socket closed with Redis and reconnected) and shows each answer once,
whole, even when the answers end while Redis is paused, and the worker takes the next
battle."""

from __future__ import annotations

import threading

import httpx
import pytest
import redis

from arena.streaming import _keys as stream_keys
from battles.models import Position, Response
from battles.tests.test_browser import side, start_battle, wait_turn_done
from testkit.browser import browser_ms, browser_page
from testkit.fake_providers import split_tokens
from testkit.live import keyless
from testkit.redis_faults import arena_on
from testkit.waiting import ceiling, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = [f"w{i}" for i in range(50)]  # within the models' 64-token cap
ANSWER = " ".join(WORDS)

# The text of a side still being written, once it shows ``word``; else false.
SHOWS_WHILE_RUNNING = """([position, word]) => {
  const side = document.querySelector(`#turn-1 .side-${position}`);
  const text = side && side.querySelector('.stream-text');
  if (!text || side.dataset.status === 'done' || side.dataset.status === 'failed') return false;
  const words = text.textContent.trim().split(/\\s+/);
  return words.includes(word) ? text.textContent : false;
}"""


def shown_while_running(page, position: str, word: str) -> list[str]:
    caught = page.wait_for_function(SHOWS_WHILE_RUNNING, arg=[position, word], polling="raf",
                                    timeout=ceiling(60) * 1000)
    return caught.json_value().split()


def alive(worker) -> bool:
    if worker.poll() is None:
        return True
    raise AssertionError(f"the worker exited ({worker.returncode}): "
                         f"{worker.stderr.read().decode()[-3000:]}")


@pytest.mark.browser
def test_redis_killed_then_paused_mid_answer_the_page_shows_each_answer_once_and_whole(
        chromium, private_redis, test_process_env, two_models, fake_openai, monkeypatch):
    fake_openai.reply_text = ANSWER
    # About 25 s an answer: the page must be back (socket reconnected with backoff, stream
    # caught up) while the answer is still being written, also on a busy machine.
    keyless(fake_openai, two_models, token_delay=0.5)
    with arena_on(private_redis, test_process_env, queue="redis-faults") as (base, worker), \
            browser_page(chromium, base, monkeypatch,
                         viewport={"width": 1280, "height": 900}) as page:
        start_battle(page, "Count for me.")
        shown_while_running(page, Position.LEFT, "w3")

        private_redis.kill()  # the worker's and the page's connections reset, the data gone
        private_redis.start()
        # The page's socket closed with Redis; it reconnects and resumes the stream: what it
        # shows while the answer is still written is the answer's start, nothing lost or twice.
        for position in (Position.LEFT, Position.RIGHT):
            resumed = shown_while_running(page, position, "w20")
            assert resumed == WORDS[:len(resumed)]

        with private_redis.paused():  # a stall: the sockets wait, the worker goes on
            threading.Event().wait(3)
        for position in (Position.LEFT, Position.RIGHT):
            resumed = shown_while_running(page, position, "w40")
            assert resumed == WORDS[:len(resumed)]

        with private_redis.paused():  # the answers end during a stall: their "done" is lost
            wait_for(lambda: Response.objects.filter(status="done").count() == 2,
                     what="the worker to save both answers while Redis is paused")
            threading.Event().wait(4)  # and to give up announcing their ends
        wait_turn_done(page, 1)  # the page, hearing nothing, asks the server
        for position in (Position.LEFT, Position.RIGHT):
            assert side(page, 1, position).locator(".body.markdown p").inner_text().split() \
                == WORDS
        assert alive(worker)
        saved = Response.objects.order_by("slot")
        assert [(r.status, r.text, r.attempts, r.generation) for r in saved] \
            == [("done", ANSWER, 1, 0)] * 2

        # The worker reconnected to the broker: it takes the next battle.
        fake_openai.token_delay = 0
        with httpx.Client(base_url=base, timeout=60, headers={"Origin": base}) as client:
            after = client.post("/api/battles", json={"prompt": "And once more."})
        assert after.status_code == 200, after.text
        assert [r["text"] for r in after.json()["responses"]] == [ANSWER] * 2
        assert alive(worker)


@pytest.mark.browser
def test_a_stop_right_after_redis_restarted_empty_keeps_what_the_answers_had_shown(
        chromium, private_redis, test_process_env, two_models, fake_openai, monkeypatch):
    """The stop reads what each answer wrote from Redis. Redis had restarted empty and the
    writers had not written their texts again (their model was between two words): the stop
    read nothing, and the answers were saved empty although the page had shown words. The
    worker, meeting the stop, gives each answer back what it had sent, and the page, which
    had shown more than the stop kept, asks for its sides again until it has them."""
    from playwright.sync_api import expect

    fake_openai.reply_text = ANSWER
    keyless(fake_openai, two_models)
    release = fake_openai.hold(after_tokens=4)  # both models pause after "w0 w1 w2 w3 "
    sent = "".join(split_tokens(ANSWER)[:4])
    with arena_on(private_redis, test_process_env, queue="redis-faults-stop") as (base, _), \
            browser_page(chromium, base, monkeypatch,
                         viewport={"width": 1280, "height": 900}) as page:
        start_battle(page, "Count for me.")
        for position in (Position.LEFT, Position.RIGHT):
            assert shown_while_running(page, position, "w3") == sent.split()
        wait_for(lambda: set(_snapshots(private_redis).values()) == {sent},
                 what="both answers' first words in Redis, as the page has them")

        private_redis.kill()
        private_redis.start()  # empty
        page.get_by_test_id("stop").click()
        wait_for(lambda: [(r.text, r.stopped) for r in Response.objects.all()]
                 == [("", True)] * 2, what="the stop, which read nothing, to be saved")

        release.set()  # each writer's next word meets the stop, with the text it had sent
        for position in (Position.LEFT, Position.RIGHT):
            expect(page.get_by_test_id(f"stopped-{position}")).to_contain_text(
                "Stopped before the end", timeout=browser_ms(30))
            assert side(page, 1, position).locator(".body.markdown p").inner_text().split() \
                == sent.split()
        saved = Response.objects.all()
        assert [(r.text, r.stopped) for r in saved] == [(sent, True)] * 2
        assert all(r.output_tokens > 0 for r in saved)


def _snapshots(server) -> dict[str, str]:
    """Each answer's text as ``server`` (a PrivateRedis) holds it now."""
    store = redis.Redis(unix_socket_path=str(server.socket))
    return {str(r.id): (store.get(stream_keys(str(r.id))[0]) or b"").decode()
            for r in Response.objects.all()}
