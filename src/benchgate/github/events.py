"""The trust policy keyed on the workflow event's name, once, and action.yml's first step: the mode guard.

Standard library only: the guard runs (``python3 -m benchgate.github.events`` with the action's
``src`` on PYTHONPATH) before benchgate is installed, so a refused mode installs nothing.
"""

from __future__ import annotations

import os
import sys

from benchgate.errors import EXIT_BAD_INPUT, EXIT_OK

MODES = ("authorize", "run", "report", "all")
# The repository's own commits: approved as they are.
OWN_COMMIT_EVENTS = ("push", "schedule")
# A run of a pull request's code, or a maintainer's dispatch of one: approved only through the API
# (authorize), and its checkout (benchmark files included) is untrusted: every process runs sandboxed.
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target", "workflow_dispatch")
# Events that run with a write token on a pull request's behalf: mode all (the token and the PR's code
# in one job) is refused for them.
TOKEN_FOR_PULL_REQUEST_EVENTS = ("pull_request_target", "workflow_run", "issue_comment")


def mode_refusal(mode: str, event_name: str) -> str | None:
    """Why ``mode`` may not run for ``event_name``; None when it may."""
    if not mode:
        return "input mode is required: authorize, run, report or all"
    if mode not in MODES:
        return "input mode must be authorize, run, report or all"
    if mode == "all" and event_name in TOKEN_FOR_PULL_REQUEST_EVENTS:
        return (
            f"mode all is refused for a {event_name} event: it would run the pull request's code in the job that "
            "holds the token; use modes authorize, run and report in separate jobs (examples/workflows/benchmark.yml)"
        )
    return None


def main() -> int:
    """action.yml's mode step: ``$BENCHGATE_MODE`` against ``$GITHUB_EVENT_NAME``; one ``::error`` line, exit 2."""
    refusal = mode_refusal(os.environ.get("BENCHGATE_MODE", ""), os.environ.get("GITHUB_EVENT_NAME", ""))
    if refusal is None:
        return EXIT_OK
    print(f"::error title=benchgate::{refusal}")
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
