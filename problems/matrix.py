"""The verdict matrix: solutions x tests of one suite, its filters, marks where a verdict
contradicts what is known about a program, and one cell opened (bodies, outputs, diff).
Re-exported by problems.selectors, where pages look for shared reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from problems.models import JudgingTask, Solution, TestCase, TestSuite, Verdict

# Okabe-Ito colours (distinguishable with every common colour-vision deficiency); each verdict
# also prints a glyph and its code, so colour is never the only signal.
VERDICT_STYLE: dict[str, tuple[str, str]] = {
    "AC": ("v-ac", "✓"),
    "OK": ("v-ac", "✓"),
    "WA": ("v-wa", "✗"),
    "TLE": ("v-tle", "◔"),
    "MLE": ("v-mle", "▲"),
    "RE": ("v-re", "!"),
    "OLE": ("v-ole", "»"),
    "CE": ("v-ce", "⚙"),
    "SE": ("v-se", "?"),
}


def verdict_style(verdict: str | None) -> tuple[str, str]:
    if not verdict:
        return ("v-none", "·")
    return VERDICT_STYLE.get(verdict, ("v-se", "?"))


@dataclass
class MatrixColumn:
    solution: Solution
    verdict: Verdict | None
    task_status: str = ""
    task_error: str = ""
    css: str = "v-none"
    glyph: str = "·"
    max_ms: int | None = None
    max_kb: int | None = None
    # The judging disagrees with what is known about the program (see gold_expectation).
    contradicts: bool = False


# A cell: (css, glyph, verdict, time_ms, memory_kb, contradicts) or None when the test did not run.
MatrixCell = tuple[str, str, str, int | None, int | None, bool]


@dataclass
class Matrix:
    suite: TestSuite
    columns: list[MatrixColumn]
    # (ordinal, kind, kind label, cells, row contradicts)
    rows: list[tuple[int, str, str, list[MatrixCell | None], bool]]
    pending: int
    test_page: int
    test_pages: int
    show: str = ""
    shown_tests: int = 0


MATRIX_TESTS_PER_PAGE = 200
MATRIX_FILTERS = {"": "All tests", "failing": "Failing only", "contradicts": "Contradicts gold"}


def gold_expectation(solution: Solution) -> bool | None:
    """True when the program is known correct (an oracle, or gold AC), False when known wrong,
    None when nothing is known."""
    if solution.role == Solution.Role.ORACLE:
        return True
    gold = solution.gold_verdict
    if gold == Solution.GoldVerdict.AC:
        return True
    if gold and gold != Solution.GoldVerdict.UNKNOWN:
        return False
    return None


def verdict_matrix(suite: TestSuite, solutions: list[Solution], *, test_page: int = 1, show: str = "") -> Matrix:
    """Solutions x tests of one suite with per-cell verdict, CPU time and memory: four queries.

    show="failing" keeps the tests some program fails; show="contradicts" keeps the tests a
    program known to be correct fails (the test or its expected output is suspect).
    """
    verdicts = {v.solution_id: v for v in Verdict.objects.filter(suite=suite)}
    tasks: dict[int, tuple[str, str]] = {}
    for solution_id, status, error in (
        JudgingTask.objects.filter(suite=suite).order_by("created_at", "id").values_list("solution_id", "status", "error")
    ):
        tasks[solution_id] = (status, error)
    pending = sum(1 for status, _ in tasks.values()
                  if status in (JudgingTask.Status.QUEUED, JudgingTask.Status.RUNNING))
    columns = []
    by_ordinal: list[dict[int, dict[str, Any]]] = []
    expectations: list[bool | None] = []
    failing: set[int] = set()
    contradicting: set[int] = set()
    for solution in solutions:
        verdict = verdicts.get(solution.pk)
        status, error = tasks.get(solution.pk, ("", ""))
        column = MatrixColumn(solution=solution, verdict=verdict, task_status=status, task_error=error)
        expected = gold_expectation(solution)
        results: dict[int, dict[str, Any]] = {}
        if verdict is not None:
            column.css, column.glyph = verdict_style(verdict.verdict)
            for r in verdict.results or []:
                if isinstance(r, dict) and "ordinal" in r:
                    results[r["ordinal"]] = r
                    if r.get("verdict") != "AC":
                        failing.add(r["ordinal"])
                        if expected is True:
                            contradicting.add(r["ordinal"])
            times: list[int] = [r["time_ms"] for r in results.values() if isinstance(r.get("time_ms"), int)]
            mems: list[int] = [r["memory_kb"] for r in results.values() if isinstance(r.get("memory_kb"), int)]
            column.max_ms = max(times) if times else None
            column.max_kb = max(mems) if mems else None
            # A known-wrong program that passes every test is a hole in the suite.
            column.contradicts = (expected is True and verdict.verdict != "AC") or (
                expected is False and verdict.verdict == "AC" and verdict.complete)
        columns.append(column)
        by_ordinal.append(results)
        expectations.append(expected)
    tests_qs = suite.tests.order_by("ordinal")
    show = show if show in MATRIX_FILTERS else ""
    if show == "failing":
        tests_qs = tests_qs.filter(ordinal__in=sorted(failing))
    elif show == "contradicts":
        tests_qs = tests_qs.filter(ordinal__in=sorted(contradicting))
    shown = len(failing) if show == "failing" else len(contradicting) if show == "contradicts" else suite.test_count
    per_page = MATRIX_TESTS_PER_PAGE
    test_pages = max(1, -(-shown // per_page))
    test_page = min(max(1, test_page), test_pages)
    tests = list(tests_qs.values_list("ordinal", "kind")[(test_page - 1) * per_page : test_page * per_page])
    labels = dict(TestCase.Kind.choices)
    rows = []
    for ordinal, kind in tests:
        cells: list[MatrixCell | None] = []
        for results, expected in zip(by_ordinal, expectations, strict=True):
            r = results.get(ordinal)
            if r is None:
                cells.append(None)
            else:
                code = str(r.get("verdict", ""))
                css, glyph = verdict_style(code)
                cells.append((css, glyph, code, r.get("time_ms"), r.get("memory_kb"),
                              expected is True and code != "AC"))
        rows.append((ordinal, kind, labels.get(kind, kind), cells, ordinal in contradicting))
    return Matrix(suite=suite, columns=columns, rows=rows, pending=pending, test_page=test_page,
                  test_pages=test_pages, show=show, shown_tests=shown)


@dataclass
class CellDetail:
    solution: Solution
    test: TestCase
    result: dict[str, Any] | None
    verdict: Verdict | None
    input_text: str
    expected_text: str
    actual_text: str | None
    truncated: bool
    diff: list[tuple[int, str, str, bool]]
    contradicts: bool
    # an interactive test's log as stored ("> " program to interactor, "< " back), or None
    interaction_text: str | None = None


CELL_SHOWN_BYTES = 64 * 1024
DIFF_LINES = 400


def _shown(data: bytes) -> tuple[str, bool]:
    return data[:CELL_SHOWN_BYTES].decode("utf-8", "replace"), len(data) > CELL_SHOWN_BYTES


def verdict_cell(suite: TestSuite, solution: Solution, ordinal: int) -> CellDetail:
    """One cell of the matrix opened: the test's bodies, the program's output when it failed,
    and a line-by-line comparison (line number, expected, actual, differs); for an interactive
    test, what the program and the interactor said instead of the comparison."""
    from problems.blobs import blob_get

    test = suite.tests.get(ordinal=ordinal)
    verdict = Verdict.objects.filter(suite=suite, solution=solution).first()
    result = None
    for r in (verdict.results if verdict else []) or []:
        if isinstance(r, dict) and r.get("ordinal") == ordinal:
            result = r
    input_text, in_cut = _shown(blob_get(test.input_sha256))
    expected_text, out_cut = _shown(blob_get(test.output_sha256))
    actual_text = None
    actual_cut = False
    if result and result.get("output_sha256"):
        actual_text, actual_cut = _shown(blob_get(result["output_sha256"]))
    elif result and result.get("verdict") == "AC":
        actual_text = expected_text
    interaction_text = None
    interaction_cut = False
    if result and result.get("interaction_sha256"):
        interaction_text, interaction_cut = _shown(blob_get(result["interaction_sha256"]))
    diff: list[tuple[int, str, str, bool]] = []
    if actual_text is not None and interaction_text is None:
        exp_lines, act_lines = expected_text.splitlines(), actual_text.splitlines()
        for i in range(min(DIFF_LINES, max(len(exp_lines), len(act_lines)))):
            e = exp_lines[i] if i < len(exp_lines) else ""
            a = act_lines[i] if i < len(act_lines) else ""
            missing = i >= len(exp_lines) or i >= len(act_lines)
            diff.append((i + 1, e, a, missing or e.split() != a.split()))
    expected = gold_expectation(solution)
    return CellDetail(
        solution=solution, test=test, result=result, verdict=verdict, input_text=input_text,
        expected_text=expected_text, actual_text=actual_text,
        truncated=in_cut or out_cut or actual_cut or interaction_cut, diff=diff,
        contradicts=bool(result and expected is True and result.get("verdict") != "AC"),
        interaction_text=interaction_text,
    )


def matrix_pending(suite: TestSuite) -> int:
    return JudgingTask.objects.filter(
        suite=suite, status__in=[JudgingTask.Status.QUEUED, JudgingTask.Status.RUNNING]
    ).count()
