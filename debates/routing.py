from django.urls import path

from debates.consumers import DebateConsumer

websocket_urlpatterns = [
    path("ws/debates/<str:debate_id>/", DebateConsumer.as_asgi()),
]
