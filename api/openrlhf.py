"""OpenRLHF's remote reward: POST /api/v1/openrlhf/reward {query, prompts, labels} -> {rewards}.

OpenRLHF (``--reward.remote_url``; ``--remote_rm_url`` before 0.11) posts a batch of whole sequences (prompt + response) with
the prompts and each row's label, and reads ``rewards`` (newer versions also ``scores``
and ``extra_logs``). Here a label is one of our problems (pid or source:pid); the response
is found in the query (after its prompt, or after the chat template's assistant turn when
no prompt is given or the decoder changed it: never the prompt's own code), and the program
is extracted from it as /submit does. Every program of the batch runs in parallel on the sandbox workers.
A response without code earns 0; items the workers could not judge are sent again (twice,
with backoff), and an infrastructure failure that outlasts that fails the whole request with
503 instead of handing the trainer a made-up 0 (OpenRLHF 0.11 tries 5 times, 1 s apart, then
logs at INFO and leaves the samples' reward None).
"""

from __future__ import annotations

import random
import time
from typing import Any

from ninja import Field, Router, Schema

from api.errors import ApiError, NotFound, Unavailable
from api.headerless import HeaderlessAuth, HeaderlessRequest
from api.schemas import CleanStr, Error, ValidationErrorOut
from api.verification import batch_start, verification_prepare
from hardtests_client.extract import extract_code, response_of
from problems.verify_types import Mode

router = Router(tags=["openrlhf"])
ERRORS = {400: ValidationErrorOut, 401: Error, 404: Error, 413: Error, 429: Error, 503: Error}
# items the workers could not judge are sent again this many times (backoff 2 s, 4 s, with jitter)
ITEM_RETRIES = 2
ITEM_BACKOFF_S = 2.0


class RewardIn(Schema):
    query: list[CleanStr] = Field(min_length=1, description="prompt + response of each sample")
    prompts: list[CleanStr] | None = Field(None, description="each sample's prompt (removed from its query when it "
                                                             "starts it); a missing one removes nothing")
    labels: list[CleanStr] = Field(description="each sample's problem: pid or source:pid (404 when a query has none)")


class RewardOut(Schema):
    rewards: list[float] = Field(description="1.0 when the program passes every test, else 0.0")
    scores: list[float] = Field(description="the same as rewards (OpenRLHF's dynamic filtering reads it)")
    extra_logs: dict[str, list[float]] = Field(description="pass_fraction of each sample")


def _reward(request: HeaderlessRequest, body: RewardIn) -> dict[str, Any]:
    # Positional, as OpenRLHF sends them; a query without a label names no problem (404).
    if len(body.labels) < len(body.query):
        raise NotFound(f"query[{len(body.labels)}] has no label (the problem to judge it against)",
                       code="not_found")
    prompts = list(body.prompts or [])
    rewards = [0.0] * len(body.query)
    fractions = [0.0] * len(body.query)
    prepared, where = [], []
    for index, (query, label) in enumerate(zip(body.query, body.labels[:len(body.query)], strict=True)):
        found = extract_code(response_of(query, prompts[index] if index < len(prompts) else None),
                             default_language="python3")
        try:
            item = verification_prepare(problem=label, language=found.language or "python3",
                                        code=found.code or "\n", mode=Mode.FAIL_FAST, suite=None)
        except ApiError as exc:
            exc.detail = f"labels[{index}]: {exc.detail}"
            raise
        if found.kind != "empty":  # a response without code is a real 0, nothing to run
            prepared.append(item)
            where.append(index)
    pending = list(zip(where, prepared, strict=True))
    for attempt in range(ITEM_RETRIES + 1):
        if not pending:
            break
        if attempt:
            # OpenRLHF tries a request 5 times 1 s apart and then leaves the reward None: the
            # server absorbs a bad moment itself, sending again only the items it could not judge
            time.sleep(random.uniform(0.5, 1.0) * ITEM_BACKOFF_S * 2 ** (attempt - 1))
        _, outcomes, _ = batch_start([item for _, item in pending], owner_id=request.auth.user_id)
        failed, reasons = [], []
        for (index, item), outcome in zip(pending, outcomes, strict=True):
            if outcome.status in ("queued", "running"):
                raise Unavailable("the sandbox workers did not finish the batch in time", code="timeout",
                                  retry_after_s=10)
            result = outcome.result
            if result is None or result.verdict == "SE":
                # an item in error: the worker could not judge it, and says why
                reason = (outcome.error or "no reason given") if result is None else (result.message
                                                                                      or "sandbox error")
                failed.append((index, item))
                reasons.append(f"query[{index}]: judging failed on the sandbox side: {reason[:300]}")
                continue
            rewards[index] = float(result.reward)
            fractions[index] = result.pass_fraction
        pending = failed
    if pending:
        raise Unavailable(reasons[0], code="sandbox_error")
    return {"rewards": rewards, "scores": list(rewards), "extra_logs": {"pass_fraction": fractions}}


@router.post("/reward", response={200: RewardOut, **ERRORS}, auth=HeaderlessAuth())
def reward(request: HeaderlessRequest, body: RewardIn) -> dict[str, Any]:
    """Rewards of a batch of OpenRLHF samples: 1.0 when the response's program passes every test."""
    return _reward(request, body)


@router.post("/t/{token}/reward", response={200: RewardOut, **ERRORS}, auth=HeaderlessAuth(),
             include_in_schema=False)
def reward_token(request: HeaderlessRequest, token: str, body: RewardIn) -> dict[str, Any]:
    """The same, with the API token in the path (HARDTESTS_API_URL_TOKENS=1)."""
    return _reward(request, body)
