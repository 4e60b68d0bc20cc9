"""Output comparison: time and peak memory of the streaming comparators (sandbox/compare.py)
beside the whole-output forms they replaced, on a wrong output of 2-byte tokens ("1 1 1 ...")
that differs only in its last token, so that the whole output is read.

    .venv/bin/python bench/compare.py [--sizes 1K,1M,60M] [--modes tokens,exact,float]

Each figure comes from a process of its own: the outputs are made first, then the comparison
runs once timed, then once more under tracemalloc: "peak" is the most memory the comparison
itself held at once (the two outputs excluded). The best of --rounds rounds (time) is printed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, math, sys, time, tracemalloc
sys.path.insert(0, {repo!r})
from sandbox import compare

def old_tokens(e, a):
    return bytes(e).split() == bytes(a).split()

def old_exact(e, a):
    return bytes(e).replace(b"\r\n", b"\n").rstrip(b"\n") == bytes(a).replace(b"\r\n", b"\n").rstrip(b"\n")

def old_float(e, a):
    x, y = e.decode("utf-8", "replace").split(), a.decode("utf-8", "replace").split()
    return len(x) == len(y) and all(p == q or math.isclose(float(p), float(q), rel_tol=1e-6, abs_tol=1e-6)
                                    for p, q in zip(x, y))

funcs = {{("new", "tokens"): compare.compare_tokens, ("new", "exact"): compare.compare_exact,
         ("new", "float"): compare.compare_float, ("old", "tokens"): old_tokens, ("old", "exact"): old_exact,
         ("old", "float"): old_float}}
size = {size}
expected = b"1 " * (size // 2)
wrong = expected[:-2] + b"2 "
func = funcs[({impl!r}, {mode!r})]
started = time.perf_counter()
answer = func(expected, wrong)
elapsed = time.perf_counter() - started
assert answer is False
tracemalloc.start()
func(expected, wrong)
print(json.dumps({{"ms": elapsed * 1000, "peak_kb": tracemalloc.get_traced_memory()[1] / 1024}}))
"""


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def measure(impl: str, mode: str, size: int, rounds: int) -> tuple[float, float]:
    best_ms, peak = float("inf"), 0.0
    for _ in range(rounds):
        code = CHILD.format(repo=str(REPO), size=size, impl=impl, mode=mode)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=900)
        figures = json.loads(out.stdout)
        best_ms = min(best_ms, figures["ms"])
        peak = max(peak, figures["peak_kb"])
    return best_ms, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1K,1M,60M")
    parser.add_argument("--modes", default="tokens,exact,float")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-old", action="store_true", help="skip the whole-output forms (slow at 60M)")
    args = parser.parse_args()
    print(f"{'mode':7} {'size':>5} {'impl':4} {'time ms':>10} {'peak +MB':>9}")
    for mode in args.modes.split(","):
        for text in args.sizes.split(","):
            for impl in ("new",) if args.no_old else ("new", "old"):
                ms, peak_kb = measure(impl, mode, _size(text), args.rounds)
                print(f"{mode:7} {text:>5} {impl:4} {ms:10.1f} {peak_kb / 1024:9.1f}", flush=True)


if __name__ == "__main__":
    main()
