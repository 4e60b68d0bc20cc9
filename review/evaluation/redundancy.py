"""Near-duplicate inputs by the HardTests authors' rule (pure; no Django).

Two inputs are near-duplicates when their lengths are within 10% (the longer is at most
10% longer than the shorter, rounded down: `long <= short * 11 // 10`, so 100 pairs with
110 but not with 111) and their longest common subsequence is at least 90% of the shorter.
An input counts as a near-duplicate when it has at least one near-duplicate partner.

The answer is exact. Exact LCS of two 100 KB inputs costs ~35 ms even banded (rapidfuzz
with a score cutoff), and a suite of 100 such inputs has 4,950 pairs, so every pair goes
through cheaper steps first; each step either settles the pair with a proof or passes it on:

1. identical bodies are near-duplicates without any LCS;
2. inputs sorted by length, so only a sliding window of lengths within 10% is paired;
3. pairs whose two inputs are both already known near-duplicates are skipped (the share
   cannot change);
4. byte histograms: LCS(a, b) <= sum over bytes of min(count in a, count in b), which
   rejects inputs of different shape or value range at once;
5. the q-gram chain (rejects; `_qgram_rejects`). Say |a| = n, |b| = m, the cutoff is c and
   L = LCS(a, b) >= c. The matched pairs of an optimal alignment fall into runs (i, j),
   (i+1, j+1), ...; two runs are separated by at least one unmatched byte, so there are at
   most (n - L) + (m - L) + 1 runs, and a run of r matches holds r - q + 1 whole q-gram
   windows of a matched to equal windows of b. So at least (2q - 1)L - (q - 1)(n + m + 1)
   windows match whole; they form a chain, increasing in both positions, of equal q-grams
   whose offset j - i lies in [-(n - c), m - c] (a matched pair has at most n - L bytes of a
   and m - L bytes of b unmatched before it). If every such chain is shorter than
   (2q - 1)c - (q - 1)(n + m + 1), then L < c. near_duplicates.c bounds the longest chain
   by counting the matching windows per 256 x 256 tile (32 x 32 on a second try) and taking
   the best monotone staircase of tiles (a chain uses at most min(count, tile) windows of a
   tile). With q = 5 when the lengths are within ~2%, else 4 or 3, two unrelated inputs of
   random numbers have chains of 1-40% of what is needed; inputs over tiny alphabets (0/1
   strings, numbers up to 10) do not, and go on;
6. the anchored lower bound (accepts; `_anchored_lower_bound`): a is cut every 2 KB, each cut
   is placed in b where the 16 bytes after it occur nearest the expected offset, and the LCS
   of the matching pieces add up to a common subsequence of a and b; at >= c the pair is a
   near-duplicate (an edited copy costs ~50 small LCS instead of one large one);
7. otherwise the exact decision LCS >= c: near_duplicates.c's bit-parallel LCS restricted to
   the cells a path reaching c can still pass through, which stops once none is left
   (5-20 ms for two unrelated 100 KB inputs), or rapidfuzz's banded LCSseq with score_cutoff.

Steps 5 and 7 run in C (native.py builds near_duplicates.c on first use); without a
compiler step 5 is skipped and step 7 uses rapidfuzz: the same results, slower. A time
budget bounds the work: pairs left when it runs out are counted as unchecked, and the
result says it is not exact (the share is then a lower bound).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from rapidfuzz.distance import LCSseq

from review.evaluation import native

LENGTH_SLACK = 0.1  # the longer may be this much longer than the shorter
LCS_RATIO = 0.9
_LENGTH_NUM, _LENGTH_DEN = (1 + Fraction(str(LENGTH_SLACK))).as_integer_ratio()
_LCS_NUM, _LCS_DEN = Fraction(str(LCS_RATIO)).as_integer_ratio()

QGRAM_SIZES = (5, 4, 3)  # the largest whose margin is at least QGRAM_MARGIN of the shorter
QGRAM_MARGIN = 0.015
QGRAM_TILE_BITS = (8, 5)  # tiles of 256 x 256 windows; 32 x 32 (tighter, slower) when that
QGRAM_RETRY = 4  # ... gave a bound below QGRAM_RETRY times what is needed
QGRAM_MAX_MATCHES = 32  # per window of a; denser pairs (tiny alphabets) skip the bound
ANCHOR_CHUNK = 2048
ANCHOR_KEY = 16
ANCHOR_TRIES = 4


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
    pairs_qgram_ok: int = 0  # pairs the q-gram chain bound could not rule out
    pairs_anchored: int = 0  # pairs shown near-duplicate by the anchored lower bound

    @property
    def exact(self) -> bool:
        return self.pairs_unchecked == 0

    @property
    def share(self) -> float | None:
        return None if self.inputs == 0 else self.near_duplicate_inputs / self.inputs

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "share": self.share, "exact": self.exact}


@dataclass(frozen=True)
class PairCheck:
    near: bool
    step: str  # which step settled it: length, identical, histogram, qgram, anchored or lcs


def lcs_cutoff(shorter: int) -> int:
    """The smallest LCS that is at least LCS_RATIO of `shorter` (exact integer arithmetic)."""
    return -(-shorter * _LCS_NUM // _LCS_DEN)


def longest_partner(shorter: int) -> int:
    """The longest length that is within the length rule of `shorter` (110 for 100)."""
    return shorter * _LENGTH_NUM // _LENGTH_DEN


def is_near_duplicate(a: bytes, b: bytes) -> bool:
    """The rule itself, on one pair, without filters (the reference for tests)."""
    short, long_ = sorted((len(a), len(b)))
    if long_ > longest_partner(short):
        return False
    if short == 0:
        return True
    return LCSseq.similarity(a, b) >= lcs_cutoff(short)


@dataclass
class _Windows:
    """The q-gram windows of one input grouped by code, as near_duplicates.c reads them."""

    codes: np.ndarray  # distinct codes, ascending (uint64)
    starts: np.ndarray  # len(codes) + 1 offsets into positions (int32)
    positions: np.ndarray  # window starts, ascending within one code (int32)
    square: float  # sum over codes of count^2: sqrt(square_x * square_y) bounds the matches

    @classmethod
    def of(cls, body: bytes, q: int) -> _Windows:
        count = max(0, len(body) - q + 1)
        data = np.frombuffer(body, dtype=np.uint8)
        code = data[:count].astype(np.uint64)
        for k in range(1, q):
            code = (code << np.uint64(8)) | data[k : k + count]
        if count < 1 << 24:  # codes of q <= 5 bytes fit in 40 bits: sort one key array
            keys = (code << np.uint64(24)) | np.arange(count, dtype=np.uint64)
            keys.sort()
            code, positions = keys >> np.uint64(24), (keys & np.uint64((1 << 24) - 1)).astype(np.int32)
        else:
            order = np.argsort(code, kind="stable")
            code, positions = code[order], order.astype(np.int32)
        cuts = np.flatnonzero(code[1:] != code[:-1]) + 1 if count else np.zeros(0, dtype=np.int64)
        starts = np.concatenate(([0], cuts, [count])).astype(np.int32) if count else np.zeros(1, np.int32)
        counts = np.diff(starts).astype(np.int64)
        return cls(np.ascontiguousarray(code[starts[:-1]]), starts, positions, float((counts * counts).sum()))

    def __post_init__(self) -> None:
        self.arguments = (
            self.codes.ctypes.data,
            self.starts.ctypes.data,
            self.positions.ctypes.data,
            len(self.codes),
            len(self.positions),
        )


@dataclass
class _Input:
    body: bytes
    windows: dict[int, _Windows] = field(default_factory=dict)

    def qgrams(self, q: int) -> _Windows:
        if q not in self.windows:
            self.windows[q] = _Windows.of(self.body, q)
        return self.windows[q]


@dataclass(frozen=True)
class _QgramPlan:
    x: _Windows
    y: _Windows
    lo: int
    hi: int
    need: int
    most: int


def _qgram_plan(x: _Input, y: _Input, cutoff: int) -> _QgramPlan | None:
    """Step 5's q and windows for a pair, or None when it cannot help."""
    n, m = len(x.body), len(y.body)
    if max(n, m) >= 1 << 31:
        return None
    for q in QGRAM_SIZES:
        need = (2 * q - 1) * cutoff - (q - 1) * (n + m + 1)
        if need >= max(1, QGRAM_MARGIN * min(n, m)):
            break
    else:
        return None
    wx, wy = x.qgrams(q), y.qgrams(q)
    lo, hi = -(n - cutoff), m - cutoff
    most = QGRAM_MAX_MATCHES * max(1, len(wx.positions))
    if (wx.square * wy.square) ** 0.5 * (hi - lo + 1) / max(1, len(wy.positions)) > 2 * most:
        return None  # about that many matches in the band (Cauchy-Schwarz, spread evenly): too dense
    return _QgramPlan(wx, wy, lo, hi, need, most)


