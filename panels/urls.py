from django.urls import path

from panels import views

app_name = "panel"
urlpatterns = [
    path("", views.panel_index, name="index"),
    path("<uuid:panel_id>/", views.panel_detail, name="detail"),
    path("<uuid:panel_id>/progress", views.panel_progress, name="progress"),
    path("<uuid:panel_id>/verdict", views.panel_verdict, name="verdict"),
    path("<uuid:panel_id>/clarify", views.panel_clarify, name="clarify"),
]
