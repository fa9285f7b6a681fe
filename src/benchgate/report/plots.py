"""The ``--plot`` charts as PNG bytes, drawn on matplotlib's Agg canvas (imported only when a chart is drawn)."""

from __future__ import annotations

import io
import math
from collections import defaultdict
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from benchgate.errors import InputError
from benchgate.report import chartdata
from benchgate.report.chartdata import COLOURS, FAIL
from benchgate.report.gatelines import gate_test
from benchgate.stats.gate import GatePolicy

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
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
        raise InputError("--plot needs matplotlib, which is not installed: pip install 'benchgate[plot]'") from None


def chart_paths(path: Path) -> tuple[Path, Path]:
    """The forest plot's path (``path`` itself) and the distributions' (``FILE-distributions.png``)."""
    if path.suffix.lower() != ".png":
        raise InputError(f"--plot {path}: the chart file name must end in .png")
    return path, path.with_name(f"{path.stem}-distributions{path.suffix}")


def _layout_rows(names: list[tuple[str, str]]) -> list[tuple[str, int | None]]:
    """Display rows: a header per file name (when it changes), then its configurations (position in table)."""
    rows: list[tuple[str, int | None]] = []
    for filename, group in groupby(enumerate(names), key=lambda item: item[1][0]):
        rows += [(filename, None), *((filename, position) for position, _ in group)]
    return rows


def _bands(ax: Axes, rows: list[tuple[str, int | None]], labels: list[str], ends: tuple[float, float]) -> None:
    """A grey band with the file name over each file's rows, stripes on every other row, edge to edge (``ends``)."""
    from matplotlib.collections import PolyCollection

    start, end = ends
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


def _marks(ax: Axes, found: np.ndarray, kinds: list[str], ys: np.ndarray, limits: tuple[float, float]) -> None:
    """Interval lines and point markers (``found``: change, low, high), gid ``interval-KIND`` and ``point-KIND``."""
    for kind in COLOURS:  # FAIL, SLOWER, FASTER, UNCLEAR
        mine = np.array([i for i, k in enumerate(kinds) if k == kind], dtype=int)
        low, high = (np.clip(ends[mine], *limits) for ends in found[1:])
        drawn = np.isfinite(low) & np.isfinite(high)
        width, size = (2.2, 5.5) if kind == FAIL else (1.5, 4.5)
        colour, label = COLOURS[kind], chartdata.KIND_LABELS[kind] if mine.size else None
        ax.hlines(ys[mine][drawn], low[drawn], high[drawn], color=colour, lw=width, zorder=2, gid=f"interval-{kind}")
        point = {"marker": chartdata.MARKERS[kind], "markersize": size, "label": label, "gid": f"point-{kind}"}
        ax.plot(found[0][mine], ys[mine], linestyle="none", color=colour, zorder=3, **point)


def _values(ax: Axes, table: pd.DataFrame, kinds: list[str], ys: np.ndarray, x: float) -> None:
    """The value column right of the plot (at ``x`` in axes coordinates): improvement, stars, FAIL or ignored."""
    style = {"ha": "left", "fontsize": FONT_POINTS, "family": "monospace", "transform": ax.get_yaxis_transform()}
    ax.text(x, -0.6, f"{'improvement':>11} {'conf':<4} gate", va="bottom", color="#333333", **style)
    for i, row in enumerate(table.itertuples(index=False)):
        value, stars = chartdata.change_and_stars(row)
        flag = "FAIL" if kinds[i] == FAIL else "ignored" if bool(row.ignored) else ""
        ax.text(x, ys[i], f"{value:>11} {stars:<4} {flag}", va="center", **_emphasis(kinds[i] == FAIL), **style)


def _emphasis(failing: bool) -> dict[str, str]:
    """A row's text style: a failing row's bold in the FAIL colour."""
    return {"color": COLOURS[FAIL], "fontweight": "bold"} if failing else {"color": "black", "fontweight": "normal"}


