"""``/models/<id>/``: a model's page (mounted at the site root by :mod:`arena.urls`)."""

from django.urls import path

from leaderboard.pages import views

app_name = "models"
urlpatterns = [
    path("<str:model_id>/", views.model_page, name="page"),
]
