"""Reads the curation pages and the command share: progress and cost, and the paper's analyses
(kept share by tau and by rule, difficulty mix of kept vs all data, overlap between rules and
between judges, precision/recall against gold labels) as plain tables a page prints and a
CSV download writes cell for cell."""

from __future__ import annotations

import csv
import io
from collections import Counter
from itertools import combinations
from typing import Any

from django.db.models import Count, Q, Sum

from curation.models import Completion, CurationJob, JudgeScore, Selection
from curation.rules import TAU_GRID, Facts, keeps
from curation.services import job_facts
from generation.llm_judge import judges_compare
from problems.models import DifficultyLabel

UNRATED = "(unrated)"
JUDGE_THRESHOLD = 7.0


def job_progress(job: CurationJob) -> dict[str, Any]:
    row = Completion.objects.filter(job=job).aggregate(
        total=Count("id"), done=Count("id", filter=Q(status=Completion.Status.DONE)),
        errors=Count("id", filter=Q(status=Completion.Status.ERROR)),
        running=Count("id", filter=Q(status=Completion.Status.RUNNING)),
        tests=Sum("tests_run"), cpu_ms=Sum("cpu_ms"),
        # completions whose program was verified before in the job: its verdict copied, nothing run
        reused=Count("id", filter=Q(results__has_key="same_as")),
    )
    tests, wall_s = row["tests"] or 0, job.wall_ms / 1000
    finished = row["done"] + row["errors"]
    judged = JudgeScore.objects.filter(completion__job=job).aggregate(
        calls=Count("id"), prompt=Sum("llm_call__prompt_tokens"), completion=Sum("llm_call__completion_tokens"))
    return {**row, "tests": tests, "cpu_ms": row["cpu_ms"] or 0, "finished": finished,
            "percent": round(100 * finished / row["total"]) if row["total"] else 100,
            "wall_s": round(wall_s, 1), "tests_per_s": round(tests / wall_s, 1) if wall_s else None,
            "judge_calls": judged["calls"], "judge_tokens": (judged["prompt"] or 0) + (judged["completion"] or 0)}


def _difficulty(problem_ids: set[int]) -> dict[int, str]:
    levels: dict[int, str] = {}
    for pid, level in DifficultyLabel.objects.filter(problem_id__in=problem_ids).order_by("id").values_list(
            "problem_id", "level"):
        levels.setdefault(pid, level)
    return levels


def _gold_scores(kept: set[int], gold: dict[int, bool]) -> dict[str, Any]:
    """Precision and recall of keeping, against the gold labels (only completions that have one)."""
    tp = sum(1 for c, ok in gold.items() if ok and c in kept)
    fp = sum(1 for c, ok in gold.items() if not ok and c in kept)
    fn = sum(1 for c, ok in gold.items() if ok and c not in kept)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else None
    return {"gold_n": len(gold), "precision": precision, "recall": recall, "f1": f1}


