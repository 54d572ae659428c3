"""Admin: rating runs (with "Run rating now"), snapshots and the online Elo table."""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponseNotAllowed, HttpResponseRedirect
from django.urls import path, reverse

from leaderboard.models import (
    BoardSnapshot,
    OnlineElo,
    RatingRun,
    RunStatus,
    RunTrigger,
    SnapshotEntry,
)


def _run_now(request: HttpRequest, boards: list[str] | None) -> None:
    from leaderboard.runs.services import RunInProgress, ratings_run  # noqa: PLC0415 - SciPy

    try:
        run = ratings_run(trigger=RunTrigger.ADMIN, boards=boards, lock_wait=10)
    except RunInProgress as exc:
        messages.warning(request, exc.message)
        return
    if run.status == RunStatus.SUCCEEDED:
        messages.success(
            request,
            f"Rated {', '.join(run.boards)}: {run.outcomes_processed} outcomes in "
            f"{run.duration_ms} ms.",
        )
    else:
        messages.error(request, f"The rating run failed: {run.error}")


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(RatingRun)
class RatingRunAdmin(ReadOnlyAdmin):
    list_display = ("id", "started_at", "trigger", "status", "board_list", "outcomes_processed",
                    "duration_ms", "short_error")
    list_filter = ("status", "trigger")
    actions = ["run_again"]

    @admin.display(description="boards")
    def board_list(self, obj: RatingRun) -> str:
        return ", ".join(obj.boards)

    @admin.display(description="error")
    def short_error(self, obj: RatingRun) -> str:
        return obj.error[:80]

    @admin.action(description="Run the selected runs' boards again now")
    def run_again(self, request, queryset):
        names = sorted({name for run in queryset for name in run.boards})
        _run_now(request, names or None)

    def get_urls(self):
        own = [
            path("run-now/", self.admin_site.admin_view(self.run_now_view),
                 name="leaderboard_ratingrun_run_now"),
        ]
        return own + super().get_urls()

    def run_now_view(self, request: HttpRequest):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_view_permission(request):
            return HttpResponseRedirect(reverse("admin:index"))
        _run_now(request, None)
        return HttpResponseRedirect(reverse("admin:leaderboard_ratingrun_changelist"))


class SnapshotEntryInline(admin.TabularInline):
    model = SnapshotEntry
    fields = ("subject", "name", "rating", "ci_lower", "ci_upper", "rank_ub", "votes",
              "provisional", "deprecated")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(BoardSnapshot)
class BoardSnapshotAdmin(ReadOnlyAdmin):
    list_display = ("board", "created_at", "method", "ci_method", "outcomes", "models_rated",
                    "fit_ms", "run")
    list_filter = ("board", "method")
    exclude = ("plot_data",)
    inlines = [SnapshotEntryInline]
    actions = ["recompute"]

    @admin.action(description="Recompute the selected boards now")
    def recompute(self, request, queryset):
        _run_now(request, sorted(set(queryset.values_list("board", flat=True))))


@admin.register(OnlineElo)
class OnlineEloAdmin(ReadOnlyAdmin):
    list_display = ("board", "subject", "rating", "votes", "updated_at")
    list_filter = ("board",)
    search_fields = ("subject",)
