"""The LLM judge faked by a loopback OpenAI-compatible server whose reply is a function of the
request (model, code): the only fake; the sandbox, database, Redis and workers are real."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

Scorer = Callable[[str, str], str]  # (model, code) -> the reply text


def right_count(code: str) -> int:
    """How many of 0..9 a constructed program (tests/curation/helpers.py) answers right, read off its source."""
    listed = re.search(r"n in \[([^\]]*)\]", code)
    if listed:
        return len([x for x in listed.group(1).split(",") if x.strip()])
    return len(re.findall(r"n == \d+", code))


def reply(score: int | str, correct: bool = True) -> str:
    return (f"The solution reads n and prints 2n.\n\n```json\n"
            f"{json.dumps({'correct': correct, 'score': score, 'rationale': 'fake judge'})}\n```")


def default_scorer(model: str, code: str) -> str:
    if "UNREADABLE" in code:
        return "I cannot decide."
    if model == "judge-a":
        return reply(right_count(code), right_count(code) == 10)
    if model == "judge-b":
        return reply(min(10, right_count(code) + 2))
    # Any other model (the demo): a stable pseudo-score from the code.
    return reply(sum(code.encode()) % 11)


@dataclass
class FakeJudge:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    scorer: Scorer = default_scorer


def _code_of(body: dict[str, Any]) -> str:
    user = next((m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")
    blocks = re.findall(r"```[a-z0-9+]*\n(.*?)```", user, re.S)
    return blocks[-1] if blocks else ""


def start_fake_judge() -> tuple[FakeJudge, ThreadingHTTPServer]:
    state: dict[str, FakeJudge] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            fake = state["fake"]
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            fake.requests.append(body)
            text = fake.scorer(body.get("model", ""), _code_of(body))
            data = json.dumps({
                "id": "chatcmpl-judge", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    fake = FakeJudge(url=f"http://127.0.0.1:{server.server_address[1]}/v1")
    state["fake"] = fake
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return fake, server


@pytest.fixture
def fake_judge(settings: Any) -> Iterator[FakeJudge]:
    fake, server = start_fake_judge()
    settings.OPENAI_BASE_URL = fake.url
    settings.OPENAI_API_KEY = "test-key"
    settings.HARDTESTS_LLM_TIMEOUT_S = 10.0
    settings.HARDTESTS_LLM_MAX_RETRIES = 1
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
