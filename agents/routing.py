from django.urls import path

from agents.consumers import AgentStreamConsumer

websocket_urlpatterns = [
    path("battles/<str:battle_id>/agent-stream", AgentStreamConsumer.as_asgi()),
]
