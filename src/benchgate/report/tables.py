"""Pure rendering of an analysis: text (compare.R's layout), markdown, JSON and CSV.

Every function takes the gated comparison table (``gate.apply_gate`` over
``stats.compare_samples``) and returns a string; nothing here reads or writes
files, so the PR comment reuses these pieces as they are.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from benchgate.report.bars import Bar, render_bars
from benchgate.stats.gate import THRESHOLDS, GatePolicy, untested_reason, verdict

ACCURACY_KEYS = ("*", "**", "***")
CSV_COLUMNS = [
    "filename",
    "configuration",
    "n_base",
    "n_head",
    "mean_base",
    "mean_head",
    "improvement",
    "p_value",
    "p_adjusted",
    "df",
    "confidence",
    "accuracy_*",
    "accuracy_**",
    "accuracy_***",
    "gating",
    "gate_reason",
]
_CONTROL = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_improvement(value: float) -> str:
    """compare.R's ``sprintf("%.2f %%", x)``, including R's ``NaN %`` when a side has no samples."""
    return "NaN %" if _missing(value) else f"{value:.2f} %"


def format_accuracy(value: float) -> str:
    """compare.R's ``sprintf("±%.2f%%", x)``, ``NA`` where it prints NA."""
    return "NA" if _missing(value) else f"±{value:.2f}%"


def row_name(filename: str, configuration: str) -> str:
    """compare.R's row name, ``paste(filename, configuration)``, with control characters escaped as R prints them."""
    return f"{filename} {configuration}".translate(_CONTROL)


def _names(gated: pd.DataFrame) -> list[str]:
    return [row_name(f, c) for f, c in zip(gated["filename"], gated["configuration"], strict=True)]


def render_compare_table(gated: pd.DataFrame) -> str:
    """compare.R's printed table: left-aligned row names, right-aligned columns, one space apart.

    When a row fails the gate a last ``gate`` column marks it ``FAIL``; the columns
    before it are exactly what compare.R prints.
    """
    header = ["", "confidence", "improvement", "accuracy (*)", "(**)", "(***)"]
    failing = "gating" in gated and bool(gated["gating"].any())
    if failing:
        header.append("gate")
    lines = [header]
    for name, row in zip(_names(gated), gated.itertuples(index=False), strict=True):
        cells = [
            name,
            str(row.confidence),
            format_improvement(row.improvement),
            format_accuracy(row.accuracy_1),
            format_accuracy(row.accuracy_2),
            format_accuracy(row.accuracy_3),
        ]
        if failing:
            cells.append("FAIL" if row.gating else "")
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for line in lines:
        cells = [line[0].ljust(widths[0])] + [cell.rjust(widths[i]) for i, cell in enumerate(line) if i > 0]
        out.append(" ".join(cells).rstrip() if failing else " ".join(cells))
    return "\n".join(out)


def false_positive_note(count: int) -> str:
    """compare.R's warning about many comparisons, with its figures."""
    return (
        "Be aware that when doing many comparisons the risk of a false-positive\n"
        f"result increases. In this case, there are {count} comparisons, you can thus\n"
        "expect the following amount of false-positive results:\n"
        f"  {count * 0.05:.2f} false positives, when considering a   5% risk acceptance (*, **, ***),\n"
        f"  {count * 0.01:.2f} false positives, when considering a   1% risk acceptance (**, ***),\n"
        f"  {count * 0.001:.2f} false positives, when considering a 0.1% risk acceptance (***)"
    )


def bars_for(gated: pd.DataFrame) -> list[Bar]:
    """One chart bar per row, in the table's order."""
    return [
        Bar(name, float(improvement), str(confidence))
        for name, improvement, confidence in zip(_names(gated), gated["improvement"], gated["confidence"], strict=True)
    ]


def _correction_name(policy: GatePolicy) -> str:
    return "Holm correction" if policy.correction == "holm" else "no correction"


