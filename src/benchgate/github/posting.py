"""Where `benchgate report` posts: the client and PR, the PR's labels' decision, the sticky comment and check run."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from benchgate.config import labels
from benchgate.errors import (
    EXIT_BAD_INPUT,
    EXIT_GITHUB_UNREACHABLE,
    EXIT_OK,
    BenchgateError,
    GitHubUnavailable,
    InputError,
)
from benchgate.github import actions_env
from benchgate.github.pullfiles import default_benchmark_dir, pull_request_categories
from benchgate.report.comment import MARKER, NOTHING_TO_BENCHMARK
from benchgate.report.commentgate import check_title

CHECK_NAME = "benchgate"


@dataclass
class Posting:
    """The client and PR, the PR's labels' decision, what went wrong on the way (posting errors)."""

    client: Any = None
    pr: int | None = None
    pr_info: Any = None
    labels: labels.LabelDecision = field(default_factory=labels.LabelDecision)
    errors: list[BenchgateError] = field(default_factory=list)
    comment_url: str | None = None
    check_url: str | None = None

    def unbenchmarked(self, settings: Any, benchmark_dir: Any) -> list[str]:
        """A run that benchmarked nothing fails when the API says the PR's changed files map to categories."""
        if not self.pr or self.errors:
            return []
        try:  # a failure to ask is a posting error, never a pass
            placed = pull_request_categories(self.client, self.pr, settings, benchmark_dir or default_benchmark_dir())
        except BenchgateError as error:
            self.errors.append(error)
            return []
        touched = ", ".join(placed.categories)
        return [f"nothing was benchmarked, but the pull request's changed files map to {touched}"] if touched else []

    def post(self, body: str, head_sha: str | None, result: Any, run: Any, nothing: bool, stdout: Any) -> None:
        """The sticky comment (with a PR) and the check run; a failure is a posting error."""
        try:
            if self.pr:
                self.comment_url = self.client.upsert_comment(self.pr, body, MARKER)
                stdout.write(f"comment: {self.comment_url}\n")
            self.check_url = self.client.create_check_run(
                head_sha or self.pr_info.head_sha,
                name=CHECK_NAME,
                conclusion=result.check_conclusion,
                title=NOTHING_TO_BENCHMARK.capitalize() if nothing else check_title(result, run),
                summary=body.removeprefix(MARKER).lstrip("\n"),
                details_url=actions_env.workflow_run_url() or self.comment_url,
            )
            stdout.write(f"check: {self.check_url}\n")
        except BenchgateError as error:
            self.errors.append(error)

    def failure_status(self, status: int) -> tuple[int, str | None]:
        """The first posting error said (stderr, annotation) and its line; it turns a pass into 3 or 2."""
        if not self.errors:
            return status, None
        error = self.errors[0]
        print(f"benchgate: error: {error.one_line()}", file=sys.stderr)
        actions_env.error_annotation(f"could not post the report: {error.one_line()}", title="benchgate")
        if status == EXIT_OK:
            status = EXIT_GITHUB_UNREACHABLE if isinstance(error, GitHubUnavailable) else EXIT_BAD_INPUT
        return status, error.one_line()


def connect(options: Any, settings: Any, head_sha: str | None, client: Any) -> Posting:
    """The client, the PR and its labels' decision (``options``: report's); an unreachable GitHub is a posting error."""
    repository = options.repository or os.environ.get("GITHUB_REPOSITORY")
    pr = options.pr or actions_env.pull_request_number(actions_env.read_event())
    # Without a PR (a push, a schedule) only the check run is posted, on the given commit.
    missing = [name for name, value in (("--repository", repository), ("--pr", pr or head_sha)) if not value]
    if missing:
        raise InputError(
            f"posting needs {' and '.join(missing)} (or GITHUB_REPOSITORY and a pull_request event; "
            "or --head-sha for a check run alone); use --dry-run to print the comment instead"
        )
    if client is None:
        from benchgate.github.client import COMMENT_AUTHOR_ENV, from_environment  # PyGithub loads only to post

        author = options.comment_author or os.environ.get(COMMENT_AUTHOR_ENV) or None
        given = {"token": options.token, "api_url": options.api_url, "max_retries": options.retries}
        client = from_environment(repository=repository, comment_author=author, **given)
    posting = Posting(client, pr)
    try:
        posting.pr_info = client.pull_request(pr) if pr else None
    except BenchgateError as error:  # unreachable, or refused (token, permission): report anyway
        posting.errors.append(error)
    info = posting.pr_info
    if info is not None and head_sha and not info.head_sha.startswith(head_sha):
        raise InputError(
            f"PR #{pr}'s head is {info.head_sha[:12]} but the results are for {head_sha[:12]}: "
            "the PR moved since the approved run (or the results belong to another PR); not posting"
        )
    if info is not None:
        try:
            posting.labels = labels.decide_with_client(client, pr, info.labels, settings)
        except BenchgateError as error:
            posting.errors.append(error)
    return posting
