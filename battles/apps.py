
from arena import modes


class BattlesConfig(modes.ModeConfig):
    name = "battles"
    mode = modes.Mode(
        key="battle", label="Battle", path="battle/", order=10,
        summary="Two anonymous models answer your prompt side by side; vote, then see who "
                "was who.",
        urls="battles.urls", api_router="battles.api.router",
        figures="battles.selectors.home_figures",
        counted_votes="battles.integrity.COUNTED_VOTES",
        operations="battles.operations.OPERATIONS",
        session_fields=("battles.Thread.session_key", "battles.Battle.session_key",
                        "battles.Vote.session_key"),
        websocket_routes="battles.routing.websocket_urlpatterns",
        # Voted battles a lost batch left unclassified (see battles.categories).
        beat={"battles-classify-voted": {"task": "battles.tasks.classify_voted",
                                         "schedule": 60.0}},
    )
