"""Reward functions for verl's ``custom_reward_function``.

    custom_reward_function:
      path: /path/to/hardtests_client/verl.py     # or pkg://hardtests_client.verl once pip-installed
      name: compute_score                         # compute_score_async; compute_score_batch (legacy batch manager)
      reward_kwargs: {base_url: "http://host:8000", token: "ht_..."}   # or $HARDTESTS_URL / $HARDTESTS_TOKEN

``ground_truth`` is our problem id (``source:pid``, the ``verl`` export) or the JSON test
cases of the ``verl-sandbox-fusion`` export, whose ``problem`` names the problem; the
server judges every test of the problem's active suite with its own limits and output
judge. ``compute_score`` (sync) and ``compute_score_async`` (a coroutine) score one sample,
as verl's reward loop (``use_reward_loop=true``: it awaits coroutine functions and runs
plain ones in its executor) and the legacy ``naive`` / ``prime`` / ``dapo`` managers call
them; ``compute_score_batch`` scores a batch for the legacy ``batch`` manager (the reward
loop has no batch manager). Each returns 1.0 when the program in the completion passes
every test, 0.0 when it fails one or has no code, and raises InfrastructureError when the
server could not judge it, after the client's retries (backoff and jitter; a sample answered
SE is sent again): verl's reward managers let that stop the step. A problem the server does not know raises RequestRejected
(``on_error: raise``, the default) or scores None (``on_error: none``; only for callers that
filter None out, verl itself needs a number).

verl loads this file by path, so it imports the rest of the package by absolute name:
``pip install ./hardtests_client`` (or put the project root on PYTHONPATH).
"""

from __future__ import annotations

import threading
from typing import Any, cast

from hardtests_client.client import AsyncHardTestsClient, HardTestsClient
from hardtests_client.core import problem_of

_clients: dict[tuple[str | None, str | None], HardTestsClient] = {}
_lock = threading.Lock()


def _client(base_url: str | None, token: str | None) -> HardTestsClient:
    # One connection pool per configuration for the whole training process.
    with _lock:
        key = (base_url, token)
        if key not in _clients:
            _clients[key] = HardTestsClient(base_url, token)
        return _clients[key]


def _language(extra_info: Any, language: str | None) -> str | None:
    if language:
        return language
    return extra_info.get("language") if isinstance(extra_info, dict) else None


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, *,
                  base_url: str | None = None, token: str | None = None, language: str | None = None,
                  on_error: str = "raise", **_: Any) -> float | None:
    [score] = _client(base_url, token).score_completions([problem_of(ground_truth, extra_info)], [solution_str],
                                                         language=_language(extra_info, language), on_error=on_error)
    return cast("float | None", score)


def compute_score_batch(data_sources: list[str], solution_strs: list[str], ground_truths: list[Any],
                        extra_infos: list[Any] | None = None, *, base_url: str | None = None,
                        token: str | None = None, language: str | None = None, on_error: str = "raise",
                        **_: Any) -> list[float | None]:
    infos = list(extra_infos) if extra_infos is not None else [None] * len(ground_truths)
    return _client(base_url, token).score_completions(
        [problem_of(g, i) for g, i in zip(ground_truths, infos, strict=True)], list(solution_strs),
        language=language, on_error=on_error)


async def compute_score_async(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, *,
                              base_url: str | None = None, token: str | None = None, language: str | None = None,
                              on_error: str = "raise", **_: Any) -> float | None:
    # A client per call: an AsyncClient is bound to the event loop that created it.
    async with AsyncHardTestsClient(base_url, token) as client:
        [score] = await client.score_completions([problem_of(ground_truth, extra_info)], [solution_str],
                                                 language=_language(extra_info, language), on_error=on_error)
    return cast("float | None", score)
