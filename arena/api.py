"""The JSON API under /api/: one NinjaAPI, a router per mode (from the mode registry), errors
as ``{"detail": "..."}`` (rules: :mod:`arena.errors`; validation: 422 naming each field).

A seed whose contract paths lie outside /api/ (seed 002's ``/battles/...``) builds its own
NinjaAPI with :func:`answer_errors_as_detail` and mounts it through ``Mode.root_urls``."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import NinjaAPI, Router, Schema
from ninja.errors import ValidationError

from arena.errors import RuleError, api_rule_error
from arena.modes import modes


def answer_errors_as_detail(api: NinjaAPI) -> NinjaAPI:
    """Install the platform's error answers on a NinjaAPI: a broken rule and a validation
    error both become ``{"detail": "..."}`` (validation: 422 naming each field)."""

    @api.exception_handler(RuleError)
    def rule_error(request: HttpRequest, exc: RuleError):
        return api_rule_error(api, request, exc)

    @api.exception_handler(ValidationError)
    def validation_error(request: HttpRequest, exc: ValidationError):
        problems = []
        for error in exc.errors:
            loc = [str(part) for part in error.get("loc", []) if part not in ("body", "payload")]
            where = ".".join(loc)
            problems.append(f"{where}: {error.get('msg')}" if where else str(error.get("msg")))
        return api.create_response(request, {"detail": "; ".join(problems)}, status=422)

    return api


api = answer_errors_as_detail(NinjaAPI(title="Arena API", version="1.0", urls_namespace="api"))


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
    from arena.selectors import model_list_available

    return {
        "models": [
            {"model_id": m.slug, "name": m.name, "provider": m.provider, "status": m.status}
            for m in model_list_available()
        ]
    }


api.add_router("", models_router)
for _mode in modes():
    if _mode.is_open and _mode.api_router:
        api.add_router("", _mode.api_router)
