"""The analysis table as text (compare.R's layout), markdown, JSON and CSV: ``render`` (docs/formats.md)."""

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from tabulate import DataRow, TableFormat, tabulate

from benchgate.report import gatelines, markup
from benchgate.stats.analysis import COMPARE_R_TEST, Analysis, verdict
from benchgate.stats.decisions import DECISIONS
from benchgate.stats.gate import DECISION_COLUMNS as DECISION_KEYS
from benchgate.stats.gate import GatePolicy
from benchgate.stats.yuenwelch import DEFAULT_POWER

ACCURACY_KEYS = ("*", "**", "***")
CSV_COLUMNS = [
    *("filename", "configuration", "n_base", "n_head", "mean_base", "mean_head", "improvement"),
    *("p_value", "p_adjusted", "df", "confidence", *(f"accuracy_{key}" for key in ACCURACY_KEYS)),
    *("gating", "gate_reason", *DECISION_KEYS),
]
MAX_SUMMARY_LINES = 20  # undecided rows and blind spots listed under the text table; the JSON has them all
# R's print.data.frame: columns one space apart, no rules (tabulate keeps names' edge spaces: docs/formats.md)
COMPARE_R_LAYOUT = TableFormat(None, None, None, None, DataRow("", " ", ""), DataRow("", " ", ""), 0, None)
# Text bars, as node-benchmark-compare draws them: an axis symmetric around 0, set by the largest |improvement|.
FULL, EMPTY, AXIS = "█", "░", "|"
MAX_NAME_IN_CHART = 90  # of the markdown's bars


class Bar(NamedTuple):
    """One row of the chart: its label, improvement in percent (NaN when unknown) and compare.R's stars."""

    label: str
    improvement: float
    confidence: str = ""


def scale_for(improvements: Sequence[float]) -> float:
    """The half-range of the axis: the largest |improvement|, rounded up to 0.1 %, at least 0.1 %."""
    finite = [abs(value) for value in improvements if math.isfinite(value)]
    largest = max(finite, default=0.0)
    return max(math.ceil(largest * 10 - 1e-9) / 10, 0.1)


def render_bar(improvement: float, scale: float, half_width: int) -> str:
    """``half_width`` cells left of the axis, the axis, ``half_width`` cells right; filled towards the sign."""
    if not math.isfinite(improvement):
        return " " * half_width + AXIS + " " * half_width
    filled = min(half_width, round(abs(improvement) / scale * half_width))
    if improvement < 0:
        return EMPTY * (half_width - filled) + FULL * filled + AXIS + " " * half_width
    return " " * half_width + AXIS + FULL * filled + EMPTY * (half_width - filled)


def render_bars(bars: Sequence[Bar], *, half_width: int = 20) -> str:
    """The chart as lines of text (no trailing newline): an axis line, then one bar per row."""
    if not bars:
        return ""
    scale = scale_for([bar.improvement for bar in bars])
    width = max(len(bar.label) for bar in bars)
    left, right = f"-{scale:.1f}%", f"+{scale:.1f}%"
    # "0%" sits with its "0" over the axis; the scale's ends sit over the bar's ends.
    axis = f"{'':<{width}} {left:<{half_width}}0%{right:>{half_width - 1}}"
    lines = [axis.rstrip()]
    for bar in bars:
        value = "NA" if not math.isfinite(bar.improvement) else f"{bar.improvement:+.2f}%"
        line = f"{bar.label:<{width}} {render_bar(bar.improvement, scale, half_width)}  {value:>8} {bar.confidence}"
        lines.append(line.rstrip())
    return "\n".join(lines)


def format_improvement(value: float) -> str:
    """compare.R's ``sprintf("%.2f %%", x)``, including R's ``NaN %`` when a side has no samples."""
    return "NaN %" if pd.isna(value) else f"{value:.2f} %"


def format_accuracy(value: float) -> str:
    """compare.R's ``sprintf("±%.2f%%", x)``, ``NA`` where it prints NA."""
    return "NA" if pd.isna(value) else f"±{value:.2f}%"


def row_name(filename: str, configuration: str) -> str:
    """compare.R's row name, ``paste(filename, configuration)``, with control characters escaped as R prints them."""
    return f"{filename} {configuration}".translate(markup.AS_R)


def _names(gated: pd.DataFrame) -> list[str]:
    return [row_name(f, c) for f, c in zip(gated["filename"], gated["configuration"], strict=True)]


