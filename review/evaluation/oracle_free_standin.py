"""A stand-in LLM for the Table 8 consistency check on the bundled demo (no model is called).

It serves /v1/chat/completions on 127.0.0.1, so the evaluation goes through the real client,
prompts, parsing and recording, and answers each oracle-free prompt from the demo's own data:
the Python oracle as brute force and a right Python candidate (gold AC, else gold TLE) as the
second brute force and the efficient solution (the oracle again where there is none, which the
run refuses as no independent check), the kit's
validator and judge, its direct inputs as edge inputs, its first hacking (else regular) generator
as the maximum-size input; for AceCoder, the oracle-based suite's small tests as the
"model-written" pairs and the oracle as the filtering solution. The demo's kits and candidates
are ours, so the figures only check that the machinery is consistent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from generation.llm import LLMConfig
from generation.parsing import hacking_functions, regular_functions
from problems.blobs import blob_pairs
from problems.judging import suite_for_judging
from problems.models import Problem, Solution

MAX_PAIR_CHARS = 2000


def _json_reply(obj: dict[str, Any]) -> str:
    return "Stand-in answer replayed from the demo's own data.\n```json\n" + json.dumps(obj) + "\n```"


def _replies(problem: Problem) -> dict[str, str] | None:
    oracle = problem.solutions.filter(role=Solution.Role.ORACLE, language="python3").order_by("reliability",
                                                                                              "id").first()
    kit = problem.kits.select_related("validator", "output_judge").order_by("-version").first()
    if oracle is None or kit is None or kit.validator is None:
        return None
    direct = [x for x in kit.direct_inputs or [] if isinstance(x, str)][:10]
    edges = "\n\n".join(f"def gen_edge_input_{i}():\n    return {text!r}\n" for i, text in enumerate(direct, 1))
    maximum = None
    if kit.hacking_generator.strip() and hacking_functions(kit.hacking_generator):
        maximum = kit.hacking_generator + f"\n\ndef gen_max_input():\n    return {hacking_functions(kit.hacking_generator)[0]}()\n"
    elif kit.regular_generator.strip() and regular_functions(kit.regular_generator):
        maximum = kit.regular_generator + f"\n\ndef gen_max_input():\n    return {regular_functions(kit.regular_generator)[0]}()\n"
    judge = kit.output_judge.code if kit.output_judge and kit.needs_output_judge else None
    # The cross-check must be another program (one that is the brute force again confirms nothing):
    # a Python candidate that is right (gold AC, else gold TLE: right and slow), else the oracle again,
    # which the run then refuses as no independent check (the report counts it as unconfirmed).
    other = next((c.code for gold in (Solution.GoldVerdict.AC, "TLE") for c in problem.solutions.filter(
        role=Solution.Role.CANDIDATE, language="python3", gold_verdict=gold).order_by("id")), oracle.code)
    a7 = {"brute_force_solution": oracle.code, "efficient_solution": other,
          "input_validator": kit.validator.code, "needs_custom_output_judging_function": judge is not None,
          "output_judging_function": judge, "edge_input_generator": edges or "def gen_edge_input_none():\n    return ''\n",
          "max_input_generator": maximum}
    pairs = []
    suite = suite_for_judging(problem, "generated") or suite_for_judging(problem, "official")
    if suite is not None:
        rows = list(suite.tests.order_by("ordinal").values_list("input_sha256", "output_sha256", "input_size"))
        small = [(i, o) for i, o, size in rows if size <= MAX_PAIR_CHARS][:20]
        pairs = [{"input": a.decode("utf-8", "replace"), "output": b.decode("utf-8", "replace")}
                 for a, b in blob_pairs(small)]
    return {"a7": _json_reply(a7), "brute": _json_reply({"brute_force_solution": other}),
            "pairs": _json_reply({"test_cases": pairs or [{"input": "", "output": ""}]}),
            "solution": _json_reply({"solution": oracle.code})}


def _kind(system: str) -> str:
    if "`edge_input_generator`" in system:
        return "a7"
    if "`test_cases`" in system:
        return "pairs"
    if "`brute_force_solution`" in system:
        return "brute"
    return "solution"


@dataclass(frozen=True)
class StandIn:
    answerable: int  # the problems it has replies for
    llm: LLMConfig  # its endpoint, for the evaluation's calls (nothing else is pointed at it)


@contextmanager
def standin_llm(problems: list[Problem], *, base: LLMConfig | None = None) -> Iterator[StandIn]:
    """Serve the stand-in for the duration; yields its endpoint as an LLMConfig (`base`, default
    the settings', with the stand-in's address, key and model) and how many problems it can answer."""
    table = {p.statement.strip(): r for p in problems if (r := _replies(p)) is not None}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            messages = body.get("messages") or [{}, {}]
            system, user = str(messages[0].get("content", "")), str(messages[-1].get("content", ""))
            found = next((r for statement, r in table.items() if statement and statement in user), None)
            text = found[_kind(system)] if found else "no stand-in answer for this problem"
            data = json.dumps({"id": "standin", "object": "chat.completion", "created": int(time.time()),
                               "model": body.get("model", "standin"),
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}],
                               "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    llm = replace(base or LLMConfig.from_settings(), base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                  api_key="standin", model="demo-standin", solution_model="")
    try:
        yield StandIn(len(table), llm)
    finally:
        server.shutdown()
        server.server_close()
