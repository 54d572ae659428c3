"""The profile's pages (/me/...) and the privacy page (/privacy/), mounted at the site root."""

from django.urls import path

from accounts import me_views

app_name = "me"
urlpatterns = [
    path("me/", me_views.me, name="me"),
    path("me/export", me_views.export, name="export"),
    path("me/delete", me_views.delete, name="delete"),
    path("me/tokens/", me_views.token_create_form, name="token-create"),
    path("me/tokens/<uuid:token_id>/revoke", me_views.token_revoke_form, name="token-revoke"),
    path("privacy/", me_views.privacy, name="privacy"),
]
