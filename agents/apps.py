from arena import modes


class AgentsConfig(modes.ModeConfig):
    name = "agents"
    verbose_name = "Voice-agent battles"
    mode = modes.Mode(
        key="voice", label="Voice", path="voice/", order=40,
        summary="Talk to two anonymous voice agents on the same task, then vote.",
        urls="agents.urls", root_urls="agents.root_urls",
        counted_votes="agents.integrity.COUNTED_VOTES",
        operations="agents.operations.OPERATIONS",
        session_fields=("agents.AgentBattle.session_key", "agents.AgentVote.session_key"),
        websocket_routes="agents.routing.websocket_urlpatterns",
        figures="agents.selectors.home_figures",
        # the offline agent's calls run in the web process: Whisper, the model client and
        # the greetings are loaded before its first call
        warm_up="agents.warmup.voice_warm_up",
        beat={
            # A call whose proxy process died stays "live": close it with the reason.
            # Evaluation stages whose worker died are the platform sweep's.
            "agents-stalled-sweep": {"task": "agents.tasks.conversation_stalled_sweep",
                                     "schedule": 60.0},
        },
    )
