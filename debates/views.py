"""Debate pages and their htmx fragments. Thin: parse, call a service or selector, render.

The live part of a debate page is one partial (``#body``): the page's socket streams the
speech being written into it and, whenever a step is committed, re-reads the partial from
the server (static/js/debate.js).
"""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from arena.contests.flags import voter_of
from arena.contests.human_check import human_check_require
from arena.errors import RuleError, rule_error_response
from arena.sessions import session_key_for
from arena.visitors import DEBATE_CREATE, DEBATE_WRITE, visitor_write
from debates import crowd, selectors, services
from debates.models import MAX_ROUNDS, MAX_WORD_LIMIT, MIN_ROUNDS, MIN_WORD_LIMIT, DebateStatus

LIST_TEMPLATE = "debates/list.html"
NEW_TEMPLATE = "debates/new.html"
TEMPLATE = "debates/debate.html"
CONTROLS = {"pause": services.debate_pause, "resume": services.debate_resume,
            "cancel": services.debate_cancel}


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return -1  # out of range: the service names the problem


@require_GET
def debate_list(request: HttpRequest):
    filters = {key: request.GET.get(key, "").strip() for key in ("category", "model", "status")}
    key = session_key_for(request, create=False)
    return render(request, LIST_TEMPLATE, {
        "debates": selectors.debate_list(**filters, session_key=key),
        "filters": filters, "categories": selectors.categories(),
        "statuses": DebateStatus.choices, "models": selectors.form_choices()["models"],
    })


def _form_context(**extra) -> dict:
    return {**selectors.form_choices(), "min_rounds": MIN_ROUNDS, "max_rounds": MAX_ROUNDS,
            "min_words": MIN_WORD_LIMIT, "max_words": MAX_WORD_LIMIT, **extra}


def debate_new(request: HttpRequest):
    """GET: the form; POST: start the debate and go to its page."""
    if request.method != "POST":
        return render(request, NEW_TEMPLATE, _form_context(form={}))
    post = request.POST
    # A motion typed is the debate's motion: "Random topic" left as it was must not drop it,
    # and with a library topic picked as well the service asks for one of the two.
    topic = post.get("topic") or None
    motion = post.get("motion", "").strip() or ("" if topic == "own" else None)
    own = motion is not None
    try:
        debate = visitor_write(request, lambda key: services.debate_create(
            session_key=key,
            model_a=post.get("model_a") or None, model_b=post.get("model_b") or None,
            topic_id=None if topic == "own" else topic, motion=motion,
            persona_a=post.get("persona_a") or None, persona_b=post.get("persona_b") or None,
            rounds=_int(post.get("rounds"), 2), word_limit=_int(post.get("word_limit"), 120),
            fact_checking=post.get("fact_checking") == "on",
            strict_mode=post.get("strict_mode") == "on",
            listed=not own and post.get("unlisted") != "on"), DEBATE_CREATE)
    except RuleError as exc:
        return rule_error_response(request, exc, template=NEW_TEMPLATE,
                                   context=_form_context(form=post))
    url = f"/debates/{debate.pk}/"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _context(request: HttpRequest, debate_id, **extra) -> dict:
    debate = selectors.debate_visible(debate_id=debate_id)
    if debate is None:
        raise Http404("debate not found")
    view = selectors.debate_view(debate=debate,
                                 session_key=session_key_for(request, create=False))
    return {"view": view, "debate": debate, **extra}


@require_GET
def debate_detail(request: HttpRequest, debate_id):
    return render(request, TEMPLATE, _context(request, debate_id))


@require_GET
def debate_body(request: HttpRequest, debate_id):
    return render(request, f"{TEMPLATE}#body", _context(request, debate_id))


def _act(request: HttpRequest, debate_id, action) -> object:
    """Run ``action(session_key)``; the body partial (htmx) or the page, with any error."""
    if selectors.debate_visible(debate_id=debate_id) is None:
        raise Http404("debate not found")
    error: RuleError | None = None
    try:
        visitor_write(request, action, DEBATE_WRITE)
    except RuleError as exc:
        error = exc
    if not request.htmx and error is None:
        return redirect(f"/debates/{debate_id}/")
    template = f"{TEMPLATE}#body" if request.htmx else TEMPLATE
    context = _context(request, debate_id, error=error.message if error else None)
    return render(request, template, context, status=error.status if error else 200)


@require_POST
def debate_vote_form(request: HttpRequest, debate_id):
    wager = _int(request.POST.get("wager"), 0)

    def act(key):
        human_check_require(request, session_key=key)
        return crowd.debate_vote(
            debate_id=debate_id, session_key=key, choice=request.POST.get("choice", ""),
            wager=wager, voter=voter_of(request),
            publish_text=request.POST.get("publish_text") == "1")

    return _act(request, debate_id, act)


@require_POST
def debate_reveal(request: HttpRequest, debate_id):
    return _act(request, debate_id,
                lambda key: crowd.crowd_reveal(debate_id=debate_id, session_key=key))


@require_POST
def debate_control(request: HttpRequest, debate_id, action: str):
    if action not in CONTROLS:
        raise Http404("unknown action")
    return _act(request, debate_id,
                lambda key: CONTROLS[action](debate_id=debate_id, session_key=key))
