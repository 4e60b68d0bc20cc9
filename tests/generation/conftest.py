"""Fixtures for the generation tests: a loopback OpenAI-compatible server and a small problem.

The LLM is the only thing faked: `fake_llm` serves /v1/chat/completions on 127.0.0.1 with
scripted replies in the documented format, and settings point the openai SDK at it. The
sandbox, the database and (where a test is about the queue) Redis and RQ are real.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from problems.models import Problem, Solution
from problems.services import solution_upsert

# -- the fake LLM -------------------------------------------------------------


@dataclass
class Scripted:
    """One scripted answer: a reply text, or an HTTP error status, optionally after a delay."""

    reply: str | None = None
    status: int = 200
    delay_s: float = 0.0
    finish_reason: str = "stop"
    reasoning_tokens: int | None = None


@dataclass
class FakeLLM:
    url: str
    script: deque[Scripted] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, *texts: str) -> FakeLLM:
        self.script.extend(Scripted(reply=t) for t in texts)
        return self

    def error(self, status: int, times: int = 1) -> FakeLLM:
        self.script.extend(Scripted(status=status) for _ in range(times))
        return self

    def truncated(self, text: str) -> FakeLLM:
        """A reply cut off at the completion budget (finish_reason "length")."""
        self.script.append(Scripted(reply=text, finish_reason="length"))
        return self

    def reasoning(self, text: str, tokens: int) -> FakeLLM:
        self.script.append(Scripted(reply=text, reasoning_tokens=tokens))
        return self

    def slow(self, delay_s: float, text: str = "", times: int = 1) -> FakeLLM:
        self.script.extend(Scripted(reply=text, delay_s=delay_s) for _ in range(times))
        return self


def _completion(item: Scripted, model: str) -> dict[str, Any]:
    text = item.reply or ""
    usage: dict[str, Any] = {"prompt_tokens": 100 + len(text) // 10, "completion_tokens": len(text) // 4,
                             "total_tokens": 100 + len(text) // 10 + len(text) // 4}
    if item.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": item.reasoning_tokens}
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "finish_reason": item.finish_reason,
                     "message": {"role": "assistant", "content": text}}],
        "usage": usage,
    }


def start_fake_llm() -> tuple[FakeLLM, ThreadingHTTPServer]:
    state: dict[str, FakeLLM] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                if status != 200:
                    # The SDK's backoff honours this, so retried errors cost tests 10 ms, not seconds.
                    self.send_header("retry-after-ms", "10")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and went away: that is the point of a slow reply

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            fake = state["fake"]
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": "not found"}})
                return
            fake.requests.append(body)
            item = fake.script.popleft() if fake.script else Scripted(status=500)
            if item.delay_s:
                time.sleep(item.delay_s)
            if item.status != 200:
                self._send(item.status, {"error": {"message": f"scripted {item.status}", "type": "server_error"}})
                return
            self._send(200, _completion(item, body.get("model", "fake")))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake = FakeLLM(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    state["fake"] = fake
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return fake, server


@pytest.fixture
def fake_llm(settings: Any) -> Iterator[FakeLLM]:
    fake, server = start_fake_llm()
    settings.OPENAI_BASE_URL = fake.url
    settings.OPENAI_API_KEY = "test-key"
    settings.HARDTESTS_LLM_MODEL = "fake-model"
    settings.HARDTESTS_LLM_TIMEOUT_S = 5.0
    settings.HARDTESTS_LLM_MAX_RETRIES = 2
    settings.HARDTESTS_LLM_REPLY_RETRIES = 1
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def small_counts(settings: Any) -> None:
    """Fewer generator calls: most tests are about behaviour, not the paper's counts."""
    settings.HARDTESTS_REGULAR_CALLS = 4
    settings.HARDTESTS_STRATIFIED_CALLS = 3
    settings.HARDTESTS_HACKING_CALLS = 3
    settings.HARDTESTS_GENERATOR_TIME_S = 2.0
    settings.HARDTESTS_CHECKER_TIME_S = 5.0


# -- replies in the documented format -------------------------------------------

VALIDATOR = '''
def validate_input(input_str):
    if not input_str.endswith("\\n"):
        return False
    parts = input_str[:-1].split(" ")
    if len(parts) != 2:
        return False
    for p in parts:
        if not p.isdigit() or (p != "0" and p[0] == "0") or int(p) > 10**9:
            return False
    return True
'''

REGULAR = '''
import random


def gen_range_based_input():
    return f"{random.randint(0, 10**9)} {random.randint(0, 10**9)}\\n"
'''

HACKING = '''
import random


def gen_hacking_input_big():
    return f"{10**9 - random.randint(0, 5)} {10**9 - random.randint(0, 5)}\\n"


def gen_hacking_input_zeros():
    return "0 0\\n"
'''

DIRECT = ["1 2\n", "0 0\n", "1000000000 1000000000\n", "7 8\n", "1 2\n", "-1 5\n", "3 4 5\n"]


def validator_reply(code: str = VALIDATOR, *, needs: bool = False, judge: str | None = None,
                    style: str = "fence") -> str:
    obj = {"input_validator": code, "needs_custom_output_judging_function": needs, "output_judging_function": judge}
    reasoning = "Constraints: two integers 0 <= a, b <= 1e9 on one line. The answer is unique.\n\n"
    if style == "heading":
        return reasoning + "# Result\n" + json.dumps(obj)
    return reasoning + "```json\n" + json.dumps(obj, indent=1) + "\n```\n"


def inputs_reply(direct: list[str] | None = None, regular: str | None = REGULAR, hacking: str | None = HACKING) -> str:
    obj = {"LLMGen_input": DIRECT if direct is None else direct, "RPGen_SPGen_input_generator": regular,
           "HackGen_input_generator": hacking}
    return ("Wrong approaches: 32-bit overflow on large values.\nA regular generator suffices.\n\n"
            "```json\n" + json.dumps(obj) + "\n```")


# -- a small problem with three oracles -------------------------------------------

ORACLE_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
ORACLE_CPP = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n"
ORACLE_PY_ALT = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"


def make_problem(pid: str = "test/sum", oracles: list[tuple[str, str]] | None = None) -> Problem:
    problem = Problem.objects.create(
        source="test", pid=pid, title="A plus B", statement="Print $a+b$ for $0 \\le a, b \\le 10^9$.",
        time_limit_ms=1000, memory_limit_mb=256, samples=[{"input": "1 2\n", "output": "3\n"}],
    )
    oracles = oracles if oracles is not None else [("python3", ORACLE_PY), ("cpp", ORACLE_CPP),
                                                   ("python3", ORACLE_PY_ALT)]
    for rank, (language, code) in enumerate(oracles, 1):
        solution_upsert(problem=problem, role=Solution.Role.ORACLE, language=language, code=code,
                        reliability=rank, name=f"oracle{rank}", gold_verdict=Solution.GoldVerdict.AC)
    return problem
