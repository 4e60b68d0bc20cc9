"""Generation pages: a problem's runs tab, the live run page, LLM calls, regenerate and kit edits.

Views read runs from the database only (workers write progress there), and every state
change is POST + CSRF + maintainer check, then one call into generation.services.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from core.htmx import STOP_POLLING, htmx_target
from core.permissions import require_maintainer
from generation.models import GenerationRun, LLMCall
from generation.recorder import stale_after_s
from generation.refine import round_rows
from generation.selectors import active_generated_suite
from problems.forms import KitEditForm, RegenerateForm
from problems.kit_check import kit_code_errors
from problems.kit_tab import kit_tab_render
from problems.models import Problem, TestKit
from problems.selectors import problem_get
from problems.services import kit_edit_changes, kit_with_edited_code
from problems.services import kit_revert as problem_kit_revert
from problems.tabs import render_tab

LOG_TAIL_LINES = 80


def _llm_ready() -> bool:
    from generation.llm import llm_configured

    return llm_configured()


def _duration_s(run: GenerationRun) -> float | None:
    if run.started_at is None:
        return None
    end = run.finished_at or timezone.now()
    return (end - run.started_at).total_seconds()


def _kept(run: GenerationRun) -> int | None:
    counts = run.counts or {}
    total = counts.get("total")
    if isinstance(total, dict) and isinstance(total_kept := total.get("kept"), int):
        return total_kept
    # Older runs have per-kind rows only; the "total" row must never be added to them.
    kept = [n for kind, c in counts.items()
            if kind != "total" and isinstance(c, dict) and isinstance(n := c.get("kept"), int)]
    return sum(kept) if kept else None


def problem_runs(request: HttpRequest, pk: int) -> HttpResponse:
    problem = problem_get(pk)
    runs = list(
        problem.generation_runs.select_related("created_by", "suite", "kit")
        .defer("log", "error").annotate(n_calls=Count("llm_calls")).order_by("-created_at", "-id")[:100]
    )
    for run in runs:
        run.duration_s = _duration_s(run)
        run.kept = _kept(run)
    return render_tab(request, problem, "runs", "generation/_tab_runs.html", {"runs": runs})


def _run_context(run: GenerationRun) -> dict[str, Any]:
    lines = (run.log or "").splitlines()
    counts_rows = []
    metrics: list[str] = []
    for values in (run.counts or {}).values():
        if isinstance(values, dict):
            for key in values:
                if key not in metrics:
                    metrics.append(key)
    if "kept" in metrics:  # what the run kept is the column a narrow screen must show first
        metrics.insert(0, metrics.pop(metrics.index("kept")))
    for kind, values in (run.counts or {}).items():
        if isinstance(values, dict):
            counts_rows.append((kind, [values.get(m, "") for m in metrics]))
        else:
            counts_rows.append((kind, [values]))
    stages = [(GenerationRun.Stage(s).label if s in GenerationRun.Stage.values else s, secs)
              for s, secs in (run.stage_seconds or {}).items()]
    run.duration_s = _duration_s(run)
    return {
        "run": run,
        # A run that found nothing changed made no suite: the header says so, not only the log.
        "unchanged_suite": (active_generated_suite(run.problem)
                            if run.status == GenerationRun.Status.SUCCEEDED and run.suite_id is None else None),
        "step": _run_step(run),
        "log_tail": "\n".join(lines[-LOG_TAIL_LINES:]),
        "log_skipped": max(0, len(lines) - LOG_TAIL_LINES),
        "count_metrics": metrics,
        "count_rows": counts_rows,
        "stages": stages,
        "calls": (calls := list(run.llm_calls.defer("messages", "reply"))),
        "call_tokens": (sum(c.prompt_tokens or 0 for c in calls), sum(c.completion_tokens or 0 for c in calls)),
        "rounds": round_rows(run),
        "silent_s": _silent_s(run),
        "janitor_fast_s": settings.HARDTESTS_JANITOR_FAST_S,
    }


def _run_step(run: GenerationRun) -> dict[str, Any]:
    """Where the run is among the stages it goes through, for a progress bar: a run from a kit
    asks no LLM; a finished run has done every step (a failed one stops at the step it failed in)."""
    stage = GenerationRun.Stage
    skip = {stage.QUEUED, stage.DONE}
    if run.mode == GenerationRun.Mode.FROM_KIT:
        skip |= {stage.LLM_VALIDATOR, stage.LLM_INPUTS}
    steps = [s for s in stage if s not in skip]
    total = len(steps)
    if run.status == GenerationRun.Status.SUCCEEDED:
        return {"done": total, "total": total, "number": total, "label": stage.DONE.label}
    if run.stage in steps:
        number = steps.index(stage(run.stage)) + 1
        return {"done": number - 1, "total": total, "number": number, "label": stage(run.stage).label}
    return {"done": 0, "total": total, "number": 0, "label": "Waiting for a worker"}


def _get_run(pk: int) -> GenerationRun:
    return get_object_or_404(GenerationRun.objects.select_related("problem", "created_by", "suite", "kit"), pk=pk)


def _silent_s(run: GenerationRun) -> float | None:
    """Seconds since a running run's last heartbeat, when that is past the stale limit (its worker
    may have died). A GET never writes: the janitor's sweep records a dead run within seconds."""
    if run.status != GenerationRun.Status.RUNNING:
        return None
    beat = run.heartbeat_at or run.started_at
    silent = (timezone.now() - beat).total_seconds() if beat is not None else None
    return silent if silent is not None and silent > stale_after_s() else None


