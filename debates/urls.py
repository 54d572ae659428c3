from django.urls import path

from debates import views

app_name = "debates"

urlpatterns = [
    path("", views.debate_list, name="list"),
    path("new/", views.debate_new, name="new"),
    path("<uuid:debate_id>/", views.debate_detail, name="detail"),
    path("<uuid:debate_id>/body/", views.debate_body, name="body"),
    path("<uuid:debate_id>/vote/", views.debate_vote_form, name="vote"),
    path("<uuid:debate_id>/reveal/", views.debate_reveal, name="reveal"),
    path("<uuid:debate_id>/<str:action>/", views.debate_control, name="control"),
]
