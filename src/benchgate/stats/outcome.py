"""The verdict of a report: the gated rows plus everything else that must not pass silently.
Head-only failures, starved rows, nothing tested or an incomplete run fail too; an undecided row is never a pass."""

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from benchgate.errors import EXIT_BUILD_FAILED, EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, EXIT_OK
from benchgate.results.recordparts import FailureEntry
from benchgate.results.runrecord import RunSummary
from benchgate.stats.analysis import Verdict, untested_reason

PASS, FAIL, INCONCLUSIVE = Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE  # the statistics' verdicts
ACCEPTED = "accepted"  # a trusted label accepted the regressions
# The base did not build: no verdict on the PR (a neutral check), but never a pass either.
ERROR = "error"
_EXIT_STATUS = {ERROR: EXIT_BUILD_FAILED, INCONCLUSIVE: EXIT_INCONCLUSIVE, FAIL: EXIT_GATE_FAILED}  # else EXIT_OK


@dataclass(frozen=True)
class Outcome:
    """What the report concludes, and why."""

    verdict: str
    gating_rows: int
    head_failures: tuple[FailureEntry, ...]
    problems: tuple[str, ...]
    undecided_rows: int = 0

    @property
    def check_conclusion(self) -> str:
        return {PASS: "success", FAIL: "failure"}.get(self.verdict, "neutral")  # accepted, error, inconclusive

    @property
    def exit_status(self) -> int:
        return _EXIT_STATUS.get(self.verdict, EXIT_OK)


def head_only_failures(run: RunSummary) -> tuple[FailureEntry, ...]:
    """Failures of the head where the base did not fail on the same benchmark configuration."""
    base_failed = {(f.filename, f.configuration) for f in run.failures if f.side in ("base", "both")}
    return tuple(
        failure
        for failure in run.failures
        if failure.side == "head" and (failure.filename, failure.configuration) not in base_failed
    )


def decide(
    gated: pd.DataFrame, run: RunSummary, *, accept_regression: bool = False, problems: Sequence[str] = ()
) -> Outcome:
    """The verdict over the gated table and the run summary (``problems``: what else the caller found failing)."""
    if (failure := run.build_failure) is not None:  # the head fails the gate (no label accepts it); the base: error
        commit = (failure.ref or "?") + (f" ({failure.sha[:12]})" if failure.sha else "")
        if failure.infrastructure:
            problem = f"the base {commit} does not build: an infrastructure error, not this pull request's fault"
            return Outcome(ERROR, 0, (), (problem,))
        return Outcome(FAIL, 0, (), (f"the head {commit} does not build",))
    gating_rows = int(gated["gating"].sum())
    head_failures = head_only_failures(run)
    problems = list(problems)
    if head_failures:
        problems.append(f"{len(head_failures)} benchmark process(es) failed on the head where the base succeeded")
    starved = gated[(gated["n_base"] >= 2) & (gated["n_head"] < 2) & ~gated["ignored"]]
    failed_keys = {(f.filename, f.configuration) for f in head_failures}
    unexplained = set(zip(starved["filename"], starved["configuration"], strict=True)) - failed_keys
    untested = untested_reason(gated)
    if untested is not None:
        problems.append(untested)
    elif unexplained:
        problems.append(f"{len(unexplained)} configuration(s) have base samples but fewer than 2 head samples")
    if not run.complete:
        problems.append("the run did not complete, so part of the selection was never measured")
    failed = bool(gating_rows or problems)
    undecided = int(gated["undecided"].sum())
    # Undecided rows never make a pass; a label that accepts regressions does not accept them either.
    verdict = (ACCEPTED if accept_regression else FAIL) if failed else INCONCLUSIVE if undecided else PASS
    return Outcome(verdict, gating_rows, head_failures, tuple(problems), undecided)
