from arena import modes


class PanelsConfig(modes.ModeConfig):
    name = "panels"
    verbose_name = "Panel mode"
    mode = modes.Mode(
        key="panel", label="Panel", path="panel/", order=20,
        summary="One question, every model answers, every model ranks all answers blind.",
        urls="panels.urls", api_router="panels.api.router",
        figures="panels.selectors.home_figures",
        operations="panels.operations.OPERATIONS",
        session_fields=("panels.Panel.session_key",),
        websocket_routes="panels.routing.websocket_urlpatterns",
        # Nothing of its own to sweep: every model call is a platform step, saved together
        # with the panel's next stage (the platform's sweep restarts one whose worker died).
    )
