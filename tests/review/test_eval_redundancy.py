"""Near-duplicate inputs by the HardTests rule: the rule by hand, exactness of every step
against a brute-force LCS at the boundaries, with and without the C steps.

Speed is measured by bench/redundancy.py, not here."""

from __future__ import annotations

import functools
import itertools
import random
import shutil

import numpy as np
import pytest
from rapidfuzz.distance import LCSseq

from review.evaluation import native, redundancy
from review.evaluation.redundancy import (
    PairCheck,
    check_pair,
    is_near_duplicate,
    lcs_cutoff,
    longest_partner,
    near_duplicates,
)


@functools.cache
def brute_lcs(a: bytes, b: bytes) -> int:
    """The textbook DP, one row of b at a time: D[i][j] = max(D[i-1][j], D[i][j-1],
    D[i-1][j-1] + (a[j] == b[i])). Kept per pair: every exactness test runs with and without
    the C steps on the same seeded pairs, and the reference's answer is the same for both."""
    x = np.frombuffer(a, dtype=np.uint8)
    row = np.zeros(len(a) + 1, dtype=np.int64)
    for byte in b:
        diagonal = np.where(x == byte, row[:-1] + 1, 0)
        row[1:] = np.maximum.accumulate(np.maximum(row[1:], diagonal))
    return int(row[-1])


def brute_rule(a: bytes, b: bytes) -> bool:
    short, long_ = sorted((len(a), len(b)))
    return long_ <= short * 11 // 10 and 10 * brute_lcs(a, b) >= 9 * short


