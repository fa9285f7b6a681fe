"""The forest plot of an analysis, for reviewers who would rather look than read a 200-row table.

``chart_files`` renders it and ``panels``' distributions as PNG bytes (``FILE.png``, ``FILE-distributions.png``);
the command writes them. matplotlib (``benchgate[plot]``) is imported only when a chart is drawn, on the Agg
canvas (no display, no pyplot state).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from benchgate.errors import InputError
from benchgate.report.chartdata import (
    COLOURS,
    DPI,
    FAIL,
    FASTER,
    KIND_LABELS,
    MARKERS,
    SLOWER,
    UNCLEAR,
    Intervals,
    change_and_stars,
    forest_rows,
    intervals,
    percent,
    row_kinds,
    shorten,
    symlog_ticks,
    text,
    title_lines,
    x_scale,
)
from benchgate.stats.gate import GatePolicy

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOT_EXTRA = "pip install 'benchgate[plot]'"
DISTRIBUTIONS_SUFFIX = "-distributions"
FONT_POINTS = 8.0  # row labels and values; a row is ROW_INCHES tall, so labels never overlap
ROW_INCHES = 0.19
MAX_LABEL = 58  # characters of a configuration label (the file name heads its group of rows)
FOREST_ALL_ROWS = 40  # up to this many rows the forest draws them all; past it the decided and undecided ones
MAX_FOREST_ROWS = 80  # of those at most this many, failing and significant first (a picture ~2,000 px tall)


def require_matplotlib() -> None:
    """Raise InputError (exit 2) with the install hint unless matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(f"--plot needs matplotlib, which is not installed: {PLOT_EXTRA}") from None


def chart_paths(path: Path) -> tuple[Path, Path]:
    """The forest plot's path (``path`` itself) and the distributions' (``FILE-distributions.png``)."""
    if path.suffix.lower() != ".png":
        raise InputError(f"--plot {path}: the chart file name must end in .png")
    return path, path.with_name(f"{path.stem}{DISTRIBUTIONS_SUFFIX}{path.suffix}")


def _layout_rows(names: list[tuple[str, str]]) -> list[tuple[str, int | None]]:
    """Display rows: a header per file name (when it changes), then its configurations (position in table)."""
    rows: list[tuple[str, int | None]] = []
    for filename, group in groupby(enumerate(names), key=lambda item: item[1][0]):
        rows += [(filename, None), *((filename, position) for position, _ in group)]
    return rows


@dataclass(frozen=True)
class _Layout:
    """Inches of the forest's parts: label column, plot, value column; header and footer."""

    left: float
    plot: float = 5.6
    right: float = 2.25
    top: float = 1.35
    bottom: float = 0.8

    @property
    def ends(self) -> tuple[float, float]:
        """The figure's left and right edges in the plot's axes coordinates (0 to 1 is the plot)."""
        return -self.left / self.plot, 1 + self.right / self.plot


def _bands(ax: Axes, rows: list[tuple[str, int | None]], labels: list[str], layout: _Layout) -> None:
    """Grey bands with the file name over each file's rows and stripes on every other row, across labels, plot and
    values, so the eye follows a row at 200 rows."""
    from matplotlib.collections import PolyCollection

    start, end = layout.ends
    bands: dict[str, list] = {"#E2E2E2": [], "#F4F4F4": []}
    for y, ((_, position), label) in enumerate(zip(rows, labels, strict=True)):
        if position is None or y % 2:
            shade = "#E2E2E2" if position is None else "#F4F4F4"
            bands[shade].append([(start, y - 0.5), (end, y - 0.5), (end, y + 0.5), (start, y + 0.5)])
        if position is None:
            style = {"ha": "left", "va": "center", "fontsize": FONT_POINTS, "fontweight": "bold"}
            ax.text(start + 0.01, y, label, transform=ax.get_yaxis_transform(), **style)
    for shade, polygons in bands.items():
        collection = PolyCollection(polygons, facecolors=shade, linewidths=0, zorder=0, clip_on=False)
        collection.set_transform(ax.get_yaxis_transform())
        ax.add_collection(collection)


