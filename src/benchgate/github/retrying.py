"""Retries of GitHub requests, and the errors they end in.

PyGithub runs with ``retry=None``: its ``GithubRetry`` sleeps with ``time.sleep`` (tests could not skip
the waits) and does not retry POST. Instead every public client method is one retried *unit*: on a
5xx, a rate-limit answer or a dropped connection the whole unit starts again, so a write whose answer
was lost is found again (``upsert_comment`` searches for its marker first), never posted twice.

Waits: ``retry-after`` when sent; at a primary rate limit until ``x-ratelimit-reset``; else exponential
backoff. A wait over ``max_wait_seconds``, or ``max_retries`` used up, is GitHubUnavailable (exit 3);
a refusal for good (401, 403, 404, 422) is GitHubRequestError (exit 2): the configuration must change.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

import requests
from github import GithubException

from benchgate.errors import GitHubUnavailable, InputError

T = TypeVar("T")
MAX_BACKOFF_SECONDS = 60.0


class GitHubRequestError(InputError):
    """GitHub refused a request for a reason retrying cannot fix (bad token, permission, not found; exit 2)."""

    def __init__(self, message: str, *, status: int, where: str | None = None) -> None:
        self.status = status
        super().__init__(message, where=where)


_HINTS = {
    401: "the token is missing, expired or wrong",
    403: "the token lacks a permission this needs (pull-requests/issues: write, checks: write, or metadata: read)",
    404: "no such repository, pull request or user, or the token cannot see it",
    422: "GitHub rejected the request as invalid",
}


class _Retry(Exception):
    """A transient failure: wait ``wait`` seconds (None: use backoff) and run the unit again."""

    def __init__(self, reason: str, wait: float | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


class RetryingClient:
    """Runs units of GitHub requests again on transient failures; subclasses set the attributes used here.

    ``api_url``, ``repository``, ``max_retries``, ``backoff_seconds``, ``max_wait_seconds``,
    ``_sleep`` and ``_clock`` (injectable, so tests check the waits without waiting).
    """

    api_url: str
    repository: str
    max_retries: int
    backoff_seconds: float
    max_wait_seconds: float
    _sleep: Callable[[float], None]
    _clock: Callable[[], float]

    # -- retries and error mapping ---------------------------------------------------------------

    def _retrying(self, what: str, unit: Callable[[], T]) -> T:
        """Run ``unit``; on transient failures wait and run it again, at most ``max_retries`` more times."""
        attempt = 0
        while True:
            try:
                return self._classified(unit)
            except _Retry as transient:
                if attempt >= self.max_retries:
                    raise GitHubUnavailable(
                        f"could not {what} after {attempt + 1} attempts: {transient.reason}", where=self.api_url
                    ) from None
                wait = transient.wait
                if wait is None:
                    wait = min(self.backoff_seconds * 2**attempt, MAX_BACKOFF_SECONDS)
                elif wait > self.max_wait_seconds:
                    raise GitHubUnavailable(
                        f"could not {what}: {transient.reason}; that is {wait:.0f} s away, "
                        f"longer than the {self.max_wait_seconds:.0f} s benchgate waits",
                        where=self.api_url,
                    ) from None
                self._sleep(max(wait, 0.0))
                attempt += 1

    def _classified(self, unit: Callable[[], T]) -> T:
        """Run ``unit`` once, turning failures into _Retry (transient) or GitHubRequestError (permanent)."""
        try:
            return unit()
        except GithubException as error:
            raise self._classify(error) from error
        except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as error:
            raise _Retry(f"no answer from GitHub ({type(error).__name__})", None) from error

    def _classify(self, error: GithubException) -> Exception:
        status = error.status
        headers = {key.lower(): value for key, value in (error.headers or {}).items()}
        message = message_of(error)
        wait = self._header_wait(headers)
        rate_limited = status == 429 or (
            status == 403
            and (headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers or "rate limit" in message)
        )
        if rate_limited:
            reason = f"rate limited ({status} {message})"
            if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
                reset = datetime.fromtimestamp(float(headers["x-ratelimit-reset"]), UTC)
                reason += f", resets at {reset:%H:%M:%S} UTC"
            return _Retry(reason, wait)
        if status >= 500:
            return _Retry(f"{status} {message}", wait)
        hint = _HINTS.get(status, "unexpected answer")
        return GitHubRequestError(f"{status} {message}: {hint}", status=status, where=f"GitHub {self.repository}")

    def _header_wait(self, headers: dict[str, str]) -> float | None:
        """Seconds GitHub asked us to wait, or None when it did not say."""
        retry_after = headers.get("retry-after", "").strip()
        if retry_after.isdigit():
            return float(retry_after)
        reset = headers.get("x-ratelimit-reset", "").strip()
        if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
            return max(float(reset) - self._clock(), 0.0) + 1.0  # +1: the reset second itself
        return None


def message_of(error: GithubException) -> str:
    """The first line of GitHub's error message."""
    data = error.data if isinstance(error.data, dict) else {}
    return str(data.get("message") or error.message or "no message").strip().splitlines()[0]
