"""``benchgate versions``' report (docs/cli.md): each step's rows through the analysis' own tables (``tables``);
untrusted benchmark names go only in code spans."""

import functools
import operator
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import pandas as pd
from tabulate import tabulate

from benchgate.report.markup import AS_R, code, table
from benchgate.report.tables import (
    ACCURACY_KEYS,
    false_positive_note,
    render_compare_table,
    render_markdown_table,
    row_name,
)


@dataclass(frozen=True)
class VersionStep:
    """One step between consecutive releases: its comparisons (the gate's table) and where it lives."""

    base: str  # the older release, "18.16.0"
    head: str  # the newer one
    gated: pd.DataFrame
    directory: str  # the step's run directory, relative to the report
    chart: str | None = None  # the step's forest plot, relative to the report, when drawn
    failures: tuple[str, ...] = ()  # the step's failed benchmark processes (markup.failure_lines)

    @property
    def name(self) -> str:
        return f"{self.base} → {self.head}"


def category(filename: str) -> str:
    """A benchmark file's category: its directory under benchmark/ (``buffers/buffer-compare.js``: buffers)."""
    return filename.split("/", 1)[0]


def significant(gated: pd.DataFrame) -> pd.DataFrame:
    """The rows compare.R stars (p < 0.05 or better), in compare.R's order."""
    return gated[gated["confidence"].astype(str).isin(ACCURACY_KEYS) & gated["improvement"].notna()]


SUMMARY = ["step", "comparisons", "faster", "slower", "faster in", "slower in", "largest gain", "largest loss"]


def _summary_row(step: VersionStep, span: Callable[[str], str]) -> list[str]:
    """SUMMARY's cells of a step: its significant rows faster and slower, their categories, the largest of each."""
    rows = significant(step.gated)
    changes = rows["improvement"].astype(float)
    counts, where, largest = [], [], []
    for moved, pick in ((changes > 0, changes.idxmax), (changes < 0, changes.idxmin)):
        ordered = sorted(Counter(map(category, rows.loc[moved, "filename"])).items(), key=lambda x: (-x[1], x[0]))
        row = rows.loc[pick()] if moved.any() else None
        counts.append(str(int(moved.sum())))
        where.append(span(", ".join(f"{name} ({count})" for name, count in ordered)) if ordered else "")
        largest.append(
            "" if row is None else f"{row.improvement:+.2f} % {span(row_name(row.filename, row.configuration))}"
        )
    return [step.name, str(len(step.gated)), *counts, *where, *largest]


def _sections(steps: Sequence[VersionStep]) -> Iterator[tuple[str, list[tuple[VersionStep, int, pd.DataFrame]]]]:
    """Per category (sorted), per step: its number of comparisons there and its significant rows."""
    for name in sorted({category(str(filename)) for step in steps for filename in step.gated["filename"]}):
        mine = [step.gated[[category(str(f)) == name for f in step.gated["filename"]]] for step in steps]
        yield name, [(step, len(rows), significant(rows)) for step, rows in zip(steps, mine, strict=True)]


def _versions(steps: Sequence[VersionStep], prefix: str = "") -> str:
    return " → ".join(f"{prefix}{version}" for version in ([steps[0].base, *(s.head for s in steps)] if steps else []))


def render_versions_text(steps: Sequence[VersionStep]) -> str:
    """The report as text: the summary, per category each step's significant rows as `analyze` prints them."""
    text = operator.methodcaller("translate", AS_R)  # names as R prints them: no control characters
    summary = tabulate(
        [_summary_row(step, text) for step in steps], SUMMARY, colalign=("left", *["right"] * 3), disable_numparse=True
    )
    out = [f"Node.js performance: {_versions(steps)}", "", summary]
    for name, section in _sections(steps):
        out += ["", f"== {text(name)} =="]
        for step, count, rows in section:
            out += ["", f"{step.name}: {len(rows)} of {count} comparisons significant"]
            out += [render_compare_table(rows)] if len(rows) else []
    if any(step.failures for step in steps):
        out += ["", "failures:"] + [f"  {step.name}: {text(line)}" for step in steps for line in step.failures]
    return "\n".join(out) + "\n"


def render_versions_markdown(steps: Sequence[VersionStep], *, runs: str, site: str | None = None) -> str:
    """The report as markdown, the shape of the "State of Node.js performance" posts."""
    out = [
        f"# Node.js performance: {_versions(steps, 'v')}",
        "",
        f"Each step runs Node's `benchmark/` suite with the official binaries of two consecutive releases "
        f"({runs}, compare.js's protocol) and reads it as compare.R does: `improvement` is the change of the "
        "mean rate (higher is faster, so negative is a regression), the stars Welch's t-test's p-value "
        "(< 0.05, < 0.01, < 0.001), `accuracy` the half-width of the 95 / 99 / 99.9 % confidence interval; "
        "the gate's change, interval and decision are `benchgate run`'s. Only significant rows are listed; "
        "every row is in each step's run directory.",
        "",
        "## Summary",
        "",
    ]
    span = functools.partial(code, in_table=True, limit=80)
    out += table(SUMMARY, [_summary_row(step, span) for step in steps], "lrrrllrr")
    for name, section in _sections(steps):
        out += ["", f"## {code(name)}"]
        for step, count, rows in section:
            out += ["", f"### {step.name}", "", f"{len(rows)} of {count} comparisons significant."]
            out += ["", render_markdown_table(rows)] if len(rows) else []
    if any(step.failures for step in steps):
        out += ["", "## Failures", "", "Benchmarks that did not run on a release (a file newer than it, say):", ""]
        out += [f"- {step.name}: {code(line)}" for step in steps for line in step.failures]
    out += ["", "## Charts"]
    if site:
        out += ["", f"Every row over the releases, with the starred steps marked: [the trend pages]({site})."]
    for step in steps:
        if step.chart:
            out += ["", f"### {step.name}", "", f"![{step.name}: change per comparison]({step.chart})"]
    if not any(step.chart for step in steps):
        out += ["", "None drawn (`--no-plot`, or nothing was compared)."]
    out += ["", "## Runs", ""]
    for step in steps:
        note = false_positive_note(len(step.gated), markdown=True)
        out.append(f"- {step.name}: [{step.directory}]({step.directory}/run.json). {note}")
    return "\n".join(out) + "\n"
