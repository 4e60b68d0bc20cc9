"""Writes of campaigns: create (or extend), pause, resume, cancel, notice the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from generation import prompting
from generation.models import Campaign, GenerationRun
from generation.services import (
    OPEN,
    campaign_runs_cancel,
    enqueue_materialise,
    enqueue_run,
    materialise_job_id,
)
from problems.models import SUPPORTED_LANGUAGES, Problem, Solution, TestKit

CHUNK = 500


@dataclass
class CampaignStart:
    campaign: Campaign
    created: bool
    added: int = 0
    already_in: int = 0
    # (pid, open run id) of selected problems left out because a run of theirs is open.
    open_elsewhere: list[tuple[str, int]] = field(default_factory=list)
    no_kit: int = 0


def _who(user: Any) -> str:
    return getattr(user, "username", None) or "system"


def campaign_create(*, name: str, problem_ids: list[int], mode: str = GenerationRun.Mode.FROM_SCRATCH,
                    model_name: str | None = None, cost_cap_usd: Decimal | None = None,
                    filters: dict[str, Any] | None = None, user: Any = None) -> CampaignStart:
    """Create the campaign NAME (or extend and resume an existing one) with one run per problem.

    A problem already in the campaign is not added twice (unique (campaign, problem)); one
    with an open run elsewhere is left out and reported (unique open run per problem: the
    insert itself is conditional, so a race with another start cannot make two).
    """
    name = name.strip()
    if not name:
        raise ValueError("a campaign needs a name")
    if mode not in GenerationRun.Mode.values:
        raise ValueError(f"unknown generation mode {mode!r}")
    model = ((model_name or "").strip() or settings.HARDTESTS_LLM_MODEL) if mode == GenerationRun.Mode.FROM_SCRATCH \
        else ""
    campaign, created = Campaign.objects.get_or_create(name=name, defaults={
        "mode": mode, "model_name": model, "filters": filters or {}, "cost_cap_usd": cost_cap_usd,
        "prompt_versions": {"validator": prompting.VALIDATOR_PROMPT, "inputs": prompting.INPUTS_PROMPT},
        "created_by": user if getattr(user, "is_authenticated", False) else None,
    })
    if not created:
        if campaign.status == Campaign.Status.CANCELLED:
            raise ValueError(f"campaign {name!r} was cancelled; start a new one under another name")
        if mode != campaign.mode or (model_name and model != campaign.model_name):
            raise ValueError(f"campaign {name!r} exists with mode {campaign.mode} and model "
                             f"{campaign.model_name or '-'}; use the same or another name")
        if cost_cap_usd is not None:
            Campaign.objects.filter(pk=campaign.pk).update(cost_cap_usd=cost_cap_usd)
    start = CampaignStart(campaign=campaign, created=created)
    problem_ids = sorted(set(problem_ids))
    present = set(campaign.runs.values_list("problem_id", flat=True))
    todo = [pk for pk in problem_ids if pk not in present]
    start.already_in = len(problem_ids) - len(todo)
    now = timezone.now()
    note = f"{now:%H:%M:%S} queued by campaign {name} ({_who(user)})\n"
    for begin in range(0, len(todo), CHUNK):
        chunk = todo[begin:begin + CHUNK]
        busy = dict(GenerationRun.objects.filter(problem_id__in=chunk, status__in=OPEN)
                    .values_list("problem_id", "pk"))
        if busy:
            pids = dict(Problem.objects.filter(pk__in=busy).values_list("pk", "pid"))
            start.open_elsewhere += [(pids[p], r) for p, r in busy.items()]
        # Problems with no oracle the sandbox can run take the oracle-free mode (generation/oracle_free).
        no_oracle: set[int] = set()
        if mode == GenerationRun.Mode.FROM_SCRATCH and settings.HARDTESTS_ORACLE_FREE_AUTO:
            no_oracle = set(chunk) - set(Solution.objects.filter(
                problem_id__in=chunk, role=Solution.Role.ORACLE, language__in=SUPPORTED_LANGUAGES,
            ).values_list("problem_id", flat=True))
        kits: dict[int, int] = {}
        if mode == GenerationRun.Mode.FROM_KIT:
            for problem_id, kit_id in (TestKit.objects.filter(problem_id__in=chunk).order_by("problem_id", "version")
                                       .values_list("problem_id", "pk")):
                kits[problem_id] = kit_id  # the last is the latest version
        rows = []
        for problem_id in chunk:
            if problem_id in busy:
                continue
            if mode == GenerationRun.Mode.FROM_KIT and problem_id not in kits:
                start.no_kit += 1
                continue
            rows.append(GenerationRun(problem_id=problem_id, campaign=campaign, model_name=model,
                                      mode=GenerationRun.Mode.ORACLE_FREE if problem_id in no_oracle else mode,
                                      kit_id=kits.get(problem_id), heartbeat_at=now, log=note))
        before = campaign.runs.count()
        # Conditional insert: a run that became open meanwhile is skipped by the unique index.
        GenerationRun.objects.bulk_create(rows, ignore_conflicts=True)
        start.added += campaign.runs.count() - before
    Campaign.objects.filter(pk=campaign.pk).update(problem_count=campaign.runs.count())
    if not created and campaign.status != Campaign.Status.RUNNING:
        Campaign.objects.filter(pk=campaign.pk).exclude(status=Campaign.Status.CANCELLED).update(
            status=Campaign.Status.RUNNING, pause_reason="", finished_at=None)
    _enqueue_parked(campaign.pk)
    _enqueue_oracle_free(campaign.pk)
    campaign.refresh_from_db()
    return start


def _enqueue_parked(campaign_id: int) -> int:
    """Give a sandbox-queue job to every queued run of the campaign whose kit is saved but has none."""
    items = []
    parked = GenerationRun.objects.filter(campaign_id=campaign_id, status=GenerationRun.Status.QUEUED, job_id="",
                                          kit__isnull=False).values_list("pk", "requeues")
    for run_id, requeues in parked.iterator(chunk_size=CHUNK):
        job_id = materialise_job_id(run_id, requeues)
        if GenerationRun.objects.filter(pk=run_id, status=GenerationRun.Status.QUEUED, job_id="").update(
                job_id=job_id, heartbeat_at=timezone.now()):
            items.append((run_id, job_id))
    enqueue_materialise(items)
    return len(items)


def _enqueue_oracle_free(campaign_id: int) -> int:
    """Oracle-free runs skip the LLM stage (it serves the from-scratch pipeline): each gets a
    `generation`-queue job of its own, as a single run would."""
    waiting = GenerationRun.objects.filter(campaign_id=campaign_id, status=GenerationRun.Status.QUEUED, job_id="",
                                           mode__in=GenerationRun.ORACLE_FREE_MODES).values_list("pk", flat=True)
    count = 0
    for run_id in list(waiting):
        job_id = f"generation-run-{run_id}"
        if GenerationRun.objects.filter(pk=run_id, status=GenerationRun.Status.QUEUED, job_id="").update(
                job_id=job_id, heartbeat_at=timezone.now()):
            transaction.on_commit(partial(enqueue_run, run_id, job_id))
            count += 1
    return count


def campaign_pause(*, campaign: Campaign, user: Any = None, reason: str = "") -> bool:
    """Stop claiming new work; calls in flight finish and their kits wait, saved, for resume."""
    done = Campaign.objects.filter(pk=campaign.pk, status=Campaign.Status.RUNNING).update(
        status=Campaign.Status.PAUSED, pause_reason=reason or f"paused by {_who(user)}")
    campaign.refresh_from_db()
    return bool(done)


def campaign_resume(*, campaign: Campaign, user: Any = None, cost_cap_usd: Decimal | None = None) -> bool:
    if cost_cap_usd is not None:
        Campaign.objects.filter(pk=campaign.pk).update(cost_cap_usd=cost_cap_usd)
    done = Campaign.objects.filter(pk=campaign.pk, status=Campaign.Status.PAUSED).update(
        status=Campaign.Status.RUNNING, pause_reason="")
    if done:
        _enqueue_parked(campaign.pk)
        _enqueue_oracle_free(campaign.pk)
    campaign.refresh_from_db()
    return bool(done)


def campaign_cancel(*, campaign: Campaign, user: Any = None) -> int:
    """Cancel every queued run at once and ask running ones to stop; returns the runs cancelled."""
    with transaction.atomic():
        Campaign.objects.filter(pk=campaign.pk).exclude(status=Campaign.Status.FINISHED).update(
            status=Campaign.Status.CANCELLED, pause_reason=f"cancelled by {_who(user)}", finished_at=timezone.now())
        cancelled = campaign_runs_cancel(campaign=campaign, who=_who(user))
    campaign.refresh_from_db()
    return cancelled


def campaign_refresh(*, campaign_id: int) -> bool:
    """Mark the campaign finished once none of its runs is open; True when it just finished."""
    if GenerationRun.objects.filter(campaign_id=campaign_id, status__in=OPEN).exists():
        return False
    return bool(Campaign.objects.filter(pk=campaign_id, status__in=(Campaign.Status.RUNNING, Campaign.Status.PAUSED))
                .update(status=Campaign.Status.FINISHED, finished_at=timezone.now()))


def campaigns_refresh() -> int:
    return sum(campaign_refresh(campaign_id=pk) for pk in Campaign.objects.filter(
        status__in=(Campaign.Status.RUNNING, Campaign.Status.PAUSED)).values_list("pk", flat=True))
