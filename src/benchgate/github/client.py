"""The GitHub REST API, as benchgate needs it: the only module that imports PyGithub.

Every public method is one retried unit (``benchgate.github.retrying``): a transient failure
runs it again from the start, which is what makes retrying writes safe.
"""

from __future__ import annotations

import ipaddress
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from github import Auth, Github, GithubException

from benchgate.errors import InputError
from benchgate.github.retrying import RetryingClient, message_of

WRITE_ROLES = frozenset({"admin", "maintain", "write"})
ROLES = ("admin", "maintain", "write", "triage", "read")
# The legacy "permission" field, for custom roles whose role_name is not a built-in one.
_PERMISSION_AS_ROLE = {"admin": "admin", "write": "write", "read": "read", "none": "none"}
CHECK_CONCLUSIONS = ("success", "failure", "neutral")
MAX_LISTED_FILES = 3000  # GitHub lists no more files of a pull request
COMMENT_LIMIT = 65536  # characters GitHub accepts in an issue comment body
CHECK_OUTPUT_LIMIT = 65535  # characters in a check run's output.summary and output.text
# Who an installation token (Actions' GITHUB_TOKEN) comments as; another GitHub App comments as "<slug>[bot]".
ACTIONS_BOT_LOGIN = "github-actions[bot]"
COMMENT_AUTHOR_ENV = "BENCHGATE_COMMENT_AUTHOR"
_TRUNCATED = "\n\n… (truncated to GitHub's limit)"


@dataclass(frozen=True)
class PullRequestInfo:
    """What benchgate needs to know about a pull request."""

    number: int
    head_sha: str
    base_sha: str
    head_ref: str
    base_ref: str
    labels: tuple[str, ...]
    html_url: str
    author: str
    head_repo: str  # owner/name of the head repository ("" when a fork was deleted)


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
    created_at: str  # ISO 8601, UTC, e.g. 2026-01-01T00:00:01Z
    event: str  # "labeled" | "unlabeled"


