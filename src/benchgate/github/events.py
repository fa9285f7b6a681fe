"""The trust policy keyed on the workflow event's name, and action.yml's first step, the mode guard: standard
library only, as it runs (``python3 -m benchgate.github.events``) before benchgate is installed."""

import json
import os
import sys
from collections.abc import Mapping

from benchgate.errors import EXIT_BAD_INPUT, EXIT_OK

MODES = ("authorize", "run", "report", "all", "bisect")
# The repository's own commits: approved as they are.
OWN_COMMIT_EVENTS = ("push", "schedule")
# A run of a pull request's code, or a maintainer's dispatch of one: approved only through the API
# (authorize), and its checkout (benchmark files included) is untrusted: every process runs sandboxed.
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target", "workflow_dispatch")
# Events that run with a write token on a pull request's behalf: mode all (the token and the PR's code
# in one job) is refused for them.
TOKEN_FOR_PULL_REQUEST_EVENTS = ("pull_request_target", "workflow_run", "issue_comment")
# Modes that build and run the repository's own commits with the store and the build cache, for no pull request:
# only the repository's own events on its default branch start them (a dispatch there is a maintainer's).
DEFAULT_BRANCH_MODES = ("bisect",)
DEFAULT_BRANCH_EVENTS = ("push", "schedule", "workflow_dispatch")


def mode_refusal(mode: str, event_name: str, ref: str = "", default_branch: str = "") -> str | None:
    """Why ``mode`` may not run for ``event_name`` (on ``ref``, the default branch being ``default_branch``)."""
    if not mode:
        return "input mode is required: authorize, run, report, all or bisect"
    if mode not in MODES:
        return "input mode must be authorize, run, report, all or bisect"
    if mode in DEFAULT_BRANCH_MODES and event_name not in DEFAULT_BRANCH_EVENTS:
        return (
            f"mode {mode} is refused for a {event_name or 'unnamed'} event: it runs only for push, schedule or "
            "workflow_dispatch on the default branch (the repository's own commits)"
        )
    # GitHub runs scheduled workflows on the default branch only.
    on_default = bool(default_branch) and ref == f"refs/heads/{default_branch}"
    if mode in DEFAULT_BRANCH_MODES and event_name != "schedule" and not on_default:
        return (
            f"mode {mode} is refused for {event_name} on {ref or 'no ref'}: it runs only on the default branch "
            f"({default_branch or 'not in the event payload'})"
        )
    if mode == "all" and event_name in TOKEN_FOR_PULL_REQUEST_EVENTS:
        return (
            f"mode all is refused for a {event_name} event: it would run the pull request's code in the job that "
            "holds the token; use modes authorize, run and report in separate jobs (examples/workflows/benchmark.yml)"
        )
    return None


def mode_refusal_of(mode: str, environ: Mapping[str, str]) -> str | None:
    """:func:`mode_refusal` of ``mode`` for the event, ref and default branch (the payload's) ``environ`` gives."""
    try:
        with open(environ.get("GITHUB_EVENT_PATH", ""), encoding="utf-8") as handle:
            payload = json.load(handle)
    except (OSError, ValueError):
        payload = None
    repository = payload.get("repository") if isinstance(payload, dict) else None
    branch = repository.get("default_branch") if isinstance(repository, dict) else None
    default_branch = branch if isinstance(branch, str) else ""
    return mode_refusal(mode, environ.get("GITHUB_EVENT_NAME", ""), environ.get("GITHUB_REF", ""), default_branch)


def main() -> int:
    """action.yml's mode step: ``$BENCHGATE_MODE`` against ``$GITHUB_EVENT_NAME``; one ``::error`` line, exit 2."""
    refusal = mode_refusal_of(os.environ.get("BENCHGATE_MODE", ""), os.environ)
    if refusal is None:
        return EXIT_OK
    print(f"::error title=benchgate::{refusal}")
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
