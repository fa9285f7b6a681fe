"""The ``--plot`` charts as SVG: the geometry here, the markup in ``benchgate/data/report-charts.svg.j2``, rendered by
the history site's Jinja2 environment (autoescaped: benchmark names and configurations are untrusted run data)."""

import math
from collections import Counter
from collections.abc import Callable
from itertools import accumulate, product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchgate.errors import InputError
from benchgate.history.site import LINE, TEMPLATES, nice_ticks
from benchgate.history.site import SLOWER as VERMILLION
from benchgate.report.gatelines import gate_headline
from benchgate.report.markup import one_line
from benchgate.report.tables import ACCURACY_KEYS, with_decisions
from benchgate.stats.gate import GatePolicy

# Okabe-Ito colours (safe for colour-blind readers), the site's among them; every kind also has its own marker.
FAIL, SLOWER, FASTER, UNCLEAR = "fail", "slower", "faster", "unclear"
COLOURS = {FAIL: VERMILLION, SLOWER: "#CC79A7", FASTER: LINE, UNCLEAR: "#8C8C8C"}
KIND_LABELS = {
    FAIL: "fails the gate",
    SLOWER: "regression, not failing the gate",
    FASTER: "improvement",
    UNCLEAR: "unchanged or undecided",
}
SIDE_COLOURS = {"base": "#7A7A7A", "head": LINE}
CHAR = 6.6  # pixels a character of the charts' 11 px monospace text takes: a column is as wide as its text
ROW = 18  # pixels a row of either chart: labels never overlap
PLOT_WIDTH = 540  # the forest's plot box, pixels
MAX_LABEL = 58  # characters of a configuration label (the file name heads its group of rows)
FOREST_ALL_ROWS = 40  # up to this many rows the forest draws them all; past it the decided and undecided ones
MAX_FOREST_ROWS = 80  # of those at most this many, failing and significant first (a picture ~1,800 px tall)


def chart_paths(path: Path) -> tuple[Path, Path]:
    """The forest plot's path (``path`` itself) and the distributions' (``FILE-distributions.svg``)."""
    if path.suffix.lower() != ".svg":
        raise InputError(f"--plot {path}: the chart file name must end in .svg")
    return path, path.with_name(f"{path.stem}-distributions{path.suffix}")


def label(value: Any, limit: int) -> str:
    """Untrusted text on one line, cut in the middle to ``limit`` characters: both ends stay readable."""
    value = one_line(value)
    if len(value) <= limit:
        return value
    head = (limit - 1) * 3 // 5
    return value[:head] + "…" + value[len(value) - (limit - 1 - head) :]


def row_kinds(gated: pd.DataFrame) -> list[str]:
    """FAIL, SLOWER, FASTER or UNCLEAR per row: the gate first, then the gate's decision or compare.R's stars."""
    decided = {"regression": SLOWER, "improvement": FASTER}
    kinds = [decided.get(str(decision), UNCLEAR) for decision in gated["decision"]]
    return [FAIL if gating else kind for gating, kind in zip(gated["gating"], kinds, strict=True)]


def axis_position(value: Any, linthresh: float | None) -> np.ndarray:
    """Where values sit on the x axis: themselves on a linear one, in decades past ``linthresh`` on a symmetric log."""
    value = np.asarray(value, dtype=float)
    if linthresh is None:
        return value
    size = np.abs(value) / linthresh
    return np.where(size <= 1, value / linthresh, np.sign(value) * (1 + np.log10(np.maximum(size, 1))))


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


def x_ticks(linthresh: float | None, limits: tuple[float, float], count: int = 9) -> list[float]:
    """Round tick values inside ``limits``, evenly spread on the axis: on a symmetric log one 0, +-linthresh and
    powers of ten first."""
    low, high = limits
    if linthresh is None:
        return [tick for tick in nice_ticks(low, high, 8) if low <= tick <= high]
    span = axis_position(high, linthresh) - axis_position(low, linthresh)
    candidates: list[tuple[int, float]] = [(0, 0.0)]
    for exponent, (priority, step), sign in product(range(-3, 9), ((2, 1), (3, 5), (4, 2)), (1, -1)):
        value = step * 10.0**exponent
        if low <= sign * value <= high:
            candidates.append((1 if math.isclose(value, linthresh) else priority, sign * value))
    chosen: list[float] = []
    for _, value in sorted(candidates):
        position = axis_position(value, linthresh)
        if all(abs(position - axis_position(other, linthresh)) >= span / count for other in chosen):
            chosen.append(value)
    return sorted(chosen)


