"""The visitor is an anonymous Django session; a client that keeps cookies is one."""

from django.http import HttpRequest


def session_key_for(request: HttpRequest, *, create: bool = True) -> str | None:
    session = request.session
    if not session.session_key and create:
        session["visitor"] = True
        session.save()
    return session.session_key
