"""Pure rendering of an analysis: compare.R's text table (more formats to come)."""

from __future__ import annotations

import math

import pandas as pd

from benchgate.gate import GatePolicy


def _percent(value: float, *, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NA"
    return f"{value:+.2f} %" if sign else f"{value:.2f} %"


def _accuracy(value: float) -> str:
    if value is None or math.isnan(value):
        return "NA"
    return f"±{value:.2f}%"


def render_text(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """compare.R's table (row name, confidence, improvement, accuracy), its false-positive note and a gate line."""
    header = ["", "confidence", "improvement", "accuracy (*)", "(**)", "(***)"]
    lines = [header]
    for row in gated.itertuples(index=False):
        lines.append(
            [
                f"{row.filename} {row.configuration}",
                row.confidence,
                _percent(row.improvement),
                _accuracy(row.accuracy_1),
                _accuracy(row.accuracy_2),
                _accuracy(row.accuracy_3),
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for line in lines:
        cells = [line[0].ljust(widths[0])] + [cell.rjust(widths[i]) for i, cell in enumerate(line) if i > 0]
        out.append(" ".join(cells).rstrip())
    count = len(gated)
    out += [
        "",
        "Be aware that when doing many comparisons the risk of a false-positive",
        f"result increases. In this case, there are {count} comparisons, you can thus",
        "expect the following amount of false-positive results:",
        f"  {count * 0.05:.2f} false positives, when considering a   5% risk acceptance (*, **, ***),",
        f"  {count * 0.01:.2f} false positives, when considering a   1% risk acceptance (**, ***),",
        f"  {count * 0.001:.2f} false positives, when considering a 0.1% risk acceptance (***)",
        "",
    ]
    failing = int(gated["gating"].sum())
    if failing:
        out.append(f"gate: FAIL, {failing} regression(s) at {policy.threshold} after {policy.correction} correction")
    else:
        out.append(f"gate: pass (threshold {policy.threshold}, correction {policy.correction})")
    return "\n".join(out) + "\n"
