"""What the charts show (row kinds, intervals, axis scale, labels, which rows), computed without matplotlib."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchgate.report.gatelines import gate_headline
from benchgate.report.markup import one_line
from benchgate.report.tables import ACCURACY_KEYS
from benchgate.stats.gate import GatePolicy

# Okabe-Ito colours (safe for colour-blind readers); every kind also has its own marker.
FAIL, SLOWER, FASTER, UNCLEAR = "fail", "slower", "faster", "unclear"
COLOURS = {FAIL: "#D55E00", SLOWER: "#CC79A7", FASTER: "#0072B2", UNCLEAR: "#8C8C8C"}
MARKERS = {FAIL: "D", SLOWER: "v", FASTER: "^", UNCLEAR: "o"}


def text(value: str) -> str:
    """Untrusted text as matplotlib shows it literally: one line, no mathtext (``$`` escaped)."""
    return one_line(value).replace("$", r"\$")


def shorten(value: str, limit: int) -> str:
    """``value`` cut in the middle to ``limit`` characters: both ends of a configuration stay readable."""
    if len(value) <= limit:
        return value
    head = (limit - 1) * 3 // 5
    return value[:head] + "…" + value[len(value) - (limit - 1 - head) :]


def row_kinds(gated: pd.DataFrame) -> list[str]:
    """FAIL, SLOWER, FASTER or UNCLEAR per row: the gate first, then the gate's decision or compare.R's stars."""
    decided = {"regression": SLOWER, "improvement": FASTER}
    kinds = [decided.get(str(decision), UNCLEAR) for decision in gated["decision"]]
    return [FAIL if gating else kind for gating, kind in zip(gated["gating"], kinds, strict=True)]


KIND_LABELS = {
    FAIL: "fails the gate",
    SLOWER: "regression, not failing the gate",
    FASTER: "improvement",
    UNCLEAR: "unchanged or undecided",
}


def x_scale(values: np.ndarray, min_effect: float = 0.0) -> tuple[float | None, tuple[float, float]]:
    """The x axis: ``(linthresh, limits)``, linthresh None for a linear axis: linear unless the largest value is
    over ten times what three rows in four reach (a +700 % row would squash -3 % ones), then symmetric log."""
    finite = values[np.isfinite(values)]
    low = min(float(finite.min(initial=0.0)), -min_effect)
    high = max(float(finite.max(initial=0.0)), min_effect)
    magnitudes = np.abs(finite)
    typical = max(float(np.percentile(magnitudes, 75)) if magnitudes.size else 0.0, 1.25 * min_effect, 1.0)
    if max(-low, high) <= 10 * typical:
        pad = 0.06 * max(high - low, 1.0)
        return None, (low - pad, high + pad)
    exponent = math.floor(math.log10(typical))  # linthresh: the smallest 1, 2, 5 or 10 times 10**exponent over it
    linthresh = next(
        float(step * 10**exponent) for step in (1, 2, 5, 10) if step * 10**exponent >= typical * (1 - 1e-9)
    )

    def padded(end: float) -> float:
        return end * 1.35 if abs(end) > linthresh else end + math.copysign(0.12 * linthresh, end or 1)

    return linthresh, (padded(low) if low < 0 else -0.12 * linthresh, padded(high))


def symlog_ticks(linthresh: float, limits: tuple[float, float], count: int = 9) -> list[float]:
    """Round tick values for a symmetric log axis, evenly spread on it: 0, +-linthresh and powers of ten first."""

    def position(value: float) -> float:  # where matplotlib's symlog (linscale 1) puts a value, in decades
        size = abs(value) / linthresh
        return math.copysign(size if size <= 1 else 1 + math.log10(size), value)

    low, high = limits
    span = position(high) - position(low)
    candidates: list[tuple[int, float]] = [(0, 0.0)]
    for exponent in range(-3, 9):
        for priority, step in ((2, 1), (3, 5), (4, 2)):
            value = step * 10.0**exponent
            for signed in (value, -value):
                if low <= signed <= high:
                    candidates.append((1 if math.isclose(value, linthresh) else priority, signed))
    chosen: list[float] = []
    for _, value in sorted(candidates):
        if all(abs(position(value) - position(other)) >= span / count for other in chosen):
            chosen.append(value)
    return sorted(chosen)


def percent(value: float, digits: int | None = None) -> str:
    """``+12 %``, ``−3.5 %`` (a real minus sign), ``0``; with ``digits``, that many decimals."""
    if value == 0 and digits is None:
        return "0"
    number = f"{value:+g}" if digits is None else f"{value:+.{digits}f}"
    return f"{number} %".replace("-", "−")


def change_and_stars(row: Any) -> tuple[str, str]:
    """A row's improvement as the charts print it (``NA`` when unknown) and its compare.R stars ('' for none)."""
    change = "NA" if not math.isfinite(row.improvement) else percent(row.improvement, digits=2)
    return change, str(row.confidence) if str(row.confidence) in ACCURACY_KEYS else ""