def _qgram_bound_rejects(plan: _QgramPlan, kernels: native.Kernels) -> bool:
    """True when the chain bound proves the LCS below the cutoff (no Python objects change:
    safe in threads, and the C call releases the GIL)."""
    for tile_bits in QGRAM_TILE_BITS:
        bound = kernels.qgram_chain_bound(
            *plan.x.arguments, *plan.y.arguments, plan.lo, plan.hi, tile_bits, plan.most
        )
        if 0 <= bound < plan.need:
            return True
        if not 0 <= bound < QGRAM_RETRY * plan.need:
            return False
    return False


def _qgram_rejects(x: _Input, y: _Input, cutoff: int, kernels: native.Kernels) -> bool:
    """True when the q-gram chain bound (step 5) proves LCS(x, y) < cutoff."""
    plan = _qgram_plan(x, y, cutoff)
    return plan is not None and _qgram_bound_rejects(plan, kernels)


def _nearest(b: bytes, key: bytes, expected: int, start: int) -> int:
    """Where `key` occurs in b[start:] nearest to `expected` (within ANCHOR_CHUNK / 4), or -1."""
    reach = ANCHOR_CHUNK // 4
    after = b.find(key, max(start, expected), min(len(b), expected + reach + len(key)))
    before = b.rfind(key, max(start, expected - reach), min(len(b), expected + len(key) - 1))
    if before < 0 or (after >= 0 and after - expected < expected - before):
        return after
    return before


