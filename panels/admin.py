"""Admin views of panels: read-mostly, for looking into what happened."""

from django.contrib import admin

from panels.models import Panel, PanelAnswer, PanelJudgement, QuestionStep


class PanelAnswerInline(admin.TabularInline):
    model = PanelAnswer
    extra = 0
    can_delete = False
    show_change_link = True


class PanelJudgementInline(admin.TabularInline):
    model = PanelJudgement
    extra = 0
    can_delete = False
    show_change_link = True


class QuestionStepInline(admin.TabularInline):
    model = QuestionStep
    extra = 0
    can_delete = False
    fields = ("kind", "round", "status", "error", "reply", "restarts", "updated_at")
    readonly_fields = fields


@admin.register(Panel)
class PanelAdmin(admin.ModelAdmin):
    list_display = ("id", "question", "status", "created_at")
    list_filter = ("status",)
    search_fields = ("id", "question")
    inlines = [QuestionStepInline, PanelAnswerInline, PanelJudgementInline]


@admin.register(PanelAnswer)
class PanelAnswerAdmin(admin.ModelAdmin):
    list_display = ("panel", "model", "status", "latency_ms", "output_tokens", "attempts")
    list_filter = ("status", "model")
    readonly_fields = ("id", "panel", "model", "generation", "updated_at")


@admin.register(PanelJudgement)
class PanelJudgementAdmin(admin.ModelAdmin):
    list_display = ("panel", "judge", "status", "is_valid", "attempts")
    list_filter = ("status", "is_valid", "judge")
    readonly_fields = ("id", "panel", "judge", "generation", "updated_at")
