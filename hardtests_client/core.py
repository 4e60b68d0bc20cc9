"""What the sync and async clients share: configuration, requests, answers, retry timing."""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hardtests_client.errors import InfrastructureError, RateLimitedError, RequestRejected
from hardtests_client.extract import extract_code

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# How the server names the item of a batch it refused: "items[3]: no problem 'x'".
_ITEM = re.compile(r"\bitems\[(\d+)\]:")
ON_ERROR = ("raise", "none")
ERRORS = ("raise", "return")


@dataclass(frozen=True)
class VerifyRequest:
    """One program to judge: problem is a pid or source:pid; language python3, c, cpp or java."""

    problem: str
    code: str
    language: str = "python3"
    mode: str = "fail_fast"
    # a suite version; "fast": the active suite's fast subset (training), "full" or None: the active suite
    suite: int | str | None = None

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"problem": self.problem, "language": self.language, "code": self.code,
                               "mode": self.mode}
        if self.suite is not None:
            out["suite"] = self.suite
        return out


@dataclass(frozen=True)
class Verification:
    """A judgement: reward 1 iff every test passed. ``raw`` is the server's whole answer."""

    reward: int
    verdict: str
    passed: int
    total: int
    pass_fraction: float
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Verification:
        if data.get("verdict") == "SE":
            # The judge could not run the program: not a judgement of it.
            raise InfrastructureError(f"sandbox error on the server: {str(data.get('message', ''))[:500]}",
                                      code="sandbox_error")
        return cls(int(data["reward"]), str(data["verdict"]), int(data["passed"]), int(data["total"]),
                   float(data["pass_fraction"]), dict(data))


@dataclass
class Settings:
    base_url: str
    token: str
    timeout_s: float = 300.0
    max_retries: int = 6
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    batch_size: int = 32
    poll_interval_s: float = 1.0
    poll_timeout_s: float = 3600.0
    # Items the server could not judge (SE: a starved or broken sandbox; a failed job) are sent
    # again this many times, only they, with backoff and jitter, before they count as failed.
    item_retries: int = 4

    @classmethod
    def make(cls, base_url: str | None, token: str | None, **options: Any) -> Settings:
        url = (base_url or os.environ.get("HARDTESTS_URL") or "").rstrip("/")
        if not url:
            raise ValueError("no server URL: pass base_url= or set HARDTESTS_URL (e.g. http://host:8000)")
        secret = token if token is not None else os.environ.get("HARDTESTS_TOKEN", "")
        return cls(url, secret, **{k: v for k, v in options.items() if v is not None})

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def api(self, path: str) -> str:
        return f"{self.base_url}/api/v1/{path.lstrip('/')}"


def requests_of(items: Iterable[VerifyRequest | Mapping[str, Any]]) -> list[VerifyRequest]:
    return [item if isinstance(item, VerifyRequest) else VerifyRequest(**item) for item in items]


def index_chunks(count: int, size: int) -> list[list[int]]:
    return [list(range(i, min(count, i + max(1, size)))) for i in range(0, count, max(1, size))]


def keeps_rejected(on_error: str, errors: str) -> bool:
    """Whether a refused item's place holds its RequestRejected (else it raises)."""
    return on_error == "none" or errors == "return"


def failed_items(out: list[Any], indices: list[int]) -> list[int]:
    """The items among ``indices`` the server could not judge (worth sending again)."""
    return [i for i in indices if isinstance(out[i], InfrastructureError) and not out[i].final]


def settle(out: list[Any], failed: list[int], errors: str) -> None:
    """After the retries: raise the first item still failing, or leave each error in its place."""
    failed = [i for i in failed if isinstance(out[i], InfrastructureError)]
    if failed and errors == "raise":
        first = out[failed[0]]
        assert isinstance(first, InfrastructureError)
        if len(failed) > 1:
            raise InfrastructureError(f"{len(failed)} items could not be judged; the first: {first}",
                                      status=first.status, code=first.code) from first
        raise first


def retry_delay(settings: Settings, attempt: int, retry_after: str | None) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): the server's Retry-After when
    it gives one, else exponential backoff with full jitter."""
    if retry_after:
        try:
            return min(settings.max_backoff_s, max(0.0, float(retry_after)))
        except ValueError:
            pass
    return random.uniform(0, min(settings.max_backoff_s, settings.backoff_s * 2**attempt))


def error_for(status: int, body: Any) -> Exception:
    code = body.get("code") if isinstance(body, dict) else None
    detail = body.get("detail") if isinstance(body, dict) else None
    message = f"HTTP {status}: {detail or str(body)[:300]}"
    if status == 429:
        return RateLimitedError(message, status=status, code=code)
    if status >= 500:
        return InfrastructureError(message, status=status, code=code)
    return RequestRejected(message, status=status, code=code)


def batch_results(data: Mapping[str, Any]) -> list[Verification | InfrastructureError]:
    """Each item of a finished batch: its judgement, or the InfrastructureError that says why
    the server could not judge it (an item in error, a sandbox error)."""
    out: list[Verification | InfrastructureError] = []
    for item in data["items"]:
        if item["status"] in ("failed", "error") or item.get("result") is None:
            out.append(InfrastructureError(f"item {item['index']} failed on the server: {item.get('error')}",
                                           code="job_failed"))
            continue
        try:
            out.append(Verification.from_json(item["result"]))
        except InfrastructureError as exc:
            out.append(exc)
    return out


def rejected_item(exc: RequestRejected, size: int) -> int | None:
    """Which item of a batch of ``size`` the server refused, when it says so."""
    found = _ITEM.search(str(exc))
    index = int(found.group(1)) if found else None
    return index if index is not None and index < size else None


def check_on_error(on_error: str, errors: str = "raise") -> None:
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    if errors not in ERRORS:
        raise ValueError(f"errors must be one of {', '.join(ERRORS)}, not {errors!r}")


def problem_of(ground_truth: Any, extra_info: Any = None) -> str:
    """The problem a verl row names: its ground_truth is our id (``source:pid``) or, in the
    verl-sandbox-fusion export, JSON test cases that carry the id as ``problem``."""
    if isinstance(ground_truth, Mapping) and ground_truth.get("problem"):
        return str(ground_truth["problem"])
    text = str(ground_truth)
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("problem"):
            return str(data["problem"])
    if isinstance(extra_info, Mapping) and extra_info.get("problem") and text.lstrip().startswith("{"):
        return str(extra_info["problem"])
    return text


def completion_requests(problems: list[str], completions: list[str], language: str | None
                        ) -> tuple[list[VerifyRequest], list[int]]:
    """The programs found in completions and their positions; a completion without code is left out."""
    if len(problems) != len(completions):
        raise ValueError("problems and completions must have the same length")
    found, where = [], []
    for index, (problem, completion) in enumerate(zip(problems, completions, strict=True)):
        extracted = extract_code(completion, language=language, default_language="python3")
        if extracted.kind != "empty":
            found.append(VerifyRequest(problem, extracted.code, extracted.language or "python3"))
            where.append(index)
    return found, where
