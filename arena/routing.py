"""Websocket routes of every app, gathered in one list for asgi.py."""

from battles.routing import websocket_urlpatterns as battle_routes

websocket_urlpatterns = [*battle_routes]
