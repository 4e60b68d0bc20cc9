"""The HTTP clients of the verification API: HardTestsClient (sync) and AsyncHardTestsClient.

Both send programs in batches to POST /api/v1/verify/batch, poll GET /api/v1/jobs/{id} while
a batch answers 202, retry 429 / 502 / 503 / 504 and network errors with backoff (honouring
Retry-After), and raise InfrastructureError when the server cannot judge: a reward is only
ever a judgement of the program.

    with HardTestsClient("http://host:8000", token) as client:
        [v] = client.verify_many([VerifyRequest("ab/sum", code)])
        v.reward, v.verdict
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from hardtests_client.core import (
    RETRY_STATUSES,
    Settings,
    Verification,
    VerifyRequest,
    batch_results,
    chunks,
    completion_requests,
    error_for,
    requests_of,
    retry_delay,
)
from hardtests_client.errors import InfrastructureError


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


class HardTestsClient:
    """Blocking client. ``base_url`` / ``token`` default to $HARDTESTS_URL / $HARDTESTS_TOKEN."""

    def __init__(self, base_url: str | None = None, token: str | None = None, *, timeout_s: float | None = None,
                 max_retries: int | None = None, backoff_s: float | None = None, batch_size: int | None = None,
                 poll_interval_s: float | None = None, transport: httpx.BaseTransport | None = None) -> None:
        self.settings = Settings.make(base_url, token, timeout_s=timeout_s, max_retries=max_retries,
                                      backoff_s=backoff_s, batch_size=batch_size, poll_interval_s=poll_interval_s)
        self._http = httpx.Client(timeout=self.settings.timeout_s, headers=self.settings.headers(),
                                  transport=transport)

    def __enter__(self) -> HardTestsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        s = self.settings
        for attempt in range(s.max_retries + 1):
            try:
                response = self._http.request(method, s.api(path), json=body)
            except httpx.TransportError as exc:
                if attempt == s.max_retries:
                    raise InfrastructureError(f"cannot reach {s.base_url}: {exc}") from exc
                time.sleep(retry_delay(s, attempt, None))
                continue
            if response.status_code in RETRY_STATUSES and attempt < s.max_retries:
                time.sleep(retry_delay(s, attempt, response.headers.get("Retry-After")))
                continue
            data = _json(response)
            if response.status_code not in (200, 202):
                raise error_for(response.status_code, data)
            return response.status_code, data
        raise AssertionError("unreachable")

    def verify(self, problem: str, code: str, language: str = "python3", *, mode: str = "fail_fast",
               suite: int | str | None = None) -> Verification:
        """Judge one program (POST /verify)."""
        _, data = self._call("POST", "verify", VerifyRequest(problem, code, language, mode, suite).body())
        return Verification.from_json(data)

    def verify_many(self, items: Iterable[VerifyRequest | Mapping[str, Any]]) -> list[Verification]:
        """Judge many programs, ``batch_size`` per request; results in the order of ``items``."""
        out: list[Verification] = []
        for chunk in chunks(requests_of(items), self.settings.batch_size):
            status, data = self._call("POST", "verify/batch", {"items": [r.body() for r in chunk]})
            deadline = time.monotonic() + self.settings.poll_timeout_s
            while status == 202 or data.get("status") != "finished":
                if time.monotonic() > deadline:
                    raise InfrastructureError(f"batch {data.get('job_id')} did not finish in time", code="timeout")
                time.sleep(self.settings.poll_interval_s)
                status, data = self._call("GET", f"jobs/{data['job_id']}")
            out.extend(batch_results(data))
        return out

    def score_completions(self, problems: list[str], completions: list[str], *, language: str | None = None
                          ) -> list[float]:
        """Reward of each completion (1.0 or 0.0): its program is extracted here and judged;
        a completion without code scores 0.0 without a request."""
        found, where = completion_requests(problems, completions, language)
        scores = [0.0] * len(completions)
        for index, verification in zip(where, self.verify_many(found), strict=True):
            scores[index] = float(verification.reward)
        return scores


class AsyncHardTestsClient:
    """The same client for asyncio; batches of one call run concurrently (``concurrency``)."""

    def __init__(self, base_url: str | None = None, token: str | None = None, *, timeout_s: float | None = None,
                 max_retries: int | None = None, backoff_s: float | None = None, batch_size: int | None = None,
                 poll_interval_s: float | None = None, concurrency: int = 4,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.settings = Settings.make(base_url, token, timeout_s=timeout_s, max_retries=max_retries,
                                      backoff_s=backoff_s, batch_size=batch_size, poll_interval_s=poll_interval_s)
        self._http = httpx.AsyncClient(timeout=self.settings.timeout_s, headers=self.settings.headers(),
                                       transport=transport)
        self._concurrency = max(1, concurrency)

    async def __aenter__(self) -> AsyncHardTestsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        s = self.settings
        for attempt in range(s.max_retries + 1):
            try:
                response = await self._http.request(method, s.api(path), json=body)
            except httpx.TransportError as exc:
                if attempt == s.max_retries:
                    raise InfrastructureError(f"cannot reach {s.base_url}: {exc}") from exc
                await asyncio.sleep(retry_delay(s, attempt, None))
                continue
            if response.status_code in RETRY_STATUSES and attempt < s.max_retries:
                await asyncio.sleep(retry_delay(s, attempt, response.headers.get("Retry-After")))
                continue
            data = _json(response)
            if response.status_code not in (200, 202):
                raise error_for(response.status_code, data)
            return response.status_code, data
        raise AssertionError("unreachable")

    async def verify(self, problem: str, code: str, language: str = "python3", *, mode: str = "fail_fast",
                     suite: int | str | None = None) -> Verification:
        _, data = await self._call("POST", "verify", VerifyRequest(problem, code, language, mode, suite).body())
        return Verification.from_json(data)

    async def _batch(self, chunk: list[VerifyRequest], gate: asyncio.Semaphore) -> list[Verification]:
        async with gate:
            status, data = await self._call("POST", "verify/batch", {"items": [r.body() for r in chunk]})
            deadline = time.monotonic() + self.settings.poll_timeout_s
            while status == 202 or data.get("status") != "finished":
                if time.monotonic() > deadline:
                    raise InfrastructureError(f"batch {data.get('job_id')} did not finish in time", code="timeout")
                await asyncio.sleep(self.settings.poll_interval_s)
                status, data = await self._call("GET", f"jobs/{data['job_id']}")
            return batch_results(data)

    async def verify_many(self, items: Iterable[VerifyRequest | Mapping[str, Any]]) -> list[Verification]:
        gate = asyncio.Semaphore(self._concurrency)
        parts = await asyncio.gather(*(self._batch(c, gate) for c in chunks(requests_of(items),
                                                                              self.settings.batch_size)))
        return [v for part in parts for v in part]

    async def score_completions(self, problems: list[str], completions: list[str], *, language: str | None = None
                                ) -> list[float]:
        found, where = completion_requests(problems, completions, language)
        scores = [0.0] * len(completions)
        for index, verification in zip(where, await self.verify_many(found), strict=True):
            scores[index] = float(verification.reward)
        return scores
