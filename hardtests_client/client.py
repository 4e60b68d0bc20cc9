"""The HTTP clients of the verification API: HardTestsClient (sync) and AsyncHardTestsClient.

Both send programs in batches to POST /api/v1/verify/batch, poll GET /api/v1/jobs/{id} while
a batch answers 202, retry 429 / 502 / 503 / 504 and network errors with backoff (honouring
Retry-After), send again the items the server could not judge (SE, a failed job), and raise
InfrastructureError when those retries fail too (or return it in the item's place): a reward
is only ever a judgement of the program.

    with HardTestsClient("http://host:8000", token) as client:
        [v] = client.verify_many([VerifyRequest("ab/sum", code)])
        v.reward, v.verdict
"""

from __future__ import annotations

import asyncio
import functools
import ssl
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
    completion_requests,
    error_for,
    failed_items,
    index_chunks,
    keeps_rejected,
    rejected_item,
    requests_of,
    retry_delay,
    settle,
)
from hardtests_client.errors import InfrastructureError, RequestRejected


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The TLS context every client of this process shares, made as httpx makes its own (the CA
    bundle, $SSL_CERT_FILE / $SSL_CERT_DIR as the first client found them): httpx builds one per
    client otherwise, 21 ms of CPU each, and verl's async reward makes a client per call."""
    return httpx.create_ssl_context()


Result = Verification | RequestRejected | InfrastructureError


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


