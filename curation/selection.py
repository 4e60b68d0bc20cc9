"""Selecting a verified curation job's completions by a rule (curation.rules), and exporting the
kept ones as a dataset folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from curation.models import Completion, CurationJob, JudgeScore, Selection
from curation.rules import Facts, judges_of, keeps, origins_of, rule_check, rule_label

__all__ = ["CurationRefused", "EXPORT_COLUMNS", "job_facts", "selection_apply", "selection_export", "selection_rows"]


class CurationRefused(ValueError):
    """A request that cannot be honoured as asked (the message says why)."""


def job_facts(job: CurationJob, judges: list[str]) -> list[tuple[Completion, Facts]]:
    """Every verified completion of a job with what rules read of it (the latest prompt's score per judge)."""
    completions = list(Completion.objects.filter(job=job, status=Completion.Status.DONE)
                       .select_related("problem").order_by("id"))
    scores: dict[int, dict[str, float | None]] = {}
    if judges:
        for cid, judge, score in (JudgeScore.objects.filter(completion__job=job, judge__in=judges)
                                  .order_by("created_at").values_list("completion_id", "judge", "score")):
            scores.setdefault(cid, {})[judge] = score
    out = []
    for c in completions:
        results = c.results or {}
        out.append((c, Facts(passed=c.passed, total=c.total, primary_origin=results.get("primary", ""),
                             results=results.get("by_origin", {}), scores=scores.get(c.pk, {}))))
    return out


def _selectable(job: CurationJob, rule: dict[str, Any]) -> None:
    if job.status != CurationJob.Status.VERIFIED:
        raise CurationRefused(f"job #{job.pk} is {job.status}, not verified: its pass fractions are not final")
    errors = Completion.objects.filter(job=job, status=Completion.Status.ERROR).count()
    if errors:
        raise CurationRefused(f"{errors} completion(s) of job #{job.pk} could not be verified (sandbox error): "
                              "resume the job before selecting")
    for origin in origins_of(rule):
        if origin not in {*job.extra_origins, job.suite_origin} - {""}:
            raise CurationRefused(f"origin {origin!r} was not verified by this job (import with it as an extra origin)")
    for judge in judges_of(rule):
        if not JudgeScore.objects.filter(completion__job=job, judge=judge).exists():
            raise CurationRefused(f"judge {judge!r} has scored nothing of job #{job.pk}: run the judge first")


def selection_apply(*, job: CurationJob, rule: dict[str, Any]) -> Selection:
    rule = rule_check(rule)
    _selectable(job, rule)
    facts = job_facts(job, judges_of(rule))
    kept = [c.pk for c, f in facts if keeps(rule, f)]
    return Selection.objects.create(job=job, rule=rule, label=rule_label(rule), kept=len(kept),
                                    considered=len(facts), kept_ids=kept)


EXPORT_COLUMNS = ("prompt", "completion", "code", "language", "problem", "problem_title", "model", "sample_index",
                  "pass_fraction", "passed", "total", "judge_score", "rule", "gold", "demo_data")


def selection_rows(selection: Selection) -> list[dict[str, Any]]:
    rule = selection.rule
    judges = judges_of(rule)
    kept = set(selection.kept_ids)
    job = selection.job
    scores: dict[int, float | None] = {}
    score_query = JudgeScore.objects.filter(completion_id__in=kept)
    if judges:
        score_query = score_query.filter(judge=judges[0])
    for cid, score in score_query.order_by("created_at").values_list("completion_id", "score"):
        scores[cid] = score  # the rule's (first) judge, else the latest judge that scored it
    rows = []
    for c in Completion.objects.filter(pk__in=kept).select_related("problem").order_by("problem_id", "model_name",
                                                                                         "sample_index"):
        rows.append({
            "prompt": c.problem.statement, "completion": c.completion or c.code, "code": c.code,
            "language": c.language, "problem": f"{c.problem.source}:{c.problem.pid}", "problem_title": c.problem.title,
            "model": c.model_name, "sample_index": c.sample_index, "pass_fraction": c.pass_fraction,
            "passed": c.passed, "total": c.total, "judge_score": scores.get(c.pk), "rule": selection.label,
            "gold": c.gold, "demo_data": job.demo,
            # which suite's verdict pass_fraction is: an oracle_free one has model-made outputs
            "suite_origin": (c.results or {}).get("primary", ""),
        })
    return rows


def selection_export(*, selection: Selection, out_dir: Path | None = None, fmt: str = "parquet") -> Path:
    """Write the kept pairs as a dataset folder `datasets.load_dataset(folder)` reads: data/ and a card."""
    import pyarrow as pa

    if fmt not in ("parquet", "jsonl"):
        raise CurationRefused(f"unknown export format {fmt!r} (parquet or jsonl)")
    job = selection.job
    # `datasets` caches a local dataset under its folder's name, whatever the folder's path: every
    # export folder gets a name of its own (job and selection), or a load could return another's rows.
    folder = out_dir or Path(settings.MEDIA_ROOT) / "curation" / f"job{job.pk}-selection{selection.pk}"
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    rows = selection_rows(selection)
    schema = pa.schema([("prompt", pa.string()), ("completion", pa.string()), ("code", pa.string()),
                        ("language", pa.string()), ("problem", pa.string()), ("problem_title", pa.string()),
                        ("model", pa.string()), ("sample_index", pa.int64()), ("pass_fraction", pa.float64()),
                        ("passed", pa.int64()), ("total", pa.int64()), ("judge_score", pa.float64()),
                        ("rule", pa.string()), ("gold", pa.string()), ("demo_data", pa.bool_()),
                        ("suite_origin", pa.string())])
    table = pa.Table.from_pylist(rows, schema=schema)
    for old in data.glob("train-*"):
        old.unlink()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        target = data / f"train-job{job.pk}-selection{selection.pk}.parquet"
        pq.write_table(table, target)
    else:
        import json

        target = data / f"train-job{job.pk}-selection{selection.pk}.jsonl"
        with target.open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (folder / "README.md").write_text(_card(selection, len(rows), target.name))
    Selection.objects.filter(pk=selection.pk).update(export_path=str(folder))
    selection.export_path = str(folder)
    return folder


def _card(selection: Selection, count: int, filename: str) -> str:
    job = selection.job
    demo = ("\n**Demo data**: the completions are the project's own demo programs wrapped as model answers, "
            "not samples of a real model.\n" if job.demo else "")
    return (
        "---\n"
        "configs:\n- config_name: default\n  data_files:\n  - split: train\n"
        f"    path: data/{filename}\n"
        "license: other\ntask_categories:\n- text-generation\ntags:\n- code\n- rejection-sampling\n"
        "---\n\n"
        f"# Curated completions: {job.name} ({selection.label})\n{demo}\n"
        f"{count} completions kept of {selection.considered} verified in curation job #{job.pk}, "
        f"by the rule `{selection.label}`.\n\n"
        "Each row pairs a problem statement (`prompt`) with a model completion that passed the rule. "
        "`pass_fraction` is the share of the pinned suite's tests the extracted program passed, every test run; "
        "`judge_score` is an LLM judge's 0-10 score when one was asked.\n\n"
        f"Rule (JSON): `{selection.rule}`\n"
    )