def with_decisions(gated: pd.DataFrame) -> bool:
    """Whether the tables show the decisions' columns: not under compare.R's rule (its tables stay byte-exact)."""
    return gatelines.gate_test(gated) != COMPARE_R_TEST


def _cells(row: Any, decided: bool) -> list[str]:
    """compare.R's cells of a row (confidence, improvement, accuracies), then the gate's change and decision."""
    accuracy = [format_accuracy(value) for value in (row.accuracy_1, row.accuracy_2, row.accuracy_3)]
    decision = [gatelines.change_cell(row), gatelines.decision_cell(row)] if decided else []
    return [str(row.confidence), format_improvement(row.improvement), *accuracy, *decision]


def render_compare_table(gated: pd.DataFrame) -> str:
    """compare.R's printed table (each line starts as R prints it), then the gate's columns (``with_decisions``)."""
    decided, failing = with_decisions(gated), bool(gated["gating"].any())
    header = ["", "confidence", "improvement", "accuracy (*)", "(**)", "(***)"]
    header += (["gate change [interval]", "decision"] if decided else []) + (["gate"] if failing else [])
    # The gate change right-aligned (its numbers line up), the words after it left-aligned.
    align = ["left", *["right"] * 5, *(["right", "left"] if decided else []), *(["left"] if failing else [])]
    rows = [header]  # a first row, not tabulate's headers: those get two spaces of padding that R does not print
    for row in gated.itertuples(index=False):
        name = row_name(row.filename, row.configuration)
        rows.append([name, *_cells(row, decided), *(["FAIL" if row.gating else ""] if failing else [])])
    text = tabulate(rows, tablefmt=COMPARE_R_LAYOUT, colalign=align, disable_numparse=True, preserve_whitespace=True)
    return "\n".join(line.rstrip() for line in text.split("\n"))


# compare.R's warning about many comparisons, {0} their number; the figures, {1} to {3}, are worded apart
FALSE_POSITIVES = (
    "Be aware that when doing many comparisons the risk of a false-positive",
    "result increases. In this case, there are {0} comparisons, you can thus",
    "expect the following amount of false-positive results:",
)
FIGURES = (
    "  {1:.2f} false positives, when considering a   5% risk acceptance (*, **, ***),\n"
    "  {2:.2f} false positives, when considering a   1% risk acceptance (**, ***),\n"
    "  {3:.2f} false positives, when considering a 0.1% risk acceptance (***)"
)


MARKDOWN_FIGURES = (
    "{1:.2f} at a 5% risk acceptance (\\*, \\*\\*, \\*\\*\\*), "
    "{2:.2f} at 1% (\\*\\*, \\*\\*\\*), {3:.2f} at 0.1% (\\*\\*\\*)."
)


def false_positive_note(count: int, *, markdown: bool = False, correction: str = "none") -> str:
    """compare.R's warning about many comparisons: its lines, or in ``markdown`` one paragraph that says what the
    gate does about it under Holm's ``correction``."""
    lines = [*FALSE_POSITIVES, MARKDOWN_FIGURES if markdown else FIGURES]
    note = (" " if markdown else "\n").join(lines).format(count, count * 0.05, count * 0.01, count * 0.001)
    if markdown and correction == "holm":
        note += " The gate's own test is Holm-corrected, so noise alone fails a PR at most at the threshold's risk."
    return note


def bars_for(gated: pd.DataFrame, limit: int | None = None) -> list[Bar]:
    """One chart bar per row, in the table's order, its name cut to ``limit`` characters."""
    return [
        Bar(name[:limit], float(improvement), str(confidence))
        for name, improvement, confidence in zip(_names(gated), gated["improvement"], gated["confidence"], strict=True)
    ]


