"""What the client raises. An infrastructure failure is never turned into a reward of 0."""

from __future__ import annotations


class HardTestsError(Exception):
    """Base class of every error of the client."""


class InfrastructureError(HardTestsError):
    """The server could not judge (503, a worker or sandbox failure, the network, 5xx) even after
    retries. Do not score the sample: skip it or stop the step."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        # the request itself failed after its own retries (not one item of an answered batch)
        self.final = False


class RateLimitedError(InfrastructureError):
    """Still 429 after every retry: raise the token's rate limit or lower the concurrency."""


class RequestRejected(HardTestsError):
    """The server refused the request as wrong (400, 401, 404, 413): retrying will not help."""

    def __init__(self, message: str, *, status: int, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