def percent(value: float, digits: int | None = None) -> str:
    """``+12 %``, ``−3.5 %`` (a real minus sign), ``0``; with ``digits``, that many decimals."""
    if value == 0 and digits is None:
        return "0"
    number = f"{value:+g}" if digits is None else f"{value:+.{digits}f}"
    return f"{number} %".replace("-", "−")


def forest_rows(gated: pd.DataFrame, kinds: list[str], all_up_to: int, cap: int) -> tuple[np.ndarray, str]:
    """The positions of the rows to draw (in table order) and one line on the rest ('' when none): every row up to
    ``all_up_to`` rows; past that (a 1,000-row forest is 18,000 pixels tall) the decided and undecided ones, at
    most ``cap``."""
    total = len(gated)
    if total <= all_up_to:
        return np.arange(total), ""
    undecided = gated["undecided"].to_numpy(dtype=bool)
    matters = np.array([kind != UNCLEAR for kind in kinds], dtype=bool) | undecided
    positions = np.flatnonzero(matters)
    if positions.size > cap:  # the failing first, then the decided, the largest changes first
        rank = {FAIL: 0, SLOWER: 1, FASTER: 1, UNCLEAR: 2}
        size = -np.nan_to_num(np.abs(gated["improvement"].to_numpy(dtype=float)), nan=-1.0)
        positions = np.sort(sorted(positions, key=lambda i: (rank[kinds[i]], size[i], i))[:cap])
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
    return positions, "; ".join(parts) + " (every row is in the report's table)"


def _layout(
    gated: pd.DataFrame,
    policy: GatePolicy,
    what: str,
    axis_values: Callable[[pd.DataFrame], np.ndarray],
    legend: list[tuple[str, str]] | None = None,
) -> tuple[dict[str, Any], pd.DataFrame, Callable[[Any], Any]]:
    """Both charts' frame, its x axis over ``axis_values(table)``: the chart's fields, the table of its rows (those
    ``forest_rows`` picks) and its x scale (values to pixels)."""
    kinds_all = row_kinds(gated)
    positions, rest = forest_rows(gated, kinds_all, FOREST_ALL_ROWS, MAX_FOREST_ROWS)
    table = gated.iloc[positions]
    kinds = [kinds_all[i] for i in positions]
    linthresh, limits = x_scale(axis_values(table), policy.min_effect)
    labels = [label(value, MAX_LABEL) for value in [*table["filename"], *table["configuration"]]]
    left = min(max(24 + max(map(len, labels), default=0) * CHAR, 140), 420)  # the label column
    top, start, end = 104, *axis_position(limits, linthresh)

    def x(value: Any) -> Any:  # a float for a value, a list for an array
        position = axis_position(np.clip(value, *limits), linthresh)
        return np.round(left + (position - start) / (end - start) * PLOT_WIDTH, 1).tolist()

    rows, files, stripes = [], [], []  # a row per comparison, a header per file, a stripe on every other line
    for row, kind in zip(table.itertuples(index=False), kinds, strict=True):
        if not rows or rows[-1]["filename"] != row.filename:
            files.append((top + ROW * (len(rows) + len(files) + 0.5), label(row.filename, MAX_LABEL)))
        y = top + ROW * (len(rows) + len(files) + 0.5)
        stripes += [y] if (len(rows) + len(files)) % 2 else []
        value = percent(row.improvement, digits=2) if math.isfinite(row.improvement) else "NA"
        stars = str(row.confidence) if str(row.confidence) in ACCURACY_KEYS else ""
        rows.append(
            {
                "filename": row.filename,
                "y": y,
                "kind": kind,
                "label": label(str(row.configuration) or "-", MAX_LABEL),
                "value": f"{value:>11} {stars:<4} " + ("FAIL" if kind == FAIL else "ignored" if row.ignored else ""),
                "tooltip": f"{one_line(row.filename)} {one_line(row.configuration)}: {value}",
            }
        )
    effect = [("min-effect", f"±min effect ({policy.min_effect:g} %)")] if policy.min_effect > 0 else []
    legend = [*(legend or ((kind, KIND_LABELS[kind]) for kind in COLOURS if kind in kinds)), *effect]
    starts = accumulate((40 + len(text) * CHAR for _, text in legend), initial=12)  # a swatch, the text, a gap
    subtitle = gate_headline(gated, policy)
    if rest:
        subtitle += f"  ·  showing {len(table)} of {len(gated)}: the decided and undecided rows"
    bottom = top + ROW * (len(rows) + len(files))
    chart = {
        "width": left + PLOT_WIDTH + 230,
        "height": bottom + 64 + (20 if rest else 0),
        "left": left,
        "value_x": left + PLOT_WIDTH + 40,  # the value column, clear of a tick label at the axis' end
        "top": top,
        "bottom": bottom,
        "title": f"benchgate: {what}",
        "subtitle": one_line(subtitle),
        "legend": [(round(start, 1), key, text) for start, (key, text) in zip(starts, legend, strict=False)],
        "ticks": [(x(tick), percent(tick)) for tick in x_ticks(linthresh, limits)],
        "zero": x(0.0),
        "min_effect": [x(-policy.min_effect), x(policy.min_effect)] if policy.min_effect > 0 else [],
        "files": files,
        "stripes": stripes,
        "rows": rows,
        "scale": f"; linear within ±{linthresh:g} %, logarithmic beyond" if linthresh is not None else "",
        "rest": rest,
    }
    return chart, table, x


