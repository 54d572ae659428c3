"""Panel pages and their htmx fragments. Thin: parse, call a service or selector, render.

The live part of a panel page is one partial (``#progress``) that htmx reloads every second
while the models work, and renders without its polling trigger once the panel is finished or
waits for the person's answers to clarifying questions.
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from arena.errors import RuleError, rule_error_response
from arena.selectors import model_list_with_availability
from arena.sessions import session_key_for
from arena.visitors import PANEL_CLARIFY, PANEL_CREATE, visitor_count, visitor_write
from panels import selectors, services
from panels.models import PanelOrigin

TEMPLATE = "panels/panel.html"


def _panel_context(request: HttpRequest, panel_id, **extra) -> dict:
    panel = selectors.panel_visible(panel_id=panel_id)
    if panel is None:
        raise Http404("panel not found")
    key = session_key_for(request, create=False)
    view = selectors.panel_view(panel=panel)
    exclude_self = request.GET.get("exclude_self") == "1"
    return {
        "view": view,
        "standings": view.standings(exclude_self=exclude_self),
        "leaders": view.leaders(exclude_self=exclude_self),
        "exclude_self": exclude_self,
        "is_owner": bool(key) and panel.session_key == key,
        "max_rounds": settings.ARENA_PANEL_MAX_CLARIFICATION_ROUNDS,
        **extra,
    }


def _form_context(request: HttpRequest, **extra) -> dict:
    models = [(m, a) for m, a in model_list_with_availability() if a.available or not m.optional]
    try:
        question_model, question_model_problem = services.question_model_get(), None
    except RuleError as exc:
        question_model, question_model_problem = None, exc.message
    return {
        "models": models,
        "available_count": sum(a.available for _, a in models),
        "question_model": question_model,
        "question_model_problem": question_model_problem,
        "panels": selectors.panel_list(session_key=session_key_for(request, create=False)),
        "max_rounds": settings.ARENA_PANEL_MAX_CLARIFICATION_ROUNDS,
        **extra,
    }


def panel_index(request: HttpRequest):
    """GET: the form and every saved panel; POST: start a panel and go to its page."""
    if request.method != "POST":
        return render(request, TEMPLATE, _form_context(request))
    auto = request.POST.get("action") == "generate"
    try:
        panel = visitor_write(request, lambda key: services.panel_create(
            question=request.POST.get("question", ""),
            models=request.POST.getlist("models") or None,
            clarify=not auto and request.POST.get("clarify") == "on",
            auto=auto,
            session_key=key,
            origin=PanelOrigin.WEB,
            public=request.POST.get("public") == "on",
        ), PANEL_CREATE)
    except RuleError as exc:
        return rule_error_response(request, exc, template=TEMPLATE, context=_form_context(
            request, question=request.POST.get("question")))
    url = f"/panel/{panel.id}/"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@require_GET
def panel_detail(request: HttpRequest, panel_id):
    return render(request, TEMPLATE, _panel_context(request, panel_id))


@require_GET
def panel_progress(request: HttpRequest, panel_id):
    return render(request, f"{TEMPLATE}#progress", _panel_context(request, panel_id))


@require_GET
def panel_verdict(request: HttpRequest, panel_id):
    return render(request, f"{TEMPLATE}#verdict", _panel_context(request, panel_id))


@require_POST
def panel_clarify(request: HttpRequest, panel_id):
    """The asker answers the clarifying questions, or skips them."""
    panel = selectors.panel_visible(panel_id=panel_id)
    if panel is None:
        raise Http404("panel not found")
    key = session_key_for(request, create=False) or ""
    error: RuleError | None = None
    try:
        visitor_count(request, PANEL_CLARIFY)
        if request.POST.get("action") == "skip":
            services.panel_clarification_skip(panel=panel, session_key=key)
        else:
            services.panel_clarification_answer(panel=panel, session_key=key,
                                                answer=request.POST.get("answer", ""))
    except RuleError as exc:
        error = exc
    if not request.htmx and error is None:
        return redirect(f"/panel/{panel.id}/")
    template = f"{TEMPLATE}#progress" if request.htmx else TEMPLATE
    context = _panel_context(request, panel_id, error=error.message if error else None)
    return render(request, template, context, status=error.status if error else 200)
