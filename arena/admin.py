from django.contrib import admin
from django.utils import timezone

from arena.models import AIModel, Alert, FlagStatus, ModelCall, VisitorFlag

TIMESTAMPS = ("created_at", "updated_at")


class TimestampsLast:
    """For the admin of a model that takes its timestamps from :mod:`arena.models`'s bases
    and shows every field: the model's own fields first, its timestamps last. Inherited
    fields come first in a model, so the form would open with the date, and an add page would
    put the cursor in it."""

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return [*(f for f in fields if f not in TIMESTAMPS),
                *(f for f in fields if f in TIMESTAMPS)]


@admin.register(AIModel)
class AIModelAdmin(admin.ModelAdmin):
    list_display = (
        "slug", "name", "provider", "provider_kind", "status", "is_local",
        "availability", "reason",
    )
    list_filter = ("status", "provider_kind", "is_local", "organization")
    search_fields = ("slug", "name", "organization", "provider")
    readonly_fields = ("created_at", "updated_at", "availability", "reason", "approved_at")
    actions = ["approve"]

    @admin.action(description="Approve for random draws (priced above ARENA_APPROVAL_PRICE)")
    def approve(self, request, queryset) -> None:
        count = queryset.filter(approved_at__isnull=True).update(approved_at=timezone.now())
        self.message_user(request, f"{count} model(s) approved for draws.")

    def changelist_view(self, request, extra_context=None):
        self._availability = None
        return super().changelist_view(request, extra_context)

    def _lookup(self, obj: AIModel):
        from arena.availability import models_availability  # noqa: PLC0415 - httpx: its pages

        cache = getattr(self, "_availability", None)
        if cache is None:
            cache = self._availability = models_availability(list(AIModel.objects.all()))
        return cache.get(obj.slug) or models_availability([obj])[obj.slug]

    @admin.display(boolean=True, description="available")
    def availability(self, obj: AIModel) -> bool:
        return self._lookup(obj).available

    @admin.display(description="reason")
    def reason(self, obj: AIModel) -> str:
        return self._lookup(obj).reason


@admin.register(VisitorFlag)
class VisitorFlagAdmin(admin.ModelAdmin):
    """The staff review list: visitors whose votes stopped counting, and why."""

    list_display = ("created_at", "mode", "visitor", "status", "votes", "p_value", "reason")
    list_filter = ("status", "mode")
    search_fields = ("visitor", "reason")
    readonly_fields = ("mode", "visitor", "reason", "p_value", "votes", "created_at",
                       "reviewed_at", "reviewed_by")
    actions = ["clear", "confirm"]

    def has_add_permission(self, request) -> bool:
        return False  # flags come from the votes, not from a form

    def _review(self, request, queryset, status: str) -> None:
        from arena.contests.flags import flag_review  # noqa: PLC0415 - SciPy: its actions

        for flag in queryset:
            flag_review(flag, status=status, by=request.user.get_username())
        self.message_user(request, f"{queryset.count()} flag(s): {FlagStatus(status).label}.")

    @admin.action(description="Clear: their votes count again")
    def clear(self, request, queryset) -> None:
        self._review(request, queryset, FlagStatus.CLEARED)

    @admin.action(description="Confirm: their votes stay out")
    def confirm(self, request, queryset) -> None:
        self._review(request, queryset, FlagStatus.CONFIRMED)


@admin.register(ModelCall)
class ModelCallAdmin(admin.ModelAdmin):
    """The ledger of model calls (arena.llm.ledger), read-only: what each call cost and how
    it went; never the conversation."""

    list_display = ("created_at", "model_slug", "provider", "endpoint", "mode", "kind", "ok",
                    "error_kind", "latency_ms", "cost_usd")
    list_filter = ("ok", "endpoint", "mode", "provider")
    search_fields = ("model_slug", "provider", "error_kind")
    date_hierarchy = "created_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class AlertState(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("open", "Open"), ("cleared", "Cleared")]

    def queryset(self, request, queryset):
        if self.value() in ("open", "cleared"):
            return queryset.filter(cleared_at__isnull=self.value() == "open")
        return queryset


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    """The alerts' history (arena.alerts), read-only: what was raised, when it cleared, and
    whether each notice reached its channels."""

    list_display = ("raised_at", "rule", "subject", "value", "threshold", "cleared_at",
                    "notified_at", "delivered", "message")
    list_filter = ("rule", AlertState)
    search_fields = ("rule", "subject", "message")
    date_hierarchy = "raised_at"

    @admin.display(boolean=True, description="delivered")
    def delivered(self, obj: Alert) -> bool:
        return not obj.delivery_error

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
