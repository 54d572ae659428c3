from django.contrib import admin

from arena.availability import models_availability
from arena.models import AIModel


@admin.register(AIModel)
class AIModelAdmin(admin.ModelAdmin):
    list_display = (
        "slug", "name", "provider", "provider_kind", "status", "is_local",
        "availability", "reason",
    )
    list_filter = ("status", "provider_kind", "is_local", "organization")
    search_fields = ("slug", "name", "organization", "provider")
    readonly_fields = ("created_at", "updated_at", "availability", "reason")

    def changelist_view(self, request, extra_context=None):
        self._availability = None
        return super().changelist_view(request, extra_context)

    def _lookup(self, obj: AIModel):
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
