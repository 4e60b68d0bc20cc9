"""Near-duplicate inputs by the HardTests rule: the rule by hand, the filters lose nothing, timing."""

from __future__ import annotations

import itertools
import random
import time

import pytest

from review.evaluation.redundancy import is_near_duplicate, near_duplicates


def test_rule_by_hand():
    base = b"abcdefghij"
    assert is_near_duplicate(base, b"abcdefghiX")        # LCS 9 >= 0.9 * 10
    assert not is_near_duplicate(base, b"abcdefghXY")    # LCS 8 < 9
    assert is_near_duplicate(base, b"abcdefghijk")       # 10 >= 0.9 * 11; LCS 10 >= 9
    assert not is_near_duplicate(base, b"abcdefghijkl")  # 10 < 0.9 * 12: lengths too far apart
    assert is_near_duplicate(b"", b"")
    assert not is_near_duplicate(b"", b"a")


def test_share_counts_inputs_with_a_partner():
    x = b"5\n1 2 3 4 5\n"
    near_x = b"5\n1 2 3 4 6\n"  # one byte of 12 differs: LCS 11 >= 10.8
    result = near_duplicates([x, x, near_x, b"3\n9 9 9\n", b"totally different text here"])
    assert (result.inputs, result.near_duplicate_inputs) == (5, 3)
    assert result.share == pytest.approx(3 / 5)
    assert result.exact and result.pairs == 10
    assert near_duplicates([]).share is None
    assert near_duplicates(["one input"]).to_dict()["share"] == 0.0


def _mutate(rng: random.Random, body: bytes, edits: int) -> bytes:
    out = bytearray(body)
    for _ in range(edits):
        op, at = rng.randrange(3), rng.randrange(max(1, len(out)))
        if op == 0 and out:
            del out[at]
        elif op == 1:
            out.insert(at, rng.choice(b"0123456789 "))
        elif out:
            out[at] = rng.choice(b"0123456789 ")
    return bytes(out)


@pytest.mark.parametrize("seed", range(6))
def test_filters_agree_with_checking_every_pair(seed: int):
    rng = random.Random(seed)
    inputs: list[bytes] = []
    for _ in range(25):
        n = rng.randint(1, 40)
        body = (f"{n}\n" + " ".join(str(rng.randint(1, 10 ** rng.randint(1, 4))) for _ in range(n)) + "\n").encode()
        inputs.append(body)
        if rng.random() < 0.5:  # a near (or not quite near) copy
            inputs.append(_mutate(rng, body, rng.randint(0, max(1, len(body) // 8))))
        if rng.random() < 0.1:
            inputs.append(body)
    flagged = set()
    for i, j in itertools.combinations(range(len(inputs)), 2):
        if is_near_duplicate(inputs[i], inputs[j]):
            flagged |= {i, j}
    result = near_duplicates(inputs)
    assert result.near_duplicate_inputs == len(flagged)
    assert result.exact


def test_time_budget_leaves_pairs_unchecked_and_says_so():
    rng = random.Random(1)
    inputs = [bytes(rng.choice(b"0123456789 ") for _ in range(2000)) for _ in range(6)]
    result = near_duplicates(inputs, budget_s=0.0)
    assert result.pairs_unchecked > 0 and not result.exact and result.to_dict()["exact"] is False


def _array(rng: random.Random, high: int, size: int) -> list[int]:
    values, total = [], 0
    while total < size:
        values.append(rng.randint(1, high))
        total += len(str(values[-1])) + 1
    return values


def _render(values: list[int]) -> bytes:
    return (f"{len(values)}\n" + " ".join(map(str, values)) + "\n").encode()


def generated_like_suite(seed: int = 0) -> list[bytes]:
    """100 inputs of up to 100 KB, shaped like a generated suite: 60 regular inputs (random
    size and value range), 20 hacking inputs near the maximum size (constant, sorted,
    reversed, alternating, a permutation), and 20 lightly edited copies."""
    rng = random.Random(seed)
    suite = [_render(_array(rng, 10 ** rng.randint(1, 9), rng.randint(1_000, 100_000))) for _ in range(60)]
    for k in range(20):
        size = 100_000 - 997 * k
        shape = k % 5
        if shape == 0:
            values = [10**9] * (size // 11)
        elif shape == 1:
            values = sorted(_array(rng, 10**9, size))
        elif shape == 2:
            values = sorted(_array(rng, 10**9, size), reverse=True)
        elif shape == 3:
            values = [1, 2] * (size // 4)
        else:
            values = list(range(1, size // 6))
        suite.append(_render(values))
    for k in range(20):
        body = bytearray(suite[k])
        for _ in range(len(body) // 500):
            at = rng.randrange(len(body))
            if chr(body[at]).isdigit():
                body[at] = ord(str(rng.randint(0, 9)))
        suite.append(bytes(body))
    return suite


@pytest.mark.slow
def test_timing_of_a_suite_of_100_inputs_of_100_kb(capsys: pytest.CaptureFixture[str]):
    suite = generated_like_suite()
    assert len(suite) == 100 and max(len(s) for s in suite) >= 99_000
    started = time.perf_counter()
    result = near_duplicates(suite)
    elapsed = time.perf_counter() - started
    with capsys.disabled():
        print(f"\nnear-duplicates of 100 inputs ({sum(map(len, suite)) / 1e6:.1f} MB): {elapsed:.1f} s, "
              f"{result.pairs_length_ok} pairs within 10% length, {result.pairs_histogram_ok} past the histogram "
              f"bound, {result.pairs_lcs_computed} exact LCS; share {result.share:.2f}")
    assert result.exact and result.near_duplicate_inputs >= 40  # every edited copy and its original
    # Exact LCS costs ~50-100 ms per surviving 100 KB pair on this machine; see redundancy.py.
    assert elapsed < 120
