"""Tokens and cost: each LLM call is added to its campaign's totals exactly once."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import F

from generation.models import Campaign, GenerationRun, LLMCall
from generation.ratelimit import estimate_tokens, llm_rate_settle, rate_limits

log = logging.getLogger(__name__)


def model_prices(model: str) -> tuple[float, float]:
    """USD per million (prompt, completion) tokens from HARDTESTS_LLM_PRICES; (0, 0) when unknown."""
    for item in settings.HARDTESTS_LLM_PRICES:
        name, _, prices = item.rpartition("=")
        if name.strip() == model:
            prompt, _, completion = prices.partition(":")
            try:
                return float(prompt or 0), float(completion or 0)
            except ValueError:
                log.warning("HARDTESTS_LLM_PRICES: cannot read %r", item)
    return 0.0, 0.0


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    prompt, completion = model_prices(model)
    return (prompt * prompt_tokens + completion * completion_tokens) / 1_000_000


def run_account_calls(*, run_id: int) -> int:
    """Add the run's LLM calls not yet counted to its campaign's totals; return how many.

    Idempotent: GenerationRun.accounted_call_id moves forward by a conditional update, so
    two callers (the stage and the sweep after a crash) never count a call twice. Also
    settles the shared token bucket with what each call really used.
    """
    row = GenerationRun.objects.filter(pk=run_id).values("campaign_id", "accounted_call_id").first()
    if row is None or row["campaign_id"] is None:
        return 0
    # Without "messages" (tens of kB a call, only needed to settle a tokens-per-minute bucket).
    calls = list(LLMCall.objects.filter(run_id=run_id, pk__gt=row["accounted_call_id"]).order_by("pk")
                 .values("pk", "model_name", "prompt_tokens", "completion_tokens", "error"))
    if not calls:
        return 0
    prompt = sum(c["prompt_tokens"] or 0 for c in calls)
    completion = sum(c["completion_tokens"] or 0 for c in calls)
    cost = sum(cost_usd(c["model_name"], c["prompt_tokens"] or 0, c["completion_tokens"] or 0) for c in calls)
    with transaction.atomic():
        won = GenerationRun.objects.filter(pk=run_id, accounted_call_id=row["accounted_call_id"]).update(
            accounted_call_id=calls[-1]["pk"])
        if not won:
            return 0
        Campaign.objects.filter(pk=row["campaign_id"]).update(
            llm_calls=F("llm_calls") + len(calls), prompt_tokens=F("prompt_tokens") + prompt,
            completion_tokens=F("completion_tokens") + completion, cost_usd=F("cost_usd") + cost)
        capped = Campaign.objects.filter(pk=row["campaign_id"], status=Campaign.Status.RUNNING,
                                         cost_cap_usd__isnull=False, cost_usd__gte=F("cost_cap_usd")).update(
            status=Campaign.Status.PAUSED, pause_reason="cost cap reached")
    if capped:
        log.warning("campaign %s paused: cost cap reached", row["campaign_id"])
    limited = [c["pk"] for c in calls if rate_limits(c["model_name"])[1] > 0]
    messages = dict(LLMCall.objects.filter(pk__in=limited).values_list("pk", "messages")) if limited else {}
    for call in calls:
        if call["pk"] not in messages:
            continue  # no tokens-per-minute limit for this model: nothing to settle
        # A refused call (429, 5xx) used nothing: its estimate goes back to the bucket.
        actual = 0 if call["error"] else (call["prompt_tokens"] or 0) + (call["completion_tokens"] or 0)
        llm_rate_settle(model=call["model_name"], estimated=estimate_tokens(messages[call["pk"]] or []), actual=actual)
    return len(calls)
