"""Near-duplicate inputs (review/evaluation/redundancy.py): the exact rule, timed.

    .venv/bin/python bench/redundancy.py [--sample 24] [--previous] [--seed 0]

Suites, all of 100 inputs:
  numbers 100 KB / 10 KB: inputs of random numbers of one magnitude (1..10^9, a few
      1..10^6) at 97-100% of the size, as one line or rows of 10 or 100 numbers: 70
      unrelated ones and 30 copies of some of them with 0.1-20% of their numbers replaced,
      deleted or inserted (so some copies are near-duplicates and some are not quite).
      Every pair is within 10% in length and the byte histograms barely differ, so only
      the LCS steps can settle a pair;
  generated-like: sizes 1-100 KB, shaped like a generated suite (random arrays, hacking
      inputs near the maximum size, lightly edited copies).

For each suite: the time of `near_duplicates` with one thread and with one per CPU (the
same answer and counts, asserted), its share, and how many pairs each step settled. Then a sample of pairs of the 100 KB suite (half copies and their originals, half
unrelated), each judged by the naive exact rule (`is_near_duplicate`: one full LCS per
pair) and by `check_pair` (every step), asserting that both agree; the naive time per pair
times 4,950 is what checking every pair naively would cost. --previous also runs the
algorithm this replaced (histogram bound + rapidfuzz LCS with a score cutoff, per pair) on
every suite and asserts the same share (slow: 30 s or more on the 100 KB suite).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rapidfuzz.distance import LCSseq  # noqa: E402

from review.evaluation import native  # noqa: E402
from review.evaluation.redundancy import (  # noqa: E402
    check_pair,
    is_near_duplicate,
    lcs_cutoff,
    longest_partner,
    near_duplicates,
)


def _render(values: list[int], per_line: int) -> bytes:
    rows = (
        [" ".join(map(str, values[k : k + per_line])) for k in range(0, len(values), per_line)]
        if per_line
        else [" ".join(map(str, values))]
    )
    return (f"{len(values)}\n" + "\n".join(rows) + "\n").encode()


def _numbers(rng: random.Random, high: int, size: int) -> list[int]:
    values, total = [], 0
    while total < size:
        values.append(rng.randint(1, high))
        total += len(str(values[-1])) + 1
    return values


def numbers_suite(size: int, seed: int = 0) -> tuple[list[bytes], list[tuple[int, int]]]:
    """100 inputs (see the module doc) and the (copy, original) index pairs."""
    rng = random.Random(seed)
    originals: list[tuple[list[int], int, int]] = []
    for k in range(70):
        high = 10**6 if k % 10 == 9 else 10**9
        originals.append(
            (_numbers(rng, high, int(size * rng.uniform(0.97, 1.0))), rng.choice((0, 10, 100)), high)
        )
    suite = [_render(values, per_line) for values, per_line, _ in originals]
    copies = []
    for k in range(30):
        source = rng.randrange(70)
        values, per_line, high = originals[source]
        edited = list(values)
        rate = (0.001, 0.01, 0.03, 0.05, 0.08, 0.12, 0.2)[k % 7]
        for _ in range(max(1, int(rate * len(edited)))):
            at, op = rng.randrange(len(edited)), rng.random()
            if op < 0.5:
                edited[at] = rng.randint(1, high)
            elif op < 0.75:
                del edited[at]
            else:
                edited.insert(at, rng.randint(1, high))
        copies.append((len(suite), source))
        suite.append(_render(edited, per_line))
    return suite, copies


def generated_like_suite(seed: int = 0) -> list[bytes]:
    """100 inputs of up to 100 KB, shaped like a generated suite: 60 regular inputs (random
    size and value range), 20 hacking inputs near the maximum size (constant, sorted,
    reversed, alternating, a permutation), and 20 lightly edited copies."""
    rng = random.Random(seed)
    suite = [
        _render(_numbers(rng, 10 ** rng.randint(1, 9), rng.randint(1_000, 100_000)), 0) for _ in range(60)
    ]
    for k in range(20):
        size = 100_000 - 997 * k
        shape = k % 5
        if shape == 0:
            values = [10**9] * (size // 11)
        elif shape == 1:
            values = sorted(_numbers(rng, 10**9, size))
        elif shape == 2:
            values = sorted(_numbers(rng, 10**9, size), reverse=True)
        elif shape == 3:
            values = [1, 2] * (size // 4)
        else:
            values = list(range(1, size // 6))
        suite.append(_render(values, 0))
    for k in range(20):
        body = bytearray(suite[k])
        for _ in range(len(body) // 500):
            at = rng.randrange(len(body))
            if chr(body[at]).isdigit():
                body[at] = ord(str(rng.randint(0, 9)))
        suite.append(bytes(body))
    return suite


def previous_share(inputs: list[bytes]) -> tuple[int, float]:
    """The replaced algorithm: identical bodies, length window, byte-histogram bound, then
    rapidfuzz's LCSseq with a score cutoff for every remaining pair (no budget)."""
    started = time.perf_counter()
    unique = sorted(set(inputs), key=len)
    flagged = {body for body in unique if inputs.count(body) > 1}
    lengths = np.array([len(b) for b in unique])
    histograms = np.array([np.bincount(np.frombuffer(b, dtype=np.uint8), minlength=256) for b in unique])
    for a in range(len(unique)):
        end = int(np.searchsorted(lengths, longest_partner(int(lengths[a])), side="right"))
        cutoff = lcs_cutoff(int(lengths[a]))
        bound = np.minimum(histograms[a], histograms[a + 1 : end]).sum(axis=1)
        for b in np.flatnonzero(bound >= cutoff) + a + 1:
            x, y = unique[a], unique[int(b)]
            if x in flagged and y in flagged:
                continue
            if LCSseq.similarity(x, y, score_cutoff=cutoff) >= cutoff:
                flagged |= {x, y}
    return sum(body in flagged for body in inputs), time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=24, help="pairs judged naively (default 24)")
    parser.add_argument(
        "--previous", action="store_true", help="also run the replaced algorithm on every suite"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.perf_counter()
    kernels = native.kernels()
    print(
        f"{os.cpu_count()} CPUs, load average {load}; C steps: "
        f"{'built in %.2f s (cached after)' % (time.perf_counter() - started) if kernels else 'unavailable'}"
    )
    big, copies = numbers_suite(100_000, args.seed)
    suites = {
        "numbers 100 x 100 KB": big,
        "numbers 100 x 10 KB": numbers_suite(10_000, args.seed)[0],
        "generated-like 1-100 KB": generated_like_suite(args.seed),
    }
    threads = os.cpu_count() or 1
    print()
    print(
        f"{'suite':<24} {'MB':>5} {'1 thread':>9} {f'{threads} threads':>10} {'share':>6} {'exact':>5} | pairs: "
        f"{'length':>6} {'histo':>6} {'q-gram':>6} {'anchor':>6} {'lcs':>5}"
    )
    for name, suite in suites.items():
        result = near_duplicates(suite)
        parallel = near_duplicates(suite, threads=threads)
        assert parallel.to_dict() | {"seconds": 0} == result.to_dict() | {"seconds": 0}
        print(
            f"{name:<24} {sum(map(len, suite)) / 1e6:>5.1f} {result.seconds:>8.2f}s {parallel.seconds:>9.2f}s "
            f"{result.share:>6.2f} {'yes' if result.exact else 'no':>5} | {'':>6} {result.pairs_length_ok:>6} "
            f"{result.pairs_histogram_ok:>6} {result.pairs_qgram_ok:>6} {result.pairs_anchored:>6} "
            f"{result.pairs_lcs_computed:>5}"
        )
        if args.previous:
            near, seconds = previous_share(suite)
            assert near == result.near_duplicate_inputs, (near, result.near_duplicate_inputs)
            print(
                f"{'  previous algorithm':<24} {'':>5} {seconds:>8.2f}s {'':>10} {near / len(suite):>6.2f}   yes"
            )
    print(
        "  (pairs: within 10% in length / past the histogram bound / past the q-gram bound /"
        " shown near by the anchored bound / exact LCS computed)"
    )

    rng = random.Random(args.seed)
    sample = rng.sample(copies, min(len(copies), args.sample // 2))
    unrelated = [p for p in itertools.combinations(range(70), 2)]
    sample += rng.sample(unrelated, args.sample - len(sample))
    naive_s = new_s = 0.0
    near = 0
    for i, j in sample:
        t0 = time.perf_counter()
        expected = is_near_duplicate(big[i], big[j])
        t1 = time.perf_counter()
        check = check_pair(big[i], big[j])
        t2 = time.perf_counter()
        assert check.near == expected, (i, j, check, expected)
        naive_s, new_s, near = naive_s + t1 - t0, new_s + t2 - t1, near + expected
    pairs = len(big) * (len(big) - 1) // 2
    print()
    print(
        f"sample of {len(sample)} pairs of the 100 KB suite ({near} near-duplicates): naive exact LCS "
        f"{naive_s * 1000 / len(sample):.1f} ms/pair (all {pairs} pairs: ~{naive_s / len(sample) * pairs:.0f} s), "
        f"check_pair {new_s * 1000 / len(sample):.1f} ms/pair (q-gram windows built per call); "
        f"verdicts agree"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
