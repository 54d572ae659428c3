"""The operations page: staff only (others are sent to the admin's login). Thin: one
selector, the plots, the template."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from ops import plots
from ops.selectors import operations_overview


@require_GET
@staff_member_required
def ops_page(request: HttpRequest) -> HttpResponse:
    overview = operations_overview()
    boards = [(name, title, stability, plots.uncertainty_plot(stability)
               if stability and stability.has_uncertainty else "")
              for name, title, stability in overview.boards]
    response = render(request, "ops/ops.html", {
        "o": overview, "votes_plot": plots.votes_plot(overview.votes), "boards": boards})
    response["Cache-Control"] = "private, no-store"
    return response
