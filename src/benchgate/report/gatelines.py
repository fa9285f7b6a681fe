"""The gate in words, for every report: the verdict line, change cells, listed rows, the PR comment's verdict."""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd

from benchgate.config.labels import LabelDecision
from benchgate.config.settings import Settings
from benchgate.report.markup import code, plain
from benchgate.results.runrecord import RunSummary
from benchgate.stats.analysis import untested_reason
from benchgate.stats.decisions import format_change
from benchgate.stats.gate import THRESHOLDS, GatePolicy
from benchgate.stats.outcome import ACCEPTED, FAIL, INCONCLUSIVE, PASS, Outcome
from benchgate.stats.yuenwelch import GATE_TEST


def gate_test(gated: pd.DataFrame) -> str:
    """The name of the test the decisions come from (the gate's, for an empty table)."""
    return str(gated["gate_test"].iloc[0]) if len(gated) else GATE_TEST


def change_cell(row: Any) -> str:
    """``-12.3 % [-14.1, -10.5]``: the gate's change with its interval at the gate's level (``n/a`` untested)."""
    return format_change(float(row.change), float(row.ci_low), float(row.ci_high))


def decision_cell(row: Any) -> str:
    """The decision with the resolution an unchanged row promises: ``unchanged (≤ 10 %)``."""
    if str(row.decision) != "unchanged" or not math.isfinite(row.gated_at):
        return str(row.decision)
    return f"unchanged (≤ {row.gated_at:.3g} %)"


def _name(row: Any) -> str:
    return f"{row.filename} {row.configuration}"


@dataclass(frozen=True)
class Listed:
    """A row listed under the verdict (undecided, noisy or coarse), ready to print; a noisy row's settling rule."""

    name: str
    sentence: str
    rule: str  # a noisy row's: the configuration that would settle it
    floor: float  # percent: the regression it had to rule out (its rule's min-effect, else the policy's floor)

    def line(self, span: Callable[[str], str] = str, prose: Callable[[str], str] = str) -> str:
        """``name: sentence``, the name (and a rule) through ``span``, the sentence through ``prose``."""
        settled = f"; settled by {span(self.rule)}" if self.rule else ""
        return f"{span(self.name)}: {prose(self.sentence)}{settled}"


def _undecided(row: Any, floor: float, prior: Any) -> tuple[str, str]:
    runs = "no number of runs up to 10,000 would decide it at this noise"
    if row.runs_needed is not None and math.isfinite(row.runs_needed):
        runs = f"about {int(row.runs_needed)} runs a side would decide it"
    return f"{change_cell(row)}: could not rule out a {floor:g} % regression; {runs}", ""


def _noisy(row: Any, floor: float, prior: Any) -> tuple[str, str]:
    """Its noise and whether it holds the verdict, and the rule that settles it (a min-effect or a noise budget)."""
    mde, sigma = row.noisy_mde, row.sigma
    could = f"; the smallest regression it could rule out by max-runs is {mde:.1f} %" if mde < 1e5 else ""
    budget = "it keeps the verdict inconclusive" if row.undecided else "beyond the noise budget, it does not gate"
    rule = f"noisy: {{max-sigma: {max(math.floor(sigma * 10) / 10 - 0.1, 0.1):g}%}}"
    if math.isfinite(mde) and mde < 1e5:
        rule = f"{{match: '{row.filename}', min-effect: {math.ceil(mde)}%}} in rules, or {rule}"
    return f"too noisy to gate at {floor:g} %: σ {sigma:.1f} %{could}; {budget}", rule


def _coarse(row: Any, floor: float, prior: Any) -> tuple[str, str]:
    source = " (main's history)" if (row.filename, row.configuration) in prior else ""
    return (
        f"σ {row.sigma:.1f} %{source} cannot reach {floor:g} % in the planned runs: "
        f"gated at {row.gated_at:.1f} %, it rules out a regression of {max(row.resolution, 0.0):.1f} %"
    ), ""


