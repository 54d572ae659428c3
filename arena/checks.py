"""Django's deployment checks, seeing the arena's middleware.

Django looks for its security, CSRF, session and clickjacking middleware by dotted path; the
arena's (``arena.middleware``, ``arena.sessions``) subclass them to run on the event loop, so
Django would report them missing (W001-W003) and skip the checks that depend on them (HSTS,
the HTTPS redirect, secure cookies). This check runs those checks with each subclass seen as
Django's own, under ``arena.`` ids; Django's three false reports are silenced in settings."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import CheckMessage, Tags, register
from django.core.checks.security import base, csrf, sessions
from django.utils.module_loading import import_string

DJANGO_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
CHECKS = [
    base.check_security_middleware, base.check_xframe_options_middleware, base.check_sts,
    base.check_sts_include_subdomains, base.check_sts_preload, base.check_content_type_nosniff,
    base.check_ssl_redirect, base.check_xframe_deny, base.check_referrer_policy,
    base.check_cross_origin_opener_policy, csrf.check_csrf_middleware,
    csrf.check_csrf_cookie_secure, sessions.check_session_cookie_secure,
    sessions.check_session_cookie_httponly,
]


def as_django_paths(middleware: list[str]) -> list[str]:
    """``middleware`` with each subclass of a Django security middleware named as Django's
    (a middleware that is a function, as allauth's is, is none)."""
    originals = [(import_string(path), path) for path in DJANGO_MIDDLEWARE]
    named = []
    for path in middleware:
        cls = import_string(path)
        # A function middleware (allauth's) stands for itself.
        named.append(next((original for klass, original in originals
                           if isinstance(cls, type) and issubclass(cls, klass)), path))
    return named


@register(Tags.security, deploy=True)
def security_with_arena_middleware(app_configs, **kwargs) -> list[CheckMessage]:
    from django.test.utils import override_settings  # noqa: PLC0415 - django.test: --deploy only

    with override_settings(MIDDLEWARE=as_django_paths(settings.MIDDLEWARE)):
        found = [message for check in CHECKS for message in check(app_configs)]
    return [type(message)(message.msg, hint=message.hint, obj=message.obj,
                          id=f"arena.{message.id}") for message in found]