class HardTestsClient:
    """Blocking client. ``base_url`` / ``token`` default to $HARDTESTS_URL / $HARDTESTS_TOKEN."""

    def __init__(self, base_url: str | None = None, token: str | None = None, *, timeout_s: float | None = None,
                 max_retries: int | None = None, backoff_s: float | None = None, batch_size: int | None = None,
                 poll_interval_s: float | None = None, item_retries: int | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.settings = Settings.make(base_url, token, timeout_s=timeout_s, max_retries=max_retries,
                                      backoff_s=backoff_s, batch_size=batch_size, poll_interval_s=poll_interval_s,
                                      item_retries=item_retries)
        self._http = httpx.Client(timeout=self.settings.timeout_s, headers=self.settings.headers(),
                                  transport=transport, verify=tls_context())

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

    def verify_many(self, items: Iterable[VerifyRequest | Mapping[str, Any]], *, on_error: str = "raise",
                    errors: str = "raise") -> list[Any]:
        """Judge many programs, ``batch_size`` per request; results in the order of ``items``.

        Items the server could not judge (SE, a failed job) are sent again, only they, up to
        ``item_retries`` times with backoff and jitter. An item still failing raises
        InfrastructureError (``errors="raise"``), or with ``errors="return"`` its place holds
        that error and the other items keep their results. An item the server refuses
        (unknown problem, bad language, too large) raises RequestRejected with
        ``on_error="raise"`` (and ``errors="raise"``); otherwise its place holds that
        RequestRejected and the rest of its batch is judged."""
        check_on_error(on_error, errors)
        requests = requests_of(items)
        out: list[Result | None] = [None] * len(requests)
        for chunk in index_chunks(len(requests), self.settings.batch_size):
            pending = chunk
            for attempt in range(self.settings.item_retries + 1):
                if attempt:
                    time.sleep(retry_delay(self.settings, attempt - 1, None))
                self._judge(requests, pending, out, on_error, errors)
                pending = failed_items(out, pending)
                if not pending:
                    break
            settle(out, chunk, errors)
        return [r for r in out if r is not None]

    def _judge(self, requests: list[VerifyRequest], pending: list[int], out: list[Result | None], on_error: str,
               errors: str) -> None:
        """One round: send the pending items as one batch and put each item's answer in ``out``."""
        pending = list(pending)
        try:
            while pending:
                try:
                    status, data = self._call("POST", "verify/batch", {"items": [requests[i].body() for i in pending]})
                except RequestRejected as exc:
                    bad = rejected_item(exc, len(pending))
                    if bad is None or not keeps_rejected(on_error, errors):
                        raise
                    out[pending.pop(bad)] = exc
                    continue
                deadline = time.monotonic() + self.settings.poll_timeout_s
                while status == 202 or data.get("status") != "finished":
                    if time.monotonic() > deadline:
                        raise InfrastructureError(f"batch {data.get('job_id')} did not finish in time",
                                                  code="timeout")
                    time.sleep(self.settings.poll_interval_s)
                    status, data = self._call("GET", f"jobs/{data['job_id']}")
                for index, answer in zip(pending, batch_results(data), strict=True):
                    out[index] = answer
                pending = []
        except InfrastructureError as exc:
            # the whole request failed after _call's own retries: every item still waiting shares
            # it, and is not sent again (those retries were the backoff)
            exc.final = True
            for index in pending:
                out[index] = exc

    def score_completions(self, problems: list[str], completions: list[str], *, language: str | None = None,
                          on_error: str = "raise", errors: str = "raise") -> list[Any]:
        """Reward of each completion (1.0 or 0.0): its program is extracted here and judged;
        a completion without code scores 0.0 without a request. A completion whose problem
        the server refuses raises (``on_error="raise"``) or scores None (``"none"``); one the
        server could not judge after the retries raises (``errors="raise"``) or scores None
        (``errors="return"``)."""
        found, where = completion_requests(problems, completions, language)
        scores: list[float | None] = [0.0] * len(completions)
        for index, verification in zip(where, self.verify_many(found, on_error=on_error, errors=errors),
                                       strict=True):
            scores[index] = float(verification.reward) if isinstance(verification, Verification) else None
        return scores


class AsyncHardTestsClient:
    """The same client for asyncio; batches of one call run concurrently (``concurrency``)."""

    def __init__(self, base_url: str | None = None, token: str | None = None, *, timeout_s: float | None = None,
                 max_retries: int | None = None, backoff_s: float | None = None, batch_size: int | None = None,
                 poll_interval_s: float | None = None, item_retries: int | None = None, concurrency: int = 4,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.settings = Settings.make(base_url, token, timeout_s=timeout_s, max_retries=max_retries,
                                      backoff_s=backoff_s, batch_size=batch_size, poll_interval_s=poll_interval_s,
                                      item_retries=item_retries)
        self._http = httpx.AsyncClient(timeout=self.settings.timeout_s, headers=self.settings.headers(),
                                       transport=transport, verify=tls_context())
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

    async def _judge(self, requests: list[VerifyRequest], pending: list[int], out: list[Result | None],
                     on_error: str, errors: str) -> None:
        pending = list(pending)
        try:
            while pending:
                try:
                    status, data = await self._call("POST", "verify/batch",
                                                    {"items": [requests[i].body() for i in pending]})
                except RequestRejected as exc:
                    bad = rejected_item(exc, len(pending))
                    if bad is None or not keeps_rejected(on_error, errors):
                        raise
                    out[pending.pop(bad)] = exc
                    continue
                deadline = time.monotonic() + self.settings.poll_timeout_s
                while status == 202 or data.get("status") != "finished":
                    if time.monotonic() > deadline:
                        raise InfrastructureError(f"batch {data.get('job_id')} did not finish in time",
                                                  code="timeout")
                    await asyncio.sleep(self.settings.poll_interval_s)
                    status, data = await self._call("GET", f"jobs/{data['job_id']}")
                for index, answer in zip(pending, batch_results(data), strict=True):
                    out[index] = answer
                pending = []
        except InfrastructureError as exc:
            exc.final = True
            for index in pending:
                out[index] = exc

    async def _chunk(self, requests: list[VerifyRequest], chunk: list[int], out: list[Result | None],
                     gate: asyncio.Semaphore, on_error: str, errors: str) -> None:
        pending = chunk
        for attempt in range(self.settings.item_retries + 1):
            if attempt:
                await asyncio.sleep(retry_delay(self.settings, attempt - 1, None))
            async with gate:
                await self._judge(requests, pending, out, on_error, errors)
            pending = failed_items(out, pending)
            if not pending:
                return

    async def verify_many(self, items: Iterable[VerifyRequest | Mapping[str, Any]], *, on_error: str = "raise",
                          errors: str = "raise") -> list[Any]:
        """As HardTestsClient.verify_many."""
        check_on_error(on_error, errors)
        requests = requests_of(items)
        out: list[Result | None] = [None] * len(requests)
        gate = asyncio.Semaphore(self._concurrency)
        chunks_ = index_chunks(len(requests), self.settings.batch_size)
        await asyncio.gather(*(self._chunk(requests, c, out, gate, on_error, errors) for c in chunks_))
        settle(out, list(range(len(requests))), errors)
        return [r for r in out if r is not None]

    async def score_completions(self, problems: list[str], completions: list[str], *, language: str | None = None,
                                on_error: str = "raise", errors: str = "raise") -> list[Any]:
        found, where = completion_requests(problems, completions, language)
        scores: list[float | None] = [0.0] * len(completions)
        for index, verification in zip(where, await self.verify_many(found, on_error=on_error, errors=errors),
                                       strict=True):
            scores[index] = float(verification.reward) if isinstance(verification, Verification) else None
        return scores
