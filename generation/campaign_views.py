"""Campaign pages: the list, one campaign's live page, and pause / resume / cancel (maintainers, POST)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from core.htmx import STOP_POLLING, htmx_target
from core.permissions import require_maintainer
from generation.campaigns.selectors import campaign_summary
from generation.models import Campaign


def campaign_list(request: HttpRequest) -> HttpResponse:
    campaigns = list(Campaign.objects.all()[:200])
    return render(request, "generation/campaign_list.html", {"campaigns": campaigns})


def campaign_detail(request: HttpRequest, pk: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=pk)
    context = {"campaign": campaign, "summary": campaign_summary(campaign=campaign)}
    if htmx_target(request) == "campaign-progress":
        return render(request, "generation/_campaign_progress.html", context,
                      status=200 if campaign.open else STOP_POLLING)
    return render(request, "generation/campaign_detail.html", context)


@require_POST
def campaign_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    require_maintainer(request)
    campaign = get_object_or_404(Campaign, pk=pk)
    from generation.campaigns.services import campaign_cancel, campaign_pause, campaign_resume

    if action == "pause":
        done = campaign_pause(campaign=campaign, user=request.user)
    elif action == "resume":
        done = campaign_resume(campaign=campaign, user=request.user)
    elif action == "cancel":
        done = campaign.open
        cancelled = campaign_cancel(campaign=campaign, user=request.user) if done else 0
        if done:
            messages.success(request, f"Campaign {campaign.name} cancelled ({cancelled} queued runs).")
            return redirect("generation:campaign_detail", pk=pk)
    else:
        return HttpResponse(status=404)
    if done:
        messages.success(request, f"Campaign {campaign.name}: {action}d.")
    else:
        messages.warning(request, f"Campaign {campaign.name} is {campaign.get_status_display().lower()}; "
                                  f"nothing to {action}.")
    return redirect("generation:campaign_detail", pk=pk)