class GitHubClient(RetryingClient):
    """A client for one repository (``owner/name``) on github.com or a GitHub Enterprise Server.

    ``api_url`` is what Actions puts in ``GITHUB_API_URL``: ``https://api.github.com``,
    ``https://HOST/api/v3``, or a test server. ``token`` None means unauthenticated.
    """

    def __init__(
        self,
        *,
        token: str | None,
        repository: str,
        api_url: str = "https://api.github.com",
        max_retries: int = 5,
        backoff_seconds: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        max_wait_seconds: float = 300.0,
        clock: Callable[[], float] = time.time,
        timeout: float = 30.0,
        comment_author: str | None = None,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repository):
            raise InputError(f"repository must look like owner/name, got {repository!r}", where="GitHub")
        self.repository = repository
        self.api_url = check_api_url(api_url)
        if comment_author is not None and not _LOGIN.fullmatch(comment_author):
            raise InputError(f"comment author must be a GitHub login, got {comment_author[:60]!r}", where="GitHub")
        self._own_login = comment_author
        self.max_retries = max_retries
        self.backoff_seconds = backoff_seconds
        self.max_wait_seconds = max_wait_seconds
        self._sleep = sleep
        self._clock = clock
        self._github = Github(
            auth=Auth.Token(token) if token else None,
            base_url=self.api_url,
            timeout=int(timeout),
            per_page=100,
            retry=None,
            seconds_between_requests=None,
            seconds_between_writes=None,
            lazy=True,  # no request until an attribute is read: get_repo/get_issue cost nothing
        )
        self._repo = self._github.get_repo(repository)

    # -- the public operations, each one retried unit -------------------------------------------

    def pull_request(self, number: int) -> PullRequestInfo:
        """The pull request ``number`` (GET /repos/{o}/{r}/pulls/{n})."""

        def fetch() -> PullRequestInfo:
            pull = self._repo.get_pull(number)
            head_repo = pull.head.repo
            return PullRequestInfo(
                number=pull.number,
                head_sha=pull.head.sha,
                base_sha=pull.base.sha,
                head_ref=pull.head.ref,
                base_ref=pull.base.ref,
                labels=tuple(label.name for label in pull.labels),
                html_url=pull.html_url,
                author=pull.user.login if pull.user is not None else "ghost",
                head_repo=head_repo.full_name if head_repo is not None else "",
            )

        return self._retrying(f"read pull request #{number}", fetch)

    def changed_files(self, number: int) -> ChangedFiles:
        """The files pull request ``number`` changes (GET /repos/{o}/{r}/pulls/{n}/files, every page).

        A renamed file counts with both its paths. GitHub lists at most 3000 files, so a list
        that long is marked incomplete: the change may touch more than it shows.
        """

        def fetch() -> ChangedFiles:
            paths: dict[str, None] = {}
            count = 0
            for entry in self._repo.get_pull(number).get_files():
                count += 1
                paths[entry.filename] = None
                if entry.previous_filename:
                    paths[entry.previous_filename] = None
            return ChangedFiles(tuple(paths), complete=count < MAX_LISTED_FILES)

        return self._retrying(f"read the changed files of #{number}", fetch)

    def label_events(self, number: int) -> list[LabelEvent]:
        """Every labeled/unlabeled event of issue or PR ``number``, oldest first, across all pages."""

        def fetch() -> list[LabelEvent]:
            found = []
            for event in self._repo.get_issue(number).get_events():
                # Check the kind first: reading .label on another kind of event would make
                # PyGithub fetch the event again just to learn it has no label.
                if event.event not in ("labeled", "unlabeled"):
                    continue
                found.append(
                    LabelEvent(
                        label=event.label.name,
                        actor=event.actor.login if event.actor is not None else "ghost",
                        created_at=_iso(event.created_at),
                        event=event.event,
                    )
                )
            return found

        return self._retrying(f"read the label events of #{number}", fetch)

    def permission(self, username: str) -> str:
        """``username``'s role on the repository: admin, maintain, write, triage, read, or none.

        A user who is not a collaborator (GitHub answers 404) has role ``none``.
        A custom role maps to the base permission GitHub reports for it.
        """

        def fetch() -> str:
            try:
                # PyGithub URL-quotes the login itself.
                role = self._repo.get_collaborator_role_name(username)
                if role in ROLES:
                    return role
                return _PERMISSION_AS_ROLE.get(self._repo.get_collaborator_permission(username), "none")
            except GithubException as error:
                if error.status == 404:
                    return "none"
                raise

        return self._retrying(f"read {username}'s permission", fetch)

    def can_write(self, username: str) -> bool:
        """True when ``username`` has write, maintain or admin role (may start runs, loosen the gate)."""
        return self.permission(username) in WRITE_ROLES

    def own_login(self) -> str:
        """The login comments posted with this token carry (GET /user), asked once.

        A user token or PAT answers GET /user with its user. An installation token (the
        GITHUB_TOKEN of Actions) is refused with 403 "Resource not accessible by
        integration": its comments carry the Actions bot's login, ``github-actions[bot]``.
        Another GitHub App's token comments as ``<slug>[bot]``: pass ``comment_author``.
        """
        if self._own_login is None:

            def fetch() -> str:
                try:
                    return self._github.get_user().login
                except GithubException as error:
                    if error.status == 403 and "not accessible by integration" in message_of(error).lower():
                        return ACTIONS_BOT_LOGIN
                    raise

            self._own_login = self._retrying("read who the token belongs to", fetch)
        return self._own_login

    def upsert_comment(self, number: int, body: str, marker: str) -> str:
        """Create or edit in place the one comment of ours on ``number``; return its html_url.

        Our comment is the first whose body starts with ``marker`` (a hidden HTML
        comment such as ``<!-- benchgate -->``) *and* whose author is this token's
        own login (:meth:`own_login`): anyone can write a comment starting with the
        marker, and benchgate must never edit theirs. All pages are searched, so it
        is found on PRs with hundreds of comments. ``marker`` is put at the start of
        ``body`` when it is not there already.
        """
        if not marker.strip():
            raise InputError("the comment marker must not be empty", where="GitHub")
        text = body if body.startswith(marker) else f"{marker}\n{body}"
        if len(text) > COMMENT_LIMIT:
            raise InputError(f"comment is {len(text)} characters, GitHub's limit is {COMMENT_LIMIT}", where="GitHub")
        login = self.own_login().lower()

        def upsert() -> str:
            issue = self._repo.get_issue(number)
            for comment in issue.get_comments():
                author = comment.user.login.lower() if comment.user is not None else ""
                if author == login and (comment.body or "").startswith(marker):
                    if comment.body != text:
                        comment.edit(text)
                    return comment.html_url
            return issue.create_comment(text).html_url

        return self._retrying(f"post the comment on #{number}", upsert)

    def open_issue(self, title: str, body: str) -> str:
        """Open an issue (e.g. a bisect's culprit); return its html_url."""
        if len(body) > COMMENT_LIMIT:
            raise InputError(f"issue body is {len(body)} characters, GitHub's limit is {COMMENT_LIMIT}", where="GitHub")
        return self._retrying("open an issue", lambda: self._repo.create_issue(title=title, body=body).html_url)

    def create_check_run(
        self,
        head_sha: str,
        *,
        name: str = "benchgate",
        conclusion: str,
        title: str,
        summary: str,
        text: str | None = None,
        details_url: str | None = None,
    ) -> str:
        """Create a completed check run on ``head_sha``; return its html_url.

        ``summary`` and ``text`` beyond GitHub's 65,535 characters are cut with a note.
        A retried creation may leave two runs of the same name; GitHub shows the latest.
        """
        if conclusion not in CHECK_CONCLUSIONS:
            raise InputError(
                f"check conclusion must be one of {', '.join(CHECK_CONCLUSIONS)}, got {conclusion!r}", where="GitHub"
            )
        output = {"title": title, "summary": _fit(summary, CHECK_OUTPUT_LIMIT)}
        if text is not None:
            output["text"] = _fit(text, CHECK_OUTPUT_LIMIT)
        extra = {"details_url": details_url} if details_url else {}

        def create() -> str:
            run = self._repo.create_check_run(
                name, head_sha, status="completed", conclusion=conclusion, output=output, **extra
            )
            return run.html_url

        return self._retrying(f"create the {name} check on {head_sha[:12]}", create)


_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")


def from_environment(
    *, repository: str | None = None, token: str | None = None, api_url: str | None = None, **options: Any
) -> GitHubClient:
    """A client; repository, token and API URL default to the runner's GITHUB_REPOSITORY, _TOKEN, _API_URL."""
    return GitHubClient(
        token=token or os.environ.get("GITHUB_TOKEN") or None,
        repository=repository or os.environ.get("GITHUB_REPOSITORY", ""),
        api_url=api_url or os.environ.get("GITHUB_API_URL") or "https://api.github.com",
        **options,
    )


def check_api_url(api_url: str) -> str:
    """``api_url`` without a trailing slash; InputError (exit 2) unless it is an https URL with a host.

    Plain http only to a loopback address (a local test server): anywhere else the token would
    cross the network in clear text.
    """
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
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _iso(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _fit(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(_TRUNCATED)] + _TRUNCATED
