"""Seed 002's own paths at the site root (``/battles/...``), next to the pages at /voice/."""

from django.urls import path

from agents.api import api

urlpatterns = [path("", api.urls)]