class Kind(NamedTuple):
    """A kind of listed row: which rows, ordered by which column (largest first), and how each report shows them."""

    select: Callable[[pd.DataFrame], pd.Series]
    order: str
    sentence: Callable[[Any, float, Any], tuple[str, str]]
    mark: str
    heading: str


KINDS = {
    "undecided": Kind(
        lambda gated: gated["undecided"] & ~gated["noisy"],  # the noisy ones are listed apart
        "interval_width",
        _undecided,
        "❓",
        "Also undecided ({}):",
    ),
    "noisy": Kind(
        lambda gated: gated["noisy"], "sigma", _noisy, "🔊", "Too noisy to gate ({}), apart from the undecided rows:"
    ),
    "coarse": Kind(  # unchanged rows whose base's σ could not reach their target by max-runs
        lambda gated: gated["coarse"] & (gated["decision"] == "unchanged"),
        "gated_at",
        _coarse,
        "🔍",
        "Gated coarser than their target ({}), their noise could not reach it:",
    ),
}
VERDICT_MARKS = {"fail": "❌", "accepted": "⚠️", "inconclusive": "❓", "pass": "✅"}


def listed_rows(gated: pd.DataFrame, floor: float, prior=()) -> dict[str, list[Listed]]:
    """The rows every report lists under its verdict, by kind (``KINDS``), largest first; ``floor``: the regression
    a row must rule out when no rule gives it a min-effect; ``prior``: the keys whose σ is main's history's
    (run.json's prior), not this run's base's."""
    gated = gated.assign(interval_width=(gated["ci_high"] - gated["ci_low"]).fillna(math.inf))
    listed = {}
    for name, kind in KINDS.items():
        rows = gated[kind.select(gated)].sort_values(kind.order, ascending=False, kind="mergesort")
        targets = [
            (row, float(row.min_effect) if row.min_effect > 0 else floor) for row in rows.itertuples(index=False)
        ]
        listed[name] = [Listed(_name(row), *kind.sentence(row, target, prior), floor=target) for row, target in targets]
    return listed


def blind_spots(gated: pd.DataFrame, span: Callable[[str], str] = str) -> list[str]:
    """Per file, largest first: the regressions its unchanged judged rows could hide, the file name through ``span``."""
    column = "resolution" if gated["resolution"].notna().any() else "mde"
    rows = gated[(gated["decision"] == "unchanged") & ~gated["ignored"] & gated[column].notna()]
    worst = [group.loc[group[column].idxmax()] for _, group in rows.groupby("filename", sort=False)]
    return [
        f"regressions under {max(float(row[column]), 0.0):.1f} % in {span(str(row['filename']))} could not have been "
        f"seen with {int(min(row['n_base'], row['n_head']))} runs"
        for row in sorted(worst, key=lambda row: -max(float(row[column]), 0.0))
    ]


def with_untested(gated: pd.DataFrame, problems: Sequence[str]) -> Sequence[str]:
    """``problems`` and ``analysis.untested_reason`` when no comparison could be tested."""
    untested = untested_reason(gated)
    if untested is not None and untested not in problems:
        return [*problems, untested]  # nothing tested fails the gate, whatever the statistics say
    return problems


def gate_finding(gated: pd.DataFrame, policy: GatePolicy) -> tuple[str, bool]:
    """What the statistics found, and whether that is a plain pass (the finding then needs its verdict)."""
    count = len(gated)
    failing = int(gated["gating"].sum())
    correction = "Holm correction" if policy.correction == "holm" else "no correction"
    effect = f", minimum effect {policy.min_effect:g} %" if policy.min_effect > 0 else ""
    where = f"at {policy.threshold} after {correction}{effect}"
    if THRESHOLDS[policy.threshold] is None:
        return f"off (--threshold off): no comparison can fail ({count} comparisons)", False
    if failing:
        return f"FAIL: {failing} of {count} comparisons regress {where}", False
    held = int(gated["undecided"].sum())
    coarse = int(KINDS["coarse"].select(gated).sum())
    coarser = f"; {coarse} gated coarser than their target, at most {policy.max_resolution:g} %" if coarse else ""
    if held:
        return f"INCONCLUSIVE: {held} of {count} comparisons undecided {where}, none regresses{coarser}", False
    return f"no regression {where} ({count} comparisons{coarser})", True


