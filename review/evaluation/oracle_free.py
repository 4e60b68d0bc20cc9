"""HardTests' Table 8 on our data: oracle-free suites measured like the paper, beside the oracle-based one.

For each problem that has an active oracle-based suite (generated, else official, else imported)
and candidates with a gold verdict, the oracles are hidden (the oracle-free builders never read
a Solution; the prompts carry only the statement, limits and samples) and a suite is built each
way (AceCoder's baseline, HardTests A.7) with the configured LLM. The suites are kept in memory,
never saved or activated (nor their kits): the evaluation changes nothing a verifier uses. Each
candidate is judged against each suite with the same judging function verification uses, and the
rows report, over the problems each method covered, the false-positive rate (wrong programs
accepted), false-negative rate (right programs rejected), precision and recall.

LLM calls are recorded on a GenerationRun per problem and method (mode oracle_free or acecoder,
its log saying it was an evaluation), so their cost is auditable. The result is stored as an
EvaluationReport (params kind "oracle_free_table8"), shown on /evaluation/.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core import joblife
from generation.llm import LLMConfig
from generation.materialise.types import MaterialiseError, RunFailed
from generation.models import GenerationRun
from generation.oracle_free import build
from generation.recorder import RunRecorder
from generation.services import run_close_record, run_open_to_record
from problems.judging import (
    KIND_ORDER,
    LoadedSuite,
    LoadedTest,
    judge_code,
    output_judge_for,
    suite_for_judging,
)
from problems.models import SUPPORTED_LANGUAGES, Problem, Solution, TestSuite
from problems.services import NewTest
from problems.verify_types import Mode
from review.evaluation.metrics import Confusion, classifier_metrics
from review.models import EvaluationReport
from review.models.evaluation import EVALUATION_REPORT
from sandbox import Sandbox, get_sandbox

log = logging.getLogger(__name__)

KIND = "oracle_free_table8"
ORACLE_BASED = ("generated", "official", "imported")
METHODS = (("acecoder", GenerationRun.Mode.ACECODER, "AceCoder (model-written pairs)"),
           ("hardtests_a7", GenerationRun.Mode.ORACLE_FREE, "HardTestGen, oracle-free (A.7)"))
# HardTests' Table 8 (165 AtCoder problems x 50 solutions), for the reader's comparison.
PAPER = {"acecoder": {"fpr": 0.3249, "fnr": 0.0259}, "hardtests_a7": {"fpr": 0.1767, "fnr": 0.0219}}
CONSISTENCY_NOTE = ("Consistency check on the bundled demo: its kits, oracles and candidates are ours, and the "
                    "stand-in LLM replays them (oracles as brute force, kit inputs as edge inputs); these figures "
                    "check the machinery, they are not a measurement of any model.")


@dataclass
class Pair:
    gold_ac: bool
    accepted: bool


def _oracle_suite(problem: Problem) -> TestSuite | None:
    for origin in ORACLE_BASED:
        suite = suite_for_judging(problem, origin)
        if suite is not None:
            return suite
    return None


def _candidates(problem: Problem) -> list[Solution]:
    return [s for s in problem.solutions.filter(role=Solution.Role.CANDIDATE, language__in=SUPPORTED_LANGUAGES)
            .exclude(gold_verdict=Solution.GoldVerdict.UNKNOWN).order_by("id")]


def _loaded(problem: Problem, tests: list[NewTest], judge: str | None) -> LoadedSuite:
    def as_bytes(x: str | bytes) -> bytes:
        return x.encode("utf-8") if isinstance(x, str) else x

    loaded = [LoadedTest(i, t.kind, as_bytes(t.input), as_bytes(t.output)) for i, t in enumerate(tests)]
    loaded.sort(key=lambda t: (KIND_ORDER.get(t.kind, 9), t.ordinal))
    return LoadedSuite(loaded, judge, sum(len(t.input) + len(t.output) for t in loaded), problem.comparison)


def _judge_all(sb: Sandbox, problem: Problem, suite: TestSuite, candidates: list[Solution],
               loaded: LoadedSuite | None = None) -> list[Pair]:
    pairs = []
    for cand in candidates:
        result = judge_code(problem=problem, suite=suite, language=cand.language, code=cand.code, mode=Mode.FAIL_FAST,
                            sandbox=sb, loaded=loaded)
        if result.verdict == "SE":
            raise RuntimeError(f"sandbox error judging {cand} of {problem.pid}: {result.message[:300]}")
        pairs.append(Pair(cand.gold_verdict == Solution.GoldVerdict.AC, result.verdict == "AC"))
    return pairs


def _build(problem: Problem, mode: str, model: str | None, sb: Sandbox,
           llm: LLMConfig) -> tuple[Any, GenerationRun | None, str]:
    """(Built or None, the run that recorded the LLM calls, failure reason or "")."""
    run = run_open_to_record(problem=problem, mode=mode, model_name=model or llm.model,
                             note="Table 8 evaluation (oracles hidden): the suite is built in memory and never saved")
    if run is None:
        return None, None, "open_run"  # the problem has a run of its own going; not raced
    rec = RunRecorder(run, llm=llm)
    rec.start_heartbeat()
    reason, built = "", None
    try:
        built = build(run, rec, sb, persist=False)
    except (RunFailed, MaterialiseError) as exc:
        reason = exc.reason
        rec.log(f"failed ({reason}): {str(exc).splitlines()[0][:500]}")
    finally:
        rec.stop_heartbeat()
    run_close_record(run_id=run.pk, rec=rec, reason=reason)
    return built, run, reason


def _row(key: str, label: str, pairs: list[Pair], covered: int, total: int) -> dict[str, Any]:
    confusion = Confusion.of((p.gold_ac, p.accepted) for p in pairs)
    m = classifier_metrics(confusion)
    fpr = None if m["tnr"] is None else 1 - m["tnr"]
    fnr = None if m["recall"] is None else 1 - m["recall"]
    return {"key": key, "method": label, "problems": covered, "of": total, "programs": m["n"],
            "fpr": fpr, "fnr": fnr, "precision": m["precision"], "recall": m["recall"],
            "tp": m["tp"], "fp": m["fp"], "tn": m["tn"], "fn": m["fn"], "paper": PAPER.get(key)}


def oracle_free_table8(*, problems: QuerySet[Problem], model_name: str | None = None,
                       consistency_check: bool = False, dataset: str = "",
                       progress: Callable[[str], None] | None = None,
                       llm: LLMConfig | None = None) -> dict[str, Any]:
    """The Table 8 report (a dict; see the module docstring), its LLM calls sent to `llm`
    (None: the settings' endpoint). Raises RuntimeError on a sandbox error."""
    say = progress or (lambda _: None)
    llm = llm or LLMConfig.from_settings()
    sb = get_sandbox()
    rows: dict[str, list[Pair]] = {"oracle_based": []}
    covered: dict[str, int] = {key: 0 for key, _, _ in METHODS}
    reasons: dict[str, dict[str, int]] = {key: {} for key, _, _ in METHODS}
    per_problem: list[dict[str, Any]] = []
    runs: list[int] = []
    for key, _, _ in METHODS:
        rows[key] = []
    eligible = 0
    for problem in problems.order_by("source", "pid"):
        oracle_suite = _oracle_suite(problem)
        candidates = _candidates(problem)
        if oracle_suite is None or not candidates:
            continue
        eligible += 1
        say(f"{problem.source}:{problem.pid}: {len(candidates)} candidates")
        base = _judge_all(sb, problem, oracle_suite, candidates)
        rows["oracle_based"] += base
        entry: dict[str, Any] = {"problem": f"{problem.source}:{problem.pid}", "candidates": len(candidates),
                                 "oracle_suite": {"origin": oracle_suite.origin, "version": oracle_suite.version,
                                                  "tests": oracle_suite.test_count,
                                                  "accepted": sum(p.accepted for p in base)}}
        for key, mode, _ in METHODS:
            built, run, reason = _build(problem, mode, model_name, sb, llm)
            if run is not None:
                runs.append(run.pk)
            if built is None:
                reasons[key][reason] = reasons[key].get(reason, 0) + 1
                entry[key] = {"suite": None, "reason": reason, "run": run.pk if run else None}
                continue
            judge = (built.kit.output_judge.code if built.kit and built.kit.output_judge
                     else built.judge_code)
            if judge is None:
                kit_judge = output_judge_for(oracle_suite) if built.kit is None else None
                judge = kit_judge.code if kit_judge else None
            stand_in = TestSuite(problem=problem, version=0, origin=TestSuite.Origin.ORACLE_FREE)
            pairs = _judge_all(sb, problem, stand_in, candidates, _loaded(problem, built.tests, judge))
            rows[key] += pairs
            covered[key] += 1
            entry[key] = {"suite": {"tests": len(built.tests), "trust": built.trust}, "run": run.pk if run else None,
                          "accepted": sum(p.accepted for p in pairs),
                          "wrong_accepted": sum(p.accepted and not p.gold_ac for p in pairs),
                          "right_rejected": sum(p.gold_ac and not p.accepted for p in pairs)}
        per_problem.append(entry)
    table = [_row(key, label, rows[key], covered[key], eligible) for key, _, label in METHODS]
    table.append(_row("oracle_based", "HardTestGen, oracle-based (our active suites)", rows["oracle_based"],
                      eligible, eligible))
    return {"kind": KIND, "dataset": dataset, "consistency_check": consistency_check,
            "note": CONSISTENCY_NOTE if consistency_check else "",
            "model": model_name or llm.model, "problems": eligible, "rows": table,
            "failures": reasons, "per_problem": per_problem, "runs": runs,
            "created_at": timezone.now().isoformat(timespec="seconds")}


def table8_store(*, report: dict[str, Any], params: dict[str, Any], user: Any = None) -> EvaluationReport:
    with transaction.atomic():
        return cast(EvaluationReport, joblife.record_done(
            EVALUATION_REPORT, params={**params, "kind": KIND}, report=report,
            created_by=user if getattr(user, "is_authenticated", False) else None))


def table8_latest() -> EvaluationReport | None:
    return EvaluationReport.objects.filter(status=EvaluationReport.Status.DONE, params__kind=KIND).first()


def _pct(value: float | None) -> str:
    return "undefined" if value is None else f"{100 * value:.2f}"


def table8_display(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows with percentages as text, for the evaluation page."""
    out = []
    for row in report.get("rows", []):
        paper = row.get("paper")
        out.append({**row, "fpr_pct": _pct(row["fpr"]), "fnr_pct": _pct(row["fnr"]),
                    "precision_pct": _pct(row["precision"]), "recall_pct": _pct(row["recall"]),
                    "paper_text": f"{100 * paper['fpr']:.2f} / {100 * paper['fnr']:.2f}" if paper else "—"})
    return out


def table8_text(report: dict[str, Any]) -> str:
    """The table as the paper lays it out: method, FPR, FNR (percent), then precision and recall."""
    lines = []
    if report.get("note"):
        lines.append(report["note"])
    lines.append(f"{'Method':<48} {'problems':>9} {'programs':>9} {'FPR %':>8} {'FNR %':>8} {'Prec %':>8} "
                 f"{'Rec %':>8}   paper FPR / FNR %")
    for row in report["rows"]:
        paper = row.get("paper")
        cite = f"{100 * paper['fpr']:.2f} / {100 * paper['fnr']:.2f}" if paper else "-"
        lines.append(f"{row['method']:<48} {row['problems']:>4}/{row['of']:<4} {row['programs']:>9} "
                     f"{_pct(row['fpr']):>8} {_pct(row['fnr']):>8} {_pct(row['precision']):>8} "
                     f"{_pct(row['recall']):>8}   {cite}")
    for key, counts in report.get("failures", {}).items():
        if counts:
            lines.append(f"{key}: no suite for " + ", ".join(f"{n} problem(s) ({r})" for r, n in sorted(counts.items())))
    return "\n".join(lines)
