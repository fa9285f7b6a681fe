"""Canned failures the fake GitHub can answer with, and its log of the requests it received."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

DOCS = "https://docs.github.com/rest"


@dataclass
class Fault:
    """A canned failure for one upcoming request (the next one, or the next one matching ``method``/``path``).

    ``after=True`` lets the request take effect and only then replaces the answer,
    the case where a POST succeeded but the client never heard. ``drop=True``
    closes the connection without answering.
    """

    status: int = 502
    message: str = "Server Error"
    headers: dict[str, str] = field(default_factory=dict)
    method: str | None = None
    path_contains: str | None = None
    after: bool = False
    drop: bool = False

    @classmethod
    def rate_limited(cls, reset_in: float = 2.0, **where: Any) -> Fault:
        """GitHub's primary rate limit answer: 403 with remaining 0 and the reset time (epoch seconds)."""
        return cls(
            403,
            "API rate limit exceeded for installation ID 1.",
            {
                "x-ratelimit-limit": "5000",
                "x-ratelimit-remaining": "0",
                "x-ratelimit-used": "5000",
                "x-ratelimit-reset": str(int(time.time() + reset_in)),
            },
            **where,
        )

    @classmethod
    def secondary_rate_limited(cls, retry_after: int = 3, status: int = 429, **where: Any) -> Fault:
        """GitHub's secondary rate limit answer: 403 or 429 with retry-after seconds."""
        return cls(
            status,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            {"retry-after": str(retry_after)},
            **where,
        )

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method.upper() == method) and (
            self.path_contains is None or self.path_contains in path
        )


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without the Enterprise prefix and query
    query: tuple[tuple[str, str], ...]
    body: Any
    status: int
    enterprise: bool
    authorization: str | None
