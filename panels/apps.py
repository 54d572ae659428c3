from arena import modes


class PanelsConfig(modes.ModeConfig):
    name = "panels"
    verbose_name = "Panel mode"
    mode = modes.Mode(
        key="panel", label="Panel", path="panel/", order=20,
        summary="One question, every model answers, every model ranks all answers blind.",
        urls="panels.urls", api_router="panels.api.router",
        figures="panels.selectors.home_figures",
        websocket_routes="panels.routing.websocket_urlpatterns",
        beat={
            # Clarification calls and question writing whose worker died start again, and
            # panels whose last step finished without advancing move on.
            "panels-resume-stale": {"task": "panels.tasks.panel_resume_stale",
                                    "schedule": 120.0},
        },
    )