def _marks(ax: Axes, found: Intervals, kinds: list[str], ys: np.ndarray, limits: tuple[float, float], legend) -> None:
    """Interval lines and point markers, one collection per kind (gid ``interval-KIND``, ``point-KIND``)."""
    for kind in (FAIL, SLOWER, FASTER, UNCLEAR):
        mine = np.array([i for i, k in enumerate(kinds) if k == kind], dtype=int)
        low, high = (np.clip(ends[mine], *limits) for ends in (found.low, found.high))
        drawn = np.isfinite(low) & np.isfinite(high)
        width, size = (2.2, 5.5) if kind == FAIL else (1.5, 4.5)
        colour, label = COLOURS[kind], legend[kind] if mine.size else None
        ax.hlines(ys[mine][drawn], low[drawn], high[drawn], color=colour, lw=width, zorder=2, gid=f"interval-{kind}")
        point = {"marker": MARKERS[kind], "markersize": size, "label": label, "gid": f"point-{kind}"}
        ax.plot(found.point[mine], ys[mine], linestyle="none", color=colour, zorder=3, **point)


def _values(ax: Axes, table: pd.DataFrame, kinds: list[str], ys: np.ndarray, x: float) -> None:
    """The value column right of the plot (at ``x`` in axes coordinates): improvement, stars, FAIL or ignored."""
    style = {"ha": "left", "fontsize": FONT_POINTS, "family": "monospace", "transform": ax.get_yaxis_transform()}
    ax.text(x, -0.6, f"{'improvement':>11} {'conf':<4} gate", va="bottom", color="#333333", **style)
    for i, row in enumerate(table.itertuples(index=False)):
        value, stars = change_and_stars(row)
        failing = kinds[i] == FAIL
        flag = "FAIL" if failing else "ignored" if bool(row.ignored) else ""
        colour, weight = (COLOURS[FAIL], "bold") if failing else ("black", "normal")
        ax.text(x, ys[i], f"{value:>11} {stars:<4} {flag}", va="center", color=colour, fontweight=weight, **style)


