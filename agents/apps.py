from arena import modes


class AgentsConfig(modes.ModeConfig):
    name = "agents"
    verbose_name = "Voice-agent battles"
    mode = modes.Mode(
        key="voice", label="Voice", path="voice/", order=40,
        summary="Talk to two anonymous voice agents on the same task, then vote.",
        urls="agents.urls", root_urls="agents.root_urls",
        websocket_routes="agents.routing.websocket_urlpatterns",
        figures="agents.selectors.home_figures",
    )
