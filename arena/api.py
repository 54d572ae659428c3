"""The JSON API under /api/: one NinjaAPI, a router per mode (from the mode registry), errors
as ``{"detail": "..."}`` (rules: :mod:`arena.errors`; validation: 422 naming each field).

A seed whose contract paths lie outside /api/ (seed 002's ``/battles/...``) builds its own
NinjaAPI with :func:`answer_errors_as_detail` and mounts it through ``Mode.root_urls``."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from ninja import NinjaAPI, Router, Schema
from ninja.errors import HttpError, ValidationError
from ninja.openapi.docs import ABS_TPL_PATH, Swagger
from ninja.parser import Parser

from arena.api_writes import SAFE_METHODS, document, guard_write
from arena.errors import RuleError, api_rule_error
from arena.inputs import check_storable
from arena.modes import modes
from arena.selectors import model_list_available

BODY_TOO_LARGE = ("The request body is larger than the {limit:,} bytes the API accepts: send "
                  "less text.")
BODY_NOT_OBJECT = "The body must be a JSON object, {\"name\": value, ...}."


class StorableJsonParser(Parser):
    """JSON objects whose every string and key a database can keep: a NUL byte or a lone
    surrogate anywhere is a 400 naming where it is, before any mode sees the payload; any
    other JSON value is a 422 (a ninja Schema reads a list or a number as an object whose
    fields all take their defaults: ``[null, null]`` started a debate)."""

    def parse_body(self, request: HttpRequest):
        data = json.loads(request.body)
        if not isinstance(data, dict):
            raise RuleError(BODY_NOT_OBJECT, status=422)
        _check_strings(data, "")
        return data


class OfflineSwagger(Swagger):
    """The API docs page from the Swagger UI files django-ninja ships, never a CDN.

    django-ninja renders its own page only when "ninja" is an installed app, and otherwise the
    page at ``template_cdn``, whose scripts come from a CDN: here that is its own page. The
    arena does not install the app (settings.INSTALLED_APPS says why) and finds the page's
    templates and static files through settings.NINJA_FILES."""

    template_cdn = str(ABS_TPL_PATH / "swagger.html")


def _check_strings(value, where: str) -> None:  # noqa: ANN001 - any decoded JSON value
    if isinstance(value, str):
        check_storable(value, field=f"The field {where}" if where else "The body")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_storable(key, field="A key of the body")
            _check_strings(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_strings(item, f"{where}[{index}]")


def _platform_rules(api: NinjaAPI):
    """A view decorator for every operation of ``api``: writes are guarded
    (:func:`arena.api_writes.guard_write`), and what the platform answers before any
    operation runs is documented on it: an unknown or revoked API token is a 401
    (:mod:`accounts.middleware`), a request past the hour's allowance a 429 and a write that
    cannot be counted a 503 (:mod:`arena.request_limits`), a NUL byte or a lone surrogate in
    a path or query parameter is a 400 (:class:`arena.middleware.RejectUnstorableInput`), a
    query parameter or body ninja cannot validate a 422."""

    def decorate(run):  # noqa: ANN001, ANN202 - ninja hands over the operation's bound run
        operation = run.__self__
        document(operation, 401, 429)
        if not set(operation.methods) <= SAFE_METHODS:
            document(operation, 503)
        sources = {model.__ninja_param_source__ for model in operation.models}
        if sources & {"path", "query"}:
            document(operation, 400)
        if sources & {"query", "body"}:
            document(operation, 422)
        return guard_write(api, operation, run)

    return decorate


def answer_errors_as_detail(api: NinjaAPI) -> NinjaAPI:
    """Install the platform's rules and error answers on a NinjaAPI: writes only from the
    site and only as JSON (:mod:`arena.api_writes`: 403, 415); a broken rule, a validation
    error, a body that cannot be parsed or stored and one too large all become
    ``{"detail": "..."}`` (validation: 422 naming each field; too large: 413)."""
    api.parser = StorableJsonParser()
    api.add_decorator(_platform_rules(api), mode="view")

    @api.exception_handler(RuleError)
    def rule_error(request: HttpRequest, exc: RuleError):
        return api_rule_error(api, request, exc)

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError):
        # django-ninja wraps whatever the parser raised; a broken rule keeps its message.
        if isinstance(exc.__cause__, RuleError):
            return api_rule_error(api, request, exc.__cause__)
        return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)

    @api.exception_handler(RequestDataTooBig)
    def too_large(request: HttpRequest, exc: RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return api.create_response(request, {"detail": BODY_TOO_LARGE.format(limit=limit)},
                                   status=413)

    @api.exception_handler(ValidationError)
    def validation_error(request: HttpRequest, exc: ValidationError):
        problems = []
        for error in exc.errors:
            loc = [str(part) for part in error.get("loc", []) if part not in ("body", "payload")]
            where = ".".join(loc)
            problems.append(f"{where}: {error.get('msg')}" if where else str(error.get("msg")))
        return api.create_response(request, {"detail": "; ".join(problems)}, status=422)

    return api


api = answer_errors_as_detail(NinjaAPI(title="Arena API", version="1.0", urls_namespace="api",
                                       docs=OfflineSwagger()))


models_router = Router(tags=["models"])


class ModelOut(Schema):
    model_id: str
    name: str
    provider: str
    status: str


class ModelListOut(Schema):
    models: list[ModelOut]


@models_router.get("/models", response=ModelListOut)
def list_models(request: HttpRequest):
    """The models that can battle now (seed 000's shape)."""
    return {
        "models": [
            {"model_id": m.slug, "name": m.name, "provider": m.provider, "status": m.status}
            for m in model_list_available()
        ]
    }


api.add_router("", models_router)
api.add_router("", "accounts.me_api.router")  # GET/DELETE /api/me, its leaderboard, export
api.add_router("", "ops.api.router")  # GET /api/ops, staff only (a dotted path: arena imports
# no part of the operations page)
api.add_router("", "accounts.api.router")  # /api/tokens: a person's API tokens
for _mode in modes():
    if _mode.is_open and _mode.api_router:
        api.add_router("", _mode.api_router)
