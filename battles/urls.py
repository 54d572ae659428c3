from django.urls import path

from battles import views

app_name = "battles"
urlpatterns = [
    path("", views.battle_new, name="new"),
    path("history/", views.battle_history, name="history"),
    path("s/<uuid:thread_id>/", views.thread_detail, name="session"),
    path("<uuid:battle_id>/", views.battle_detail, name="detail"),
    path("<uuid:battle_id>/messages", views.battle_follow_up_form, name="follow_up"),
    path("<uuid:battle_id>/stop", views.battle_stop_form, name="stop"),
    path("<uuid:battle_id>/vote", views.battle_vote_form, name="vote"),
    path("<uuid:battle_id>/retry/<str:position>", views.battle_retry_form, name="retry"),
    path("<uuid:battle_id>/regenerate", views.battle_regenerate_form, name="regenerate"),
    path("<uuid:battle_id>/share", views.battle_share_form, name="share"),
    path("<uuid:battle_id>/share/revoke", views.battle_unshare_form, name="unshare"),
    path("shared/<str:token>/", views.shared_detail, name="shared"),
    path("shared/<str:token>/card.png", views.shared_card, name="shared_card"),
    path("<uuid:battle_id>/controls", views.battle_controls, name="controls"),
    path("<uuid:battle_id>/responses/<uuid:response_id>", views.battle_side, name="side"),
]
