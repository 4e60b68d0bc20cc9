"""Server time of the evaluation page, which reads stored results only (compute on write).

Fills a throwaway SQLite database (under a temporary HARDTESTS_VAR_DIR) with active suites that
have a kill order and candidates with gold verdicts and complete per-test verdicts, computes one
evaluation report (the write: timed once), then times GET /evaluation/ through Django's test
client in-process and prints p50 / p95. For comparison it also times what every request used to
compute before the page read the stored figures (the held-out fast-suite section):

    .venv/bin/python bench/evaluation_page.py
    .venv/bin/python bench/evaluation_page.py --suites 40 --candidates 12 --tests 80 --repeat 30

Target: p95 under 300 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TARGET_MS = 300.0


def _setup(var_dir: Path) -> None:
    os.environ["HARDTESTS_VAR_DIR"] = str(var_dir)
    os.environ["DATABASE_URL"] = f"sqlite:///{var_dir / 'bench.sqlite3'}"
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def fill(n_suites: int, n_candidates: int, n_tests: int, seed: int = 7) -> list[str]:
    from django.db import transaction

    from problems.models import Problem, Solution, TestSuite, Verdict
    from problems.services import NewTest, solution_upsert, suite_activate, suite_add_tests, suite_create

    rng = random.Random(seed)
    kinds = ["direct"] * 10 + ["regular"] * 20 + ["hacking"] * 10
    pids = []
    with transaction.atomic():
        for s in range(n_suites):
            problem = Problem.objects.create(source="bench", pid=f"bench/{s:03d}", title=f"Bench {s}",
                                             statement="Add.", platform="codeforces")
            pids.append(problem.pid)
            suite = suite_create(problem=problem, origin=TestSuite.Origin.GENERATED)
            suite_add_tests(suite=suite, tests=[NewTest(input=f"{s} {t}\n", output=f"{s + t}\n",
                                                        kind=kinds[t % len(kinds)]) for t in range(n_tests)])
            suite = suite_activate(suite=suite)
            ordinals = list(suite.tests.order_by("ordinal").values_list("ordinal", flat=True))
            for c in range(n_candidates):
                wrong = c % 3 != 0
                solution, _ = solution_upsert(problem=problem, role=Solution.Role.CANDIDATE, language="python3",
                                              code=f"print({c})\n", name=f"c{c}.py",
                                              gold_verdict="WA" if wrong else "AC")
                failing = set(rng.sample(ordinals, rng.randint(1, max(1, n_tests // 8)))) if wrong else set()
                results = [{"ordinal": o, "verdict": "WA" if o in failing else "AC", "time_ms": rng.randint(5, 60),
                            "wall_ms": rng.randint(10, 90), "memory_kb": 3000} for o in ordinals]
                Verdict.objects.create(solution=solution, suite=suite, verdict="WA" if wrong else "AC",
                                       passed=n_tests - len(failing), total=n_tests, complete=True, results=results)
            # a kill order: the tests failed most first (what judging learns from these verdicts)
            TestSuite.objects.filter(pk=suite.pk).update(judge_order=list(reversed(ordinals)))
    return pids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", type=int, default=30)
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--tests", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp:
        _setup(Path(tmp))
        from django.test import Client

        from review.evaluation.fast_suites import fast_suite_records, fast_suite_report
        from review.evaluation.services import (
            FAST_REPORT_SUITES,
            evaluation_report_compute,
            evaluation_select,
        )
        from review.models import EvaluationReport
        from tests.factories import annotator

        pids = fill(args.suites, args.candidates, args.tests)
        started = time.perf_counter()
        report = evaluation_report_compute(selection=evaluation_select(pids=pids), near_duplicate_budget_s=5)
        write_s = time.perf_counter() - started
        EvaluationReport.objects.create(status=EvaluationReport.Status.DONE, report=report, params={})
        started = time.perf_counter()
        fast_suite_report(fast_suite_records(limit=FAST_REPORT_SUITES))
        old_read_ms = 1000 * (time.perf_counter() - started)
        client = Client()
        user: Any = annotator("bench")
        client.force_login(user)
        client.get("/evaluation/")  # warm: templates compiled, caches filled
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            response = client.get("/evaluation/")
            times.append(1000 * (time.perf_counter() - started))
            assert response.status_code == 200 and b"fast-arms" in response.content
        times.sort()
        p50 = statistics.median(times)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        print(f"data: {args.suites} suites x {args.candidates} candidates x {args.tests} tests "
              f"({report['counts']['pairs_judged']} pairs)")
        print(f"write: the report (every section, fast suites included) computed once in {write_s:.2f} s")
        print(f"before: the fast-suite section alone, computed on every page read: {old_read_ms:.0f} ms")
        print(f"read: GET /evaluation/ p50 {p50:.0f} ms, p95 {p95:.0f} ms over {args.repeat} requests "
              f"(target p95 < {TARGET_MS:.0f} ms: {'met' if p95 < TARGET_MS else 'MISSED'})")
        return 0 if p95 < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
