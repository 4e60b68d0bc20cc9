"""Near-duplicate inputs by the HardTests authors' rule (pure; no Django).

Two inputs are near-duplicates when their lengths are within 10% (the shorter is at least
90% of the longer) and their longest common subsequence is at least 90% of the shorter.
An input counts as a near-duplicate when it has at least one near-duplicate partner.

Exact LCS of two 100 KB strings costs tens of milliseconds even banded, so pairs go
through sound filters first (none can drop a true pair):
1. identical bodies are near-duplicates without any LCS;
2. inputs sorted by length, so only a sliding window of lengths within 10% is paired;
3. a byte-histogram bound: LCS(a, b) <= sum over bytes of min(count in a, count in b),
   which rejects inputs of different shape or value range at once;
4. pairs whose two inputs are both already known near-duplicates are skipped (the share
   cannot change);
5. rapidfuzz's LCSseq with score_cutoff, which bands the computation and gives up early.

No cheap bound separates two *different* random inputs of the same length and character
statistics (their LCS is ~50%, but proving it < 90% needs the banded DP, ~50-100 ms per
100 KB pair here), so a suite of many same-sized random inputs costs that per pair. A time
budget bounds the work: pairs left when it runs out are counted as unchecked, and the
result says it is not exact (the share is then a lower bound).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from rapidfuzz.distance import LCSseq

LENGTH_RATIO = 0.9
LCS_RATIO = 0.9


@dataclass
class NearDuplicates:
    inputs: int
    near_duplicate_inputs: int
    pairs: int
    pairs_length_ok: int
    pairs_histogram_ok: int
    pairs_lcs_computed: int
    seconds: float
    pairs_unchecked: int = 0

    @property
    def exact(self) -> bool:
        return self.pairs_unchecked == 0

    @property
    def share(self) -> float | None:
        return None if self.inputs == 0 else self.near_duplicate_inputs / self.inputs

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "share": self.share, "exact": self.exact}


def lcs_cutoff(shorter: int) -> int:
    return math.ceil(LCS_RATIO * shorter - 1e-9)


def is_near_duplicate(a: bytes, b: bytes) -> bool:
    """The rule itself, on one pair, without filters (the reference for tests)."""
    short, long_ = sorted((len(a), len(b)))
    if short < LENGTH_RATIO * long_:
        return False
    if short == 0:
        return True
    return LCSseq.similarity(a, b) >= lcs_cutoff(short)


def near_duplicates(inputs: Sequence[bytes | str], *, budget_s: float | None = None) -> NearDuplicates:
    started = time.perf_counter()
    bodies = [x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in inputs]
    # Identical bodies: collapse to one representative, remember every copy.
    copies: dict[bytes, list[int]] = {}
    for index, body in enumerate(bodies):
        copies.setdefault(hashlib.sha256(body).digest(), []).append(index)
    groups = list(copies.values())
    unique = [bodies[g[0]] for g in groups]
    flagged = [len(g) > 1 for g in groups]
    order = sorted(range(len(unique)), key=lambda i: len(unique[i]))
    lengths = np.array([len(unique[i]) for i in order], dtype=np.int64)
    histograms = np.zeros((len(order), 256), dtype=np.int64)
    for row, i in enumerate(order):
        histograms[row] = np.bincount(np.frombuffer(unique[i], dtype=np.uint8), minlength=256)
    length_ok = histogram_ok = computed = unchecked = 0
    for a in range(len(order)):
        # Sorted by length, so every partner within 10% is in [a+1, end).
        end = int(np.searchsorted(lengths, lengths[a] / LENGTH_RATIO, side="right"))
        candidates = np.arange(a + 1, end)
        length_ok += len(candidates)
        if not len(candidates):
            continue
        cutoff = lcs_cutoff(int(lengths[a]))
        bound = np.minimum(histograms[a], histograms[candidates]).sum(axis=1)
        for b in candidates[bound >= cutoff]:
            histogram_ok += 1
            i, j = order[a], order[int(b)]
            if flagged[i] and flagged[j]:
                continue
            if budget_s is not None and time.perf_counter() - started > budget_s:
                unchecked += 1
                continue
            computed += 1
            if LCSseq.similarity(unique[i], unique[j], score_cutoff=cutoff) >= cutoff:
                flagged[i] = flagged[j] = True
    near = sum(len(g) for g, f in zip(groups, flagged, strict=True) if f)
    n = len(bodies)
    return NearDuplicates(
        inputs=n,
        near_duplicate_inputs=near,
        pairs=n * (n - 1) // 2,
        pairs_length_ok=length_ok,
        pairs_histogram_ok=histogram_ok,
        pairs_lcs_computed=computed,
        seconds=time.perf_counter() - started,
        pairs_unchecked=unchecked,
    )
