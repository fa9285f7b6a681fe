"""``benchgate versions``' report (docs/cli.md); untrusted benchmark names go only in code spans or blocks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pandas as pd

from benchgate.report.markup import block, code, plain, table
from benchgate.report.tables import ACCURACY_KEYS, false_positive_note, render_compare_table


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


def _sections(steps: Sequence[VersionStep]) -> Iterator[tuple[str, list[tuple[VersionStep, int, pd.DataFrame]]]]:
    """Per category (sorted), per step: its number of comparisons there and its significant rows."""
    for name in sorted({category(str(filename)) for step in steps for filename in step.gated["filename"]}):
        mine = [step.gated[[category(str(f)) == name for f in step.gated["filename"]]] for step in steps]
        yield name, [(step, len(rows), significant(rows)) for step, rows in zip(steps, mine, strict=True)]


@dataclass(frozen=True)
class StepSummary:
    """How one step moved: significant rows faster and slower, per category, and the extremes."""

    faster: Counter[str]
    slower: Counter[str]
    best: tuple[str, float] | None  # (row name, improvement %)
    worst: tuple[str, float] | None

    @classmethod
    def of(cls, step: VersionStep) -> StepSummary:
        rows = significant(step.gated)
        names = [f"{f} {c}" for f, c in zip(rows["filename"], rows["configuration"], strict=True)]
        changes = rows["improvement"].to_numpy(dtype=float)
        moved = [(category(str(name)), change > 0) for name, change in zip(rows["filename"], changes, strict=True)]
        high, low = (int(changes.argmax()), int(changes.argmin())) if len(rows) else (0, 0)
        return cls(
            Counter(name for name, faster in moved if faster),
            Counter(name for name, faster in moved if not faster),
            (names[high], float(changes[high])) if len(rows) and changes[high] > 0 else None,
            (names[low], float(changes[low])) if len(rows) and changes[low] < 0 else None,
        )


def _where(counts: Counter[str]) -> str:
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{name} ({count})" for name, count in ordered)


def _versions(steps: Sequence[VersionStep]) -> list[str]:
    return [steps[0].base, *(step.head for step in steps)] if steps else []


def render_versions_text(steps: Sequence[VersionStep]) -> str:
    """The report as text: the summary, then per category each step's compare.R table of its significant rows."""
    out = [f"Node.js performance: {' → '.join(_versions(steps))}", "", "summary:"]
    for step in steps:  # how many rows got faster and slower, where, and the largest of each
        found = StepSummary.of(step)
        faster, slower = found.faster.total(), found.slower.total()
        line = f"  {step.name}: {faster} faster, {slower} slower of {len(step.gated)} comparisons"
        line += f"; faster in {_where(found.faster)}" if faster else ""
        line += f"; slower in {_where(found.slower)}" if slower else ""
        line += f"; largest gain {found.best[1]:+.2f} % ({found.best[0]})" if found.best else ""
        line += f"; largest loss {found.worst[1]:+.2f} % ({found.worst[0]})" if found.worst else ""
        out.append(line + (f"; {len(step.failures)} failure(s), listed below" if step.failures else ""))
    for name, section in _sections(steps):
        out += ["", f"== {name} =="]
        for step, count, rows in section:
            out += ["", f"{step.name}: {len(rows)} of {count} comparisons significant"]
            out += [render_compare_table(rows, gate_columns=False)] if len(rows) else []
    if any(step.failures for step in steps):
        out += ["", "failures:"] + [f"  {step.name}: {line}" for step in steps for line in step.failures]
    return "\n".join(out) + "\n"


def render_versions_markdown(steps: Sequence[VersionStep], *, runs: str, site: str | None = None) -> str:
    """The report as markdown, the shape of the "State of Node.js performance" posts."""
    out = [
        f"# Node.js performance: {' → '.join(f'v{version}' for version in _versions(steps))}",
        "",
        f"Each step runs Node's `benchmark/` suite with the official binaries of two consecutive releases "
        f"({runs}, compare.js's protocol) and reads it as compare.R does: `improvement` is the change of the "
        "mean rate (higher is faster, so negative is a regression), the stars Welch's t-test's p-value "
        "(< 0.05, < 0.01, < 0.001), `accuracy` the half-width of the 95 / 99 / 99.9 % confidence interval. "
        "Only significant rows are listed; every row is in each step's run directory.",
        "",
        "## Summary",
        "",
    ]
    rows = []
    for step in steps:
        found = StepSummary.of(step)
        best = f"{found.best[1]:+.2f} % {code(found.best[0], in_table=True, limit=80)}" if found.best else ""
        worst = f"{found.worst[1]:+.2f} % {code(found.worst[0], in_table=True, limit=80)}" if found.worst else ""
        where = [code(_where(counts), in_table=True) if counts else "" for counts in (found.faster, found.slower)]
        rows.append([step.name, str(found.faster.total()), str(found.slower.total()), *where, best, worst])
    header = ["step", "faster", "slower", "faster in", "slower in", "largest gain", "largest loss"]
    out += table(header, rows, "lrrllrr")
    for name, section in _sections(steps):
        out += ["", f"## {code(name)}"]
        for step, count, rows in section:
            out += ["", f"### {step.name}", "", f"{len(rows)} of {count} comparisons significant."]
            out += ["", block(render_compare_table(rows, gate_columns=False))] if len(rows) else []
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
        note = plain(" ".join(false_positive_note(len(step.gated)).split()))
        out.append(f"- {step.name}: [{step.directory}]({step.directory}/run.json). {note}")
    return "\n".join(out) + "\n"
