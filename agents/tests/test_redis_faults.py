"""Redis killed, then paused, during a call to the offline agent through the real proxy (the
channel layer and cache on a redis-server the test controls): the call goes on as if nothing
happened (the caller is heard and answered once), ends when the caller ends it, and is saved
once, whole, with its evaluation queued."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from agents.models import AgentConversation, ConversationStatus
from agents.proxy import CALLER_ENDED
from agents.tests.test_call import _listening, _setup
from agents.tests.voice_support import CALLER_LINE, listen_until, speech

pytestmark = pytest.mark.django_db(transaction=True)

async def test_redis_killed_then_paused_mid_call_the_call_goes_on_and_is_saved_once(
        fake_openai, private_redis):
    key, battle = await database_sync_to_async(_setup)(fake_openai)
    client, heard, microphone = await _listening(battle, key)

    private_redis.kill()  # ended every call before: Channels listened on Redis for it
    private_redis.start()
    microphone.say(speech(CALLER_LINE))
    with private_redis.paused():
        await listen_until(client, heard, lambda h: any(
            e["role"] == "agent" for e in h.of("transcript")[1:]) and h.of("status")[-1].get(
            "state") == "listening")
    await client.send_json_to({"type": "end"})
    await listen_until(client, heard, lambda h: h.of("session_end"))
    await microphone.stop()
    await client.disconnect()

    assert not heard.of("closed") and not heard.of("error")
    assert [e["role"] for e in heard.of("transcript")] == ["agent", "user", "agent"]
    assert len(fake_openai.reply_text.heard) == 1  # asked once, with what the caller said
    words = fake_openai.reply_text.heard[0].split("\n\n(Results from your tools:\n")[0]
    assert words == heard.of("transcript")[1]["text"]
    end = heard.of("session_end")
    assert len(end) == 1 and end[0]["reason"] == CALLER_ENDED and end[0]["error"] == ""

    def saved():
        conversations = list(AgentConversation.objects.filter(battle=battle))
        return conversations, sorted(conversations[0].stages.values_list("kind", flat=True))

    conversations, stages = await database_sync_to_async(saved)()
    assert len(conversations) == 1
    conversation = conversations[0]
    assert conversation.status == ConversationStatus.DONE
    assert [t["role"] for t in conversation.turns_json] == ["agent", "user", "agent"]
    assert stages == ["latency", "transcript"]