def forest_svg(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """The forest plot: change and interval per comparison; failing rows stand out (bold, a diamond, FAIL)."""
    columns = ["change", "ci_low", "ci_high"]
    what = "change of the mean rate per comparison, head vs base"
    chart, table, x = _layout(gated, policy, what, lambda rows: rows[columns].to_numpy(dtype=float).ravel())
    for row, (change, low, high) in zip(chart["rows"], table[columns].to_numpy(dtype=float), strict=True):
        drawn = math.isfinite(low) and math.isfinite(high)
        row["interval"] = (x(low), x(high)) if drawn else None
        row["point"] = x(change) if math.isfinite(change) else None
        row["tooltip"] += f", interval {percent(low, 2)} to {percent(high, 2)}" if drawn else ", no interval"
    lines = "the gate's confidence interval"  # what the forest's lines are: (ci_low, ci_high) around change
    if not with_decisions(table):  # compare.R's rule decided the rows
        lines = "compare.R's confidence interval at the threshold's level"
    chart["xlabel"] = (f"change of the mean rate, head vs base (higher is faster){chart['scale']}", f"lines: {lines}")
    return TEMPLATES.get_template("report-charts.svg.j2").module.forest(chart, COLOURS)


def distributions_svg(gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> str:
    """The samples behind the forest's rows: every base and head sample in percent of the base mean, and their
    medians, on the forest's rows and axis (what an interval hides: outliers, two modes, a noisy side)."""
    grouped = samples.groupby(["filename", "configuration", "side"], observed=True, sort=False)["rate"]
    rates = {key: group.to_numpy(dtype=float) for key, group in grouped}
    normalised = {}  # per row, per side: the rates in percent of the base mean (0 is the base mean, +10 10 % faster)

    def values(table: pd.DataFrame) -> np.ndarray:  # _layout's rows (forest_rows' pick): only those are normalised
        for row in table.itertuples(index=False):
            reference = row.mean_base if math.isfinite(row.mean_base) and row.mean_base > 0 else row.mean_head
            found = {side: rates.get((row.filename, row.configuration, side), np.zeros(0)) for side in SIDE_COLOURS}
            normalised[row.filename, row.configuration] = {side: (found[side] / reference - 1) * 100 for side in found}
        names = zip(table["filename"], table["configuration"], strict=True)
        return np.concatenate([np.zeros(0), *(array for key in names for array in normalised[key].values())])

    legend = [("base", "base samples"), ("head", "head samples"), ("median", "their median")]
    chart, table, x = _layout(gated, policy, "samples per comparison, base vs head", values, legend)
    rng = np.random.default_rng(0)  # seeded jitter: the same data draws the same picture
    for row, names in zip(chart["rows"], zip(table["filename"], table["configuration"], strict=True), strict=True):
        row["sides"] = []
        for (side, found), offset in zip(normalised[names].items(), (-4.5, 4.5), strict=True):
            ys = np.round(row["y"] + offset + rng.uniform(-2, 2, found.size), 1).tolist()
            median = x(np.median(found)) if found.size else None
            row["sides"].append(
                {"name": side, "y": row["y"] + offset, "dots": list(zip(x(found), ys, strict=True)), "median": median}
            )
        row["tooltip"] += ", " + ", ".join(f"{len(side['dots'])} {side['name']} samples" for side in row["sides"])
    chart["xlabel"] = (f"rates in % of the base mean (higher is faster){chart['scale']}", "base above, head below")
    return TEMPLATES.get_template("report-charts.svg.j2").module.distributions(chart, {**COLOURS, **SIDE_COLOURS})


def chart_files(path: Path, gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> dict[Path, bytes]:
    """Both charts as ``{path: SVG bytes}``: the forest at ``path``, the distributions beside it."""
    forest, distributions = chart_paths(path)
    charts = {forest: forest_svg(gated, policy), distributions: distributions_svg(gated, samples, policy)}
    return {where: chart.encode("utf-8") for where, chart in charts.items()}
