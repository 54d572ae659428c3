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

from battles.models import Position, Response
from battles.tests.test_browser import side, start_battle, wait_turn_done
from testkit.browser import browser_page
from testkit.live import keyless
from testkit.redis_faults import arena_on
from testkit.waiting import ceiling, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

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
