"""`oracle_free_table8 [--demo] [--pids ... | --filter ...] [--model NAME] [--out report.json] [--json]`.

HardTests' Table 8 on our data: hides the oracles of problems that have an oracle-based suite
and candidates with gold verdicts, builds oracle-free suites both ways (AceCoder's baseline,
HardTests A.7) with the configured LLM (OPENAI_BASE_URL / OPENAI_API_KEY, --model), judges the
candidates against them and against the oracle-based suite, and prints FPR / FNR / precision /
recall per method. The report is stored (shown on /evaluation/) and, with --out, written as JSON.

--demo runs on the bundled demo problems with a stand-in LLM that replays the demo's own data:
a consistency check of the machinery (the demo's kits and candidates are ours), not a
measurement of a model. See docs/oracle-free.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from generation.llm import llm_configured
from problems.demo import DEMO_SOURCE
from problems.models import Problem
from review.evaluation.oracle_free import oracle_free_table8, table8_store, table8_text
from review.evaluation.oracle_free_standin import standin_llm
from review.evaluation.selectors import EvaluationInputError, evaluation_problems


class Command(BaseCommand):
    help = "HardTests Table 8: oracle-free suites (AceCoder, A.7) vs the oracle-based suite, as FPR/FNR."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--demo", action="store_true",
                            help="the bundled demo (or the --pids of it) with a stand-in LLM: a consistency check; "
                                 "no model is called")
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--pids", nargs="+", default=[], help="problem pids")
        which.add_argument("--filter", default="", help="key=value[,key=value]: source, platform, pid (glob), tag, ...")
        parser.add_argument("--model", default=None, help="LLM model (default HARDTESTS_LLM_MODEL)")
        parser.add_argument("--out", default=None, help="also write the report to this .json file")
        parser.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")

    def handle(self, *args: Any, **options: Any) -> None:
        out = Path(options["out"]) if options["out"] else None
        if out is not None and (out.suffix.lower() != ".json" or not out.parent.is_dir()):
            raise CommandError(f"--out must name a .json file in an existing directory, not {out}")
        if options["model"] is not None and not options["model"].strip():
            raise CommandError("--model must not be empty")
        progress = (lambda line: None) if options["json"] else (lambda line: self.stderr.write(line))
        if options["demo"]:
            problems = Problem.objects.filter(source=DEMO_SOURCE)
            if options["pids"]:
                problems = problems.filter(pid__in=options["pids"])
            if options["filter"]:
                raise CommandError("--demo takes --pids, not --filter")
            if not problems.exists():
                raise CommandError("no demo problems: load them first (manage.py load_demo, or make run)")
            with standin_llm(list(problems)) as standin:
                if not standin.answerable:
                    raise CommandError("no demo problem has a Python oracle and a kit to replay")
                report = oracle_free_table8(problems=problems, consistency_check=True, dataset="demo",
                                            model_name="demo-standin", progress=progress, llm=standin.llm)
        else:
            if not (options["pids"] or options["filter"]):
                raise CommandError("name problems with --pids or --filter, or use --demo")
            if not llm_configured():
                raise CommandError("no LLM endpoint configured (set OPENAI_BASE_URL or OPENAI_API_KEY)")
            try:
                problems = evaluation_problems(pids=options["pids"], filter_expr=options["filter"])
            except EvaluationInputError as exc:
                raise CommandError(str(exc)) from exc
            report = oracle_free_table8(problems=problems, model_name=options["model"],
                                        dataset=options["filter"] or " ".join(options["pids"]), progress=progress)
        if not report["problems"]:
            raise CommandError("no selected problem has both an oracle-based suite and candidates with gold verdicts"
                               + (" (build the demo's suites first: manage.py demo_materialise)" if options["demo"]
                                  else ""))
        stored = table8_store(report=report, params={"pids": options["pids"], "filter": options["filter"],
                                                     "demo": options["demo"], "model": options["model"]})
        if out is not None:
            out.write_text(json.dumps(report, indent=1, default=str))
        if options["json"]:
            self.stdout.write(json.dumps(report, default=str))
        else:
            self.stdout.write(table8_text(report))
            self.stdout.write(f"stored as evaluation report #{stored.pk} (shown on /evaluation/)")
