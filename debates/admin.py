"""Admin of debate mode: the library (topics, personas, evidence), proposed motions to
approve, and debates (with the action that settles one no judge could)."""

from django.contrib import admin, messages
from django.utils import timezone

from arena.admin import TimestampsLast
from arena.errors import RuleError
from debates.models import Debate, DebateStep, DebateTurn, Evidence, JudgeEvaluation, Persona, Topic


class EvidenceInline(TimestampsLast, admin.StackedInline):
    model = Evidence
    extra = 0


@admin.register(Topic)
class TopicAdmin(TimestampsLast, admin.ModelAdmin):
    list_display = ("motion", "category", "difficulty", "is_approved", "times_used",
                    "retired_at")
    list_filter = ("is_approved", "category", "difficulty")
    search_fields = ("motion",)
    inlines = [EvidenceInline]
    actions = ["approve", "retire"]

    @admin.action(description="Approve: add to the public topics")
    def approve(self, request, queryset):
        count = queryset.update(is_approved=True)
        self.message_user(request, f"{count} motion(s) are now public topics.")

    @admin.action(description="Retire: no new debates on it")
    def retire(self, request, queryset):
        count = queryset.filter(retired_at__isnull=True).update(retired_at=timezone.now())
        self.message_user(request, f"{count} topic(s) retired.")


@admin.register(Evidence)
class EvidenceAdmin(TimestampsLast, admin.ModelAdmin):
    list_display = ("title", "source", "topic")
    search_fields = ("title", "content", "source")


@admin.register(Persona)
class PersonaAdmin(TimestampsLast, admin.ModelAdmin):
    list_display = ("name", "is_active")
    list_filter = ("is_active",)
    search_fields = ("name", "description")


class TurnInline(admin.StackedInline):
    model = DebateTurn
    extra = 0
    can_delete = False
    fields = ("round", "position", "speech", "revised", "factuality")
    readonly_fields = fields


class StepInline(admin.TabularInline):
    model = DebateStep
    extra = 0
    can_delete = False
    fields = ("kind", "round", "position", "revision", "status", "error", "generation",
              "restarts")
    readonly_fields = fields


class EvaluationInline(admin.TabularInline):
    model = JudgeEvaluation
    extra = 0
    can_delete = False
    fields = ("judge", "role", "order", "winner", "logical_coherence", "rebuttal_strength",
              "factuality", "justification_reasks", "justification_short", "error")
    readonly_fields = fields


def _settle(winner: str):
    @admin.action(description=f"Settle the review: {winner}")
    def settle(modeladmin, request, queryset):
        from debates.verdicts import debate_review_settle  # noqa: PLC0415 - streams: its action

        for debate in queryset:
            try:
                debate_review_settle(debate_id=debate.pk, winner=winner)
            except RuleError as exc:
                modeladmin.message_user(request, f"{debate}: {exc.message}", messages.WARNING)
    settle.__name__ = f"settle_{winner}"
    return settle


@admin.register(Debate)
class DebateAdmin(admin.ModelAdmin):
    list_display = ("id", "topic", "status", "ai_winner", "human_winner", "needs_review",
                    "created_at")
    list_filter = ("status", "needs_review")
    search_fields = ("id", "topic__motion")
    inlines = [StepInline, TurnInline, EvaluationInline]
    actions = [_settle("pro"), _settle("con"), _settle("tie")]
