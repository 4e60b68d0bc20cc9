"""Reward functions for verl's ``custom_reward_function`` (ground_truth = our problem id).

    custom_reward_function:
      path: /path/to/hardtests_client/verl.py
      name: compute_score              # or compute_score_batch with reward_model.reward_manager=batch
      reward_kwargs: {base_url: "http://host:8000", token: "ht_..."}   # or $HARDTESTS_URL / $HARDTESTS_TOKEN

``compute_score`` judges one completion (verl's naive reward manager calls it per sample);
``compute_score_batch`` judges a whole batch in batches of the API; ``compute_score_async``
is the coroutine for verl's asynchronous reward loop. Each returns 1.0 when the program in
the completion passes every test of the problem, 0.0 when it fails one or has no code, and
raises InfrastructureError when the server could not judge it.

verl loads this file by path, so it imports the rest of the package by absolute name:
put the project root on PYTHONPATH (or pip install the project).
"""

from __future__ import annotations

import threading
from typing import Any

from hardtests_client.client import AsyncHardTestsClient, HardTestsClient

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


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: Any = None, *,
                  base_url: str | None = None, token: str | None = None, language: str | None = None,
                  **_: Any) -> float:
    [score] = _client(base_url, token).score_completions([str(ground_truth)], [solution_str],
                                                         language=_language(extra_info, language))
    return score


def compute_score_batch(data_sources: list[str], solution_strs: list[str], ground_truths: list[str],
                        extra_infos: list[Any] | None = None, *, base_url: str | None = None,
                        token: str | None = None, language: str | None = None, **_: Any) -> list[float]:
    return _client(base_url, token).score_completions([str(g) for g in ground_truths], list(solution_strs),
                                                      language=language)


async def compute_score_async(data_source: str, solution_str: str, ground_truth: str, extra_info: Any = None, *,
                              base_url: str | None = None, token: str | None = None, language: str | None = None,
                              **_: Any) -> float:
    # A client per call: an AsyncClient is bound to the event loop that created it.
    async with AsyncHardTestsClient(base_url, token) as client:
        [score] = await client.score_completions([str(ground_truth)], [solution_str],
                                                 language=_language(extra_info, language))
    return score
