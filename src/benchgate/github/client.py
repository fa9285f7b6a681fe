"""The GitHub REST API as benchgate needs it: the only module that imports PyGithub, with ``retry=None`` (its
``GithubRetry`` sleeps with ``time.sleep`` and does not retry POST). Every public method is one retried *unit*,
run again from the top, so a write whose answer was lost is found again (``upsert_comment`` searches first)."""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException

from benchgate.errors import GitHubUnavailable, InputError

T = TypeVar("T")
WRITE_ROLES = frozenset({"admin", "maintain", "write"})
ROLES = ("admin", "maintain", "write", "triage", "read")
MAX_LISTED_FILES = 3000  # GitHub lists no more files of a pull request
CheckConclusion = Literal["success", "failure", "neutral"]
COMMENT_LIMIT = 65536  # characters GitHub accepts in an issue comment body
CHECK_OUTPUT_LIMIT = 65535  # characters in a check run's output.summary and output.text
# Who an installation token (Actions' GITHUB_TOKEN) comments as; another GitHub App comments as "<slug>[bot]".
ACTIONS_BOT_LOGIN = "github-actions[bot]"
COMMENT_AUTHOR_ENV = "BENCHGATE_COMMENT_AUTHOR"
BACKOFF_SECONDS = 1.0  # doubled after each failure, up to:
MAX_BACKOFF_SECONDS = 60.0
MAX_WAIT_SECONDS = 300.0  # a longer wait (a rate limit's reset) gives up at once
TIMEOUT_SECONDS = 30
_TRUNCATED = "\n\n… (truncated to GitHub's limit)"
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
_HINTS = {
    401: "the token is missing, expired or wrong",
    403: "the token lacks a permission this needs (pull-requests/issues: write, checks: write, or metadata: read)",
    404: "no such repository, pull request or user, or the token cannot see it",
    422: "GitHub rejected the request as invalid",
}


class GitHubRequestError(InputError):
    """GitHub refused a request for a reason retrying cannot fix (bad token, permission, not found; exit 2)."""

    def __init__(self, message: str, *, status: int, where: str | None = None) -> None:
        self.status = status
        super().__init__(message, where=where)


@dataclass(frozen=True)
class PullRequestInfo:
    """What benchgate needs to know about a pull request."""

    number: int
    head_sha: str
    base_sha: str
    base_ref: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class ChangedFiles:
    """The paths a pull request changes; ``complete`` is False when GitHub's list may be cut short."""

    paths: tuple[str, ...]
    complete: bool


@dataclass(frozen=True)
class LabelEvent:
    """One label added to or removed from an issue or pull request, and who did it."""

    label: str
    actor: str  # login; "ghost" for deleted accounts
    event: str  # "labeled" | "unlabeled"


