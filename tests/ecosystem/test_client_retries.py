"""hardtests_client's retry and error rules, with the server's answers scripted at the HTTP
boundary (httpx's transport): which statuses are retried, how long it waits, what it raises."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest

from hardtests_client import (
    AsyncHardTestsClient,
    HardTestsClient,
    InfrastructureError,
    RateLimitedError,
    RequestRejected,
    VerifyRequest,
    extract_code,
)
from hardtests_client import core as client_core

RESULT = {"reward": 1, "verdict": "AC", "passed": 2, "total": 2, "pass_fraction": 1.0}


def _script(answers: list[httpx.Response], seen: list[httpx.Request]):
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    return handle


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The client's sleeps in this test's thread, recorded instead of slept. `time.sleep` is the
    process's: other threads left by earlier tests (an LLM lease renewer sleeping a second a
    round) keep sleeping for real, or they would spin and fill the list."""
    slept: list[float] = []
    test_thread = threading.current_thread()
    real_sleep = time.sleep

    def sleep(seconds: float) -> None:
        if threading.current_thread() is test_thread:
            slept.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(client_core.random, "uniform", lambda low, high: high)
    monkeypatch.setattr("hardtests_client.client.time.sleep", sleep)
    return slept


def _batch(status: str, items: list[dict], job: str = "j" * 32) -> dict:
    return {"job_id": job, "status": status, "done": len(items), "total": len(items), "items": items}


def test_429_and_503_are_retried_with_backoff_then_answered(waits):
    seen: list[httpx.Request] = []
    answers = [
        httpx.Response(429, json={"code": "rate_limited", "detail": "slow down"}, headers={"Retry-After": "7"}),
        httpx.Response(503, json={"code": "no_workers", "detail": "later"}),
        httpx.Response(202, json=_batch("pending", [{"index": 0, "status": "queued"}])),
        httpx.Response(200, json=_batch("finished", [{"index": 0, "status": "finished", "result": RESULT}])),
    ]
    client = HardTestsClient("http://hub", "tok", backoff_s=0.5, poll_interval_s=0.25,
                             transport=httpx.MockTransport(_script(answers, seen)))
    [result] = client.verify_many([VerifyRequest("ab/sum", "print(1)")])
    assert (result.reward, result.verdict) == (1, "AC")
    # Retry-After first, then exponential backoff (0.5 * 2**1), then the poll interval.
    assert waits == [7.0, 1.0, 0.25]
    assert [r.url.path for r in seen] == ["/api/v1/verify/batch"] * 3 + [f"/api/v1/jobs/{'j' * 32}"]
    assert seen[0].headers["Authorization"] == "Bearer tok"
    assert json.loads(seen[0].content)["items"][0]["problem"] == "ab/sum"


def test_infrastructure_failures_raise_and_client_mistakes_are_not_retried(waits):
    always_503 = [httpx.Response(503, json={"code": "timeout", "detail": "no answer"}) for _ in range(3)]
    client = HardTestsClient("http://hub", "tok", max_retries=2, transport=httpx.MockTransport(
        _script(always_503, [])))
    with pytest.raises(InfrastructureError) as failed:
        client.verify("ab/sum", "print(1)")
    assert failed.value.status == 503 and len(waits) == 2

    limited = [httpx.Response(429, json={"code": "rate_limited", "detail": "x"}) for _ in range(2)]
    with pytest.raises(RateLimitedError):
        HardTestsClient("http://hub", "tok", max_retries=1,
                        transport=httpx.MockTransport(_script(limited, []))).verify("ab/sum", "print(1)")

    seen: list[httpx.Request] = []
    bad = [httpx.Response(404, json={"code": "not_found", "detail": "no problem"})]
    with pytest.raises(RequestRejected):
        HardTestsClient("http://hub", "tok", transport=httpx.MockTransport(_script(bad, seen))).verify("x", "y")
    assert len(seen) == 1

    # A sandbox error and a failed batch item are errors, not reward 0.
    se = [httpx.Response(200, json={**RESULT, "reward": 0, "verdict": "SE", "message": "sandbox died"})]
    with pytest.raises(InfrastructureError, match="sandbox died"):
        HardTestsClient("http://hub", "tok", transport=httpx.MockTransport(_script(se, []))).verify("x", "y")
    item = [httpx.Response(200, json=_batch("finished", [{"index": 0, "status": "failed", "error": "worker lost"}]))]
    with pytest.raises(InfrastructureError, match="worker lost"):
        HardTestsClient("http://hub", "tok", item_retries=0, transport=httpx.MockTransport(
            _script(item, []))).verify_many([VerifyRequest("x", "y")])


