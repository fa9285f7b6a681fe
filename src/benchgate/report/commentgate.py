"""The gate's part of the PR comment (the verdict heading with failing and undecided rows, the power section),
and ``CommentContext``, what ``comment`` and this module render."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from benchgate.config.labels import LabelDecision
from benchgate.config.settings import Settings
from benchgate.report import gatelines
from benchgate.report.markup import code, plain
from benchgate.results.runrecord import RunSummary
from benchgate.stats.outcome import ACCEPTED, FAIL, INCONCLUSIVE, PASS, Outcome

MAX_LISTED = 30  # rows listed per kind; the table below has them all


@dataclass(frozen=True)
class CommentContext:
    """Everything the comment shows; built by ``benchgate report``."""

    gated: pd.DataFrame
    settings: Settings
    outcome: Outcome
    run: RunSummary
    labels: LabelDecision = LabelDecision()
    run_url: str | None = None
    full_report: str = "the job summary and the results artifact of the workflow run"
    nothing_selected: bool = False  # the change touches no benchmarked area, so nothing ran
    charts: tuple[str, ...] = ()  # file names of the charts written for the workflow run's artifact


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _listed(lines: list[str]) -> list[str]:
    """The first MAX_LISTED lines, and how many more the table below holds."""
    more = [f"- … and {len(lines) - MAX_LISTED} more, in the table below"] if len(lines) > MAX_LISTED else []
    return lines[:MAX_LISTED] + more


def verdict_words(outcome: Outcome, accepted_by: str | None = None) -> str:
    """The verdict in a few words (``accepted_by``: the comment's label, else the check run's wording)."""
    count = outcome.gating_rows
    what = f"{count} regression{'s' if count != 1 else ''}" if count else "the benchmark run"
    if outcome.verdict == PASS:
        return "no regression fails the gate"
    if outcome.verdict == INCONCLUSIVE:
        return f"inconclusive: {plural(outcome.undecided_rows, 'comparison')} undecided, none regresses"
    if outcome.verdict == ACCEPTED:
        return f"regression accepted by {accepted_by}" if accepted_by else f"{what} accepted by label"
    return f"{what} fail{'s' if count < 2 else ''} the gate"


def verdict_lines(ctx: CommentContext) -> list[str]:
    """The comment's heading and why: failing rows, problems, then the undecided rows and the runs they need."""
    outcome, prefix = ctx.outcome, ctx.settings.label_prefix
    prior = ctx.run.prior_variances if ctx.run is not None else {}
    listed = gatelines.listed_rows(ctx.gated, ctx.settings.inconclusive_above, prior)
    words = verdict_words(outcome, code(prefix + ":accept-regression"))
    title = f"### {gatelines.VERDICT_MARKS[outcome.verdict]} benchgate: {words}"
    if listed["coarse"] and outcome.verdict != FAIL:
        title += f" ({plural(len(listed['coarse']), 'comparison')} gated coarser than their target)"
    lines = [title, ""]
    gating = ctx.gated[ctx.gated["gating"]].itertuples(index=False)
    lines += _listed([f"- {code(f'{row.filename} {row.configuration}')}: {plain(row.gate_reason)}" for row in gating])
    lines += [f"- {plain(problem)}" for problem in outcome.problems]
    inconclusive = outcome.verdict == INCONCLUSIVE
    not_a_pass = "This is not a pass: each of these could still hide a regression."
    lines += listed_lines("undecided", listed["undecided"], not_a_pass if inconclusive else None)
    if listed["undecided"] and inconclusive:
        lines += [
            "",
            f"More runs decide them: a maintainer adds {code(prefix + ':runs=60')} or {code(prefix + ':runs=auto')}"
            f", or sets a min-effect for a benchmark known to be noisy.",
        ]
    return lines + listed_lines("noisy", listed["noisy"]) + listed_lines("coarse", listed["coarse"])


HEADINGS = {
    "undecided": "Also undecided ({}):",
    "noisy": "Too noisy to gate ({}), apart from the undecided rows:",
    "coarse": "Gated coarser than their target ({}), their noise could not reach it:",
}


def listed_lines(kind: str, items: list, heading: str | None = None) -> list[str]:
    """A heading (``HEADINGS``' by default) and the rows of one kind (``gatelines.MARKS``), at most MAX_LISTED."""
    if not items:
        return []
    lines = _listed([f"- {gatelines.MARKS[kind]} {item.line(code, plain)}" for item in items])
    return ["", (heading or HEADINGS[kind]).format(len(items)), "", *lines]


def power_lines(ctx: CommentContext) -> list[str]:
    """Per file, the regression its run would have found with 80 % probability: what could hide below it."""
    blind = gatelines.blind_spots(ctx.gated)
    if not blind:
        return []
    # The file name is untrusted: in a code span; the rest of the sentence is ours.
    lines = [f"- {spot.sentence(code(spot.filename))}" for spot in blind]
    summary = (
        "What this run could not have seen: regressions under each file's resolution "
        "(the smallest regression its evidence rules out)"
    )
    return [f"<details><summary>{summary}</summary>", "", *lines, "", "</details>"]


def check_title(result: Outcome, run: RunSummary) -> str:
    """The check run's title: the verdict in a few words."""
    if run.build_failure is not None:
        if run.build_failure.infrastructure:
            return "The base does not build (infrastructure error, not this PR's fault)"
        return "The head does not build"
    words = verdict_words(result)
    return words[0].upper() + words[1:]
