from django.contrib import admin
from django.urls import include, path

from arena import views
from arena.api import api

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("", include("arena.feature_urls")),
]

handler404 = "arena.views.page_not_found"
handler500 = "arena.views.server_error"