def _anchored_lower_bound(a: bytes, b: bytes, cutoff: int) -> int:
    """The length of a common subsequence of a and b built piece by piece (step 6); stops
    early, with a smaller number, once it cannot reach `cutoff`."""
    n, m = len(a), len(b)
    total = pa = pb = 0
    while pa < n:
        if total + (n - pa) < cutoff:
            return total
        na, nb = n, m
        if n - pa >= 2 * ANCHOR_CHUNK:
            drift = pb - pa
            na = pa + ANCHOR_CHUNK
            nb = min(max(na + drift, pb), m)
            for p in range(na, na + ANCHOR_TRIES * ANCHOR_KEY, ANCHOR_KEY):
                found = _nearest(b, a[p : p + ANCHOR_KEY], p + drift, pb)
                if found >= 0:
                    na, nb = p, found
                    break
        total += LCSseq.similarity(a[pa:na], b[pb:nb])
        pa, pb = na, nb
    return total


def _lcs_at_least(x: bytes, y: bytes, cutoff: int, kernels: native.Kernels | None) -> bool:
    """Step 7: exact; the pruned C DP, or rapidfuzz's banded one without a compiler."""
    if kernels is not None:
        found: int = kernels.lcs_at_least(x, len(x), y, len(y), cutoff)
        if found >= 0:
            return found >= cutoff
    return LCSseq.similarity(x, y, score_cutoff=cutoff) >= cutoff


