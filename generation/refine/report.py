"""What `evaluate` says about the split and the refinement rounds (reads only)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from generation.models import GenerationRun, RefinementRound
from generation.refine.split import HELD_OUT, TUNING, UNSPLIT, candidate_sides
from problems.models import Problem

KEYS = ("tp", "fn", "tn", "fp")


def _rates(totals: dict[str, int]) -> dict[str, Any]:
    pos, neg = totals["tp"] + totals["fn"], totals["tn"] + totals["fp"]
    return {**totals, "tpr": totals["tp"] / pos if pos else None, "tnr": totals["tn"] / neg if neg else None}


def split_section(problems: Iterable[Problem], split: str) -> dict[str, Any]:
    """Which candidates the report counts and which problems could not be split."""
    sides = candidate_sides(problems)
    unsplit = sorted({p.pid for p in problems if any(
        sides.get(pk) == UNSPLIT for pk in p.solutions.values_list("pk", flat=True))})
    counts = {side: sum(1 for v in sides.values() if v == side) for side in (TUNING, HELD_OUT, UNSPLIT)}
    note = {HELD_OUT: "held-out candidates only: refinement never saw them",
            TUNING: "tuning candidates only: refinement was tuned on these, so the figures flatter the suites",
            "all": "every labelled candidate, tuning and held-out together"}[split]
    if unsplit and split in (HELD_OUT, TUNING):
        note += (f"; {len(unsplit)} problem(s) have too few labelled candidates to split, and all of theirs "
                 "count (they are also refinement's tuning data)")
    return {"name": split, "note": note, "candidates": counts, "problems_unsplit": unsplit}


def refinement_section(problems: Iterable[Problem]) -> dict[str, Any]:
    """Per problem, the latest run with refinement rounds: each round's TPR/TNR on tuning and
    held-out; totals of round 0 against the chosen (final) round."""
    rows = []
    totals = {f"{which}_{split}": dict.fromkeys(KEYS, 0)
              for which in ("round0", "final") for split in (TUNING, HELD_OUT)}
    for problem in problems:
        run = (GenerationRun.objects.filter(problem=problem, rounds__isnull=False).order_by("-created_at").first())
        if run is None:
            continue
        rounds = list(RefinementRound.objects.filter(run=run).order_by("number"))
        rows.append({"pid": problem.pid, "run": run.pk, "rounds": [
            {"number": r.number, "chosen": r.chosen, "tests": r.test_count, "added": r.tests_added,
             "removed": r.tests_removed, "tokens": r.prompt_tokens + r.completion_tokens,
             TUNING: r.scores.get(TUNING), HELD_OUT: r.scores.get(HELD_OUT), "note": r.note}
            for r in rounds]})
        first = next((r for r in rounds if r.number == 0), None)
        final = next((r for r in rounds if r.chosen), first)
        for which, r in (("round0", first), ("final", final)):
            for split in (TUNING, HELD_OUT):
                scores = (r.scores.get(split) or {}) if r is not None else {}
                for key in KEYS:
                    totals[f"{which}_{split}"][key] += int(scores.get(key) or 0)
    return {"problems": rows, "totals": {k: _rates(v) for k, v in totals.items()}}