def gate_summary(gated: pd.DataFrame, policy: GatePolicy, problems: Sequence[str] = ()) -> list[str]:
    """The gate's verdict line, then why each failing row fails, then rows the test could not judge.

    ``problems`` are what fails a run besides the statistics (``outcome.Outcome.problems``:
    head failures, an incomplete run), plus ``gate.untested_reason`` when no comparison could
    be tested. They fail the gate whatever the statistics found, so
    with them the verdict line is FAIL and leads with them, and the statistics' finding
    follows without a verdict of its own.
    """
    untested = untested_reason(gated)
    if untested is not None and untested not in problems:
        problems = [*problems, untested]  # nothing tested fails the gate, whatever the statistics say
    count = len(gated)
    failing = gated[gated["gating"]]
    effect = f", minimum effect {policy.min_effect:g} %" if policy.min_effect > 0 else ""
    where = f"at {policy.threshold} after {_correction_name(policy)}{effect}"
    off = THRESHOLDS[policy.threshold] is None
    if off:
        finding = f"off (--threshold off): no comparison can fail ({count} comparisons)"
    elif len(failing):
        finding = f"FAIL: {len(failing)} of {count} comparisons regress {where}"
    else:
        finding = f"no regression {where} ({count} comparisons)"
    if problems:
        lines = [f"gate: FAIL: {'; '.join(problems)}", f"  statistics: {finding}"]
    else:
        lines = [f"gate: {finding}" if off or len(failing) else f"gate: pass: {finding}"]
    lines += [
        f"  FAIL {row_name(row.filename, row.configuration)}: {row.gate_reason}"
        for row in failing.itertuples(index=False)
    ]
    incomplete = gated[gated["incomplete"]]
    if len(incomplete):
        names = ", ".join(_names(incomplete))
        lines.append(f"incomplete (fewer than 2 samples on a side, not tested): {len(incomplete)}: {names}")
    constant = gated[gated["constant"]] if "constant" in gated else gated.iloc[:0]
    if len(constant):
        names = ", ".join(_names(constant))
        lines.append(
            f"constant rates on both sides (compare.R stops here: 'data are essentially constant'; "
            f"benchgate takes p = 0 when the means differ, else 1): {len(constant)}: {names}"
        )
    return lines


def render_text(gated: pd.DataFrame, policy: GatePolicy, *, bars: bool = True, problems: Sequence[str] = ()) -> str:
    """compare.R's table and false-positive note, then the text bars, then the gate lines (see gate_summary)."""
    parts = [render_compare_table(gated), "", false_positive_note(len(gated)), ""]
    if bars and len(gated):
        parts += [render_bars(bars_for(gated)), ""]
    parts += gate_summary(gated, policy, problems)
    return "\n".join(parts) + "\n"


def _code(text: str) -> str:
    """A markdown code span that survives any content: untrusted names cannot inject markup or mentions."""
    text = text.translate(_CONTROL).replace("|", "\\|")
    longest_run, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest_run = max(longest_run, run)
    fence = "`" * (longest_run + 1)
    # CommonMark strips one space on each side, so a name starting or ending with ` keeps its own.
    padded = f" {text} " if text.startswith("`") or text.endswith("`") or not text.strip() else text
    return f"{fence}{padded}{fence}"


def markdown_order(gated: pd.DataFrame) -> pd.DataFrame:
    """Regressions first: gating rows, then other regressions with stars (both worst first), then the rest."""
    improvement = gated["improvement"].to_numpy(dtype=float)
    starred = gated["confidence"].isin(["*", "**", "***"]).to_numpy()
    gating = gated["gating"].to_numpy(dtype=bool)
    group = [0 if g else 1 if (s and i < 0) else 2 for g, s, i in zip(gating, starred, improvement, strict=True)]
    key = [
        (grp, imp if grp < 2 else 0.0, position)
        for position, (grp, imp) in enumerate(zip(group, improvement, strict=True))
    ]
    order = sorted(range(len(key)), key=key.__getitem__)
    return gated.iloc[order]


