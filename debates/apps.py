from arena import modes


class DebatesConfig(modes.ModeConfig):
    name = "debates"
    verbose_name = "Debate mode"
    mode = modes.Mode(
        key="debates", label="Debates", path="debates/", order=30,
        summary="Two models argue a motion in persona, fact-checked live, judged twice with "
                "the order swapped; you vote and wager.",
        urls="debates.urls", api_router="debates.api.router",
        figures="debates.selectors.home_figures",
        alerts="debates.alerts.RULES",
        counted_votes="debates.integrity.COUNTED_VOTES",
        operations="debates.operations.OPERATIONS",
        session_fields=("debates.Debate.session_key", "debates.CrowdVote.session_key",
                        "debates.PointsAccount.session_key", "debates.Topic.proposed_by"),
        merge_visitor="debates.crowd.points_merge",
        websocket_routes="debates.routing.websocket_urlpatterns",
        beat={
            # Debates whose last step is done with no next one (a resume's process died
            # before moving on) move on; steps whose worker died are the platform sweep's.
            "debates-stalled-sweep": {"task": "debates.tasks.debate_stalled_sweep",
                                      "schedule": 120.0},
        },
    )