def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = _get_run(pk)
    context = _run_context(run)
    if htmx_target(request) == "run-progress":
        return render(request, "generation/_run_progress.html", context,
                      status=STOP_POLLING if run.finished else 200)
    return render(request, "generation/run_detail.html", context)


def run_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """The live part of the run page; 286 once the run has ended stops the polling."""
    run = _get_run(pk)
    return render(request, "generation/_run_progress.html", _run_context(run),
                  status=STOP_POLLING if run.finished else 200)


@require_POST
def run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    require_maintainer(request)
    run = _get_run(pk)
    from generation.services import generation_run_cancel

    if generation_run_cancel(run=run, user=request.user):
        messages.success(request, f"Cancellation of run #{run.pk} requested.")
    else:
        messages.warning(request, f"Run #{run.pk} has already ended.")
    return redirect("generation:run_detail", pk=run.pk)


def llm_call_detail(request: HttpRequest, pk: int, call_id: int) -> HttpResponse:
    call = get_object_or_404(LLMCall.objects.select_related("run__problem"), pk=call_id, run_id=pk)
    messages_shown = [m for m in (call.messages or []) if isinstance(m, dict)]
    context = {"call": call, "run": call.run, "prompt_messages": messages_shown}
    if htmx_target(request) == "llm-call":
        return render(request, "generation/_llm_call.html", context)
    return render(request, "generation/llm_call.html", context)


def regenerate(request: HttpRequest, pk: int) -> HttpResponse:
    """Maintainers: a confirmation page (GET), then a new generation run (POST)."""
    require_maintainer(request)
    problem = get_object_or_404(Problem.objects.only("id", "pid", "title"), pk=pk)
    llm_ready = _llm_ready()
    has_kit = TestKit.objects.filter(problem=problem).exists()
    form = RegenerateForm(request.POST or None, llm_ready=llm_ready, has_kit=has_kit,
                          initial={"mode": request.GET.get("mode")} if request.GET.get("mode") else None)
    if request.method == "POST" and form.is_valid():
        from generation.services import generation_run_start

        mode = form.cleaned_data["mode"]
        run = generation_run_start(
            problem=problem, mode=mode, user=request.user,
            model_name=form.cleaned_data.get("model_name") if mode != "from_kit" else None,
            # A new suite should come with its candidates' verdicts (the matrix, evaluation).
            judge_candidates=True,
        )
        if run.created:
            messages.success(request, f"Run #{run.pk} queued.")
        else:
            messages.warning(request, f"Nothing queued: run #{run.pk} of this problem is already {run.status}.")
        return redirect("generation:run_detail", pk=run.pk)
    return render(request, "generation/regenerate.html",
                  {"problem": problem, "form": form, "llm_ready": llm_ready, "has_kit": has_kit})


@require_POST
def kit_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Maintainers: save an edited validator or judge as a new kit version and re-materialise it.

    The code is checked first (parses, defines its function, accepts the samples in the
    sandbox); a refused edit re-renders the tab with the typed code and the reasons beside it.
    An edit that changes nothing makes no version and starts no run.
    """
    require_maintainer(request)
    problem = get_object_or_404(Problem, pk=pk)
    form = KitEditForm(request.POST)
    if not form.is_valid():
        return kit_tab_render(request, problem, edit_form=form, status=422)
    kit = get_object_or_404(TestKit.objects.select_related("validator", "output_judge"),
                            problem=problem, version=form.cleaned_data["kit_version"])
    validator_code, judge_code = form.cleaned_data["validator_code"], form.cleaned_data["judge_code"]
    if not kit_edit_changes(kit=kit, validator_code=validator_code, judge_code=judge_code):
        messages.info(request, f"Nothing changed: kit v{kit.version} is kept and no run was started.")
        return redirect("problem_kit", pk=problem.pk)
    errors = kit_code_errors(problem=problem, validator_code=validator_code, judge_code=judge_code)
    if errors:
        return kit_tab_render(request, problem, edit_form=form, errors=errors, status=422)
    from generation.services import generation_run_start

    with transaction.atomic():
        new_kit = kit_with_edited_code(
            kit=kit, user=request.user, validator_code=validator_code,
            judge_code=judge_code, note=form.cleaned_data["note"],
        )
        run = generation_run_start(problem=problem, mode="from_kit", user=request.user, judge_candidates=True)
    if run.created:
        messages.success(request, f"Saved kit v{new_kit.version}; run #{run.pk} is materialising it.")
    else:
        messages.warning(request, f"Saved kit v{new_kit.version}; not materialised yet: run #{run.pk} of this "
                                  f"problem is still {run.status}. Regenerate from the kit once it ends.")
    return redirect("generation:run_detail", pk=run.pk)


@require_POST
def kit_revert(request: HttpRequest, pk: int, version: int) -> HttpResponse:
    """Maintainers: one click makes an earlier kit version current again (as a new version) and
    re-materialises it."""
    require_maintainer(request)
    problem = get_object_or_404(Problem, pk=pk)
    kit = get_object_or_404(TestKit.objects.select_related("validator", "output_judge"), problem=problem,
                            version=version)
    from generation.services import generation_run_start

    with transaction.atomic():
        new_kit = problem_kit_revert(kit=kit, user=request.user)
        run = generation_run_start(problem=problem, mode="from_kit", user=request.user, judge_candidates=True)
    messages.success(request, f"Kit v{new_kit.version} restores kit v{kit.version}; run #{run.pk} is materialising it.")
    return redirect("generation:run_detail", pk=run.pk)
