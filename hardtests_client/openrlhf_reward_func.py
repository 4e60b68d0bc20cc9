"""A reward function file for OpenRLHF.

OpenRLHF (0.11: ``--reward.remote_url /path/to/openrlhf_reward_func.py``) calls
``reward_func(queries, prompts, labels)`` with each sample's whole sequence (decoded with its
special tokens), its prompt and its label (``--data.label_key``; here: our problem id) and reads ``rewards``
(a tensor) from the returned dict. The response's program is extracted and judged on the
server in batches; a failure the server cannot judge raises instead of returning 0.

Configuration: $HARDTESTS_URL (e.g. http://host:8000) and $HARDTESTS_TOKEN. Install the client
beside OpenRLHF: ``pip install ./hardtests_client`` (httpx only).
"""

from __future__ import annotations

from typing import Any

from hardtests_client.client import HardTestsClient
from hardtests_client.extract import response_of

_client: HardTestsClient | None = None


def reward_func(queries: list[str], prompts: list[str | None] | None, labels: list[str], **_: Any) -> dict[str, Any]:
    global _client
    if _client is None:
        _client = HardTestsClient()
    given: list[str | None] = list(prompts) if prompts else [None] * len(queries)
    responses = [response_of(q, p) for q, p in zip(queries, given, strict=True)]
    rewards: Any = _client.score_completions([str(label) for label in labels], responses)
    try:
        import torch

        rewards = torch.tensor(rewards, dtype=torch.float32)
    except ImportError:  # outside OpenRLHF (tests, other trainers): a plain list
        pass
    return {"rewards": rewards, "scores": rewards, "extra_logs": {}}
