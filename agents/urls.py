from django.urls import path

from agents import views

app_name = "agents"

urlpatterns = [
    path("", views.voice_page, name="voice"),
    path("<uuid:battle_id>/recordings/<str:label>-<str:side>.wav", views.recording,
         name="recording"),
]
