"""The ``/data/`` page (every release with its files, sizes, checksums and datasheet) and the
downloads. Thin: parse, call a selector, render or serve."""

from __future__ import annotations

from datetime import date

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from releases import selectors


@require_GET
def data_page(request: HttpRequest) -> HttpResponse:
    return render(request, "releases/data.html", {"releases": selectors.release_list()})


@require_GET
def release_download(request: HttpRequest, day: str, name: str) -> FileResponse:
    try:
        parsed = date.fromisoformat(day)
    except ValueError:
        raise Http404 from None
    found = selectors.release_file(day=parsed, name=name)
    if found is None:
        raise Http404
    _release, described, path = found
    response = FileResponse(path.open("rb"), as_attachment=True,
                            filename=f"arena-{day}-{described['name']}",
                            content_type=described["content_type"])
    response["Digest"] = f"sha-256={described['sha256']}"
    return response
