"""When the sandbox cannot run programs, every client sees an error, never a reward of 0.

The worker here is real but its sandbox cannot start, like a machine that lost bubblewrap."""

from __future__ import annotations

import pytest
import requests

from hardtests_client import HardTestsClient, InfrastructureError, VerifyRequest
from tests.ecosystem.conftest import ACCEPTED, fenced

sandbox_fusion = pytest.importorskip("sandbox_fusion")
from sandbox_fusion import RunCodeRequest, SubmitRequest, TestConfig, run_code, submit, submit_safe  # noqa: E402

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def endpoint(live_server, token, url_tokens) -> str:
    return f"{live_server.url}/sandboxfusion/t/{token}"


def test_sandbox_failure_is_an_error_for_every_client(endpoint, live_server, token, ab_problem,
                                                      broken_sandbox_worker, verl_sandbox_fusion):
    with pytest.raises(Exception, match="503"):
        run_code(RunCodeRequest(code=ACCEPTED, language="python", stdin="1 2"), endpoint=endpoint, max_attempts=1)
    raw = requests.post(f"{endpoint}/run_code", json={"code": "print(1)", "language": "python"}, timeout=60)
    assert raw.status_code == 503 and raw.json()["status"] == "SandboxError"
    assert "sandbox" in raw.json()["message"]

    request = SubmitRequest(dataset="hardtests", id="ab/sum", completion=fenced(ACCEPTED), config=TestConfig())
    with pytest.raises(Exception, match="503"):
        submit(request, endpoint=endpoint, max_attempts=1)
    # (the client's own submit_safe turns that error into "rejected": its choice, documented)
    assert submit_safe(request, endpoint=endpoint, max_attempts=1).accepted is False

    reward = requests.post(f"{live_server.url}/api/v1/openrlhf/t/{token}/reward", timeout=60,
                           json={"query": [fenced(ACCEPTED)], "prompts": [""], "labels": ["ab/sum"]})
    assert reward.status_code == 503 and "rewards" not in reward.json()

    with HardTestsClient(live_server.url, token, max_retries=1, backoff_s=0.01) as client:
        with pytest.raises(InfrastructureError):
            client.verify_many([VerifyRequest("ab/sum", ACCEPTED)])
        with pytest.raises(InfrastructureError):
            client.score_completions(["ab/sum"], [fenced(ACCEPTED)])

    # verl's built-in reward scores every failed request 0.0 (its design); its metadata tells
    # an API error apart from a wrong answer, which is all a server can do for it.
    cases = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    _, meta = verl_sandbox_fusion.compute_score(f"{endpoint}/run_code", None, 256, fenced(ACCEPTED), cases)
    assert [m["status"] for m in meta] == ["api_error"]


def test_a_reward_batch_the_workers_cannot_judge_is_503_saying_why(live_server, token, url_tokens, ab_problem,
                                                                   broken_sandbox_worker):
    # The worker answered (it could not judge): that is a sandbox error with its reason, which
    # an operator acts on, not "did not finish in time", which says to wait and retry.
    reward = requests.post(f"{live_server.url}/api/v1/openrlhf/t/{token}/reward", timeout=60,
                           json={"query": ["x" + fenced(ACCEPTED), fenced(ACCEPTED)], "prompts": ["x", ""],
                                 "labels": ["ab/sum", "ab/sum"]})
    assert reward.status_code == 503 and "rewards" not in reward.json()
    body = reward.json()
    assert body["code"] == "sandbox_error", body
    assert body["detail"].startswith("query[0]: judging failed on the sandbox side: judging failed on the worker")
    assert "unknown sandbox backend 'missing-backend'" in body["detail"]
