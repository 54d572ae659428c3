"""Admin views of battles: read-mostly, for looking into what happened."""

from django.contrib import admin

from battles.models import Battle, Response, Share, SupersededAnswer, Thread, Turn, Vote


class TurnInline(admin.TabularInline):
    model = Turn
    extra = 0
    fields = ("index", "prompt", "created_at")
    readonly_fields = fields
    show_change_link = True


class BattleInline(admin.TabularInline):
    model = Battle
    extra = 0
    fields = ("title", "model_a", "model_b", "created_at")
    readonly_fields = fields
    show_change_link = True


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ("id", "title", "created_at", "last_active_at")
    search_fields = ("id", "title", "session_key")
    readonly_fields = ("id", "session_key", "created_at")
    inlines = [BattleInline]


@admin.register(Battle)
class BattleAdmin(admin.ModelAdmin):
    list_display = ("id", "title", "model_a", "model_b", "model_a_position", "is_demo",
                    "created_at", "last_active_at")
    list_filter = ("is_demo", "model_a", "model_b")
    search_fields = ("id", "title", "session_key")
    readonly_fields = ("id", "session_key", "thread", "created_at")
    inlines = [TurnInline]


class SupersededAnswerInline(admin.TabularInline):
    """Answers replaced when the person regenerated the message: kept, never shown."""

    model = SupersededAnswer
    extra = 0
    fields = ("round", "slot", "status", "text", "latency_ms", "output_tokens", "superseded_at")
    readonly_fields = fields
    can_delete = False


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ("battle", "index", "regenerations", "created_at")
    readonly_fields = ("id", "battle", "index", "regenerations", "created_at")
    inlines = [SupersededAnswerInline]


@admin.register(Share)
class ShareAdmin(admin.ModelAdmin):
    """Public links of voted battles; deleting one revokes it."""

    list_display = ("battle", "created_at")
    readonly_fields = ("id", "battle", "token", "created_at")


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ("turn", "slot", "status", "latency_ms", "output_tokens", "attempts")
    list_filter = ("status",)
    readonly_fields = ("id", "turn", "slot", "generation", "updated_at")


@admin.register(Vote)
class VoteAdmin(admin.ModelAdmin):
    list_display = ("battle", "choice", "winner", "counts_for_rating", "exclusion_reason",
                    "created_at")
    list_filter = ("choice", "counts_for_rating")
    readonly_fields = ("id", "battle", "choice", "winner", "score_a", "score_b", "created_at")

