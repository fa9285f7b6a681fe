"""The distributions chart: base and head samples per comparison, one small panel each.

``compare.R --plot``'s box plot, faceted by file, overlaps its labels at 200 configurations; here each
comparison gets its own panel in the table's order, with its own scale (a 2 % change's spread is as visible as a
700 % one's): rates in percent of the base mean, a Tukey box and every sample as a dot. All panels are drawn in
one Axes, one collection per kind of mark: 200 Axes with their own ticks take about ten times as long to draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from benchgate.report.chartdata import (
    COLOURS,
    DPI,
    FAIL,
    change_and_stars,
    percent,
    row_kinds,
    selection,
    shorten,
    text,
)
from benchgate.report.chartdata import title_lines as _title_lines
from benchgate.stats.gate import GatePolicy

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SIDE_COLOURS = {"base": "#7A7A7A", "head": "#0072B2"}
PANEL_WIDTH, PANEL_HEIGHT = 3.4, 1.5  # inches, titles and tick labels included
MAX_PANELS = 300  # beyond this the failing and significant rows come first
PANEL_FONT = 7.5
PANEL_LABEL = 48  # characters of a file name or configuration in a panel title
# Where a panel's plot box sits inside its 1 x 1 cell (y grows downwards), and its two rows.
BOX_LEFT, BOX_RIGHT, BOX_TOP, BOX_BOTTOM = 0.1, 0.97, 0.3, 0.78
ROWS = {"base": 0.42, "head": 0.66}
HALF_BOX = 0.075  # half the height of a box, in panel units


def normalised(rates: np.ndarray, reference: float) -> np.ndarray:
    """Rates as percent change from ``reference`` (the base mean): 0 is the base mean, +10 is 10 % faster."""
    return (np.asarray(rates, dtype=float) / reference - 1.0) * 100.0


def box_stats(values: np.ndarray) -> tuple[float, float, float, float, float]:
    """Whisker low, first quartile, median, third quartile, whisker high (Tukey: 1.5 IQR, at a sample)."""
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    reach = 1.5 * (q3 - q1)
    inside = values[(values >= q1 - reach) & (values <= q3 + reach)]
    return float(inside.min()), float(q1), float(median), float(q3), float(inside.max())


@dataclass
class Marks:
    """Everything the panels draw, gathered so each kind is one matplotlib collection."""

    boxes: dict[str, list] = field(default_factory=lambda: {"base": [], "head": []})
    lines: dict[str, list] = field(default_factory=lambda: {"base": [], "head": [], "grid": [], "zero": []})
    dots: dict[str, list] = field(default_factory=lambda: {"base": [], "head": []})
    frames: dict[bool, list] = field(default_factory=lambda: {False: [], True: []})
    texts: list[tuple[float, float, str, dict]] = field(default_factory=list)


def _panel(
    marks: Marks, origin: tuple[float, float], row, rates: dict[str, np.ndarray], failing: bool, seed: int
) -> None:
    """Add one comparison's panel, its cell's top left corner at ``origin``, to ``marks``."""
    from matplotlib.ticker import MaxNLocator

    x0, y0 = origin
    left, right, top, bottom = x0 + BOX_LEFT, x0 + BOX_RIGHT, y0 + BOX_TOP, y0 + BOX_BOTTOM
    reference = float(row.mean_base) if math.isfinite(row.mean_base) and row.mean_base > 0 else float(row.mean_head)
    values = {side: normalised(rates[side], reference) for side in ROWS}
    every = np.concatenate(list(values.values()))
    low, high = (min(float(every.min()), 0.0), max(float(every.max()), 0.0)) if every.size else (-1.0, 1.0)
    pad = max((high - low) * 0.06, 0.05)
    low, high = low - pad, high + pad

    def x(value):  # the panel's own scale onto its box
        return left + (np.asarray(value, dtype=float) - low) / (high - low) * (right - left)

    for tick in MaxNLocator(nbins=3).tick_values(low, high):
        if low <= tick <= high:
            marks.lines["grid"].append([(x(tick), top), (x(tick), bottom)])
            marks.texts.append((float(x(tick)), bottom + 0.03, percent(tick), {"ha": "center", "va": "top"}))
    marks.lines["zero"].append([(x(0.0), top), (x(0.0), bottom)])
    rng = np.random.default_rng(seed)  # seeded jitter: the same data draws the same picture
    for side, y in ROWS.items():
        y = y0 + y
        if x0 == 0:  # the first column names the rows; the legend line above says it for the rest
            marks.texts.append((left - 0.015, y, side, {"ha": "right", "va": "center", "color": SIDE_COLOURS[side]}))
        data = values[side]
        if data.size == 0:
            marks.texts.append(((left + right) / 2, y, "no samples", {"ha": "center", "va": "center"}))
            continue
        whisker_low, q1, median, q3, whisker_high = (float(v) for v in x(box_stats(data)))
        marks.boxes[side].append([(q1, y - HALF_BOX), (q3, y - HALF_BOX), (q3, y + HALF_BOX), (q1, y + HALF_BOX)])
        marks.lines[side] += [
            [(median, y - HALF_BOX), (median, y + HALF_BOX)],
            [(whisker_low, y), (q1, y)],
            [(q3, y), (whisker_high, y)],
        ]
        jitter = rng.uniform(-0.6, 0.6, data.size) * HALF_BOX
        marks.dots[side] += list(zip(x(data), y + jitter, strict=True))
    marks.frames[failing].append([(left, top), (right, top), (right, bottom), (left, bottom)])

    colour = COLOURS[FAIL] if failing else "black"
    weight = "bold" if failing else "normal"
    improvement, stars = change_and_stars(row)
    title = {"va": "bottom", "color": colour}
    change = f"{improvement} {stars}" + (" FAIL" if failing else "")
    marks.texts += [
        (left, y0 + 0.14, text(shorten(str(row.filename), PANEL_LABEL)), {**title, "fontweight": "bold"}),
        (left, y0 + 0.27, text(shorten(str(row.configuration) or "-", PANEL_LABEL)), {**title, "fontweight": weight}),
        (right, y0 + 0.14, change, {**title, "ha": "right", "fontweight": weight}),
    ]


def _draw(ax: Axes, marks: Marks) -> None:
    from matplotlib.collections import LineCollection, PolyCollection

    for side, colour in SIDE_COLOURS.items():
        box = {"facecolors": colour, "alpha": 0.22, "edgecolors": colour, "linewidths": 0.9, "zorder": 2}
        ax.add_collection(PolyCollection(marks.boxes[side], gid=f"boxes-{side}", **box))
        ax.add_collection(LineCollection(marks.lines[side], colors=colour, linewidths=1.1, zorder=3))
        if marks.dots[side]:
            xs, ys = zip(*marks.dots[side], strict=True)
            ax.scatter(xs, ys, s=7, color=colour, alpha=0.65, linewidths=0, zorder=4, gid=f"dots-{side}")
    ax.add_collection(LineCollection(marks.lines["grid"], colors="#E2E2E2", linewidths=0.5, zorder=1))
    zero = {"colors": "black", "linewidths": 0.6, "linestyles": (0, (2, 2)), "zorder": 1}
    ax.add_collection(LineCollection(marks.lines["zero"], **zero))
    for failing, frames in marks.frames.items():
        colour, width = (COLOURS[FAIL], 1.8) if failing else ("#B8B8B8", 0.6)
        ax.add_collection(
            PolyCollection(
                frames, facecolors="none", edgecolors=colour, linewidths=width, zorder=5, gid=f"frames-{failing}"
            )
        )
    for x, y, value, style in marks.texts:
        ax.text(x, y, value, fontsize=PANEL_FONT, **style)


def distributions_figure(gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> Figure:
    """One panel per comparison (table order, left to right, top to bottom): base and head samples."""
    from matplotlib.figure import Figure

    kinds = row_kinds(gated)
    chosen = selection(gated, kinds, MAX_PANELS)
    table = gated.iloc[chosen]
    columns = 1 if len(table) <= 1 else 2 if len(table) <= 4 else 3 if len(table) <= 9 else 4
    grid_rows = max(math.ceil(len(table) / columns), 1)
    top, bottom, side = 1.05, 0.1, 0.15
    width = 2 * side + columns * PANEL_WIDTH
    height = top + bottom + grid_rows * PANEL_HEIGHT
    figure = Figure(figsize=(width, height), dpi=DPI)
    ax = figure.add_axes(
        (side / width, bottom / height, columns * PANEL_WIDTH / width, grid_rows * PANEL_HEIGHT / height)
    )
    ax.set_xlim(0, columns)
    ax.set_ylim(grid_rows, 0)
    ax.set_axis_off()

    grouped = samples.groupby(["filename", "configuration", "side"], observed=True, sort=False)["rate"]
    rates = {key: group.to_numpy(dtype=float) for key, group in grouped}
    empty = np.zeros(0)
    marks = Marks()
    for index, row in enumerate(table.itertuples(index=False)):
        by_side = {side: rates.get((row.filename, row.configuration, side), empty) for side in ROWS}
        origin = (index % columns, index // columns)
        _panel(marks, origin, row, by_side, kinds[chosen[index]] == FAIL, seed=index)
    _draw(ax, marks)

    title, subtitle = _title_lines(gated, policy, len(table), "samples per comparison, base vs head")
    figure.text(0.15 / width, 1 - 0.3 / height, title, fontsize=11, fontweight="bold", va="center")
    figure.text(0.15 / width, 1 - 0.55 / height, subtitle, fontsize=8.5, va="center")
    figure.text(
        0.15 / width,
        1 - 0.8 / height,
        "rates in % of the base mean (0, dashed) · base above, head below · box: quartiles and median, "
        "whiskers to 1.5 IQR · dots: every sample · each panel has its own scale",
        fontsize=PANEL_FONT + 0.5,
        va="center",
        color="#333333",
    )
    return figure