def _settle(
    x: _Input, y: _Input, cutoff: int, kernels: native.Kernels | None, rejected: bool | None = None
) -> PairCheck:
    """Steps 5-7 for a pair whose lengths and histograms allow it (`rejected`: step 5's
    answer when it is already known)."""
    if rejected is None:
        rejected = kernels is not None and _qgram_rejects(x, y, cutoff, kernels)
    if rejected:
        return PairCheck(False, "qgram")
    if _anchored_lower_bound(x.body, y.body, cutoff) >= cutoff:
        return PairCheck(True, "anchored")
    return PairCheck(_lcs_at_least(x.body, y.body, cutoff, kernels), "lcs")


def _histogram(body: bytes) -> np.ndarray:
    return np.bincount(np.frombuffer(body, dtype=np.uint8), minlength=256).astype(np.int64)


def check_pair(a: bytes | str, b: bytes | str) -> PairCheck:
    """The rule on one pair through every step (same answer as is_near_duplicate)."""
    x, y = (s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in (a, b))
    if len(x) > len(y):
        x, y = y, x
    if len(y) > longest_partner(len(x)):
        return PairCheck(False, "length")
    if x == y:
        return PairCheck(True, "identical")
    cutoff = lcs_cutoff(len(x))
    if int(np.minimum(_histogram(x), _histogram(y)).sum()) < cutoff:
        return PairCheck(False, "histogram")
    return _settle(_Input(x), _Input(y), cutoff, native.kernels())


def near_duplicates(
    inputs: Sequence[bytes | str], *, budget_s: float | None = None, threads: int = 1
) -> NearDuplicates:
    """The share of near-duplicate inputs. With threads > 1, step 5 (most of the time on
    large suites) runs for a whole row of pairs at once in that many threads; the answer
    and the counts do not depend on it."""
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
    for position, i in enumerate(order):
        histograms[position] = _histogram(unique[i])
    prepared = [_Input(unique[i]) for i in order]
    kernels = native.kernels()
    pool = ThreadPoolExecutor(threads) if threads > 1 and kernels is not None else None
    length_ok = histogram_ok = qgram_ok = anchored = computed = unchecked = 0
    try:
        for a in range(len(order)):
            # Sorted by length, so every partner within 10% is in [a+1, end).
            end = int(np.searchsorted(lengths, longest_partner(int(lengths[a])), side="right"))
            candidates = np.arange(a + 1, end)
            length_ok += len(candidates)
            cutoff = lcs_cutoff(int(lengths[a]))
            bound = np.minimum(histograms[a], histograms[candidates]).sum(axis=1)
            row = [int(b) for b in candidates[bound >= cutoff]]
            histogram_ok += len(row)
            rejected: dict[int, bool] = {}
            if pool is not None and not (budget_s is not None and time.perf_counter() - started > budget_s):
                plans = {
                    b: _qgram_plan(prepared[a], prepared[b], cutoff)
                    for b in row
                    if not (flagged[order[a]] and flagged[order[b]])
                }
                ready = {b: plan for b, plan in plans.items() if plan is not None}
                assert kernels is not None  # the pool exists only with the kernels
                found = pool.map(lambda plan: _qgram_bound_rejects(plan, kernels), ready.values())
                rejected = {b: False for b in plans} | dict(zip(ready, found, strict=True))
            for b in row:
                i, j = order[a], order[b]
                if flagged[i] and flagged[j]:
                    continue
                if not rejected.get(b) and budget_s is not None and time.perf_counter() - started > budget_s:
                    unchecked += 1
                    continue
                check = _settle(prepared[a], prepared[b], cutoff, kernels, rejected.get(b))
                qgram_ok += check.step != "qgram"
                anchored += check.step == "anchored"
                computed += check.step == "lcs"
                if check.near:
                    flagged[i] = flagged[j] = True
            prepared[a].windows.clear()  # row a is done and later rows only pair longer inputs
    finally:
        if pool is not None:
            pool.shutdown()
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
        pairs_qgram_ok=qgram_ok,
        pairs_anchored=anchored,
    )
