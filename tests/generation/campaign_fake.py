"""A loopback OpenAI-compatible server for campaigns, shared by the campaign tests and bench/campaign.py.

Unlike the scripted fake of conftest (one queue of replies in order), many runs talk to it at
once, so it answers by what is asked: an inputs prompt (it names `LLMGen_input`) gets an
inputs reply, anything else a validator reply. Each problem's statement carries a marker
`[campaign-problem PID]`, so the server can tell who asked what and when. It can wait
`latency_s` per call and refuse a share of calls with 429 (or 503), and it measures the
calls in flight over time.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKER = re.compile(r"\[campaign-problem ([^\]]+)\]")

VALIDATOR = '''
def validate_input(input_str):
    lines = input_str.split("\\n")
    return len(lines) == 2 and lines[1] == "" and lines[0].isdigit() and int(lines[0]) <= 10**6
'''


def validator_reply() -> str:
    obj = {"input_validator": VALIDATOR, "needs_custom_output_judging_function": False,
           "output_judging_function": None}
    return "One integer 0 <= n <= 10^6 on a line; the answer is unique.\n\n```json\n" + json.dumps(obj) + "\n```\n"


def inputs_reply() -> str:
    obj = {"LLMGen_input": ["1\n", "2\n", "1000000\n"], "RPGen_SPGen_input_generator": None,
           "HackGen_input_generator": None}
    return "Small and large values suffice.\n\n```json\n" + json.dumps(obj) + "\n```"


ORACLES = [("python3", "print(2 * int(input()))\n"),
           ("python3", "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()) * 2)\n")]


@dataclass
class CampaignLLM:
    url: str = ""
    latency_s: float = 0.0
    refuse_share: float = 0.0
    refuse_status: int = 429
    seed: int = 1
    # (pid, kind, status, monotonic time answered)
    log: list[tuple[str, str, int, float]] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    _busy_area: float = 0.0
    _since: float = field(default_factory=time.monotonic)
    _changed: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _rng: random.Random = field(default_factory=random.Random)
    # Once this many problems have both their replies (a kit each can be saved), every further
    # request waits until release(): a campaign held half through its LLM stage, whatever the
    # machine's speed (0: never).
    hold_after_kits: int = 0
    _released: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self._released.set()

    def _holding(self) -> bool:
        if not self.hold_after_kits or self._released.is_set():
            return False
        with self._lock:
            kinds: dict[str, set[str]] = {}
            for pid, kind, status, _ in self.log:
                if status == 200:
                    kinds.setdefault(pid, set()).add(kind)
        return sum(1 for k in kinds.values() if k == {"validator", "inputs"}) >= self.hold_after_kits

    def _enter(self, delta: int) -> None:
        with self._lock:
            now = time.monotonic()
            self._busy_area += self.in_flight * (now - self._changed)
            self._changed = now
            self.in_flight += delta
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def mean_in_flight(self, since: float | None = None) -> float:
        with self._lock:
            now = time.monotonic()
            area = self._busy_area + self.in_flight * (now - self._changed)
            return area / max(1e-9, now - self._since)

    def reset_meter(self) -> None:
        with self._lock:
            self._busy_area, self._since, self._changed = 0.0, time.monotonic(), time.monotonic()

    def answered(self, pid: str, kind: str) -> list[float]:
        return [t for p, k, s, t in self.log if p == pid and k == kind and s == 200]

    def answer(self, body: dict[str, Any]) -> tuple[int, str]:
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        found = MARKER.search(text)
        pid = found.group(1) if found else "?"
        kind = "inputs" if "LLMGen_input" in text else "validator"
        if self._holding():
            self._released.wait(timeout=600)
        self._enter(1)
        try:
            if self.latency_s:
                # Spread like a real endpoint: between half and one and a half times the mean.
                time.sleep(self.latency_s * (0.5 + self._rng.random()))
            with self._lock:
                refused = self._rng.random() < self.refuse_share
            status = self.refuse_status if refused else 200
            with self._lock:
                self.log.append((pid, kind, status, time.monotonic()))
        finally:
            self._enter(-1)
        return status, (validator_reply() if kind == "validator" else inputs_reply())


def _completion(text: str, model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-campaign", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": len(text) // 4,
                      "total_tokens": 1000 + len(text) // 4}}


def start_campaign_llm(**options: Any) -> tuple[CampaignLLM, ThreadingHTTPServer]:
    fake = CampaignLLM(**options)
    fake._rng.seed(fake.seed)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            status, text = fake.answer(body)
            if status == 200:
                payload = _completion(text, body.get("model", "fake"))
            else:
                payload = {"error": {"message": f"injected {status}", "type": "rate_limit_error"}}
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 256
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return fake, server


def make_campaign_problems(count: int, *, source: str = "campaign", start: int = 0) -> list[int]:
    """`count` synthetic problems (double an integer), each with two trivial oracles; returns their ids."""
    from problems.models import Problem, Solution
    from problems.services import code_sha256

    problems = Problem.objects.bulk_create([
        Problem(source=source, pid=f"c{i:06d}", title=f"Double {i}", time_limit_ms=1000, memory_limit_mb=256,
                statement=f"[campaign-problem c{i:06d}] Print $2n$ for $0 \\le n \\le 10^6$.",
                samples=[{"input": "3\n", "output": "6\n"}])
        for i in range(start, start + count)
    ], batch_size=500)
    ids = list(Problem.objects.filter(source=source, pid__in=[p.pid for p in problems]).values_list("pk", flat=True))
    Solution.objects.bulk_create([
        Solution(problem_id=pk, role=Solution.Role.ORACLE, language=lang, code=code, reliability=rank,
                 code_sha256=code_sha256(code),
                 name=f"oracle{rank}", gold_verdict=Solution.GoldVerdict.AC)
        for pk in ids for rank, (lang, code) in enumerate(ORACLES, 1)
    ], batch_size=500)
    return ids
