"""The sticky PR comment of one report (docs/action.md), under a hidden marker; untrusted text only in code spans
or blocks. Past GitHub's 65,536 characters, detail is dropped in a fixed order and it says where the rest is."""

import bisect
import functools

from benchgate import __version__
from benchgate.config.labels import APPLIED, IGNORED, INVALID, REQUEST, LabelDecision
from benchgate.report import gatelines, tables
from benchgate.report.gatelines import CommentContext
from benchgate.report.markup import block, code, plain, table
from benchgate.results.runrecord import Binary, RunSummary

MARKER = "<!-- benchgate:comment -->"
NOTHING_TO_BENCHMARK = "nothing to benchmark (the change touches no benchmarked area)"
GITHUB_COMMENT_LIMIT = 65536


def _sandbox_warning(run: RunSummary) -> list[str]:
    """A visible line when the pull request's code ran without the sandbox (``--no-sandbox``)."""
    if run.sandbox is None or not run.sandbox.unconfined_untrusted:
        return []
    reason = f" ({code(run.sandbox.reason, limit=120)})" if run.sandbox.reason else ""
    return [
        f"> ⚠️ **The pull request's code ran without the sandbox**{reason}: its build and benchmark processes had "
        "the benchmark runner's own access to its files, network and processes, so this run's results, the build "
        "cache and the runner can no longer be vouched for.",
        "",
    ]


def _sides(run: RunSummary) -> str:
    if not run.has_record:
        return "No run record (run.json): commits and runner unknown"
    return f"{_side(run.base, 'Base')} → {_side(run.head, 'head')}"


def _side(binary: Binary, label: str) -> str:
    commit = binary.sha[:12] if binary.sha else binary.ref
    parts = [f"{label} {code(commit)}" if commit else label]
    if not commit and not binary.version and not binary.node_args:
        parts.append(code("unknown"))
    if binary.version:
        parts.append(f"node {code(binary.version)}")
    if binary.node_args:
        parts.append(f"args {code(' '.join(binary.node_args))}")
    return " ".join(parts)


def _context_line(ctx: CommentContext) -> str:
    settings, run = ctx.settings, ctx.run
    runs = run.runs if run.runs is not None else int(ctx.gated["n_base"].max()) if len(ctx.gated) else 0
    if run.runs == "auto":  # adaptive: the runs each file took, between the design's first and last look
        taken = ctx.gated[["n_base", "n_head"]].min(axis=1) if len(ctx.gated) else None
        span = f"{int(taken.min())}–{int(taken.max())}" if taken is not None else "no"
        limits = f", from {run.adaptive_runs[0]} to {run.adaptive_runs[1]}" if run.adaptive_runs else ""
        runs = f"{span} (adaptive{limits})"
    how = f" in {run.shards} shards" if run.shards > 1 else ""
    if run.pairing == "duet":
        how += " · **duet**: base and head side by side on two CPU sets, gated on the pairs"
    texts = {
        "threshold": f"threshold {code(settings.threshold)}",
        "correction": f"{settings.correction} correction",
        "min_effect": f"min effect {settings.min_effect:g} %",
        "unchanged_confidence": f"unchanged when its one-sided {settings.unchanged_confidence:g} %",
        "inconclusive_above": f"a {settings.inconclusive_above:g} % regression",
    }
    shown = {  # each setting with where it came from, unless the default
        name: text if (source := settings.source_of(name)) == "default" else f"{text} ({source})"
        for name, text in texts.items()
    }
    parts = [
        _sides(run),
        f"{runs} runs per side{how}",
        gatelines.plural(len(ctx.gated), "comparison"),
        f"{shown['threshold']}, {shown['correction']}, {shown['min_effect']}",
    ]
    if len(ctx.gated):
        parts.append(
            f"gate test {code(gatelines.gate_test(ctx.gated))}, {shown['unchanged_confidence']} bound rules out "
            f"{shown['inconclusive_above']} (or its min-effect)"
        )
    return " · ".join(parts)


def _environment(run: RunSummary) -> list[str]:
    pairs = " · ".join(f"{code(key)}: {code(value, limit=120)}" for key, value in run.environment)
    return [*([pairs, ""] if pairs else []), *(f"- ⚠️ {code(warning)}" for warning in run.warnings)]


def _failures(run: RunSummary, *, stderr: bool, limit: int) -> list[str]:
    lines = []
    for failure in run.failures[:limit]:
        status = f"exit {failure.exit_status}" if failure.exit_status is not None else "no exit status"
        where = "on both binaries" if failure.side == "both" else f"on the **{failure.side}**"
        name = f"{failure.filename} {failure.configuration or ''}".strip()
        lines.append(f"- ❌ {code(name)} {where}: {code(failure.reason or status)} ({status})")
        if stderr and (stderr_tail := (failure.stderr_tail or "").strip()):
            tail = "\n".join(stderr_tail.splitlines()[-8:])[-1500:]
            indented = "\n".join("  " + line for line in block(tail).splitlines())
            lines += ["", "  <details><summary>stderr</summary>", "", indented, "", "  </details>", ""]
    if len(run.failures) > limit:
        lines.append(f"- … and {len(run.failures) - limit} more failures")
    skipped = [f"- ⏭️ {code(item.filename)} skipped: {code(item.reason or '')}" for item in run.skipped]
    return lines + gatelines.truncated(skipped, limit, "- … and {} more skipped")


