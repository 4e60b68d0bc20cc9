"""Client of the hardtests_web verification API, for training loops and benchmarks.

- HardTestsClient / AsyncHardTestsClient: verify(), verify_many() (batched, 202 polling,
  retries with backoff on 429/502/503/504, items answered SE sent again; errors="return" keeps
  the good items), score_completions() (code extracted here).
- hardtests_client.verl: compute_score (sync), compute_score_async, compute_score_batch
  for verl's custom_reward_function.
- hardtests_client/openrlhf_reward_func.py: a reward_func file for OpenRLHF (--reward.remote_url).
- extract_code: the completion -> program rule the server uses too.

Infrastructure failures raise InfrastructureError once the retries fail; they are never a reward of 0.
Configuration: arguments, else $HARDTESTS_URL (e.g. http://host:8000) and $HARDTESTS_TOKEN.
"""

from typing import TYPE_CHECKING, Any

from hardtests_client.core import Verification, VerifyRequest
from hardtests_client.errors import HardTestsError, InfrastructureError, RateLimitedError, RequestRejected
from hardtests_client.extract import Extracted, extract_code

if TYPE_CHECKING:
    from hardtests_client.client import AsyncHardTestsClient, HardTestsClient


def __getattr__(name: str) -> Any:
    """The clients load httpx (with its command line's rich and click where installed: 60 ms),
    so they are imported on first use: `from hardtests_client import HardTestsClient` works as
    ever, and the server's processes, which import only the extraction rule
    (hardtests_client.extract), never load them."""
    if name in ("AsyncHardTestsClient", "HardTestsClient"):
        from hardtests_client import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "AsyncHardTestsClient",
    "Extracted",
    "HardTestsClient",
    "HardTestsError",
    "InfrastructureError",
    "RateLimitedError",
    "RequestRejected",
    "Verification",
    "VerifyRequest",
    "extract_code",
]
