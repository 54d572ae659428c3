from django.urls import path

from leaderboard.pages import views

app_name = "leaderboard"
urlpatterns = [
    path("", views.leaderboard_page, name="page"),
]