def _x_axis(ax: Axes, found: Intervals, min_effect: float) -> tuple[float, float]:
    """Scale, limits, ticks, the zero and min-effect lines and the label of the x axis; returns the limits."""
    from matplotlib.ticker import FixedLocator, FuncFormatter

    linthresh, limits = x_scale(np.concatenate([found.point, found.low, found.high]), min_effect)
    if linthresh is not None:
        ax.set_xscale("symlog", linthresh=linthresh, linscale=1.0)
        ax.xaxis.set_major_locator(FixedLocator(symlog_ticks(linthresh, limits)))
        ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlim(*limits)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: percent(value)))
    ax.tick_params(axis="x", labelsize=FONT_POINTS, top=True, labeltop=True)
    ax.grid(axis="x", color="#D8D8D8", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.axvline(0, color="black", linewidth=0.9, zorder=1)
    for sign in (-1, 1) if min_effect > 0 else ():
        label = f"±min effect ({min_effect:g} %)" if sign < 0 else None
        dashed = {"color": "#555555", "linewidth": 0.8, "linestyle": (0, (4, 3)), "zorder": 1}
        ax.axvline(sign * min_effect, label=label, gid="min-effect", **dashed)
    scale = f"; linear within ±{linthresh:g} %, logarithmic beyond" if linthresh is not None else ""
    what = f"change of the mean rate, head vs base (higher is faster){scale}\nlines: {found.description}"
    ax.set_xlabel(what, fontsize=FONT_POINTS)
    return limits


def forest_figure(gated: pd.DataFrame, policy: GatePolicy) -> Figure:
    """The forest plot: change and interval per comparison, in the table's order, under a grey band per file.

    Failing rows have a bold label in the gate's colour, a diamond, a thicker line and FAIL. Past FOREST_ALL_ROWS
    rows only the decided and undecided ones are drawn (at most MAX_FOREST_ROWS); a line under the plot sums up
    the rest.
    """
    from matplotlib.figure import Figure

    kinds_all = row_kinds(gated)
    shown = forest_rows(gated, kinds_all, FOREST_ALL_ROWS, MAX_FOREST_ROWS)
    chosen = shown.positions
    table = gated.iloc[chosen]
    kinds = [kinds_all[i] for i in chosen]
    found = intervals(table)
    names = [(str(f), str(c)) for f, c in zip(table["filename"], table["configuration"], strict=True)]
    rows = _layout_rows(names)
    labels = [text(shorten(names[p][1] or "-" if p is not None else name, MAX_LABEL)) for name, p in rows]

    # The label column is as wide as the longest label needs (DejaVu Sans: ~0.6 em a character).
    left = min(max(0.35 + max(map(len, labels), default=0) * FONT_POINTS * 0.6 / 72, 1.8), 4.4)
    layout = _Layout(left=left, bottom=_Layout.bottom + (0.3 if shown.rest else 0.0))
    height = layout.top + layout.bottom + ROW_INCHES * max(len(rows), 3)
    width = layout.left + layout.plot + layout.right
    figure = Figure(figsize=(width, height), dpi=DPI)
    box = (layout.left / width, layout.bottom / height, layout.plot / width, 1 - (layout.top + layout.bottom) / height)
    ax = figure.add_axes(box)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    limits = _x_axis(ax, found, policy.min_effect)
    _bands(ax, rows, labels, layout)

    ys = np.array([y for y, (_, position) in enumerate(rows) if position is not None], dtype=float)
    ax.set_yticks(ys, [label for label, (_, p) in zip(labels, rows, strict=True) if p is not None])
    for label, kind in zip(ax.get_yticklabels(), kinds, strict=True):
        label.set_fontsize(FONT_POINTS)
        if kind == FAIL:
            label.set_color(COLOURS[FAIL])
            label.set_fontweight("bold")
    ax.tick_params(axis="y", length=0)
    for side in ("left", "right"):
        ax.spines[side].set_visible(False)
    _marks(ax, found, kinds, ys, limits, KIND_LABELS)
    _values(ax, table, kinds, ys, x=1 + 0.4 / layout.plot)  # clear of a top tick label at the axis' end

    what = "change of the mean rate per comparison, head vs base"
    title, subtitle = title_lines(gated, policy, len(table), what, which=shown.which)
    if shown.rest:
        figure.text(0.15 / width, 0.2 / height, shown.rest, fontsize=FONT_POINTS, va="center", gid="rest")
    figure.text(0.15 / width, 1 - 0.3 / height, title, fontsize=11, fontweight="bold", va="center")
    figure.text(0.15 / width, 1 - 0.55 / height, subtitle, fontsize=FONT_POINTS + 0.5, va="center")
    legend = {"ncol": 5, "frameon": False, "fontsize": FONT_POINTS, "handletextpad": 0.4, "columnspacing": 1.4}
    figure.legend(loc="upper left", bbox_to_anchor=(0.1 / width, 1 - 0.68 / height), **legend)
    return figure


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG, drawn by Agg at DPI."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer, metadata={"Software": "benchgate"})
    return buffer.getvalue()


def chart_files(path: Path, gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> dict[Path, bytes]:
    """Both charts as ``{path: PNG bytes}``: the forest at ``path``, the distributions beside it."""
    from benchgate.report.panels import distributions_figure

    forest_path, distributions_path = chart_paths(path)
    return {
        forest_path: png_bytes(forest_figure(gated, policy)),
        distributions_path: png_bytes(distributions_figure(gated, samples, policy)),
    }
