"""Deterministic tuning / held-out split of a problem's candidates with a gold verdict.

Refinement looks only at the tuning part; evaluation reports on the held-out part, so a suite
is never measured on the programs it was tuned against. A candidate's side depends only on
the problem and the candidate's code (a hash), so it is the same on every machine and run,
and adding a candidate never moves another one. Each side keeps at least one AC and one
non-AC candidate when the problem has enough of both; a problem with fewer than
HARDTESTS_SPLIT_MIN_CANDIDATES labelled candidates uses them all for tuning and says so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings

from problems.models import Problem, Solution

TUNING = "tuning"
HELD_OUT = "held_out"


@dataclass
class Split:
    tuning: list[Solution]
    held_out: list[Solution]
    note: str

    @property
    def name(self) -> str:
        share = settings.HARDTESTS_HELDOUT_SHARE
        return f"hash split, held-out share {share:g}" if self.held_out else "all tuning (too few candidates)"


def _key(problem: Problem, solution: Solution) -> float:
    digest = hashlib.sha256(f"{problem.pid}\0{solution.language}\0{solution.code}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def labelled_candidates(problem: Problem) -> list[Solution]:
    return list(problem.solutions.filter(role=Solution.Role.CANDIDATE)
                .exclude(gold_verdict=Solution.GoldVerdict.UNKNOWN).order_by("pk"))


def candidate_split(problem: Problem) -> Split:
    labelled = labelled_candidates(problem)
    need = settings.HARDTESTS_SPLIT_MIN_CANDIDATES
    if len(labelled) < need:
        return Split(labelled, [], f"{len(labelled)} labelled candidate(s), fewer than {need} "
                                   "(HARDTESTS_SPLIT_MIN_CANDIDATES): all used for tuning, none held out")
    share = settings.HARDTESTS_HELDOUT_SHARE
    tuning: list[Solution] = []
    held: list[Solution] = []
    for group in ([s for s in labelled if s.gold_verdict == Solution.GoldVerdict.AC],
                  [s for s in labelled if s.gold_verdict != Solution.GoldVerdict.AC]):
        ranked = sorted(group, key=lambda s: _key(problem, s))
        count = round(len(ranked) * share)
        if len(ranked) >= 2:
            count = min(max(count, 1), len(ranked) - 1)
        else:
            count = 0
        held += ranked[:count]
        tuning += ranked[count:]
    return Split(sorted(tuning, key=lambda s: s.pk), sorted(held, key=lambda s: s.pk),
                 f"{len(tuning)} tuning and {len(held)} held-out candidate(s) (held-out share {share:g})")


UNSPLIT = "unsplit"
SPLITS = (HELD_OUT, TUNING, "all", "both")


def candidate_sides(problems: Iterable[Problem]) -> dict[int, str]:
    """solution pk -> tuning, held_out, or unsplit (its problem has too few labelled candidates)."""
    sides: dict[int, str] = {}
    for problem in problems:
        split = candidate_split(problem)
        if not split.held_out:
            sides.update({s.pk: UNSPLIT for s in split.tuning})
            continue
        sides.update({s.pk: TUNING for s in split.tuning})
        sides.update({s.pk: HELD_OUT for s in split.held_out})
    return sides


def split_keeps(side: str | None, split: str) -> bool:
    """Whether a candidate on `side` counts in a report on `split` (unsplit problems count in both)."""
    if split in ("all", "both"):
        return True
    return side in (split, UNSPLIT)