def selection(gated: pd.DataFrame, kinds: list[str], cap: int) -> np.ndarray:
    """Positions of the rows to draw, in table order: all, or the ``cap`` failing, significant, largest first."""
    if len(gated) <= cap:
        return np.arange(len(gated))
    rank = {FAIL: 0, SLOWER: 1, FASTER: 1, UNCLEAR: 2}
    size = -np.nan_to_num(np.abs(gated["improvement"].to_numpy(dtype=float)), nan=-1.0)
    order = sorted(range(len(gated)), key=lambda i: (rank[kinds[i]], size[i], i))
    return np.sort(np.asarray(order[:cap]))


def title_lines(gated: pd.DataFrame, policy: GatePolicy, shown: int, what: str, *, which: str = "") -> tuple[str, str]:
    """The chart's title and subtitle: what it shows, then the gate's line as the text report prints it."""
    subtitle = gate_headline(gated, policy)
    if shown < len(gated):
        subtitle += f"  ·  showing {shown} of {len(gated)}: {which or 'failing and significant rows first'}"
    return f"benchgate: {what}", text(subtitle)


@dataclass(frozen=True)
class ForestRows:
    """The rows a forest plot draws (positions in table order) and one line on the ones it leaves out."""

    positions: np.ndarray
    which: str  # what the drawn rows are, for the subtitle ('' when all are drawn)
    rest: str  # the summary of the rows left out ('' when none are)


def forest_rows(gated: pd.DataFrame, kinds: list[str], all_up_to: int, cap: int) -> ForestRows:
    """Every row up to ``all_up_to`` rows; past that (a 1,000-row forest is 23,000 pixels tall) the decided and
    undecided ones, at most ``cap``, and one line on the rest."""
    total = len(gated)
    if total <= all_up_to:
        return ForestRows(np.arange(total), "", "")
    undecided = gated["undecided"].to_numpy(dtype=bool)
    matters = np.array([kind != UNCLEAR for kind in kinds], dtype=bool) | undecided
    positions = np.flatnonzero(matters)
    if positions.size > cap:
        subset = gated.iloc[positions]
        positions = positions[selection(subset, [kinds[i] for i in positions], cap)]
    left_out = np.setdiff1d(np.arange(total), positions)
    unchanged = left_out[~matters[left_out]]
    parts = []
    if unchanged.size:
        change = gated["improvement"].to_numpy(dtype=float)[unchanged]
        change = change[np.isfinite(change)]
        spread = f": changes from {percent(change.min(), 2)} to {percent(change.max(), 2)}" if change.size else ""
        parts.append(f"{unchanged.size} unchanged rows not drawn{spread}")
    names = {FAIL: "failing", SLOWER: "slower", FASTER: "faster", UNCLEAR: "undecided"}
    counts = Counter(names[kinds[i]] for i in left_out[matters[left_out]])
    if counts:
        parts.append("not drawn either: " + ", ".join(f"{count} {name}" for name, count in counts.items()))
    rest = "; ".join(parts) + " (every row is in the report's table)"
    return ForestRows(positions, "the decided and undecided rows", rest)
