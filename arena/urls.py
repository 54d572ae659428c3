from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView, TemplateView

from arena import views
from arena.api import api
from arena.modes import modes

coming_soon = TemplateView.as_view(template_name="arena/coming_soon.html")

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("healthz/live", views.healthz_live, name="healthz-live"),
    path("healthz/ready", views.healthz_ready, name="healthz-ready"),
    path("api/health", views.healthz, name="api-health"),  # seed 004's path, before the API's
    path("metrics", views.metrics, name="metrics"),
    path("csp-report", views.csp_report, name="csp-report"),
    # For clients that ask for /favicon.ico without reading the page's <link rel="icon">.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),  # the arena's own: sign out everywhere
    path("accounts/", include("allauth.urls")),  # sign-in, sign-up, e-mail, GitHub, Google
    path("", include("accounts.urls_me")),  # /me/ (profile, export, deletion), /privacy/
    path("api/", api.urls),
    path("models/", include("leaderboard.pages.model_urls")),  # a model's page, from every board
    path("ops/", include("ops.urls")),  # the operations page, staff only
    *(path(m.path, include(m.urls)) if m.is_open
      else path(m.path, coming_soon, {"mode": m.label}, name=m.key)
      for m in modes()),
    *(path("", include(m.root_urls)) for m in modes() if m.is_open and m.root_urls),
]

handler400 = "arena.views.bad_request"
handler403 = "arena.views.permission_denied"
handler404 = "arena.views.page_not_found"
handler500 = "arena.views.server_error"
