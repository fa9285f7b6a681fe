"""The trusted jobs' API checks: who asked for a run of which commit (authorize), where its report posts (report),
and the categories a PR touches, from GitHub's list of its changed files: never from the run directory."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchgate.build.worktrees import FULL_SHA
from benchgate.config import Settings, labels
from benchgate.errors import EXIT_BAD_INPUT, EXIT_GITHUB_UNREACHABLE, BenchgateError, GitHubUnavailable, InputError
from benchgate.github import actions_env
from benchgate.report.comment import MARKER, NOTHING_TO_BENCHMARK
from benchgate.report.gatelines import check_title
from benchgate.run.changedfiles import ChangedCategories, load_mapping, map_changes, parse_mapping
from benchgate.run.suite import list_categories

_BENCHMARK_CATEGORY = re.compile(r"^benchmark/([^/]+)/")


def pull_request_categories(client: Any, pr: int, settings: Settings, benchmark_dir: Path | None) -> ChangedCategories:
    """The categories PR ``pr`` touches, by the changed-files map; those of ``benchmark_dir`` (default ./benchmark,
    the base's checkout) and the PR's new ones exist (no such directory: every category a rule names)."""
    changed = client.changed_files(pr)
    where = "the configuration's changed-files"
    mapping = parse_mapping(settings.changed_files, where) if settings.changed_files else load_mapping()
    available, benchmark_dir = None, benchmark_dir or Path("benchmark").resolve()
    if benchmark_dir.is_dir():
        added = {match.group(1) for path in changed.paths if (match := _BENCHMARK_CATEGORY.match(path))}
        available = set(list_categories(benchmark_dir)) | added
    placed = map_changes(list(changed.paths), mapping, available)
    if not changed.complete:  # GitHub lists 3000 files at most: never "nothing to benchmark" from a cut list
        placed.categories = list(dict.fromkeys([*placed.categories, *placed.fallback, *mapping.default]))
    return placed


@dataclass(frozen=True)
class RunRequest:
    """A verified request: by whom and how; ``pull`` None: no PR; ``adders``: who added each label last, if read."""

    pr: int | None
    requester: str
    how: str
    pull: Any = None
    adders: Mapping[str, str] | None = None


def refusal(message: str) -> InputError:
    """The run refused: an ``::error`` annotation, and the InputError (exit 2) to raise."""
    actions_env.error_annotation(message, title="benchgate authorize")
    return InputError(message, where="authorize")


def approved_sha(head_sha: str | None) -> str | None:
    """``--head-sha`` as a full lowercase commit SHA; InputError (exit 2) unless it is 40 hex digits."""
    if head_sha is None:
        return None
    sha = head_sha.strip().lower()
    if not FULL_SHA.fullmatch(sha):
        raise InputError(f"--head-sha must be a full 40-character hexadecimal commit SHA, got {head_sha[:60]!r}")
    return sha


def check_results_commit(run: Any, head_sha: str | None) -> None:
    """The results must record the approved head commit (``run``: their RunSummary)."""
    if head_sha is None:
        return
    recorded = run.head.sha
    if not recorded:
        # Without a recorded commit nothing shows the results are the approved commit's: refuse, never skip.
        raise InputError(
            f"--head-sha {head_sha[:12]}: the results record no head commit (no run.json, or a run of "
            "given binaries), so they cannot be checked against the approved commit"
        )
    if not (head_sha.startswith(recorded) or recorded.startswith(head_sha)):
        raise InputError(f"the results are for head commit {recorded[:12]}, not the approved {head_sha[:12]}")


def dispatch_request(client: Any, event: Mapping[str, Any], requester: str) -> RunRequest:
    """A workflow_dispatch by a writer; for a PR, its ``sha`` input must be the PR's head."""
    pr = actions_env.pull_request_number(event)
    if not requester or not client.can_write(requester):
        raise refusal(f"@{requester or '?'} started the workflow but lacks write, maintain or admin permission")
    how = f"started by @{requester}, who has write access"
    if pr is None:
        return RunRequest(None, requester, how)
    wanted = str((event.get("inputs") or {}).get("sha") or "").strip()
    if not FULL_SHA.fullmatch(wanted):
        raise refusal(
            f"workflow_dispatch of PR #{pr} needs the sha input: the full 40-digit head commit you approve"
            + (f", not {wanted[:50]!r}" if wanted else "")
        )
    pull = client.pull_request(pr)
    if pull.head_sha != wanted:
        raise refusal(f"PR #{pr} moved: its head is {pull.head_sha[:12]}, not the approved {wanted[:12]}")
    return RunRequest(pr, requester, how, pull)


def label_request(client: Any, event: Mapping[str, Any], label: str) -> RunRequest | None:
    """``label`` just added, by a writer who added it last, to a PR still at that head; None: not a request."""
    if event.get("action") != "labeled" or ((event.get("label") or {}).get("name") or "") != label:
        return None
    pr = actions_env.pull_request_number(event)
    if pr is None:
        raise refusal("the event payload names no pull request")
    approved_sha = str(((event.get("pull_request") or {}).get("head") or {}).get("sha") or "")
    adders = labels.label_adders(client.label_events(pr))
    requester = adders.get(label, "")
    if not requester:
        raise refusal(f"the issue events of #{pr} do not show who added {label!r}")
    sender = str((event.get("sender") or {}).get("login") or "")
    if sender != requester:
        # The event must be the label's last addition: a replayed or forged payload is not.
        raise refusal(
            f"the event's sender @{sender or '?'} is not @{requester}, who added {label!r} last "
            "according to the issue events"
        )
    if not client.can_write(requester):
        raise refusal(f"@{requester} added {label!r} but lacks write, maintain or admin permission")
    pull = client.pull_request(pr)
    if label not in pull.labels:
        raise refusal(f"the {label!r} label was removed from #{pr} since")
    if not approved_sha or pull.head_sha != approved_sha:
        raise refusal(
            f"PR #{pr} moved since @{requester} added {label!r}: approved {approved_sha[:12] or '?'}, "
            f"now {pull.head_sha[:12]}; remove and add the label again to approve the new commits"
        )
    return RunRequest(pr, requester, f"@{requester}, who has write access, added {label!r}", pull, adders)


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
            placed = pull_request_categories(self.client, self.pr, settings, benchmark_dir)
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
        if status == 0:  # a pass
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
        from benchgate.github.client import GitHubClient  # PyGithub loads only to post

        given = {"token": options.token, "api_url": options.api_url, "max_retries": options.retries}
        client = GitHubClient(repository=repository, comment_author=options.comment_author or None, **given)
    posting = Posting(client, pr)
    try:
        posting.pr_info = client.pull_request(pr) if pr else None
    except BenchgateError as error:  # unreachable, or refused (token, permission): report anyway
        posting.errors.append(error)
    if (info := posting.pr_info) is not None:
        if head_sha and not info.head_sha.startswith(head_sha):
            raise InputError(
                f"PR #{pr}'s head is {info.head_sha[:12]} but the results are for {head_sha[:12]}: "
                "the PR moved since the approved run (or the results belong to another PR); not posting"
            )
        try:
            posting.labels = labels.decide_with_client(client, pr, info.labels, settings)
        except BenchgateError as error:
            posting.errors.append(error)
    return posting