def gate_summary(gated: pd.DataFrame, policy: GatePolicy, problems: Sequence[str] = ()) -> list[str]:
    """The verdict line, then the failing, listed and untested rows, then each file's resolution."""
    problems = gatelines.with_untested(gated, problems)
    lines = [gatelines.gate_headline(gated, policy, problems)]
    if problems:
        lines.append(f"  statistics: {gatelines.gate_finding(gated, policy)[0]}")
    counts = gated["decision"].value_counts()
    present = ", ".join(f"{int(counts[name])} {name}" for name in DECISIONS if name in counts)  # "3 regression, 1 ..."
    lines.append(f"  decisions ({gatelines.gate_test(gated)}): {present}")
    failing = gated[gated["gating"]]
    lines += [f"  FAIL {name}: {reason}" for name, reason in zip(_names(failing), failing["gate_reason"], strict=True)]
    for kind, items in gatelines.listed_rows(gated, policy.inconclusive_above).items():
        listed = [f"  {kind.upper()} {item.line()}".translate(markup.AS_R) for item in items]
        more = f"  ... and {{}} more {kind} (--format json lists them all)"
        lines += gatelines.truncated(listed, MAX_SUMMARY_LINES, more)
    untested = {
        "incomplete": "incomplete (fewer than 2 samples on a side, not tested)",
        "constant": "constant rates on both sides (compare.R stops here: 'data are essentially constant'; "
        "benchgate takes p = 0 when the means differ, else 1)",
    }
    for column, what in untested.items():
        names = _names(gated[gated[column]])
        lines += [f"{what}: {len(names)}: {', '.join(names)}"] if names else []
    spots = [f"  {spot.translate(markup.AS_R)}" for spot in gatelines.blind_spots(gated)]
    if spots:
        lines.append("resolution (the smallest regression the evidence rules out, per file, largest first):")
        lines += gatelines.truncated(spots, MAX_SUMMARY_LINES, "  ... and {} more files (--format json: mde per row)")
    return lines


def render_text(gated: pd.DataFrame, policy: GatePolicy, *, bars: bool = True, problems: Sequence[str] = ()) -> str:
    """compare.R's table and false-positive note, then the text bars, then the gate lines (see gate_summary)."""
    parts = [render_compare_table(gated), "", false_positive_note(len(gated)), ""]
    if bars and len(gated):
        parts += [render_bars(bars_for(gated)), ""]
    parts += gate_summary(gated, policy, problems)
    return "\n".join(parts) + "\n"


def _significant(gated: pd.DataFrame) -> pd.Series:
    """Rows with stars or a decided change."""
    return gated["confidence"].isin(ACCURACY_KEYS) | gated["decision"].isin(["regression", "improvement"])


def markdown_order(gated: pd.DataFrame) -> pd.DataFrame:
    """Gating, undecided, significant regressions, significant improvements, each largest first; then the rest."""
    improvement = gated["improvement"].to_numpy(dtype=float)
    significant = _significant(gated)
    groups = [gated["gating"], gated["undecided"], significant & (improvement < 0), significant]
    group = np.select(groups, [0, 1, 2, 3], 4)
    size = np.where(group < 4, -np.abs(improvement), 0.0)
    return gated.iloc[np.lexsort((size, group))]  # lexsort is stable: ties keep the table's order


def significant_rows(gated: pd.DataFrame) -> pd.DataFrame:
    """The significant (``_significant``) and undecided rows, in ``markdown_order`` (stable: fine to pick first)."""
    return markdown_order(gated[_significant(gated) | gated["undecided"]])


def render_markdown_table(gated: pd.DataFrame) -> str:
    """compare.R's columns as a GitHub table, the gate's change and decision, a gate column; regressions first."""
    decided = with_decisions(gated)
    header = ["benchmark", "confidence", "improvement", "accuracy (\\*)", "(\\*\\*)", "(\\*\\*\\*)"]
    header += [*(["gate change [interval]", "decision"] if decided else []), "gate"]
    rows = []
    for row in markdown_order(gated).itertuples(index=False):
        gate = "❌ fails" if row.gating else "ignored" if row.ignored else "❓ undecided" if row.undecided else ""
        cells = [cell.replace("*", "\\*") for cell in _cells(row, decided)]  # only the stars have any
        rows.append([markup.code(row_name(row.filename, row.configuration), in_table=True), *cells, gate])
    return "\n".join(markup.table(header, rows, "lcrrrr" + ("rl" if decided else "") + "l"))


def markdown_sections(
    gated: pd.DataFrame,
    correction: str,
    *,
    all_rows: bool = True,
    details: bool = True,
    max_significant: int | None = None,
    full_report: str = "the JSON format",
) -> list[str]:
    """The analysis as the PR comment shows it; ``all_rows``, ``details`` and ``max_significant`` shorten it for
    GitHub's limit (the rest is in ``full_report``)."""
    significant = significant_rows(gated)
    shown = significant if max_significant is None else significant.head(max_significant)
    parts = [f"No significant change in {len(gated)} comparisons."]
    if len(significant):
        undecided = int(significant["undecided"].sum())  # counted apart: a row without stars is not significant
        heading = f"#### Significant changes ({len(significant)} of {len(gated)})"
        if undecided:
            heading = f"#### Significant changes ({len(significant) - undecided}) and undecided rows ({undecided}) of "
            heading += str(len(gated))
        parts = [heading, "", render_markdown_table(shown)]
        if len(shown) < len(significant):
            parts += ["", f"_{len(significant) - len(shown)} more rows are in {full_report}._"]
        charted = shown[shown["improvement"].notna()]
        if details and len(charted):  # untrusted names: block drops backticks (they could close the fence)
            parts += ["", markup.block(render_bars(bars_for(charted, MAX_NAME_IN_CHART)))]
    parts += ["", *(gatelines.power_lines(gated) if details else []), ""]
    if all_rows:
        summary = f"<details><summary>All {gatelines.plural(len(gated), 'comparison')}</summary>"
        parts += [summary, "", render_markdown_table(gated), "", "</details>"]
    else:
        parts.append(f"_The table of all {len(gated)} comparisons is in {full_report}._")
    return [*parts, "", f"> {false_positive_note(len(gated), markdown=True, correction=correction)}", ""]


