from django.contrib import admin

from agents.models import AgentBattle, AgentConfiguration, AgentConversation, Scenario
from arena.admin import TimestampsLast


@admin.register(Scenario)
class ScenarioAdmin(TimestampsLast, admin.ModelAdmin):
    list_display = ("name", "category", "difficulty", "max_turns", "max_duration_seconds",
                    "active")
    list_filter = ("category", "difficulty", "active")
    search_fields = ("name", "slug", "description_for_user")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(AgentConfiguration)
class AgentConfigurationAdmin(TimestampsLast, admin.ModelAdmin):
    list_display = ("name", "provider", "architecture_type", "available", "active")
    list_filter = ("provider", "architecture_type", "active")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}

    @admin.display(description="Can take calls now")
    def available(self, config: AgentConfiguration) -> str:
        from agents.adapters import agent_problem  # noqa: PLC0415 - the voice stack: its page

        return agent_problem(config) or "yes"


class ConversationInline(admin.StackedInline):
    model = AgentConversation
    extra = 0
    can_delete = False
    fields = ("agent_label", "agent_config", "status", "end_reason", "error", "total_turns",
              "duration_seconds", "avg_response_latency_ms", "p95_latency_ms", "task_success",
              "joint_goal_accuracy", "containment", "transcript_full")
    readonly_fields = fields


@admin.register(AgentBattle)
class AgentBattleAdmin(admin.ModelAdmin):
    list_display = ("pk", "scenario", "config_a", "config_b", "status", "created_at")
    list_filter = ("status",)
    readonly_fields = ("session_key", "scenario", "config_a", "config_b", "status", "error",
                       "created_at")
    inlines = [ConversationInline]