def test_async_client_batches_and_leaves_out_completions_without_code():
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        items = json.loads(request.content)["items"]
        return httpx.Response(200, json=_batch("finished", [
            {"index": i, "status": "finished",
             "result": {**RESULT, "reward": int("+" in x["code"]), "verdict": "AC" if "+" in x["code"] else "WA"}}
            for i, x in enumerate(items)]))

    async def run() -> list[float]:
        async with AsyncHardTestsClient("http://hub", "tok", batch_size=2,
                                        transport=httpx.MockTransport(handle)) as client:
            return await client.score_completions(
                ["p"] * 4, ["```python\nprint(1+1)\n```", "no code here\n\n", "```cpp\nint main(){}\n```",
                            "```py\nprint(1+2)\n```"])

    # Prose without a fence is taken whole (heuristic) and judged: here WA.
    assert asyncio.run(run()) == [1.0, 0.0, 0.0, 1.0]
    assert sorted(len(json.loads(r.content)["items"]) for r in seen) == [2, 2]
    languages = [x["language"] for r in seen for x in json.loads(r.content)["items"]]
    assert sorted(languages) == ["cpp", "python3", "python3", "python3"]


def test_extract_code_rules():
    assert extract_code("```python\nA\n```\ntext\n```cpp\nB\n```").code == "B\n"
    assert extract_code("```python\nA\n```\n```cpp\nB\n```", language="python").code == "A\n"
    thought = extract_code("<think>```cpp\nwrong\n```</think>\n```java\nclass Main {}\n```")
    assert (thought.code, thought.language, thought.kind) == ("class Main {}\n", "java", "fenced")
    cut = extract_code("Answer:\n```c++\nint main() {\n")
    assert (cut.language, cut.kind) == ("cpp", "incomplete_fenced")
    assert extract_code("```python\n\n```").kind == "empty" and extract_code("   \n").kind == "empty"
    assert extract_code("```\nprint(1)\n```", default_language="python3").language == "python3"


def test_tokens_in_url_paths_are_redacted_from_request_logs(caplog):
    import logging

    with caplog.at_level(logging.WARNING, logger="django.request"):
        logging.getLogger("django.request").warning("Unauthorized: %s", "/sandboxfusion/t/htk_abc_SECRET/run_code")
    assert "SECRET" not in caplog.text and "/sandboxfusion/t/<redacted>/run_code" in caplog.text


def _answering(per_item: dict[str, list[dict]], seen: list[list[str]]):
    """A server that answers each program (its code) with the next of its scripted results, and
    records which programs each request carried."""

    def handle(request: httpx.Request) -> httpx.Response:
        items = json.loads(request.content)["items"]
        seen.append([x["code"].strip() for x in items])
        out = []
        for i, x in enumerate(items):
            script = per_item[x["code"].strip()]
            answer = script.pop(0) if len(script) > 1 else script[0]
            out.append({"index": i, **answer})
        return httpx.Response(200, json=_batch("finished", out))

    return handle


STARVED = {"status": "error", "error": "sandbox error on the worker: the wall-clock backstop stopped the program "
                                      "after 11.0 s ... the machine is overloaded; retry"}
SE_RESULT = {"status": "finished", "result": {**RESULT, "reward": 0, "verdict": "SE", "message": "overloaded"}}
AC = {"status": "finished", "result": RESULT}
WA = {"status": "finished", "result": {**RESULT, "reward": 0, "verdict": "WA", "passed": 0, "pass_fraction": 0.0}}


