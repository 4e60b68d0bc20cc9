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
    check_on_error,
    chunks,
    completion_requests,
    error_for,
    rejected_item,
    requests_of,
    retry_delay,
)
from hardtests_client.errors import InfrastructureError, RequestRejected

Result = Verification | RequestRejected


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

    def verify_many(self, items: Iterable[VerifyRequest | Mapping[str, Any]], *, on_error: str = "raise"
                    ) -> list[Any]:
        """Judge many programs, ``batch_size`` per request; results in the order of ``items``.

        An item the server refuses (unknown problem, bad language, too large) raises
        RequestRejected with ``on_error="raise"``; with ``on_error="none"`` its place holds
        that RequestRejected and the rest of its batch is judged."""
        check_on_error(on_error)
        out: list[Result] = []
        for chunk in chunks(requests_of(items), self.settings.batch_size):
            results: list[Result | None] = [None] * len(chunk)
            pending = list(range(len(chunk)))
            while pending:
                try:
                    status, data = self._call("POST", "verify/batch", {"items": [chunk[i].body() for i in pending]})
                except RequestRejected as exc:
                    bad = rejected_item(exc, len(pending))
                    if on_error == "raise" or bad is None:
                        raise
                    results[pending.pop(bad)] = exc
                    continue
                deadline = time.monotonic() + self.settings.poll_timeout_s
                while status == 202 or data.get("status") != "finished":
                    if time.monotonic() > deadline:
                        raise InfrastructureError(f"batch {data.get('job_id')} did not finish in time",
                                                  code="timeout")
                    time.sleep(self.settings.poll_interval_s)
                    status, data = self._call("GET", f"jobs/{data['job_id']}")
                for index, verification in zip(pending, batch_results(data), strict=True):
                    results[index] = verification
                pending = []
            out.extend(r for r in results if r is not None)
        return out

    def score_completions(self, problems: list[str], completions: list[str], *, language: str | None = None,
                          on_error: str = "raise") -> list[Any]:
        """Reward of each completion (1.0 or 0.0): its program is extracted here and judged;
        a completion without code scores 0.0 without a request. A completion whose problem
        the server refuses raises (``on_error="raise"``) or scores None (``"none"``)."""
        found, where = completion_requests(problems, completions, language)
        scores: list[float | None] = [0.0] * len(completions)
        for index, verification in zip(where, self.verify_many(found, on_error=on_error), strict=True):
            scores[index] = float(verification.reward) if isinstance(verification, Verification) else None
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

    async def _batch(self, chunk: list[VerifyRequest], gate: asyncio.Semaphore, on_error: str) -> list[Result]:
        async with gate:
            results: list[Result | None] = [None] * len(chunk)
            pending = list(range(len(chunk)))
            while pending:
                try:
                    status, data = await self._call("POST", "verify/batch",
                                                    {"items": [chunk[i].body() for i in pending]})
                except RequestRejected as exc:
                    bad = rejected_item(exc, len(pending))
                    if on_error == "raise" or bad is None:
                        raise
                    results[pending.pop(bad)] = exc
                    continue
                deadline = time.monotonic() + self.settings.poll_timeout_s
                while status == 202 or data.get("status") != "finished":
                    if time.monotonic() > deadline:
                        raise InfrastructureError(f"batch {data.get('job_id')} did not finish in time",
                                                  code="timeout")
                    await asyncio.sleep(self.settings.poll_interval_s)
                    status, data = await self._call("GET", f"jobs/{data['job_id']}")
                for index, verification in zip(pending, batch_results(data), strict=True):
                    results[index] = verification
                pending = []
            return [r for r in results if r is not None]

    async def verify_many(self, items: Iterable[VerifyRequest | Mapping[str, Any]], *, on_error: str = "raise"
                          ) -> list[Any]:
        """As HardTestsClient.verify_many."""
        check_on_error(on_error)
        gate = asyncio.Semaphore(self._concurrency)
        parts = await asyncio.gather(*(self._batch(c, gate, on_error) for c in chunks(requests_of(items),
                                                                                        self.settings.batch_size)))
        return [v for part in parts for v in part]

    async def score_completions(self, problems: list[str], completions: list[str], *, language: str | None = None,
                                on_error: str = "raise") -> list[Any]:
        found, where = completion_requests(problems, completions, language)
        scores: list[float | None] = [0.0] * len(completions)
        for index, verification in zip(where, await self.verify_many(found, on_error=on_error), strict=True):
            scores[index] = float(verification.reward) if isinstance(verification, Verification) else None
        return scores
