"""The ``/data/`` page (every release with its files, sizes, checksums and datasheet) and the
downloads. Thin: parse, call a selector, render or serve."""

from __future__ import annotations

from base64 import b64encode
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
    # RFC 9530: the file's SHA-256, as the page and the API list it, for the client to check.
    response["Repr-Digest"] = f"sha-256=:{b64encode(bytes.fromhex(described['sha256'])).decode()}:"
    return response