def _labels(decision: LabelDecision) -> list[str]:
    shown = [outcome for outcome in decision.outcomes if outcome.status != REQUEST]
    marks = {APPLIED: "✅ applied", IGNORED: "🚫 ignored", INVALID: "⚠️ invalid"}
    rows = []
    for outcome in shown:
        # An invalid label's reason quotes the label's own text (a URL, "#1"): only a code span shows it inert.
        why = code(outcome.reason, in_table=True) if outcome.status == INVALID else plain(outcome.reason)
        rows.append([code(outcome.label, in_table=True), marks[outcome.status], why])
    return table(["label", "", "why"], rows, "lll") if rows else []


def _footer(ctx: CommentContext) -> list[str]:
    lines = []
    if ctx.charts and ctx.run_url:  # without a run there is no artifact to point to
        names = " and ".join(code(name) for name in ctx.charts)
        lines += [f"Charts: {names} in the [workflow run's artifacts]({ctx.run_url}#artifacts).", ""]
    link = f"[Workflow run]({ctx.run_url})" if ctx.run_url else "Local run"
    lines.append(f"<sub>{link} · benchgate {__version__}</sub>")
    return lines


# Why a side that did not build (infrastructure: the base) stopped the run, and what it means for the PR.
BUILD_FAILURE_WHY = {
    True: "The base {commit} failed to build, so nothing was benchmarked. This is not this pull request's fault: "
    "the base branch or the benchmark machine needs attention. The check is neutral; run the benchmark again once "
    "the base builds.",
    False: "The head {commit} failed to build, so nothing was benchmarked; the pull request fails the gate until it "
    "builds (a {label} label does not accept a build failure).",
}


def _render_short(ctx: CommentContext) -> str:
    """The comment of a run without results: nothing was selected (a pass), or a side did not build."""
    failure, prefix = ctx.run.build_failure, ctx.settings.label_prefix
    if failure is None:
        heading = f"### ✅ benchgate: {NOTHING_TO_BENCHMARK}"
        why = "The changed files map to no benchmark category, so no benchmark ran and nothing can regress."
        label = code(prefix + ":categories=url")
        rest = [f"<sub>To benchmark anyway, a maintainer adds a label such as {label}.</sub>"]
    else:
        heading = "### {} benchgate: {}".format(*gatelines.verdict_words(ctx.outcome, ctx.run))
        commit = code(failure.sha[:12] if failure.sha else failure.ref or "unknown")
        why = BUILD_FAILURE_WHY[failure.infrastructure].format(commit=commit, label=code(prefix + ":accept-regression"))
        log = [f"#### Last lines of the {failure.side} build log", "", block(failure.log_tail), ""]
        note = "_The whole build log is on the benchmark machine; its path is in the benchmark job's output._"
        rest = [*(log if failure.log_tail.strip() else []), note]
    parts = [MARKER, heading, "", why, "", _sides(ctx.run), "", *_sandbox_warning(ctx.run), *rest, "", *_footer(ctx)]
    return "\n".join(parts) + "\n"


def _render(ctx: CommentContext, *, all_rows: bool, details: bool, max_significant: int | None = None) -> str:
    """The comment; without ``all_rows`` it says it is shortened."""
    parts = [MARKER, *gatelines.verdict_lines(ctx), "", _context_line(ctx), "", *_sandbox_warning(ctx.run)]
    if not all_rows:
        parts += [
            f"> **This comment is shortened to fit GitHub's limit.** The full report is in {ctx.full_report}.",
            "",
        ]
    parts += tables.markdown_sections(
        ctx.gated,
        ctx.settings.correction,
        all_rows=all_rows,
        details=details,
        max_significant=max_significant,
        full_report=ctx.full_report,
    )
    sections = {
        "Runner": _environment(ctx.run),
        "Failed or skipped benchmarks": _failures(ctx.run, stderr=details, limit=200 if details else 20),
        "Labels": _labels(ctx.labels),
    }
    for heading, body in sections.items():
        parts += [f"#### {heading}", "", *body, ""] if body else []
    prefix = ctx.settings.label_prefix
    override = (
        f"<sub>To override, a maintainer adds a label: {code(prefix + ':accept-regression')} (report, do not fail), "
        f"{code(prefix + ':threshold=**')} or {code('off')}, {code(prefix + ':min-effect=3%')}, "
        f"{code(prefix + ':runs=60')} or {code('auto')}, {code(prefix + ':categories=url,buffers')}, "
        f"{code(prefix + ':filter=tojson')}. "
        "Labels that loosen the gate count only when added by someone with write, maintain or admin permission.</sub>"
    )
    parts += [override, "", *_footer(ctx)]
    return "\n".join(parts).replace("\n\n\n", "\n\n") + "\n"


def render_comment(ctx: CommentContext, limit: int | None = GITHUB_COMMENT_LIMIT) -> str:
    """The comment body; under ``limit`` characters, shortened in a fixed order when needed."""
    if ctx.nothing_selected or ctx.run.build_failure is not None:
        return _render_short(ctx)  # a few lines: the log tail is bounded by the run record's check
    for all_rows, details in ((True, True), (False, True), (False, False)):
        body = _render(ctx, all_rows=all_rows, details=details)
        if limit is None or len(body) <= limit:
            return body
    # Keep the gating rows above all; the body grows with the rows shown: the most that still fit.
    low, high = min(int(ctx.gated["gating"].sum()), 1), len(tables.significant_rows(ctx.gated))
    shortened = functools.partial(_render, ctx, all_rows=False, details=False)
    fits = bisect.bisect_right(range(low + 1, high + 1), limit, key=lambda shown: len(shortened(max_significant=shown)))
    best = shortened(max_significant=low + fits)
    if len(best) > limit:  # pathological: even the verdict does not fit
        note = f"\n\n… shortened; the full report is in {ctx.full_report}.\n"
        best = best[: limit - len(note)] + note
    return best
