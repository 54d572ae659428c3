"""Staff's view of people and voters: accounts with their votes per mode, flags and bans
(actions), the bans themselves (an anonymous session or an address can be banned too), and
the review list of suspicious voters across modes (``…/accounts/profile/suspicious/``)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from accounts import bans
from accounts.models import Profile
from accounts.review import profiles_with_votes, suspicious_voters, vote_modes
from arena.contests.bans import check_visitor
from arena.models import VoterBan


def _staff(request: HttpRequest) -> str:
    return request.user.get_username()


def _vote_column(mode: str):
    """A list column: a mode's votes as ``counted / all``, sortable by all."""

    @admin.display(description=f"{mode} votes", ordering=f"votes_{mode}")
    def column(obj: Profile) -> str:
        return f"{getattr(obj, f'counted_{mode}', 0)} / {getattr(obj, f'votes_{mode}', 0)}"

    column.__name__ = f"votes_{mode}"
    return column


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    """Accounts with their votes per mode (counted / all), flags and bans; the review list of
    suspicious voters is an extra page of it."""

    list_filter = ("banned", "flagged")
    search_fields = ("user__email", "user__username", "visitor_key")
    readonly_fields = ("user", "visitor_key", "flagged", "banned", "banned_at", "created_at")
    fields = ("user", "visitor_key", "created_at", "flagged", "flag_reason", "banned",
              "banned_at")
    actions = ["flag", "unflag", "ban", "unban"]
    list_select_related = ("user",)

    def get_list_display(self, request):
        return ("email", *(_vote_column(mode) for mode in vote_modes()), "flagged",
                "banned", "flag_reason", "created_at")

    def get_queryset(self, request):
        return profiles_with_votes(super().get_queryset(request))

    def has_add_permission(self, request) -> bool:
        return False  # a profile comes with its account

    @admin.display(description="e-mail", ordering="user__email")
    def email(self, obj: Profile) -> str:
        return obj.user.email

    @admin.action(description="Flag for review (their votes still count)")
    def flag(self, request, queryset) -> None:
        for profile in queryset:
            bans.account_flag(profile=profile, reason=profile.flag_reason)
        self.message_user(request, f"{queryset.count()} account(s) flagged.")

    @admin.action(description="Clear the flag")
    def unflag(self, request, queryset) -> None:
        for profile in queryset:
            bans.account_unflag(profile=profile)
        self.message_user(request, f"{queryset.count()} flag(s) cleared.")

    @admin.action(description="Ban: their votes stop counting at the next rating run")
    def ban(self, request, queryset) -> None:
        for profile in queryset:
            bans.account_ban(profile=profile, by=_staff(request),
                             reason=profile.flag_reason or "banned by staff")
        self.message_user(request, f"{queryset.count()} account(s) banned; their votes stop "
                                   "counting at the next rating run.")

    @admin.action(description="Lift the ban: their votes count again")
    def unban(self, request, queryset) -> None:
        counted = sum(bans.account_unban(profile=profile, by=_staff(request))
                      for profile in queryset.filter(banned=True))
        self.message_user(request, f"Ban(s) lifted; {counted} vote(s) count again.")

    def get_urls(self):
        own = [
            path("suspicious/", self.admin_site.admin_view(self.suspicious_view),
                 name="accounts_profile_suspicious"),
            path("suspicious/ban/", self.admin_site.admin_view(require_POST(self.ban_view)),
                 name="accounts_profile_suspicious_ban"),
        ]
        return own + super().get_urls()

    def suspicious_view(self, request: HttpRequest):
        context = {**self.admin_site.each_context(request), "opts": self.model._meta,
                   "title": "Suspicious voters", "voters": suspicious_voters(),
                   "modes": vote_modes()}
        return TemplateResponse(request, "admin/accounts/suspicious_voters.html", context)

    def ban_view(self, request: HttpRequest):
        """Ban (or lift the ban of) one voter of the review list."""
        if not self.has_change_permission(request):
            return HttpResponseRedirect(reverse("admin:index"))
        visitor, lift = request.POST.get("visitor", ""), request.POST.get("lift") == "1"
        try:
            if lift:
                bans.unban(visitor=visitor, by=_staff(request))
            else:
                bans.ban(visitor=visitor, by=_staff(request),
                         reason="suspicious votes (review list)")
        except ValueError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"{visitor}: {'ban lifted' if lift else 'banned'}.")
        return HttpResponseRedirect(reverse("admin:accounts_profile_suspicious"))


class VoterBanForm(forms.ModelForm):
    """A ban is added by naming the voter; one lifted before is banned again (the same row),
    so the field's uniqueness is the rule's to keep, not the form's."""

    class Meta:
        model = VoterBan
        fields = ("visitor", "reason")
        help_texts = {"visitor": "session:<key> (an anonymous session or an account's key, "
                                 "as the votes hold it) or ip:<hash> (as the flags name it)."}

    def clean_visitor(self) -> str:
        visitor = self.cleaned_data["visitor"].strip()
        try:
            check_visitor(visitor)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return visitor

    def validate_unique(self) -> None:
        pass


@admin.register(VoterBan)
class VoterBanAdmin(admin.ModelAdmin):
    """Bans of voters: accounts (``session:<account key>``, banned from the account's page),
    anonymous sessions (``session:<key>``) and addresses (``ip:<hash>``)."""

    list_display = ("visitor", "stands", "reason", "banned_at", "banned_by", "lifted_at",
                    "lifted_by")
    list_filter = (("lifted_at", admin.EmptyFieldListFilter),)
    search_fields = ("visitor", "reason")
    form = VoterBanForm
    actions = ["lift"]

    def get_readonly_fields(self, request, obj=None):
        return ("visitor", "reason") if obj is not None else ()

    @admin.display(boolean=True, description="stands")
    def stands(self, obj: VoterBan) -> bool:
        return obj.stands

    def save_model(self, request, obj, form, change) -> None:
        if not change:  # through the rule, which marks the votes at once
            bans.ban(visitor=obj.visitor, reason=obj.reason, by=_staff(request))
            obj.pk = VoterBan.objects.get(visitor=obj.visitor).pk

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # lifted, never deleted: the marks on the votes say why

    @admin.action(description="Lift: their votes count again")
    def lift(self, request, queryset) -> None:
        counted = sum(bans.unban(visitor=ban.visitor, by=_staff(request))
                      for ban in queryset.filter(lifted_at__isnull=True))
        self.message_user(request, f"Ban(s) lifted; {counted} vote(s) count again.")
