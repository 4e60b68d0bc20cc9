"""verl's reward functions, loaded as verl loads them (get_custom_reward_fn over a file or a
pkg:// path, its kwargs wrappers), called as its reward managers call them, on rows of our
verl exports, against a live server with a real worker and sandbox.

- the built-in: verl.utils.reward_score.default_compute_score on the verl-sandbox-fusion
  export, with memory_limit_mb None and programs in C++ (verl sends every one as python);
- ours: hardtests_client/verl.py's compute_score, compute_score_async (reward loop) and
  compute_score_batch (legacy batch manager) on both exports.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from problems.exporters.verl import verl_export, verl_sandbox_fusion_export
from problems.models import Problem
from tests.conftest import REPO
from tests.ecosystem.conftest import ACCEPTED, WRONG, fenced

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CPP_ACCEPTED = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld%lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n"
CPP_WRONG = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld%lld\",&a,&b);printf(\"%lld\\n\",a+b+1);}\n"
# How a model ends: verl decodes with skip_special_tokens=True, so mostly plain; CRLF too.
CORRECT = [fenced(ACCEPTED), fenced(CPP_ACCEPTED, "cpp"), fenced(ACCEPTED).replace("\n", "\r\n"),
           fenced(CPP_ACCEPTED, "c++")]
PY_WRONG = "a, b = map(int, input().split())\nprint(a + b + 1)\n"
# Wrong on every test: verl's built-in gives partial credit to a program wrong on only some.
WRONG_ANSWERS = [fenced(PY_WRONG), fenced(CPP_WRONG, "cpp"), "I cannot solve this."]


class _Config(dict):
    """verl's config as get_custom_reward_fn reads it: ``config.get(...)`` (verl <= 0.6) or
    ``config.reward.get(...)`` (0.7 and later)."""

    @property
    def reward(self) -> _Config:
        return self


def _rows(folder: Path) -> list[dict[str, Any]]:
    return pq.read_table(folder / "train.parquet").to_pylist()


def _managers_call(fn: Any, row: dict[str, Any], completion: str) -> float:
    """The call every per-sample manager makes (naive, prime, dapo, and the reward loop's
    run_single: it awaits a coroutine function and runs a plain one in its executor)."""
    kwargs = {"data_source": row["data_source"], "solution_str": completion,
              "ground_truth": row["reward_model"]["ground_truth"], "extra_info": dict(row["extra_info"])}

    async def reward_loop() -> Any:
        if asyncio.iscoroutinefunction(fn) or asyncio.iscoroutinefunction(getattr(fn, "func", None)):
            return await fn(**kwargs)
        return await asyncio.get_running_loop().run_in_executor(None, lambda: fn(**kwargs))

    result = asyncio.run(reward_loop())
    return float(result["score"] if isinstance(result, dict) else result)


@pytest.fixture
def exports(tmp_path: Path, ab_problem: Problem) -> dict[str, dict[str, Any]]:
    problems = Problem.objects.filter(pk=ab_problem.pk)
    summary = verl_sandbox_fusion_export(problems=problems, out=tmp_path / "builtin")
    assert summary["problems"] == 1
    verl_export(problems=problems, out=tmp_path / "ours")
    [builtin] = _rows(tmp_path / "builtin")
    [ours] = _rows(tmp_path / "ours")
    return {"builtin": builtin, "ours": ours}


def test_verls_builtin_reward_scores_the_sandbox_fusion_export(live_server, token, url_tokens, sandbox_worker,
                                                               exports, verl_loader):
    row = exports["builtin"]
    assert row["data_source"] == "codecontests"  # one verl routes to sandbox_fusion
    # verl's default: memory_limit_mb null when the config leaves it out, every program "python".
    config = _Config(custom_reward_function={
        "path": "pkg://verl.utils.reward_score", "name": "default_compute_score",
        "reward_kwargs": {"sandbox_fusion_url": f"{live_server.url}/sandboxfusion/t/{token}/run_code",
                          "memory_limit_mb": None}})
    fn = verl_loader(config)
    assert [_managers_call(fn, row, c) for c in CORRECT] == [1.0] * len(CORRECT)
    assert [_managers_call(fn, row, c) for c in WRONG_ANSWERS] == [0.0] * len(WRONG_ANSWERS)
    # What the built-in computes: the pass rate (continuous, of the first 10 tests). a - b is
    # right on the 0 0 test of A+B, so it earns 1/4 where ours gives 0.
    assert _managers_call(fn, row, fenced(WRONG)) == 0.25


@pytest.mark.parametrize("name", ["compute_score", "compute_score_async"])
def test_our_compute_score_under_verls_managers(name, live_server, token, sandbox_worker, exports, verl_loader):
    for path in (str(REPO / "hardtests_client" / "verl.py"), "pkg://hardtests_client.verl"):
        config = _Config(custom_reward_function={
            "path": path, "name": name, "reward_kwargs": {"base_url": live_server.url, "token": token}})
        fn = verl_loader(config)
        for row in exports.values():  # both flavours: ground_truth an id, or JSON test cases
            assert [_managers_call(fn, row, c) for c in CORRECT[:2]] == [1.0, 1.0], (path, row["data_source"])
            assert [_managers_call(fn, row, c) for c in WRONG_ANSWERS] == [0.0] * 3, (path, row["data_source"])
            assert _managers_call(fn, row, fenced(WRONG)) == 0.0


def test_our_batch_function_and_unknown_problems(live_server, token, sandbox_worker, exports, verl_loader):
    from hardtests_client import RequestRejected

    kwargs = {"base_url": live_server.url, "token": token}
    fn = verl_loader(_Config(custom_reward_function={"path": str(REPO / "hardtests_client" / "verl.py"),
                                                      "name": "compute_score_batch", "reward_kwargs": kwargs}))
    rows = [exports["builtin"], exports["ours"], exports["ours"], exports["builtin"]]
    completions = [CORRECT[0], WRONG_ANSWERS[0], CORRECT[1], WRONG_ANSWERS[1]]
    # As verl's legacy batch manager calls it.
    scores = fn(data_sources=[r["data_source"] for r in rows], solution_strs=completions,
                ground_truths=[r["reward_model"]["ground_truth"] for r in rows],
                extra_infos=[r["extra_info"] for r in rows])
    assert scores == [1.0, 0.0, 1.0, 0.0]
    # One unknown problem: the caller chooses an error for the batch or None for that item.
    truths = ["test:ab/sum", "no/such-problem", "test:ab/sum"]
    with pytest.raises(RequestRejected, match="no/such-problem|items\\[1\\]"):
        fn(data_sources=["x"] * 3, solution_strs=[CORRECT[0]] * 3, ground_truths=truths, extra_infos=None)
    scores = fn(data_sources=["x"] * 3, solution_strs=[CORRECT[0], CORRECT[0], WRONG_ANSWERS[0]],
                ground_truths=truths, extra_infos=None, on_error="none")
    assert scores == [1.0, None, 0.0]
