"""Who asked for a benchmark run of which commit, checked against the API; results must be of it (docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchgate.build.worktrees import FULL_SHA
from benchgate.config import labels
from benchgate.errors import InputError
from benchgate.github import actions_env


@dataclass(frozen=True)
class RunRequest:
    """A verified request: by whom and how; ``pull`` None is the repository's own commit (no PR)."""

    pr: int | None
    requester: str
    how: str
    pull: Any = None


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
    requester = labels.label_adders(client.label_events(pr)).get(label, "")
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
    return RunRequest(pr, requester, f"@{requester}, who has write access, added {label!r}", pull)
