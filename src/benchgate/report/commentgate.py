"""The gate's part of the PR comment: the verdict heading with failing and undecided rows, and the power section."""

from __future__ import annotations

from benchgate.report import gatelines
from benchgate.report.commentcontext import CommentContext
from benchgate.report.markup import code, plain
from benchgate.results.runrecord import RunSummary
from benchgate.stats.outcome import ACCEPTED, FAIL, INCONCLUSIVE, PASS, Outcome


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def verdict_lines(ctx: CommentContext) -> list[str]:
    """The comment's heading and why: failing rows, problems, then the undecided rows and the runs they need."""
    outcome, prefix = ctx.outcome, ctx.settings.label_prefix
    count = outcome.gating_rows
    undecided = gatelines.undecided_rows(ctx.gated, ctx.settings.min_effect, ctx.settings.inconclusive_above)
    noisy = gatelines.noisy_rows(ctx.gated, ctx.settings.min_effect, ctx.settings.inconclusive_above)
    held = int(ctx.gated["undecided"].sum()) if "undecided" in ctx.gated else len(undecided)
    if outcome.verdict == FAIL:
        title = f"### ❌ benchgate: {count} regression{'s fail' if count != 1 else ' fails'} the gate"
        if not count:
            title = "### ❌ benchgate: the benchmark run fails the gate"
    elif outcome.verdict == ACCEPTED:
        title = f"### ⚠️ benchgate: regression accepted by {code(prefix + ':accept-regression')}"
    elif outcome.verdict == INCONCLUSIVE:
        title = f"### ❓ benchgate: inconclusive: {plural(held, 'comparison')} undecided, none regresses"
    else:
        title = "### ✅ benchgate: no regression fails the gate"
    prior = ctx.run.prior_variances if ctx.run is not None else {}
    coarse = gatelines.coarse_rows(ctx.gated, ctx.settings.min_effect, ctx.settings.inconclusive_above, prior)
    if coarse and outcome.verdict != FAIL:
        title += f" ({plural(len(coarse), 'comparison')} gated coarser than their target)"
    lines = [title, ""]
    gating = ctx.gated[ctx.gated["gating"]]
    for row in gating.head(30).itertuples(index=False):
        lines.append(f"- {code(f'{row.filename} {row.configuration}')}: {plain(row.gate_reason)}")
    if len(gating) > 30:
        lines.append(f"- … and {len(gating) - 30} more, in the table below")
    lines += [f"- {plain(problem)}" for problem in outcome.problems]
    if undecided:
        if outcome.verdict == INCONCLUSIVE:
            lines += ["", "This is not a pass: each of these could still hide a regression.", ""]
        else:
            lines += ["", f"Also undecided ({len(undecided)}):", ""]
        lines += [f"- ❓ {code(item.name)}: {plain(item.sentence())}" for item in undecided[:30]]
        if len(undecided) > 30:
            lines.append(f"- … and {len(undecided) - 30} more, in the table below")
        if outcome.verdict == INCONCLUSIVE:
            lines += [
                "",
                f"More runs decide them: a maintainer adds {code(prefix + ':runs=60')} or {code(prefix + ':runs=auto')}"
                f", or sets a min-effect for a benchmark known to be noisy.",
            ]
    return lines + noisy_lines(noisy) + coarse_lines(coarse)


def coarse_lines(coarse: list[gatelines.Coarse]) -> list[str]:
    """The rows gated coarser than their target, each with its noise and the resolution it was gated at."""
    if not coarse:
        return []
    lines = ["", f"Gated coarser than their target ({len(coarse)}), their noise could not reach it:", ""]
    lines += [f"- 🔍 {code(item.name)}: {plain(item.sentence())}" for item in coarse[:30]]
    if len(coarse) > 30:
        lines.append(f"- … and {len(coarse) - 30} more, in the table below")
    return lines


def noisy_lines(noisy: list[gatelines.Noisy]) -> list[str]:
    """The rows too noisy to gate, apart from the other undecided ones, each with the rule that would settle it."""
    if not noisy:
        return []
    lines = ["", f"Too noisy to gate ({len(noisy)}), apart from the undecided rows:", ""]
    for item in noisy[:30]:
        lines.append(f"- 🔊 {code(item.name)}: {plain(item.sentence())}; settled by {code(item.settling_rule())}")
    if len(noisy) > 30:
        lines.append(f"- … and {len(noisy) - 30} more, in the table below")
    return lines


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
    if result.verdict == PASS:
        return "No regression fails the gate"
    if result.verdict == INCONCLUSIVE:
        undecided = result.undecided_rows
        return f"Inconclusive: {undecided} comparison{'s' if undecided != 1 else ''} undecided, none regresses"
    count = result.gating_rows
    what = f"{count} regression{'s' if count != 1 else ''}" if count else "The benchmark run"
    if result.verdict == ACCEPTED:
        return f"{what} accepted by label"
    return f"{what} fail{'s' if count == 1 or not count else ''} the gate"