def render_markdown(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """The verdict line and why (failing and listed rows), then the analysis as the PR comment shows it."""
    headline = markup.plain(gatelines.gate_headline(gated, policy).replace("gate: ", "", 1))
    parts = [f"**benchgate** {gatelines.VERDICT_MARKS[verdict(gated)]} {headline}", "", *gatelines.gating_lines(gated)]
    for kind, items in gatelines.listed_rows(gated, policy.inconclusive_above).items():
        parts += gatelines.listed_lines(kind, items)
    parts += ["", *markdown_sections(gated, policy.correction)]
    return "\n".join(parts).replace("\n\n\n", "\n\n")


def _number(value: Any) -> float | None:
    return None if pd.isna(value) or not math.isfinite(float(value)) else float(value)


def analysis_record(gated: pd.DataFrame, policy: GatePolicy) -> dict[str, Any]:
    """The JSON document: the policy, the verdict and one object per comparison (docs/formats.md), ``None`` where
    compare.R prints NA; ``p_adjusted`` is the p the gate compares with the threshold (raw under no correction)."""
    gate_p = gated["p_adjusted"] if policy.correction == "holm" else gated["p_value"]
    numbers = ("mean_base", "mean_head", "improvement", "p_value", "p_adjusted", "df")
    rows = [
        {
            "filename": str(row.filename),
            "configuration": str(row.configuration),
            "n_base": int(row.n_base),
            "n_head": int(row.n_head),
            **{key: _number(getattr(row, key)) for key in numbers},
            "confidence": str(row.confidence),
            "accuracy": {key: _number(getattr(row, f"accuracy_{i}")) for i, key in enumerate(ACCURACY_KEYS, 1)},
            "gating": bool(row.gating),
            "decision": str(row.decision),
            **{key: _number(getattr(row, key)) for key in DECISION_KEYS[1:-1]},
            "runs_needed": None if _number(row.runs_needed) is None else int(row.runs_needed),
            "noisy": bool(row.noisy),
            "coarse": bool(row.coarse),
        }
        for row in gated.assign(p_adjusted=gate_p).itertuples(index=False)
    ]
    return {
        "comparisons": len(gated),
        "threshold": policy.threshold,
        "correction": policy.correction,
        "min_effect": float(policy.min_effect),
        "verdict": str(verdict(gated)),
        "gate_test": gatelines.gate_test(gated),
        "inconclusive_above": float(policy.inconclusive_above),
        "unchanged_confidence": float(policy.unchanged_confidence),
        "noisy_max_sigma": policy.noisy_max_sigma,
        "mde_power": DEFAULT_POWER,  # the power the mde is stated at
        "rows": rows,
    }


def render_json(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """``analysis_record`` as indented JSON (strict: no NaN or Infinity tokens)."""
    return json.dumps(analysis_record(gated, policy), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """The JSON rows as CSV (CSV_COLUMNS; empty where compare.R prints NA or a table has no decisions)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for record, reason in zip(analysis_record(gated, policy)["rows"], gated["gate_reason"].tolist(), strict=True):
        accuracy = {f"accuracy_{key}": value for key, value in record["accuracy"].items()}
        writer.writerow({**record, **accuracy, "gating": str(record["gating"]).lower(), "gate_reason": reason})
    return buffer.getvalue()


def render(analysis: Analysis, output_format: str, *, bars: bool = True, problems: Sequence[str] = ()) -> str:
    """The analysis in one of ``FORMATS``; ``problems`` fail the run besides the statistics."""
    table, policy = analysis.table, analysis.policy
    if output_format == "text":
        return render_text(table, policy, bars=bars, problems=problems)
    return {"markdown": render_markdown, "json": render_json, "csv": render_csv}[output_format](table, policy)