def _x_axis(ax: Axes, found: np.ndarray, min_effect: float, lines: str) -> tuple[float, float]:
    """Scale, limits, ticks, the zero and min-effect lines and the label of the x axis; returns the limits."""
    from matplotlib.ticker import FixedLocator, FuncFormatter

    linthresh, limits = chartdata.x_scale(found.ravel(), min_effect)
    if linthresh is not None:
        ax.set_xscale("symlog", linthresh=linthresh, linscale=1.0)
        ax.xaxis.set_major_locator(FixedLocator(chartdata.symlog_ticks(linthresh, limits)))
        ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlim(*limits)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: chartdata.percent(value)))
    ax.tick_params(axis="x", labelsize=FONT_POINTS, top=True, labeltop=True)
    ax.grid(axis="x", color="#D8D8D8", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.axvline(0, color="black", linewidth=0.9, zorder=1)
    for sign in (-1, 1) if min_effect > 0 else ():
        label = f"±min effect ({min_effect:g} %)" if sign < 0 else None
        dashed = {"color": "#555555", "linewidth": 0.8, "linestyle": (0, (4, 3)), "zorder": 1}
        ax.axvline(sign * min_effect, label=label, gid="min-effect", **dashed)
    scale = f"; linear within ±{linthresh:g} %, logarithmic beyond" if linthresh is not None else ""
    what = f"change of the mean rate, head vs base (higher is faster){scale}\nlines: {lines}"
    ax.set_xlabel(what, fontsize=FONT_POINTS)
    return limits


def _figure(size: tuple[float, float], box: tuple[float, ...], titles: tuple[str, str]) -> tuple[Figure, Axes]:
    """A figure of ``size`` inches under its title and subtitle, with one Axes at ``box`` (inches from bottom left)."""
    from matplotlib.figure import Figure

    width, height = size
    figure = Figure(figsize=size, dpi=DPI)
    ax = figure.add_axes((box[0] / width, box[1] / height, box[2] / width, box[3] / height))
    figure.text(0.15 / width, 1 - 0.3 / height, titles[0], fontsize=11, fontweight="bold", va="center")
    figure.text(0.15 / width, 1 - 0.55 / height, titles[1], fontsize=8.5, va="center")
    return figure, ax


def forest_figure(gated: pd.DataFrame, policy: GatePolicy) -> Figure:
    """The forest plot: change and interval per comparison in table order, under a grey band per file; failing
    rows stand out (bold, a diamond, FAIL); past FOREST_ALL_ROWS rows, ``chartdata.forest_rows`` picks them."""
    kinds_all = chartdata.row_kinds(gated)
    shown = chartdata.forest_rows(gated, kinds_all, FOREST_ALL_ROWS, MAX_FOREST_ROWS)
    chosen = shown.positions
    table = gated.iloc[chosen]
    kinds = [kinds_all[i] for i in chosen]
    found = table[["change", "ci_low", "ci_high"]].to_numpy(dtype=float).T
    names = [(str(f), str(c)) for f, c in zip(table["filename"], table["configuration"], strict=True)]
    rows = _layout_rows(names)
    labels = [
        chartdata.text(chartdata.shorten(names[p][1] or "-" if p is not None else name, MAX_LABEL)) for name, p in rows
    ]

    # The label column is as wide as the longest label needs (DejaVu Sans: ~0.6 em a character).
    left = min(max(0.35 + max(map(len, labels), default=0) * FONT_POINTS * 0.6 / 72, 1.8), 4.4)
    plot, right, top, bottom = 5.6, 2.25, 1.35, 0.8 + (0.3 if shown.rest else 0.0)  # inches
    height = top + bottom + ROW_INCHES * max(len(rows), 3)
    width = left + plot + right
    what = "change of the mean rate per comparison, head vs base"
    titles = chartdata.title_lines(gated, policy, len(table), what, which=shown.which)
    box = (left, bottom, plot, height - top - bottom)
    figure, ax = _figure((width, height), box, titles)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    lines = "the gate's confidence interval"  # what the forest's lines are: (ci_low, ci_high) around change
    if gate_test(table) == "compare.R":
        lines = "compare.R's confidence interval at the threshold's level"
    limits = _x_axis(ax, found, policy.min_effect, lines)
    _bands(ax, rows, labels, (-left / plot, 1 + right / plot))

    ys = np.array([y for y, (_, position) in enumerate(rows) if position is not None], dtype=float)
    ax.set_yticks(ys, [label for label, (_, p) in zip(labels, rows, strict=True) if p is not None])
    for label, kind in zip(ax.get_yticklabels(), kinds, strict=True):
        label.set(fontsize=FONT_POINTS, **_emphasis(kind == FAIL))
    ax.tick_params(axis="y", length=0)
    ax.spines[["left", "right"]].set_visible(False)
    _marks(ax, found, kinds, ys, limits)
    _values(ax, table, kinds, ys, x=1 + 0.4 / plot)  # clear of a top tick label at the axis' end

    if shown.rest:
        figure.text(0.15 / width, 0.2 / height, shown.rest, fontsize=FONT_POINTS, va="center", gid="rest")
    legend = {"ncol": 5, "frameon": False, "fontsize": FONT_POINTS, "handletextpad": 0.4, "columnspacing": 1.4}
    figure.legend(loc="upper left", bbox_to_anchor=(0.1 / width, 1 - 0.68 / height), **legend)
    return figure


# The distributions chart: compare.R --plot's box plot, faceted by file, overlaps its labels at 200
# configurations; here each comparison gets its own panel with its own scale (rates in percent of the base mean, a
# Tukey box and every sample as a dot). All panels share one Axes, one collection per kind of mark: 200 Axes with
# their own ticks take about ten times as long to draw.
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


def _panel(
    marks: defaultdict[str, list], index: int, columns: int, row, rates: dict[str, np.ndarray], failing: bool
) -> None:
    """Add the ``index``-th comparison's panel (in ``columns``, row by row) to ``marks`` (lists by kind of mark)."""
    from matplotlib.ticker import MaxNLocator

    x0, y0 = index % columns, index // columns  # the cell's top left corner
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
            marks["grid"].append([(x(tick), top), (x(tick), bottom)])
            marks["texts"].append(
                (float(x(tick)), bottom + 0.03, chartdata.percent(tick), {"ha": "center", "va": "top"})
            )
    marks["zero"].append([(x(0.0), top), (x(0.0), bottom)])
    rng = np.random.default_rng(index)  # seeded jitter: the same data draws the same picture
    for side, y in ROWS.items():
        y = y0 + y
        if x0 == 0:  # the first column names the rows; the legend line above says it for the rest
            marks["texts"].append((left - 0.015, y, side, {"ha": "right", "va": "center", "color": SIDE_COLOURS[side]}))
        data = values[side]
        if data.size == 0:
            marks["texts"].append(((left + right) / 2, y, "no samples", {"ha": "center", "va": "center"}))
            continue
        whisker_low, q1, median, q3, whisker_high = (float(v) for v in x(box_stats(data)))
        marks[f"boxes-{side}"].append([(q1, y - HALF_BOX), (q3, y - HALF_BOX), (q3, y + HALF_BOX), (q1, y + HALF_BOX)])
        marks[f"lines-{side}"] += [
            [(median, y - HALF_BOX), (median, y + HALF_BOX)],
            [(whisker_low, y), (q1, y)],
            [(q3, y), (whisker_high, y)],
        ]
        jitter = rng.uniform(-0.6, 0.6, data.size) * HALF_BOX
        marks[f"dots-{side}"] += list(zip(x(data), y + jitter, strict=True))
    marks[f"frames-{failing}"].append([(left, top), (right, top), (right, bottom), (left, bottom)])

    improvement, stars = chartdata.change_and_stars(row)
    names = (str(row.filename), str(row.configuration) or "-")
    title = {"va": "bottom", **_emphasis(failing)}
    change = f"{improvement} {stars}" + (" FAIL" if failing else "")
    name, configuration = (chartdata.text(chartdata.shorten(value, PANEL_LABEL)) for value in names)
    marks["texts"] += [
        (left, y0 + 0.14, name, {**title, "fontweight": "bold"}),
        (left, y0 + 0.27, configuration, title),
        (right, y0 + 0.14, change, {**title, "ha": "right"}),
    ]


def _draw(ax: Axes, marks: defaultdict[str, list]) -> None:
    from matplotlib.collections import LineCollection, PolyCollection

    for side, colour in SIDE_COLOURS.items():
        box = {"facecolors": colour, "alpha": 0.22, "edgecolors": colour, "linewidths": 0.9, "zorder": 2}
        ax.add_collection(PolyCollection(marks[f"boxes-{side}"], gid=f"boxes-{side}", **box))
        ax.add_collection(LineCollection(marks[f"lines-{side}"], colors=colour, linewidths=1.1, zorder=3))
        if marks[f"dots-{side}"]:
            xs, ys = zip(*marks[f"dots-{side}"], strict=True)
            ax.scatter(xs, ys, s=7, color=colour, alpha=0.65, linewidths=0, zorder=4, gid=f"dots-{side}")
    ax.add_collection(LineCollection(marks["grid"], colors="#E2E2E2", linewidths=0.5, zorder=1))
    zero = {"colors": "black", "linewidths": 0.6, "linestyles": (0, (2, 2)), "zorder": 1}
    ax.add_collection(LineCollection(marks["zero"], **zero))
    for failing in (False, True):
        colour, width = (COLOURS[FAIL], 1.8) if failing else ("#B8B8B8", 0.6)
        frame = {"facecolors": "none", "edgecolors": colour, "linewidths": width, "zorder": 5}
        ax.add_collection(PolyCollection(marks[f"frames-{failing}"], gid=f"frames-{failing}", **frame))
    for x, y, value, style in marks["texts"]:
        ax.text(x, y, value, fontsize=PANEL_FONT, **style)


def distributions_figure(gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> Figure:
    """One panel per comparison (table order, left to right, top to bottom): base and head samples."""
    kinds = chartdata.row_kinds(gated)
    chosen = chartdata.selection(gated, kinds, MAX_PANELS)
    table = gated.iloc[chosen]
    columns = 1 if len(table) <= 1 else 2 if len(table) <= 4 else 3 if len(table) <= 9 else 4
    grid_rows = max(math.ceil(len(table) / columns), 1)
    top, bottom, side = 1.05, 0.1, 0.15
    width = 2 * side + columns * PANEL_WIDTH
    height = top + bottom + grid_rows * PANEL_HEIGHT
    titles = chartdata.title_lines(gated, policy, len(table), "samples per comparison, base vs head")
    figure, ax = _figure((width, height), (side, bottom, columns * PANEL_WIDTH, grid_rows * PANEL_HEIGHT), titles)
    ax.set_xlim(0, columns)
    ax.set_ylim(grid_rows, 0)
    ax.set_axis_off()

    grouped = samples.groupby(["filename", "configuration", "side"], observed=True, sort=False)["rate"]
    rates = {key: group.to_numpy(dtype=float) for key, group in grouped}
    empty = np.zeros(0)
    marks: defaultdict[str, list] = defaultdict(list)
    for index, row in enumerate(table.itertuples(index=False)):
        by_side = {side: rates.get((row.filename, row.configuration, side), empty) for side in ROWS}
        _panel(marks, index, columns, row, by_side, kinds[chosen[index]] == FAIL)
    _draw(ax, marks)

    legend = (
        "rates in % of the base mean (0, dashed) · base above, head below · box: quartiles and median, "
        "whiskers to 1.5 IQR · dots: every sample · each panel has its own scale"
    )
    figure.text(0.15 / width, 1 - 0.8 / height, legend, fontsize=PANEL_FONT + 0.5, va="center", color="#333333")
    return figure


def chart_files(path: Path, gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> dict[Path, bytes]:
    """Both charts as ``{path: PNG bytes}`` (Agg at DPI): the forest at ``path``, the distributions beside it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    forest, distributions = chart_paths(path)
    figures = {forest: forest_figure(gated, policy), distributions: distributions_figure(gated, samples, policy)}
    files = {}
    for where, figure in figures.items():
        buffer = io.BytesIO()
        FigureCanvasAgg(figure).print_png(buffer, metadata={"Software": "benchgate"})
        files[where] = buffer.getvalue()
    return files
