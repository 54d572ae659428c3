"""Pages of each mode, and placeholders for modes that are not built yet."""

from django.urls import include, path
from django.views.generic import TemplateView

coming_soon = TemplateView.as_view(template_name="arena/coming_soon.html")

urlpatterns = [
    path("battle/", include("battles.urls")),
    path("panel/", include("panels.urls")),
    path("debates/", coming_soon, {"mode": "Debates"}, name="debates"),
    path("voice/", coming_soon, {"mode": "Voice"}, name="voice"),
    path("leaderboard/", include("leaderboard.urls")),
]
