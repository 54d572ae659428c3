from django.conf import settings

from arena import modes


class BattlesConfig(modes.ModeConfig):
    name = "battles"
    mode = modes.Mode(
        key="battle", label="Battle", path="battle/", order=10,
        summary="Two anonymous models answer your prompt side by side; vote, then see who "
                "was who.",
        urls="battles.urls", api_router="battles.api.router",
        figures="battles.selectors.home_figures",
        websocket_routes="battles.routing.websocket_urlpatterns",
        beat={"battles-votes-integrity-sweep": {
            "task": "battles.tasks.votes_integrity_sweep",
            "schedule": settings.ARENA_INTEGRITY_SWEEP_SECONDS}},
    )

    def ready(self) -> None:
        from battles import integrity  # noqa: F401 - counts votes again when a flag is cleared