def test_items_the_server_could_not_judge_are_sent_again_alone(waits):
    seen: list[list[str]] = []
    client = HardTestsClient("http://hub", "tok", backoff_s=0.5, transport=httpx.MockTransport(_answering(
        {"good": [AC], "slow": [STARVED, SE_RESULT, WA], "bad": [WA]}, seen)))
    results = client.verify_many([VerifyRequest("p", "good"), VerifyRequest("p", "slow"), VerifyRequest("p", "bad")])
    assert [(r.reward, r.verdict) for r in results] == [(1, "AC"), (0, "WA"), (0, "WA")]
    # only the starved item went again, after backoff with (here maximal) jitter: 0.5, 1.0
    assert seen == [["good", "slow", "bad"], ["slow"], ["slow"]]
    assert waits == [0.5, 1.0]


def test_errors_return_keeps_the_good_items_and_raise_raises_after_the_retries(waits):
    def client() -> HardTestsClient:
        return HardTestsClient("http://hub", "tok", item_retries=2, transport=httpx.MockTransport(_answering(
            {"good": [AC], "slow": [STARVED], "bad": [WA]}, [])))

    requests = [VerifyRequest("p", "good"), VerifyRequest("p", "slow"), VerifyRequest("p", "bad")]
    good, failed, bad = client().verify_many(requests, errors="return")
    assert (good.reward, bad.reward) == (1, 0)
    assert isinstance(failed, InfrastructureError) and "overloaded" in str(failed)
    waits.clear()
    with pytest.raises(InfrastructureError, match="overloaded"):
        client().verify_many(requests)
    assert len(waits) == 2  # item_retries
    assert client().score_completions(["p"] * 3, ["```python\ngood", "```python\nslow", "```python\nbad"],
                                      errors="return") == [1.0, None, 0.0]
    with pytest.raises(ValueError, match="errors must be"):
        client().verify_many(requests, errors="ignore")


def test_async_client_sends_failed_items_again_and_returns_errors(monkeypatch):
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr("hardtests_client.client.asyncio.sleep", sleep)
    seen: list[list[str]] = []

    async def run(errors: str) -> list:
        async with AsyncHardTestsClient("http://hub", "tok", batch_size=2, item_retries=3,
                                        transport=httpx.MockTransport(_answering(
                                            {"a": [AC], "b": [STARVED, AC], "c": [SE_RESULT, SE_RESULT, WA],
                                             "d": [STARVED]}, seen))) as client:
            return await client.verify_many([VerifyRequest("p", x) for x in "abcd"], errors=errors)

    a, b, c, d = asyncio.run(run("return"))
    assert [a.verdict, b.verdict, c.verdict] == ["AC", "AC", "WA"]
    assert isinstance(d, InfrastructureError)
    assert sorted(map(tuple, seen)) == sorted([("a", "b"), ("c", "d"), ("b",), ("c", "d"), ("c", "d"), ("d",)])
    seen.clear()
    with pytest.raises(InfrastructureError):
        asyncio.run(run("raise"))


def test_every_client_of_a_process_shares_one_tls_context(monkeypatch) -> None:
    # httpx reads and parses the CA bundle for each client it builds (21 ms of CPU), and verl's
    # async reward builds a client per call: the clients share the process's one context
    import ssl

    from hardtests_client.client import tls_context

    made: list[object] = []
    real = ssl.create_default_context

    def counted(*args: object, **kwargs: object) -> ssl.SSLContext:
        made.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", counted)
    tls_context.cache_clear()

    async def async_clients() -> None:
        for _ in range(3):
            async with AsyncHardTestsClient("https://verifier.example", "t"):
                pass

    for _ in range(3):
        HardTestsClient("https://verifier.example", "t").close()
    asyncio.run(async_clients())
    assert len(made) == 1
    tls_context.cache_clear()