@pytest.fixture(params=["native", "python"])
def steps(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every exactness test runs twice: with the C steps, and without them (no compiler)."""
    if request.param == "native":
        if shutil.which("cc") or shutil.which("gcc"):
            assert native.kernels() is not None, "a C compiler is there but near_duplicates.c did not build"
        else:
            pytest.skip("no C compiler")
    else:
        monkeypatch.setattr(native, "kernels", lambda: None)
    return request.param


def test_brute_force_reference_agrees_with_rapidfuzz():
    rng = random.Random(5)
    for _ in range(200):
        a = bytes(rng.choice(b"012 ") for _ in range(rng.randint(0, 60)))
        b = bytes(rng.choice(b"012 ") for _ in range(rng.randint(0, 60)))
        assert brute_lcs(a, b) == LCSseq.similarity(a, b)


def test_length_rule_is_at_most_ten_percent_longer():
    # 110 is 10% longer than 100 and passes; 111 is 11% longer and does not, whatever the LCS.
    assert [longest_partner(n) for n in (100, 9, 10, 1000)] == [110, 9, 11, 1100]
    short = b"7" * 100
    assert is_near_duplicate(short, b"7" * 110)
    assert not is_near_duplicate(short, b"7" * 111)
    assert check_pair(short, b"7" * 111) == PairCheck(False, "length")
    found = near_duplicates([short, b"7" * 111, b"8" * 300])
    assert (found.near_duplicate_inputs, found.pairs_length_ok) == (0, 0)
    assert near_duplicates([short, b"7" * 110]).near_duplicate_inputs == 2


def test_rule_by_hand():
    base = b"abcdefghij"
    assert is_near_duplicate(base, b"abcdefghiX")  # LCS 9 >= 0.9 * 10
    assert not is_near_duplicate(base, b"abcdefghXY")  # LCS 8 < 9
    assert is_near_duplicate(base, b"abcdefghijk")  # 11 <= 10 * 11 // 10; LCS 10 >= 9
    assert not is_near_duplicate(base, b"abcdefghijkl")  # 12 > 11: lengths too far apart
    assert is_near_duplicate(b"", b"")
    assert not is_near_duplicate(b"", b"a")
    assert [lcs_cutoff(n) for n in (0, 1, 9, 10, 11, 100, 1000)] == [0, 1, 9, 9, 10, 90, 900]


def _numbers(rng: random.Random, size: int, high: int = 10**9) -> bytes:
    out = []
    while sum(map(len, out)) + len(out) < size:
        out.append(str(rng.randint(1, high)))
    return (" ".join(out) + "\n").encode()[:size]


def _substitute(body: bytes, positions: list[int]) -> bytes:
    """Each position becomes X, a byte the input does not have: the LCS drops by exactly one
    per position (the other bytes, in order, are a subsequence of the original)."""
    out = bytearray(body)
    for at in positions:
        out[at] = ord("X")
    return bytes(out)


def _delete(body: bytes, positions: list[int]) -> bytes:
    drop = set(positions)
    return bytes(c for k, c in enumerate(body) if k not in drop)


def _edit(body: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    """Apply (kind, position, byte) edits in order: 0 substitutes, 1 deletes, 2 inserts."""
    out = bytearray(body)
    for kind, at, byte in edits:
        at %= max(1, len(out))
        if kind == 0 and out:
            out[at] = byte
        elif kind == 1 and out:
            del out[at]
        elif kind == 2:
            out.insert(at, byte)
    return bytes(out)


def _crossing(a: bytes, edits: list[tuple[int, int, int]]) -> tuple[bytes, bytes]:
    """Copies of a with the first k and k + 1 edits, the first a near-duplicate and the
    second not (bisection with rapidfuzz; an edit moves the LCS by at most one byte). With
    bytes a already has, the histograms stay alike and the LCS steps have to decide."""
    near, far = 0, len(edits)
    assert is_near_duplicate(a, _edit(a, edits[:near])) and not is_near_duplicate(a, _edit(a, edits[:far]))
    while far - near > 1:
        middle = (near + far) // 2
        if is_near_duplicate(a, _edit(a, edits[:middle])):
            near = middle
        else:
            far = middle
    return _edit(a, edits[:near]), _edit(a, edits[:far])


@functools.cache
def _crafted() -> list[tuple[str, bytes, bytes, bool]]:
    rng = random.Random(11)
    small = b"5\n12 7 31 4 19\n"
    a = _numbers(rng, 1000)
    big = _numbers(rng, 6000)  # long enough for the anchored step (two 2 KB pieces)
    spread = list(range(3, 6000, 10))  # 600 edits, one every 10 bytes: no 16-byte anchor survives
    digits = b"0123456789 "
    crossings = {
        "1 KB, substitutions": (a, [(0, rng.randrange(1000), rng.choice(digits)) for _ in range(400)]),
        "6 KB, clustered substitutions": (big, [(0, 1000 + k, rng.choice(digits)) for k in range(2500)]),
        "6 KB, spread substitutions": (
            big,
            [(0, rng.randrange(6000), rng.choice(digits)) for _ in range(2500)],
        ),
        "6 KB, mixed edits": (big, [(k % 3, rng.randrange(6000), rng.choice(digits)) for k in range(2500)]),
    }
    at_the_edge = []
    for name, (body, edits) in crossings.items():
        near, far = _crossing(body, edits)
        at_the_edge += [
            (f"{name}, last near", body, near, True),
            (f"{name}, first not near", body, far, False),
        ]
    return (
        at_the_edge
        + [
            ("both empty", b"", b"", True),
            ("one empty", b"", b"1", False),
            ("identical", a, a, True),
            ("identical single byte", b"7", b"7", True),
            ("one byte each, different", b"7", b"8", False),
            ("small, one substitution", small, _substitute(small, [3]), True),  # 14 of 15 >= 13.5
            ("small, two substitutions", small, _substitute(small, [3, 9]), False),  # 13 < 13.5
            ("exactly 90% (100 of 1000 substituted)", a, _substitute(a, rng.sample(range(1000), 100)), True),
            ("just under (101 of 1000 substituted)", a, _substitute(a, rng.sample(range(1000), 101)), False),
            # 1000 <= 910 * 11 // 10 = 1001, but 1000 > 909 * 11 // 10 = 999
            ("lengths within 10% (90 of 1000 deleted)", a, _delete(a, rng.sample(range(1000), 90)), True),
            ("lengths just over 10% apart (91 deleted)", a, _delete(a, rng.sample(range(1000), 91)), False),
            ("10 vs 11 bytes, a prefix", b"1234567890", b"12345678901", True),
            ("9 vs 10 bytes, a prefix (11.1% longer)", b"123456789", b"1234567890", False),
            # shorter 910 (90 deleted), cutoff 819: 91 more substitutions leave exactly 819
            (
                "both at once, exactly",
                a,
                _substitute(_delete(a, list(range(0, 900, 10))), list(range(5, 910, 10))),
                True,
            ),
            (
                "both at once, one short",
                a,
                _substitute(_delete(a, list(range(0, 900, 10))), [*range(5, 910, 10), 6]),
                False,
            ),
            ("6 KB, 600 clustered substitutions", big, _substitute(big, list(range(2000, 2600))), True),
            ("6 KB, 601 clustered substitutions", big, _substitute(big, list(range(2000, 2601))), False),
            ("6 KB, 600 spread substitutions", big, _substitute(big, spread), True),
            ("6 KB, 601 spread substitutions", big, _substitute(big, [*spread, 4]), False),
            ("6 KB, one insertion", big, big[:3000] + b"7" + big[3000:], True),
            ("6 KB vs another 6 KB of random numbers", big, _numbers(rng, 6000), False),
            ("6 KB vs its reverse", big, big[::-1], False),
            ("periodic 1 2 1 2, 9% shorter", b"1 2 " * 1500, b"1 2 " * 1364, True),
            ("periodic, one period apart", b"1 2 " * 1500, b"2 1 " * 1500, True),
            (
                "0/1 strings, unrelated",
                bytes(rng.choice(b"01") for _ in range(3000)),
                bytes(rng.choice(b"01") for _ in range(3000)),
                False,
            ),
        ]
    )


@pytest.mark.parametrize(("name", "a", "b", "near"), _crafted(), ids=[c[0] for c in _crafted()])
def test_crafted_boundary_pairs(steps: str, name: str, a: bytes, b: bytes, near: bool):
    assert brute_rule(a, b) is near, "the case is built wrong"
    for x, y in ((a, b), (b, a)):
        assert is_near_duplicate(x, y) is near
        assert check_pair(x, y).near is near
    result = near_duplicates([a, b])
    assert result.exact and result.near_duplicate_inputs == (2 if near else 0)


def _mutate(rng: random.Random, body: bytes, edits: int, alphabet: bytes) -> bytes:
    out = bytearray(body)
    for _ in range(edits):
        op, at = rng.randrange(3), rng.randrange(max(1, len(out)))
        if op == 0 and out:
            del out[at]
        elif op == 1:
            out.insert(at, rng.choice(alphabet))
        elif out:
            out[at] = rng.choice(alphabet)
    return bytes(out)


@pytest.mark.parametrize("seed", range(2))
def test_random_pairs_near_the_threshold_agree_with_brute_force(steps: str, seed: int):
    rng = random.Random(seed)
    settled_by = set()
    for k in range(130):
        alphabet = rng.choice([b"01", b"0123456789 ", b"0123456789 \n", bytes(range(97, 123))])
        # mostly small; every 13th long enough for the anchored step
        n = (
            rng.randint(4200, 4600)
            if k % 13 == 0
            else rng.choice([rng.randint(0, 40), rng.randint(100, 600)])
        )
        a = bytes(rng.choice(alphabet) for _ in range(n))
        # edits around the 10% threshold: an edit costs the LCS at most one byte
        if rng.random() < 0.8:
            b = _mutate(rng, a, rng.randint(0, max(1, n // 6)), alphabet)
        else:
            b = bytes(rng.choice(alphabet) for _ in range(n))
        check = check_pair(a, b)
        assert check.near is brute_rule(a, b), (len(a), len(b), check)
        settled_by.add(check.step)
    assert {"length", "lcs"} <= settled_by


@pytest.mark.parametrize("seed", range(4))
def test_suites_agree_with_checking_every_pair(steps: str, seed: int):
    rng = random.Random(seed)
    inputs: list[bytes] = []
    for _ in range(25):
        n = rng.randint(1, 40)
        body = (
            f"{n}\n" + " ".join(str(rng.randint(1, 10 ** rng.randint(1, 4))) for _ in range(n)) + "\n"
        ).encode()
        inputs.append(body)
        if rng.random() < 0.5:  # a near (or not quite near) copy
            inputs.append(_mutate(rng, body, rng.randint(0, max(1, len(body) // 8)), b"0123456789 "))
        if rng.random() < 0.1:
            inputs.append(body)
    for _ in range(6):  # larger ones, where the q-gram and anchored steps have work
        body = _numbers(rng, rng.randint(4500, 5000))
        inputs += [body, _mutate(rng, body, rng.randint(1, 700), b"0123456789 ")]
    flagged = set()
    for i, j in itertools.combinations(range(len(inputs)), 2):
        if is_near_duplicate(inputs[i], inputs[j]):
            flagged |= {i, j}
    result = near_duplicates(inputs)
    assert result.near_duplicate_inputs == len(flagged)
    assert result.exact
    threaded = near_duplicates(inputs, threads=3)  # step 5 a row at a time: same answer, same counts
    assert threaded.to_dict() | {"seconds": 0} == result.to_dict() | {"seconds": 0}


def test_share_counts_inputs_with_a_partner():
    x = b"5\n1 2 3 4 5\n"
    near_x = b"5\n1 2 3 4 6\n"  # one byte of 12 differs: LCS 11 >= 10.8
    result = near_duplicates([x, x, near_x, b"3\n9 9 9\n", b"totally different text here"])
    assert (result.inputs, result.near_duplicate_inputs) == (5, 3)
    assert result.share == pytest.approx(3 / 5)
    assert result.exact and result.pairs == 10
    assert near_duplicates([]).share is None
    assert near_duplicates(["one input"]).to_dict()["share"] == 0.0


def test_time_budget_leaves_pairs_unchecked_and_says_so():
    rng = random.Random(1)
    inputs = [bytes(rng.choice(b"0123456789 ") for _ in range(2000)) for _ in range(6)]
    result = near_duplicates(inputs, budget_s=0.0)
    assert result.pairs_unchecked > 0 and not result.exact and result.to_dict()["exact"] is False


def test_each_step_settles_pairs_of_a_realistic_suite():
    """Unrelated random numbers go out at the q-gram bound, edited copies are shown near by
    the anchored bound, and the share is what checking every pair gives."""
    if native.kernels() is None:
        pytest.skip("no C compiler")
    rng = random.Random(3)
    originals = [_numbers(rng, rng.randint(9000, 9500)) for _ in range(8)]
    copies = [_mutate(rng, body, 30, b"0123456789 ") for body in originals[:3]]
    result = near_duplicates(originals + copies)
    assert result.near_duplicate_inputs == 6 and result.pairs_histogram_ok == 55
    assert result.pairs_qgram_ok <= 5 and result.pairs_anchored == 3 and result.pairs_lcs_computed == 0


def test_qgram_bound_never_rejects_a_pair_that_reaches_the_cutoff():
    """The q-gram step alone, on any cutoff up to the LCS, over small alphabets and repeats."""
    kernels = native.kernels()
    if kernels is None:
        pytest.skip("no C compiler")
    rng = random.Random(7)
    rejected = 0
    for _ in range(400):
        alphabet = rng.choice([b"01", b"012", b"0123456789 ", bytes(range(256))])
        n = rng.randint(1, 1500)
        unit = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        a = (unit * n)[:n] if rng.random() < 0.2 else bytes(rng.choice(alphabet) for _ in range(n))
        b = _mutate(rng, a, rng.randint(0, n // 4), alphabet)
        if rng.random() < 0.3:
            b = bytes(rng.choice(alphabet) for _ in range(len(b)))
        lcs = LCSseq.similarity(a, b)
        for cutoff in {lcs, lcs - 3, lcs_cutoff(min(len(a), len(b)))}:
            if cutoff > 0:
                says_below = redundancy._qgram_rejects(
                    redundancy._Input(a), redundancy._Input(b), cutoff, kernels
                )
                assert not (says_below and lcs >= cutoff), (len(a), len(b), lcs, cutoff)
                rejected += says_below
    assert rejected > 50  # and it does reject


def test_pruned_lcs_decides_like_the_full_lcs():
    kernels = native.kernels()
    if kernels is None:
        pytest.skip("no C compiler")
    rng = random.Random(9)
    for _ in range(600):
        alphabet = rng.choice([b"01", b"0123456789 ", bytes(range(256))])
        a = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, rng.choice([70, 300, 2000]))))
        b = _mutate(rng, a, rng.randint(0, len(a) // 5 + 1), alphabet)
        lcs = LCSseq.similarity(a, b)
        for cutoff in {lcs - 1, lcs, lcs + 1, lcs_cutoff(min(len(a), len(b)))}:
            found = kernels.lcs_at_least(a, len(a), b, len(b), cutoff)
            assert (found >= cutoff) is (lcs >= cutoff), (len(a), len(b), lcs, cutoff, found)
            if cutoff > 0 and found >= cutoff:
                assert found == lcs


def test_no_compiler_means_no_kernels(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert native._build() is None
