"""Bench: kill order and fast suites on the demo problems (real sandbox, no LLM).

    .venv/bin/python bench/kill_order.py [--paper-counts] [SLUG ...]
    .venv/bin/python bench/kill_order.py --klear   # the Klear record's 24 gold solutions (minutes of CPU)

Loads the demo problems into a throwaway HARDTESTS_VAR_DIR, materialises every kit (the
tests' generator call counts unless --paper-counts), judges every candidate with a gold
verdict against its suite in mode "all" (as an evaluation does; the known-wrong ones teach the
kill order), then prints:

- held out (review/evaluation/fast_suites.py: each known-wrong program judged against the
  order and fast subset built without it): precision / recall of the full suite, the fast
  subset and random subsets; a wrong program's median tests until its first failure, kind
  order against kill order; tests and CPU ms of fail-fast judging, full + kind order against
  fast + kill order;
- judged for real, per problem: each known-wrong candidate judged fail-fast with the kill order
  and in kind order (judge_code(kill_order=False)): tests run and verdicts side by side
  (the reward must be the same), and every known-correct program (oracles, gold AC) judged
  against the fast subset (must pass), with the fast subset's size.

--klear instead imports the Klear-CodeTest record (../shared/fixtures/klear), adds a known-wrong
program (prints 0) so that its published suite gets a kill order, and judges all 24 gold C++
solutions against it in kill order, mode all (every test): every one that compiles must pass
(tests/klear.py: two do not compile). Kind order is what the evaluation tests already judge.
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

REPO = Path(__file__).resolve().parent.parent
SMALL_COUNTS = {"HARDTESTS_REGULAR_CALLS": 5, "HARDTESTS_STRATIFIED_CALLS": 3, "HARDTESTS_HACKING_CALLS": 3}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slugs", nargs="*", help="demo folder names (default: all)")
    parser.add_argument("--paper-counts", action="store_true", help="the paper's generator call counts")
    parser.add_argument("--klear", action="store_true", help="the Klear record's gold solutions instead")
    parser.add_argument("--klear-gold", type=int, default=24,
                        help="judge only this many gold solutions, cheapest first (tests/klear.py's order)")
    parser.add_argument("--mutants", type=int, metavar="N",
                        help="instead of the demo's candidates: up to N single-point mutants per problem of its "
                             "known-correct Python programs (bench/mutants.py), judged in mode all, then kind "
                             "order against kill order in-sample and held out (2 folds)")
    parser.add_argument("--dump", help="write the held-out records (tests, programs' failing tests; with --mutants the "
                                       "mutants') to this JSON file")
    parser.add_argument("--distribution", metavar="DUMP",
                        help="read a --dump file and print, per known-wrong program, the tests it runs until its "
                             "first failure: kind order, kill order learnt from all, and held out (no judging)")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="hardtests-bench-")
    os.environ["HARDTESTS_VAR_DIR"] = scratch.name
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "bench"))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from generation.models import GenerationRun
    from generation.pipeline import generation_run_execute
    from generation.services import generation_run_start
    from problems.demo import demo_load
    from problems.judging import judge_code, solution_judge, suite_for_judging
    from problems.matrix import gold_expectation
    from problems.models import Problem, TestSuite
    from review.evaluation.fast_suites import fast_suite_records, fast_suite_report

    if args.distribution:
        return distribution(Path(args.distribution))
    if args.klear:
        return klear(args.klear_gold)
    if not args.paper_counts:
        for name, value in SMALL_COUNTS.items():
            setattr(settings, name, value)
    started = time.monotonic()
    demo_load()
    problems = [p for p in Problem.objects.filter(source="demo").order_by("pid")
                if not args.slugs or p.pid.split("/", 1)[1] in args.slugs]
    suites: list[TestSuite] = []
    for problem in problems:
        if not problem.kits.exists():
            continue
        run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_KIT, enqueue=False)
        run = generation_run_execute(run_id=run.pk)
        suite = problem.suites.filter(status=TestSuite.Status.ACTIVE, origin=TestSuite.Origin.GENERATED).first()
        if suite is None:
            print(f"{problem.pid:<28} no active suite ({run.status} {run.failure_reason})")
            continue
        for solution in problem.solutions.exclude(role="oracle"):
            if gold_expectation(solution) is not None:
                solution_judge(solution=solution, suite=suite, mode="all")
        suites.append(suite)
    print(f"materialised and judged {len(suites)} suites in {time.monotonic() - started:.0f} s "
          f"({'paper' if args.paper_counts else 'small'} generator counts)\n")
    if args.mutants:
        return mutant_study(suites, args.mutants, started, Path(args.dump) if args.dump else None)

    records = fast_suite_records(suite_ids=[s.pk for s in suites])
    if args.dump:
        import dataclasses
        import json

        Path(args.dump).write_text(json.dumps([dataclasses.asdict(r) for r in records], default=sorted))
    report = fast_suite_report(records)

    def pr(d: dict) -> str:
        p, r = d.get("precision"), d.get("recall")
        return f"precision {p:.3f} recall {r:.3f}" if p is not None and r is not None else f"{d}"

    print(f"HELD OUT ({report['suites']} suites with a kill order, {report['programs']} programs with gold labels)")
    print(f"  full suite  {report['full_tests']:>5} tests  {pr(report['full'])}")
    print(f"  fast subset {report['fast_tests']:>5} tests  {pr(report['fast'])}")
    for d in report["random_drop"]:
        print(f"  random keep {d['keep']:.0%} (20 draws)  {pr(d)}")
    print(f"  wrong programs {report['wrong_programs']}: median tests until the first failure "
          f"{report['median_tests_to_failure_kind']} (kind order) vs {report['median_tests_to_failure_kill']} "
          f"(kill order): {report['median_ratio'] or 0:.1f}x")
    print(f"  fail-fast, every program: full+kind {report['tests_run_full_kind']} tests "
          f"{report['cpu_ms_full_kind']} CPU ms; fast+kill {report['tests_run_fast_kill']} tests "
          f"{report['cpu_ms_fast_kill']} CPU ms: {report['speedup_tests'] or 0:.2f}x fewer tests, "
          f"{report['speedup_cpu'] or 0:.2f}x less CPU\n")

    print("JUDGED FOR REAL (fail-fast; in-sample: these programs taught the order)")
    print(f"  {'problem':<26} {'program':<26} {'gold':>4} {'kind: n verdict ms':>20} {'kill: n verdict ms':>20}")
    kind_n, kill_n, same_reward, same_verdict, total = [], [], 0, 0, 0
    fast_ok, fast_total, fast_sizes = 0, 0, []
    for suite in suites:
        suite = TestSuite.objects.select_related("problem").get(pk=suite.pk)
        problem = suite.problem
        assert suite_for_judging(problem) is not None
        for solution in problem.solutions.all():
            known = gold_expectation(solution)
            if known is False:
                a = judge_code(problem=problem, suite=suite, language=solution.language, code=solution.code,
                               kill_order=False)
                b = judge_code(problem=problem, suite=suite, language=solution.language, code=solution.code)
                total += 1
                same_reward += a.reward == b.reward
                same_verdict += a.verdict == b.verdict
                if a.verdict != "CE":
                    kind_n.append(len(a.tests))
                    kill_n.append(len(b.tests))
                print(f"  {problem.pid:<26} {(solution.name or str(solution.pk))[:26]:<26} {solution.gold_verdict:>4} "
                      f"{len(a.tests):>6} {a.verdict:>4} {a.elapsed_ms:>6}   {len(b.tests):>6} {b.verdict:>4} "
                      f"{b.elapsed_ms:>6}")
            elif known is True:
                fast = judge_code(problem=problem, suite=suite, language=solution.language, code=solution.code,
                                  subset="fast")
                fast_total += 1
                fast_ok += fast.reward
        fast_sizes.append((len(suite.fast_ordinals) or suite.test_count, suite.test_count))
    if kind_n:
        print(f"\n  known-wrong programs: {total}; same reward {same_reward}/{total}, same verdict code "
              f"{same_verdict}/{total}; median tests run {statistics.median(kind_n)} (kind) vs "
              f"{statistics.median(kill_n)} (kill): {statistics.median(kind_n) / statistics.median(kill_n):.1f}x; "
              f"mean {statistics.fmean(kind_n):.1f} vs {statistics.fmean(kill_n):.1f}")
    print(f"  known-correct programs passing the fast subset: {fast_ok}/{fast_total}")
    print(f"  fast subset sizes: {sum(a for a, _ in fast_sizes)} of {sum(b for _, b in fast_sizes)} tests "
          f"({', '.join(f'{a}/{b}' for a, b in fast_sizes)})")
    print(f"\n{time.monotonic() - started:.0f} s")
    return 0


def mutant_study(suites: list, count: int, started: float, dump: Path | None = None) -> int:
    """Kind order against kill order on a population of wrong programs nobody chose: up to
    `count` single-point mutants per problem of its known-correct Python programs (oracle and
    gold-AC candidates), each judged in mode all; the ones the suite fails are the known-wrong
    programs. In-sample: the order learnt from all of them; held out: mutants split in two folds
    by their place in the seeded sample, each measured against the order learnt from the other;
    stored: the order the suite already has (learnt from the demo's own candidates); online: the
    API's evidence (HARDTESTS_KILL_ORDER_FROM_API, refreshed at each row): the mutants come one
    after another, each judged fail-fast in the order learnt so far, from kind order and nothing
    known, and only its first failing test is recorded (all a fail-fast answer tells)."""
    from django.conf import settings
    from mutants import mutants

    from problems.judging import judge_code
    from problems.kill_order import (
        TestFacts,
        fast_subset,
        first_failure,
        kill_order,
        kind_order,
        suite_test_facts,
    )
    from problems.matrix import gold_expectation

    need = settings.HARDTESTS_KILL_ORDER_MIN_KILLS
    columns = ("kind", "stored", "in", "out", "online")
    pooled: dict[str, list[int]] = {c: [] for c in columns}
    online_late: list[int] = []  # the online stream's second half of each problem
    caught_out = caught_total = hangs = survived = judged = 0
    records: list[dict] = []
    print(f"MUTANTS (up to {count} a problem, mode all; {need} kills move a test ahead)")
    print(f"  {'problem':<26} {'judged':>6} {'wrong':>5} {'hang':>4} " + " ".join(f"{c + ' med/mean':>15}" for c in columns)
          + "  out-fast caught")
    for suite in suites:
        problem = suite.problem
        suite.refresh_from_db()
        sources = [s for s in problem.solutions.filter(language="python3").order_by("id") if gold_expectation(s)]
        pool = [(f"{s.name}: {label}", code) for s in sources for label, code in mutants(s.code, 10**6)]
        random.Random(problem.pid).shuffle(pool)
        tests: list[TestFacts] = suite_test_facts(suite)
        by_kind = kind_order(tests)
        stored = list(suite.judge_order) or by_kind
        failing: list[set[int]] = []
        row_hangs = 0
        for _label, code in pool[:count]:
            judged += 1
            quick = judge_code(problem=problem, suite=suite, language="python3", code=code)
            if quick.verdict == "TLE":
                row_hangs += 1  # its every test would run to the time limit: left out, counted
                continue
            if quick.verdict == "AC":
                survived += 1  # passes the whole suite: equivalent, or a fault the suite misses
                continue
            full = judge_code(problem=problem, suite=suite, language="python3", code=code, mode="all")
            failing.append({t.ordinal for t in full.tests if t.verdict not in ("AC", "SE")})
        hangs += row_hangs
        wrong = [f for f in failing if f]
        records.append({"problem": problem.pid, "tests": [t.__dict__ for t in tests], "stored": stored,
                        "wrong": [sorted(f) for f in wrong]})
        runs: dict[str, list[int]] = {c: [] for c in columns}
        kills_all = _kills(wrong, range(len(wrong)))
        order_in = kill_order(tests, kills_all, need) if kills_all else by_kind
        caught = 0
        for i, fails in enumerate(wrong):
            other = [j for j in range(len(wrong)) if j % 2 != i % 2]
            kills_out = _kills(wrong, other)
            order_out = kill_order(tests, kills_out, need) if kills_out else by_kind
            fast_out = set(fast_subset(tests, kills_out, order_out)) if kills_out else set(by_kind)
            caught += bool(fails & fast_out)
            for c, order in (("kind", by_kind), ("stored", stored), ("in", order_in), ("out", order_out)):
                runs[c].append(first_failure(order, fails) or len(tests))
        evidence: dict[int, set[int]] = {}
        order_online = by_kind
        for i, fails in enumerate(wrong):
            ran = first_failure(order_online, fails) or len(tests)
            runs["online"].append(ran)
            if i >= len(wrong) // 2:
                online_late.append(ran)
            evidence.setdefault(order_online[ran - 1], set()).add(i)
            order_online = kill_order(tests, evidence, need)
        caught_out += caught
        caught_total += len(wrong)
        for c in columns:
            pooled[c] += runs[c]

        def cell(values: list[int]) -> str:
            return f"{statistics.median(values):>5g} / {statistics.fmean(values):5.2f}" if values else f"{'-':>15}"

        print(f"  {problem.pid[:26]:<26} {min(count, len(pool)):>6} {len(wrong):>5} {row_hangs:>4} "
              + " ".join(f"{cell(runs[c]):>15}" for c in columns) + f"  {caught}/{len(wrong)}")
    if dump is not None:
        import json

        dump.write_text(json.dumps(records))
    print(f"\n  {judged} mutants judged, {survived} pass the whole suite, {hangs} time out at once (left out), "
          f"{len(pooled['kind'])} known-wrong")
    for c, what in (("kind", "kind order (hacking first)"),
                    ("stored", "the suite's stored order (learnt from the demo's candidates)"),
                    ("in", "kill order learnt from every mutant (in-sample)"),
                    ("out", "kill order learnt from the other fold (held out)"),
                    ("online", "learnt online from each earlier mutant's first failing test (the API's evidence)")):
        values = pooled[c]
        if values:
            print(f"  {c:<6} median {statistics.median(values):>4g}  mean {statistics.fmean(values):5.2f}  first test "
                  f"{sum(v == 1 for v in values)}/{len(values)}  max {max(values):>3}  {what}")
    if pooled["kind"]:
        kind, inside, out = (statistics.median(pooled[c]) for c in ("kind", "in", "out"))
        print(f"  median ratio kind/kill: in-sample {kind / inside:.1f}x, held out {kind / out:.1f}x; mean ratio "
              f"in-sample {statistics.fmean(pooled['kind']) / statistics.fmean(pooled['in']):.2f}x, held out "
              f"{statistics.fmean(pooled['kind']) / statistics.fmean(pooled['out']):.2f}x")
        late = [i for i, v in enumerate(pooled["kind"]) if v > 1]
        if late:
            print(f"  the {len(late)} that pass kind order's first test: "
                  + ", ".join(f"{c} median {statistics.median([pooled[c][i] for i in late]):g} mean "
                              f"{statistics.fmean([pooled[c][i] for i in late]):.2f}" for c in columns))
        print(f"  held-out mutants the other fold's fast subset fails: {caught_out}/{caught_total}")
        if online_late:
            print(f"  online, second half of each problem's stream: median {statistics.median(online_late):g} mean "
                  f"{statistics.fmean(online_late):.2f} over {len(online_late)}")
    print(f"\n{time.monotonic() - started:.0f} s")
    return 0


def _kills(wrong: list[set[int]], members: range | list[int]) -> dict[int, set[int]]:
    found: dict[int, set[int]] = {}
    for j in members:
        for ordinal in wrong[j]:
            found.setdefault(ordinal, set()).add(j)
    return found


def distribution(dump: Path) -> int:
    """Where the known-wrong programs of a --dump fail first: per program and pooled, in kind
    order, in the kill order learnt from every known-wrong program of its suite (in-sample),
    and held out (the order learnt from the others only), each with 2 and 1 kills required."""
    import json

    from problems.kill_order import TestFacts, first_failure, kill_order, kind_order

    records = json.loads(dump.read_text())
    columns = ("kind", "in2", "in1", "out2", "out1")
    pooled: dict[str, list[int]] = {c: [] for c in columns}
    print(f"{'problem':<26} {'program':>7} {'fails':>7} " + " ".join(f"{c:>5}" for c in columns))
    for record in records:
        tests = [TestFacts(**t) for t in record["tests"]]
        wrong = [p for p in record["programs"] if not p["correct"] and p["compiled"] and p["failing"]]
        fails = [{int(o) for o in p["failing"]} for p in wrong]
        by_kind = kind_order(tests)
        for i, p in enumerate(wrong):
            failing = fails[i]
            orders = {"kind": by_kind}
            for label, members in (("in", range(len(wrong))), ("out", [j for j in range(len(wrong)) if j != i])):
                known = _kills(fails, members)
                for need in (2, 1):
                    orders[f"{label}{need}"] = kill_order(tests, known, need) if known else by_kind
            runs = {c: first_failure(orders[c], failing) or len(tests) for c in columns}
            for c in columns:
                pooled[c].append(runs[c])
            print(f"{record['problem'][:26]:<26} {p['solution_id']:>7} {len(failing):>3}/{len(tests):<3} "
                  + " ".join(f"{runs[c]:>5}" for c in columns))
    print(f"\n{len(pooled['kind'])} known-wrong programs that fail some test; tests run until the first failure:")
    for c in columns:
        values = pooled[c]
        if values:
            ones = sum(v == 1 for v in values)
            print(f"  {c:<5} median {statistics.median(values):>4}  mean {statistics.fmean(values):5.2f}  "
                  f"first test {ones}/{len(values)}  max {max(values)}")
    print("  (kind: kind order; in2/in1: kill order learnt from every known-wrong program of the suite, 2 or 1 "
          "kills to move a test ahead; out2/out1: learnt without the program itself)")
    return 0


def klear(count: int) -> int:
    from problems.importers.runner import dataset_import
    from problems.judging import judge_code, solution_judge
    from problems.models import Problem, Solution, TestSuite

    record = REPO.parent / "shared" / "fixtures" / "klear" / "sample_with_generated_testcases.jsonl"
    dataset_import(format_name="klear", paths=[str(record)])
    problem = Problem.objects.get(source="klear", pid="code_contest_8")
    suite = problem.suites.get(origin=TestSuite.Origin.IMPORTED, status=TestSuite.Status.ACTIVE)
    gold = list(problem.solutions.order_by("id"))
    if count < len(gold):
        import json

        from tests.klear import CHEAPEST

        sources = json.loads(record.read_text())["solutions"]
        cheapest = [i for i in CHEAPEST if i < len(sources)][:count]
        gold = [next(s for s in gold if s.code == sources[i]) for i in cheapest]
    wrong = Solution.objects.create(problem=problem, role=Solution.Role.CANDIDATE, language="python3",
                                    code="print(0)\n", gold_verdict="WA", name="prints-0")
    solution_judge(solution=wrong, suite=suite, mode="all")
    suite = TestSuite.objects.select_related("problem").get(pk=suite.pk)
    kind_first = sorted(suite.tests.values_list("ordinal", "kind"),
                        key=lambda t: ({"hacking": 0, "stratified": 1, "regular": 2, "direct": 3}.get(t[1], 4), t[0]))
    print(f"Klear {problem.pid}: {suite.test_count} tests; kill order {suite.judge_order[:8]}... "
          f"(kind order {[o for o, _ in kind_first[:8]]}...); {len(gold)} gold solutions")
    passed = compiled = 0
    for index, solution in enumerate(gold):
        started = time.monotonic()
        a = judge_code(problem=problem, suite=suite, language=solution.language, code=solution.code, mode="all")
        compiled += a.verdict != "CE"
        passed += a.verdict == "AC"
        print(f"  gold {index:>2}: kill order {a.verdict} {a.passed}/{a.total} "
              f"[{','.join(str(t.ordinal) for t in a.tests[:6])}...]  ({time.monotonic() - started:.0f} s)", flush=True)
    print(f"gold solutions passing in kill order: {passed} of {compiled} that compile ({len(gold)} in all)")
    return 0 if passed == compiled else 1


if __name__ == "__main__":
    raise SystemExit(main())