def _unit(what: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Make a method one retried unit; ``what`` (formatted with its positional arguments) names it in the error."""

    def decorate(method: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(method)
        def unit(self: GitHubClient, *args: Any, **kwargs: Any) -> T:
            return self._retrying(what.format(*args), lambda: method(self, *args, **kwargs))

        return unit

    return decorate


class GitHubClient:
    """A client for one repository (``owner/name``) at ``api_url``; ``sleep`` and ``clock`` are for tests. What is
    not given comes from the runner's GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL and $BENCHGATE_COMMENT_AUTHOR."""

    def __init__(
        self,
        *,
        token: str | None = None,
        repository: str | None = None,
        api_url: str | None = None,
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        comment_author: str | None = None,
    ) -> None:
        repository = repository or os.environ.get("GITHUB_REPOSITORY", "")
        if comment_author is None:
            comment_author = os.environ.get(COMMENT_AUTHOR_ENV) or None
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
            raise InputError(f"repository must look like owner/name, got {repository!r}", where="GitHub")
        if comment_author is not None and not _LOGIN.fullmatch(comment_author):
            raise InputError(f"comment author must be a GitHub login, got {comment_author[:60]!r}", where="GitHub")
        self.repository = repository
        self.api_url = check_api_url(api_url or os.environ.get("GITHUB_API_URL") or "https://api.github.com")
        self._own_login = comment_author
        self.max_retries = max_retries
        self._sleep = sleep
        self._clock = clock
        token = token or os.environ.get("GITHUB_TOKEN")
        self._github = Github(
            auth=Auth.Token(token) if token else None,
            base_url=self.api_url,
            timeout=TIMEOUT_SECONDS,
            per_page=100,
            retry=None,
            seconds_between_requests=None,
            seconds_between_writes=None,
            lazy=True,  # no request until an attribute is read: get_repo/get_issue cost nothing
        )
        self._repo = self._github.get_repo(repository)

    def _retrying(self, what: str, unit: Callable[[], T]) -> T:
        """Run ``unit``, again after a transient failure (``retry-after``, a rate limit's reset, else backoff)."""
        for attempt in range(self.max_retries + 1):
            try:
                return unit()
            except GithubException as error:
                reason, wait = self._transient(error)
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as error:
                reason, wait = f"no answer from GitHub ({type(error).__name__})", None
            if attempt >= self.max_retries:
                raise GitHubUnavailable(f"could not {what} after {attempt + 1} attempts: {reason}", where=self.api_url)
            if wait is None:
                wait = min(BACKOFF_SECONDS * 2**attempt, MAX_BACKOFF_SECONDS)
            elif wait > MAX_WAIT_SECONDS:
                raise GitHubUnavailable(
                    f"could not {what}: {reason}; that is {wait:.0f} s away, "
                    f"longer than the {MAX_WAIT_SECONDS:.0f} s benchgate waits",
                    where=self.api_url,
                )
            self._sleep(max(wait, 0.0))
        raise AssertionError("unreachable")

    def _transient(self, error: GithubException) -> tuple[str, float | None]:
        """Why a failure is worth retrying and the wait GitHub asked for; GitHubRequestError (exit 2) for a refusal."""
        status, message = error.status, message_of(error)
        headers = {key.lower(): value for key, value in (error.headers or {}).items()}
        exhausted = headers.get("x-ratelimit-remaining") == "0"
        reset = headers.get("x-ratelimit-reset", "").strip()
        retry_after = headers.get("retry-after", "").strip()
        wait = None
        if retry_after.isdecimal():
            wait = float(retry_after)
        elif exhausted and reset.isdecimal():
            wait = max(float(reset) - self._clock(), 0.0) + 1.0  # +1: the reset second itself
        if status == 429 or (status == 403 and (exhausted or "retry-after" in headers or "rate limit" in message)):
            reason = f"rate limited ({status} {message})"
            if exhausted and reset.isdecimal():
                reason += f", resets at {datetime.fromtimestamp(float(reset), UTC):%H:%M:%S} UTC"
            return reason, wait
        if status >= 500:
            return f"{status} {message}", wait
        hint = _HINTS.get(status, "unexpected answer")
        raise GitHubRequestError(
            f"{status} {message}: {hint}", status=status, where=f"GitHub {self.repository}"
        ) from error

    @_unit("read pull request #{0}")
    def pull_request(self, number: int) -> PullRequestInfo:
        """The pull request ``number`` (GET /repos/{o}/{r}/pulls/{n})."""
        pull = self._repo.get_pull(number)
        labels = tuple(label.name for label in pull.labels)
        return PullRequestInfo(pull.number, pull.head.sha, pull.base.sha, pull.base.ref, labels)

    @_unit("read the changed files of #{0}")
    def changed_files(self, number: int) -> ChangedFiles:
        """The files pull request ``number`` changes, a rename with both paths; incomplete at GitHub's 3000."""
        files = list(self._repo.get_pull(number).get_files())
        paths = dict.fromkeys(path for entry in files for path in (entry.filename, entry.previous_filename) if path)
        return ChangedFiles(tuple(paths), complete=len(files) < MAX_LISTED_FILES)

    @_unit("read the label events of #{0}")
    def label_events(self, number: int) -> list[LabelEvent]:
        """Every labeled/unlabeled event of issue or PR ``number``, oldest first, across all pages."""
        return [
            LabelEvent(
                label=event.label.name,
                actor=event.actor.login if event.actor is not None else "ghost",
                event=event.event,
            )
            for event in self._repo.get_issue(number).get_events()
            # The kind first: reading .label of another kind would make PyGithub fetch the event again.
            if event.event in ("labeled", "unlabeled")
        ]

    @_unit("read {0}'s permission")
    def permission(self, username: str) -> str:
        """``username``'s role: admin, maintain, write, triage, read, or none (not a collaborator: a 404)."""
        try:
            role = self._repo.get_collaborator_role_name(username)  # PyGithub URL-quotes the login itself
            if role in ROLES:
                return role
            # The legacy "permission" field, for a custom role whose role_name is not a built-in one.
            legacy = self._repo.get_collaborator_permission(username)
            return legacy if legacy in ("admin", "write", "read") else "none"
        except GithubException as error:
            if error.status == 404:
                return "none"
            raise

    def can_write(self, username: str) -> bool:
        """True when ``username`` has write, maintain or admin role (may start runs, loosen the gate)."""
        return self.permission(username) in WRITE_ROLES

    def own_login(self) -> str:
        """The login this token's comments carry (GET /user), asked once; another App's token: ``comment_author``."""
        if self._own_login is None:
            self._own_login = self._ask_login()
        return self._own_login

    @_unit("read who the token belongs to")
    def _ask_login(self) -> str:
        # An installation token (Actions' GITHUB_TOKEN) is refused GET /user: it comments as the Actions bot.
        try:
            return self._github.get_user().login
        except GithubException as error:
            if error.status == 403 and "not accessible by integration" in message_of(error).lower():
                return ACTIONS_BOT_LOGIN
            raise

    def upsert_comment(self, number: int, body: str, marker: str) -> str:
        """Create, or edit in place, our one comment on ``number`` (``marker`` put first); its html_url."""
        # Ours starts with ``marker`` *and* is by own_login(): anyone can write the marker, never edit theirs.
        text = body if body.startswith(marker) else f"{marker}\n{body}"
        if len(text) > COMMENT_LIMIT:
            raise InputError(f"comment is {len(text)} characters, GitHub's limit is {COMMENT_LIMIT}", where="GitHub")
        return self._upsert(number, text, marker, self.own_login().lower())

    @_unit("post the comment on #{0}")
    def _upsert(self, number: int, text: str, marker: str, login: str) -> str:
        issue = self._repo.get_issue(number)
        for comment in issue.get_comments():
            author = comment.user.login.lower() if comment.user is not None else ""
            if author == login and (comment.body or "").startswith(marker):
                if comment.body != text:
                    comment.edit(text)
                return comment.html_url
        return issue.create_comment(text).html_url

    @_unit("open an issue")
    def open_issue(self, title: str, body: str) -> str:
        """Open an issue (e.g. a bisect's culprit); return its html_url."""
        if len(body) > COMMENT_LIMIT:
            raise InputError(f"issue body is {len(body)} characters, GitHub's limit is {COMMENT_LIMIT}", where="GitHub")
        return self._repo.create_issue(title=title, body=body).html_url

    @_unit("create the benchgate check on {0:.12}")
    def create_check_run(
        self, head_sha: str, *, conclusion: CheckConclusion, title: str, summary: str, details_url: str | None = None
    ) -> str:
        """Create the completed benchgate check run on ``head_sha`` (summary cut to GitHub's limit); its html_url."""
        # A retried creation may leave two runs of the same name: GitHub shows the latest.
        if len(summary) > CHECK_OUTPUT_LIMIT:
            summary = summary[: CHECK_OUTPUT_LIMIT - len(_TRUNCATED)] + _TRUNCATED
        output = {"title": title, "summary": summary}
        extra = {"details_url": details_url} if details_url else {}
        return self._repo.create_check_run(
            "benchgate", head_sha, status="completed", conclusion=conclusion, output=output, **extra
        ).html_url


def check_api_url(api_url: str) -> str:
    """``api_url`` without a trailing slash; InputError unless https with a host (http only to a loopback address)."""
    text = api_url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as error:
        raise InputError(f"GitHub API URL {text[:80]!r} is not a URL: {error}", where="GitHub") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise InputError(
            f"GitHub API URL must look like https://api.github.com or https://HOST/api/v3, got {text[:80]!r}",
            where="GitHub",
        )
    if parts.scheme == "http" and not _loopback(parts.hostname):
        raise InputError(
            f"GitHub API URL {text[:80]!r} is plain http: the token would travel unencrypted; use https "
            "(http is accepted only for a loopback address such as 127.0.0.1)",
            where="GitHub",
        )
    return text.rstrip("/")


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def message_of(error: GithubException) -> str:
    """The first line of GitHub's error message."""
    data = error.data if isinstance(error.data, dict) else {}
    return str(data.get("message") or error.message or "no message").strip().splitlines()[0]