def _table(name: str, title: str, columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    return {"name": name, "title": title, "columns": columns, "rows": rows}


def job_analysis(job: CurationJob, *, judge_threshold: float = JUDGE_THRESHOLD) -> dict[str, Any]:
    """Every table of the job's analysis page (empty rows until it is verified)."""
    judges = sorted(set(JudgeScore.objects.filter(completion__job=job).values_list("judge", flat=True)))
    facts: list[tuple[Completion, Facts]] = job_facts(job, judges) if job.status == CurationJob.Status.VERIFIED else []
    n = len(facts)
    gold = {c.pk: c.gold == "correct" for c, _ in facts if c.gold}
    level = _difficulty({c.problem_id for c, _ in facts})
    level_of = {c.pk: level.get(c.problem_id, UNRATED) for c, _ in facts}
    kept_sets: dict[str, set[int]] = {}
    tau_rows = []
    for tau in TAU_GRID:
        kept = {c.pk for c, f in facts if keeps({"rule": "tau", "tau": tau}, f)}
        kept_sets[f"tau>={tau:g}"] = kept
        g = _gold_scores(kept, gold)
        tau_rows.append([tau, len(kept), _share(len(kept), n), g["gold_n"], g["precision"], g["recall"], g["f1"]])
    selections = list(Selection.objects.filter(job=job).order_by("id"))
    rule_rows = []
    for s in selections:
        kept = set(s.kept_ids)
        kept_sets.setdefault(s.label, kept)
        g = _gold_scores(kept, gold)
        rule_rows.append([s.pk, s.label, s.kept, s.considered, _share(s.kept, s.considered), g["gold_n"],
                          g["precision"], g["recall"], g["f1"]])
    for judge in judges:
        kept = {c.pk for c, f in facts if keeps({"rule": "judge", "judge": judge, "threshold": judge_threshold}, f)}
        kept_sets.setdefault(f"judge:{judge}>={judge_threshold:g}", kept)
    # Figure 3 (right): the difficulty mix of all verified data and of what each tau keeps.
    levels = sorted(set(level_of.values()))
    all_counts = Counter(level_of.values())
    mix_columns = ["difficulty", "all", "all share", *[f"tau>={t:g} share" for t in TAU_GRID]]
    mix_rows = []
    for lv in levels:
        row: list[Any] = [lv, all_counts[lv], _share(all_counts[lv], n)]
        for tau in TAU_GRID:
            kept = kept_sets[f"tau>={tau:g}"]
            row.append(_share(sum(1 for c in kept if level_of[c] == lv), len(kept)))
        mix_rows.append(row)
    # Figure 6: how much two rules' kept sets overlap.
    overlap_rows = []
    names = [s.label for s in selections] or list(kept_sets)
    for a, b in combinations(dict.fromkeys(names), 2):
        sa, sb = kept_sets[a], kept_sets[b]
        union = sa | sb
        overlap_rows.append([a, b, len(sa), len(sb), len(sa & sb), len(sa - sb), len(sb - sa),
                             len(sa & sb) / len(union) if union else None])
    judge_rows = []
    scores = _judge_scores(job, judges)
    for a, b in combinations(judges, 2):
        cmp = judges_compare(scores[a], scores[b], judge_threshold)
        judge_rows.append([a, b, cmp["compared"], cmp["kept_a"], cmp["kept_b"], cmp["both"], cmp["only_a"],
                           cmp["only_b"], cmp["jaccard"], cmp["agreement"], cmp["kappa"]])
    judge_gold = []
    for judge in judges:
        kept = kept_sets[f"judge:{judge}>={judge_threshold:g}"]
        g = _gold_scores(kept, gold)
        scored = sum(1 for v in scores[judge].values() if v is not None)
        judge_gold.append([judge, scored, len(kept), g["gold_n"], g["precision"], g["recall"], g["f1"]])
    return {
        "verified": n, "judges": judges, "judge_threshold": judge_threshold, "gold_n": len(gold),
        "tables": [
            _table("tau", "Kept by tau (pass fraction >= tau)",
                   ["tau", "kept", "share", "gold-labelled", "precision", "recall", "F1"], tau_rows),
            _table("rules", "Kept by rule (stored selections)",
                   ["selection", "rule", "kept", "considered", "share", "gold-labelled", "precision", "recall", "F1"],
                   rule_rows),
            _table("difficulty", "Difficulty mix: all verified data vs what each tau keeps (Figure 3, right)",
                   mix_columns, mix_rows),
            _table("rule_overlap", "Overlap between rules' kept sets (Figure 6)",
                   ["rule A", "rule B", "kept A", "kept B", "both", "only A", "only B", "Jaccard"], overlap_rows),
            _table("judges", f"LLM judges at score >= {judge_threshold:g}",
                   ["judge", "scored", "kept", "gold-labelled", "precision", "recall", "F1"], judge_gold),
            _table("judge_overlap", f"Overlap between judges (score >= {judge_threshold:g})",
                   ["judge A", "judge B", "both scored", "kept A", "kept B", "both", "only A", "only B",
                    "Jaccard", "agreement", "Cohen's kappa"], judge_rows),
        ],
    }


def _judge_scores(job: CurationJob, judges: list[str]) -> dict[str, dict[int, float | None]]:
    out: dict[str, dict[int, float | None]] = {j: {} for j in judges}
    for cid, judge, score in (JudgeScore.objects.filter(completion__job=job, completion__status="done")
                              .order_by("created_at").values_list("completion_id", "judge", "score")):
        out[judge][cid] = score
    return out


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def table_of(analysis: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((t for t in analysis["tables"] if t["name"] == name), None)


def table_csv(table: dict[str, Any]) -> str:
    """A table as CSV: numbers unrounded, an undefined value (no gold labels, nothing kept) empty."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(table["columns"])
    for row in table["rows"]:
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue()


def jobs_recent(limit: int = 50) -> list[CurationJob]:
    return list(CurationJob.objects.select_related("created_by").order_by("-created_at")[:limit])
