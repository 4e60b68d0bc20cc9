"""OpenRLHF-shaped reward requests, our hardtests_client (sync and async) and its verl / OpenRLHF
reward functions, against a live server with a real worker and sandbox."""

from __future__ import annotations

import asyncio

import pytest
import requests

from hardtests_client import AsyncHardTestsClient, HardTestsClient, RequestRejected, VerifyRequest
from hardtests_client import verl as verl_reward
from tests.ecosystem.conftest import ACCEPTED, CPP_BROKEN, SLOW, WRONG, fenced

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PROMPT = "<|user|>Add two numbers.<|assistant|>"


def test_openrlhf_remote_reward(live_server, token, url_tokens, ab_problem, sandbox_worker):
    responses = [fenced(ACCEPTED), fenced(WRONG), fenced(SLOW), fenced(CPP_BROKEN, "cpp"), "no idea"]
    body = {"query": [PROMPT + r for r in responses], "prompts": [PROMPT] * 5, "labels": ["ab/sum"] * 5}
    # As OpenRLHF posts it: JSON, no Authorization header (the token is in the URL).
    response = requests.post(f"{live_server.url}/api/v1/openrlhf/t/{token}/reward", json=body, timeout=120)
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["rewards"] == [1.0, 0.0, 0.0, 0.0, 0.0] and data["scores"] == data["rewards"]
    assert data["extra_logs"]["pass_fraction"][0] == 1.0
    unknown = requests.post(f"{live_server.url}/api/v1/openrlhf/t/{token}/reward", timeout=30,
                            json={"query": ["x"], "prompts": [""], "labels": ["no/such"]})
    assert unknown.status_code == 404 and "labels[0]" in unknown.json()["detail"]


def test_client_batches_and_the_verl_and_openrlhf_functions(live_server, token, ab_problem, sandbox_worker,
                                                            monkeypatch):
    items = [VerifyRequest("ab/sum", code) for code in (ACCEPTED, WRONG, ACCEPTED)]
    with HardTestsClient(live_server.url, token, batch_size=2) as client:
        results = client.verify_many(items)  # two requests: 2 + 1
        assert [(r.reward, r.verdict) for r in results] == [(1, "AC"), (0, "WA"), (1, "AC")]
        assert client.verify("ab/sum", CPP_BROKEN, "cpp").verdict == "CE"
        with pytest.raises(RequestRejected) as rejected:
            client.verify("no/such", ACCEPTED)
        assert rejected.value.status == 404

    async def run_async() -> list[float]:
        async with AsyncHardTestsClient(live_server.url, token, batch_size=1) as client:
            return await client.score_completions(["ab/sum"] * 3, [fenced(ACCEPTED), fenced(WRONG), "prose only"])

    assert asyncio.run(run_async()) == [1.0, 0.0, 0.0]

    kwargs = {"base_url": live_server.url, "token": token}
    assert verl_reward.compute_score("hardtests_web", fenced(ACCEPTED), "ab/sum", None, **kwargs) == 1.0
    assert verl_reward.compute_score_batch(["hardtests_web"] * 2, [fenced(WRONG), fenced(ACCEPTED)],
                                           ["ab/sum", "test:ab/sum"], None, **kwargs) == [0.0, 1.0]
    assert asyncio.run(verl_reward.compute_score_async("hardtests_web", fenced(ACCEPTED, "python3"), "ab/sum",
                                                       **kwargs)) == 1.0

    from hardtests_client import openrlhf_reward_func

    monkeypatch.setenv("HARDTESTS_URL", live_server.url)
    monkeypatch.setenv("HARDTESTS_TOKEN", token)
    monkeypatch.setattr(openrlhf_reward_func, "_client", None)
    out = openrlhf_reward_func.reward_func([PROMPT + fenced(ACCEPTED), PROMPT + fenced(WRONG)], [PROMPT] * 2,
                                           ["ab/sum"] * 2)
    assert [float(x) for x in out["rewards"]] == [1.0, 0.0]


def test_openrlhf_rewards_with_every_end_token_and_line_end(live_server, token, url_tokens, ab_problem,
                                                            sandbox_worker, settings):
    from tests.ecosystem.test_extract import END_TOKENS

    # One worker judges every program here, on a shared machine: wait for it as OpenRLHF would.
    settings.HARDTESTS_API_SYNC_TIMEOUT_S = 600
    # As OpenRLHF decodes (skip_special_tokens=False): the template's start and end tokens
    # stay in the query; some tokenizers put a BOS before the prompt.
    prompt = "<|im_start|>user\nAdd two numbers.<|im_end|>\n<|im_start|>assistant\n"
    for name, end in END_TOKENS.items():
        queries, expected = [], []
        for nl in ("\n", "\r\n"):
            for code, reward in ((ACCEPTED, 1.0), (WRONG, 0.0)):
                queries.append("<s>" + prompt + f"Answer:\n```python\n{code}```{end}".replace("\n", nl))
                expected.append(reward)
        body = {"query": queries, "prompts": [prompt] * len(queries), "labels": ["ab/sum"] * len(queries)}
        response = requests.post(f"{live_server.url}/api/v1/openrlhf/t/{token}/reward", json=body, timeout=900)
        assert response.status_code == 200, (name, response.content)
        assert response.json()["rewards"] == expected, name


def test_openrlhf_reward_func_file_with_end_tokens(live_server, token, ab_problem, sandbox_worker, monkeypatch):
    from hardtests_client import openrlhf_reward_func

    monkeypatch.setenv("HARDTESTS_URL", live_server.url)
    monkeypatch.setenv("HARDTESTS_TOKEN", token)
    monkeypatch.setattr(openrlhf_reward_func, "_client", None)
    responses = [f"```python\r\n{ACCEPTED}```<|im_end|>".replace("\n", "\r\n"), f"```python\n{WRONG}```</s>",
                 f"```py\n{ACCEPTED}```<｜end▁of▁sentence｜>", "<think>\n```python\nprint(3)\n```"]
    out = openrlhf_reward_func.reward_func([PROMPT + r for r in responses], [PROMPT] * 4, ["ab/sum"] * 4)
    assert [float(x) for x in out["rewards"]] == [1.0, 0.0, 1.0, 0.0]
