from django.contrib import admin

from releases.models import Release


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    list_display = ("date", "votes", "period_start", "period_end", "created_at")
    readonly_fields = ("date", "period_start", "period_end", "votes", "counts", "files",
                       "datasheet", "created_at")