def render_markdown_table(gated: pd.DataFrame) -> str:
    """compare.R's columns as a GitHub table with a gate column, regressions first (see ``markdown_order``)."""
    lines = [
        "| benchmark | confidence | improvement | accuracy (\\*) | (\\*\\*) | (\\*\\*\\*) | gate |",
        "|:--|:-:|--:|--:|--:|--:|:--|",
    ]
    for row in markdown_order(gated).itertuples(index=False):
        gate = "❌ fails" if row.gating else "ignored" if getattr(row, "ignored", False) else ""
        confidence = str(row.confidence).replace("*", "\\*")
        lines.append(
            f"| {_code(row_name(row.filename, row.configuration))} | {confidence} "
            f"| {format_improvement(row.improvement)} | {format_accuracy(row.accuracy_1)} "
            f"| {format_accuracy(row.accuracy_2)} | {format_accuracy(row.accuracy_3)} | {gate} |"
        )
    return "\n".join(lines)


def render_markdown(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """A verdict line, the table, the failing rows and why, the bars and compare.R's note, as GitHub markdown."""
    summary = gate_summary(gated, policy)
    mark = "❌" if verdict(gated) == "fail" else "✅"
    headline = summary[0].replace("gate: ", "", 1).replace("*", "\\*")
    parts = [f"**benchgate** {mark} {headline}", "", render_markdown_table(gated), ""]
    failing = gated[gated["gating"]]
    for row in failing.itertuples(index=False):
        parts.append(f"- {_code(row_name(row.filename, row.configuration))}: {row.gate_reason}")
    if len(failing):
        parts.append("")
    if len(gated):
        parts += ["```text", render_bars(bars_for(gated)), "```", ""]
    note = false_positive_note(len(gated)).splitlines()
    parts += [" ".join(note[:3]), "", *(f"- {line.strip()}".replace("*", "\\*") for line in note[3:]), ""]
    return "\n".join(parts)


def _number(value: Any) -> float | None:
    return None if _missing(value) or not math.isfinite(float(value)) else float(value)


def gate_p_values(gated: pd.DataFrame, policy: GatePolicy) -> pd.Series:
    """The p-value the gate compares with the threshold: Holm-adjusted, or raw under ``--correction none``."""
    return gated["p_adjusted"] if policy.correction == "holm" else gated["p_value"]


def analysis_record(gated: pd.DataFrame, policy: GatePolicy) -> dict[str, Any]:
    """The JSON document: the policy, the verdict and one object per comparison, ``None`` where compare.R prints NA."""
    adjusted = gate_p_values(gated, policy).to_numpy(dtype=float)
    rows = []
    for index, row in enumerate(gated.itertuples(index=False)):
        rows.append(
            {
                "filename": str(row.filename),
                "configuration": str(row.configuration),
                "n_base": int(row.n_base),
                "n_head": int(row.n_head),
                "mean_base": _number(row.mean_base),
                "mean_head": _number(row.mean_head),
                "improvement": _number(row.improvement),
                "p_value": _number(row.p_value),
                "p_adjusted": _number(adjusted[index]),
                "df": _number(row.df),
                "confidence": str(row.confidence),
                "accuracy": {
                    key: _number(value)
                    for key, value in zip(ACCURACY_KEYS, (row.accuracy_1, row.accuracy_2, row.accuracy_3), strict=True)
                },
                "gating": bool(row.gating),
            }
        )
    return {
        "comparisons": len(gated),
        "threshold": policy.threshold,
        "correction": policy.correction,
        "min_effect": float(policy.min_effect),
        "verdict": verdict(gated),
        "rows": rows,
    }


def render_json(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """``analysis_record`` as indented JSON (strict: no NaN or Infinity tokens)."""
    return json.dumps(analysis_record(gated, policy), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """The JSON rows as CSV (CSV_COLUMNS; empty where compare.R prints NA, repr-exact floats)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    reasons = gated["gate_reason"].tolist()
    for record, reason in zip(analysis_record(gated, policy)["rows"], reasons, strict=True):
        values = [record[column] for column in CSV_COLUMNS[:11]]
        values += [record["accuracy"][key] for key in ACCURACY_KEYS]
        values += ["true" if record["gating"] else "false", reason]
        writer.writerow(["" if value is None else value for value in values])
    return buffer.getvalue()
