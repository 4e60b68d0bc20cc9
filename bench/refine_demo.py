"""Bench: the refinement loop on the demo problems, scored on held-out candidates.

    .venv/bin/python bench/refine_demo.py [SLUG ...] [--min-candidates N]

No real LLM: a loopback OpenAI-compatible server (the tests' fake) replays each demo
problem's own kit. Call 1 gets its validator and judge, call 2 its direct inputs and
regular generators but NOT its hacking generators, and the refinement round (if the loop
asks for one) gets the hacking generators back. This is the demo's kit split in two, so
the figures show what the loop does with a suite missing its targeted tests, not what a
real model would write. Uses a throwaway HARDTESTS_VAR_DIR. Prints, per problem, each
round's TPR/TNR on tuning and held-out candidates, then `evaluate --split both` totals.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _pct(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:5.0%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slugs", nargs="*", help="demo folder names (default: all with a hacking generator)")
    parser.add_argument("--min-candidates", type=int, default=3,
                        help="HARDTESTS_SPLIT_MIN_CANDIDATES for the run (the demo has 3-5 candidates a problem)")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="hardtests-bench-")
    os.environ["HARDTESTS_VAR_DIR"] = scratch.name
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hardtests_web.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from generation.models import GenerationRun, RefinementRound
    from generation.pipeline import generation_run_execute
    from generation.services import generation_run_start
    from problems.demo import demo_load
    from review.evaluation.services import evaluation_report_create, evaluation_report_run, evaluation_select
    from tests.generation.conftest import start_fake_llm

    fake, server = start_fake_llm()
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY, settings.HARDTESTS_LLM_MODEL = fake.url, "bench", "replay"
    settings.HARDTESTS_CHECKER_REVIEW = False
    settings.HARDTESTS_SPLIT_MIN_CANDIDATES = args.min_candidates
    demo_load()
    from problems.models import Problem

    problems = [p for p in Problem.objects.filter(source="demo").order_by("pid")
                if (not args.slugs or p.pid.split("/", 1)[1] in args.slugs)]
    started = time.monotonic()
    for problem in problems:
        kit = problem.kits.order_by("-version").first()
        if kit is None or not kit.hacking_generator.strip():
            continue
        call1 = {"input_validator": kit.validator.code, "needs_custom_output_judging_function": kit.output_judge is not None,
                 "output_judging_function": kit.output_judge.code if kit.output_judge else None}
        call2 = {"LLMGen_input": kit.direct_inputs, "RPGen_SPGen_input_generator": kit.regular_generator or None,
                 "HackGen_input_generator": None}
        refine = {"HackGen_input_generator": kit.hacking_generator}
        fake.script.clear()
        fake.reply(*("```json\n" + json.dumps(obj) + "\n```" for obj in (call1, call2, refine)))
        run = generation_run_start(problem=problem, mode=GenerationRun.Mode.FROM_SCRATCH, enqueue=False)
        run = generation_run_execute(run_id=run.pk)
        print(f"{problem.pid:<28} run #{run.pk} {run.status}" + (f" ({run.failure_reason})" if run.failure_reason else ""))
        for r in RefinementRound.objects.filter(run=run):
            t, h = r.scores.get("tuning") or {}, r.scores.get("held_out") or {}
            print(f"    round {r.number}{'*' if r.chosen else ' '} {r.test_count:>4} tests  tuning TPR {_pct(t.get('tpr'))}"
                  f" TNR {_pct(t.get('tnr'))}  held-out TPR {_pct(h.get('tpr'))} TNR {_pct(h.get('tnr'))}")
    server.shutdown()
    row = evaluation_report_create(selection=evaluation_select(filter_expr="source=demo", origins=["generated"],
                                                               split="both"))
    report = evaluation_report_run(report_id=row.pk, sync=True).report
    print(f"\nsplit: {report['split']['note']} {report['split']['candidates']}")
    for side, by_origin in report["by_split"].items():
        m = by_origin.get("generated")
        if m:
            print(f"evaluate, active suites, {side:<9}: TPR {_pct(m['recall'])} TNR {_pct(m['tnr'])} "
                  f"(TP {m['tp']} FN {m['fn']} TN {m['tn']} FP {m['fp']})")
    for key, m in report["refinement"]["totals"].items():
        print(f"refinement {key:<16}: TPR {_pct(m['tpr'])} TNR {_pct(m['tnr'])} "
              f"(TP {m['tp']} FN {m['fn']} TN {m['tn']} FP {m['fp']})")
    print(f"{time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
