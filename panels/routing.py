from django.urls import path

from panels.consumers import PanelConsumer

websocket_urlpatterns = [
    path("ws/panels/<str:panel_id>/", PanelConsumer.as_asgi()),
]