def gate_headline(gated: pd.DataFrame, policy: GatePolicy, problems: Sequence[str] = ()) -> str:
    """The gate's verdict line, the first of ``tables.gate_summary``."""
    problems = with_untested(gated, problems)
    if problems:
        return f"gate: FAIL: {'; '.join(problems)}"
    finding, passed = gate_finding(gated, policy)
    return f"gate: pass: {finding}" if passed else f"gate: {finding}"


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


def truncated(lines: list[str], limit: int = MAX_LISTED, more: str = "- … and {} more, in the table") -> list[str]:
    """The first ``limit`` lines, then ``more`` with how many were left out."""
    return lines[:limit] + ([more.format(len(lines) - limit)] if len(lines) > limit else [])


# Whose build failed (infrastructure: the base's) -> the verdict's mark and words.
BUILD_FAILURES = {
    True: ("⚠️", "the base does not build (infrastructure error, not this PR's fault)"),
    False: ("❌", "the head does not build"),
}


def verdict_words(outcome: Outcome, run: RunSummary, accepted_by: str = "label") -> tuple[str, str]:
    """The verdict's mark and a few words, for the comment's heading and the check run's title."""
    if run.build_failure is not None:
        return BUILD_FAILURES[run.build_failure.infrastructure]
    count = outcome.gating_rows
    what = plural(count, "regression") if count else "the benchmark run"
    words = {
        PASS: "no regression fails the gate",
        INCONCLUSIVE: f"inconclusive: {plural(outcome.undecided_rows, 'comparison')} undecided, none regresses",
        ACCEPTED: f"{what} accepted by {accepted_by}",
        FAIL: f"{what} fail{'s' if count < 2 else ''} the gate",
    }
    return VERDICT_MARKS[outcome.verdict], words[outcome.verdict]


def gating_lines(gated: pd.DataFrame) -> list[str]:
    """The failing rows and why, at most MAX_LISTED."""
    rows = gated[gated["gating"]].itertuples(index=False)
    return truncated([f"- {code(_name(row))}: {plain(row.gate_reason)}" for row in rows])


def verdict_lines(ctx: CommentContext) -> list[str]:
    """The comment's heading and why: failing rows, problems, then the undecided rows and the runs they need."""
    outcome, prefix = ctx.outcome, ctx.settings.label_prefix
    listed = listed_rows(ctx.gated, ctx.settings.inconclusive_above, ctx.run.prior)
    mark, words = verdict_words(outcome, ctx.run, code(prefix + ":accept-regression"))
    title = f"### {mark} benchgate: {words}"
    if listed["coarse"] and outcome.verdict != FAIL:
        title += f" ({plural(len(listed['coarse']), 'comparison')} gated coarser than their target)"
    lines = [title, "", *gating_lines(ctx.gated)]
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


def listed_lines(kind: str, items: list[Listed], heading: str | None = None) -> list[str]:
    """A heading (``KINDS``' by default) and the rows of one kind (``KINDS``' mark), at most MAX_LISTED."""
    if not items:
        return []
    mark, default = KINDS[kind].mark, KINDS[kind].heading
    lines = truncated([f"- {mark} {item.line(code, plain)}" for item in items])
    return ["", (heading or default).format(len(items)), "", *lines]


def power_lines(gated: pd.DataFrame) -> list[str]:
    """Per file, the regression its run would have found with 80 % probability: what could hide below it."""
    # The file name is untrusted: in a code span; the rest of the sentence is ours.
    lines = [f"- {spot}" for spot in blind_spots(gated, code)]
    if not lines:
        return []
    summary = (
        "What this run could not have seen: regressions under each file's resolution "
        "(the smallest regression its evidence rules out)"
    )
    return [f"<details><summary>{summary}</summary>", "", *lines, "", "</details>"]


def check_title(result: Outcome, run: RunSummary) -> str:
    """The check run's title: the verdict in a few words."""
    words = verdict_words(result, run)[1]
    return words[0].upper() + words[1:]
