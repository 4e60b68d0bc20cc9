"""Reads of campaigns shared by the page and the command: counts, reasons, pace, tokens, cost."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count, Max, Min, Q, Sum
from django.utils import timezone

from generation.accounting import cost_usd
from generation.models import Campaign, FailureReason, GenerationRun, LLMCall

THROUGHPUT_WINDOW_S = 3600


def campaigns_open() -> list[Campaign]:
    return list(Campaign.objects.filter(status__in=(Campaign.Status.RUNNING, Campaign.Status.PAUSED))
                .order_by("-created_at")[:20])


def campaign_summary(*, campaign: Campaign, examples: int = 5) -> dict[str, Any]:
    """Everything the campaign page and `generate_tests --status` show, in a few aggregate queries."""
    runs = GenerationRun.objects.filter(campaign=campaign)
    by_status = dict(runs.values_list("status").annotate(n=Count("id")).order_by())
    counts = {status: by_status.get(status, 0) for status in GenerationRun.Status.values}
    total = sum(counts.values())
    ended = counts["succeeded"] + counts["failed"] + counts["cancelled"]
    stages = runs.filter(status__in=("queued", "running")).aggregate(
        llm_waiting=Count("id", filter=Q(status="queued", kit__isnull=True, mode="from_scratch")),
        llm_backoff=Count("id", filter=Q(status="queued", kit__isnull=True, not_before__gt=timezone.now())),
        llm_running=Count("id", filter=Q(status="running", job_id__startswith="llm:")),
        sandbox_waiting=Count("id", filter=Q(status="queued", kit__isnull=False)),
        sandbox_running=Count("id", filter=Q(status="running") & ~Q(job_id__startswith="llm:")),
    )
    reasons = []
    failed = runs.filter(status__in=("failed", "cancelled")).exclude(failure_reason="")
    for reason, n in failed.values_list("failure_reason").annotate(n=Count("id")).order_by("-n"):
        ids = list(failed.filter(failure_reason=reason).order_by("-finished_at")
                   .values_list("pk", "problem__pid")[:examples]) if examples else []
        reasons.append({"reason": reason, "label": FailureReason(reason).label if reason in FailureReason.values
                        else reason, "count": n, "share": n / ended if ended else 0.0,
                        "percent": round(100 * n / ended, 2) if ended else 0.0,
                        "examples": [{"run": pk, "pid": pid} for pk, pid in ids]})
    now = timezone.now()
    window = runs.filter(finished_at__gte=now - timedelta(seconds=THROUGHPUT_WINDOW_S))
    span = runs.filter(finished_at__isnull=False).aggregate(first=Min("started_at"), last=Max("finished_at"))
    recent = window.count()
    first = span["first"] or campaign.created_at
    elapsed = max(1.0, min(THROUGHPUT_WINDOW_S, (now - max(first, now - timedelta(
        seconds=THROUGHPUT_WINDOW_S))).total_seconds()))
    per_hour = recent * 3600 / elapsed if recent else 0.0
    remaining = counts["queued"] + counts["running"]
    eta_s = remaining * 3600 / per_hour if per_hour and campaign.status == Campaign.Status.RUNNING else None
    models = []
    for row in (LLMCall.objects.filter(run__campaign=campaign).values("model_name")
                .annotate(calls=Count("id"), errors=Count("id", filter=~Q(error="")),
                          prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens")).order_by("model_name")):
        prompt, completion = row["prompt"] or 0, row["completion"] or 0
        models.append({"model": row["model_name"], "calls": row["calls"], "errors": row["errors"],
                       "prompt_tokens": prompt, "completion_tokens": completion,
                       "cost_usd": cost_usd(row["model_name"], prompt, completion)})
    return {
        "name": campaign.name, "status": campaign.status, "pause_reason": campaign.pause_reason,
        "mode": campaign.mode, "model": campaign.model_name, "prompt_versions": campaign.prompt_versions,
        "filters": campaign.filters, "problems": total, "counts": counts, "ended": ended, "stages": stages,
        "success_share": counts["succeeded"] / ended if ended else 0.0,
        "success_percent": round(100 * counts["succeeded"] / ended, 1) if ended else 0.0, "failure_reasons": reasons,
        "per_hour": round(per_hour, 1), "eta_s": round(eta_s) if eta_s is not None else None,
        "llm_calls": campaign.llm_calls, "prompt_tokens": campaign.prompt_tokens,
        "completion_tokens": campaign.completion_tokens, "cost_usd": round(campaign.cost_usd, 4),
        "cost_cap_usd": float(campaign.cost_cap_usd) if campaign.cost_cap_usd is not None else None,
        "models": models,
    }
