"""The ``--plot`` charts as SVG: the geometry here, the markup in ``benchgate/data/report-charts.svg.j2``, rendered by
the history site's Jinja2 environment (autoescaped: benchmark names and configurations are untrusted run data)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchgate.errors import InputError
from benchgate.history.site import LINE, TEMPLATES, nice_ticks
from benchgate.history.site import SLOWER as VERMILLION
from benchgate.report.gatelines import gate_headline, gate_test
from benchgate.report.markup import one_line
from benchgate.report.tables import ACCURACY_KEYS
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
ROW = 18  # pixels a forest row: labels never overlap
PLOT_WIDTH = 540  # the forest's plot box, pixels
MAX_LABEL = 58  # characters of a configuration label (the file name heads its group of rows)
FOREST_ALL_ROWS = 40  # up to this many rows the forest draws them all; past it the decided and undecided ones
MAX_FOREST_ROWS = 80  # of those at most this many, failing and significant first (a picture ~1,700 px tall)
# The distributions: compare.R --plot's box plot, faceted by file, overlaps its labels at 200 configurations;
# here each comparison gets its own panel with its own scale (rates in percent of the base mean).
PANEL_WIDTH, PANEL_HEIGHT = 340, 150  # pixels, titles and tick labels included
MAX_PANELS = 300  # beyond this the failing and significant rows come first
PANEL_LABEL = 48  # characters of a configuration in a panel title (of its file name: 30, its change beside)
HALF_BOX = 11  # half the height of a box, pixels


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


def axis_position(value: float, linthresh: float | None) -> float:
    """Where a value sits on the x axis: itself on a linear one, in decades past ``linthresh`` on a symmetric log."""
    size = abs(value) / (linthresh or 1.0)
    if linthresh is None or size <= 1:
        return value / (linthresh or 1.0)
    return math.copysign(1 + math.log10(size), value)


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
    for exponent in range(-3, 9):
        for priority, step in ((2, 1), (3, 5), (4, 2)):
            value = step * 10.0**exponent
            for signed in (value, -value):
                if low <= signed <= high:
                    candidates.append((1 if math.isclose(value, linthresh) else priority, signed))
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
    return f"benchgate: {what}", one_line(subtitle)


@dataclass(frozen=True)
class ForestRows:
    """The rows a forest plot draws (positions in table order) and one line on the ones it leaves out."""

    positions: np.ndarray
    which: str  # what the drawn rows are, for the subtitle ('' when all are drawn)
    rest: str  # the summary of the rows left out ('' when none are)


def forest_rows(gated: pd.DataFrame, kinds: list[str], all_up_to: int, cap: int) -> ForestRows:
    """Every row up to ``all_up_to`` rows; past that (a 1,000-row forest is 18,000 pixels tall) the decided and
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


def _legend(items: list[tuple[str, str]], x: float = 12) -> list[tuple[float, str, str]]:
    """``(x, key, text)`` per legend entry, one after the other from ``x``: a 14 px swatch, then the text."""
    placed = []
    for key, text in items:
        placed.append((round(x, 1), key, text))
        x += 22 + len(text) * CHAR + 18
    return placed


def forest_svg(gated: pd.DataFrame, policy: GatePolicy) -> str:
    """The forest plot: change and interval per comparison in table order, under a grey band per file; failing
    rows stand out (bold, a diamond, FAIL); past FOREST_ALL_ROWS rows, ``forest_rows`` picks them."""
    kinds_all = row_kinds(gated)
    shown = forest_rows(gated, kinds_all, FOREST_ALL_ROWS, MAX_FOREST_ROWS)
    table = gated.iloc[shown.positions]
    kinds = [kinds_all[i] for i in shown.positions]
    found = table[["change", "ci_low", "ci_high"]].to_numpy(dtype=float)
    linthresh, limits = x_scale(found.ravel(), policy.min_effect)
    labels = [label(value, MAX_LABEL) for value in [*table["filename"], *table["configuration"]]]
    left = min(max(24 + max(map(len, labels), default=0) * CHAR, 140), 420)  # the label column
    top, start, end = 104, *(axis_position(limit, linthresh) for limit in limits)

    def x(value: float) -> float:
        position = axis_position(float(np.clip(value, *limits)), linthresh)
        return round(left + (position - start) / (end - start) * PLOT_WIDTH, 1)

    rows, files, stripes = [], [], []  # a row per comparison, a header per file, a stripe on every other line
    for row, kind, (change, low, high) in zip(table.itertuples(index=False), kinds, found, strict=True):
        if not rows or rows[-1]["filename"] != row.filename:
            files.append((top + ROW * (len(rows) + len(files) + 0.5), label(row.filename, MAX_LABEL)))
        y = top + ROW * (len(rows) + len(files) + 0.5)
        stripes += [y] if (len(rows) + len(files)) % 2 else []
        value, stars = change_and_stars(row)
        interval = f"{percent(low, 2)} to {percent(high, 2)}" if math.isfinite(low) and math.isfinite(high) else "NA"
        rows.append(
            {
                "filename": row.filename,
                "y": y,
                "kind": kind,
                "label": label(str(row.configuration) or "-", MAX_LABEL),
                "interval": (x(low), x(high)) if interval != "NA" else None,
                "point": x(change) if math.isfinite(change) else None,
                "value": f"{value:>11} {stars:<4} " + ("FAIL" if kind == FAIL else "ignored" if row.ignored else ""),
                "tooltip": f"{one_line(row.filename)} {one_line(row.configuration)}: {value}, interval {interval}",
            }
        )
    plot_bottom = top + ROW * (len(rows) + len(files))
    lines = "the gate's confidence interval"  # what the forest's lines are: (ci_low, ci_high) around change
    if gate_test(table) == "compare.R":
        lines = "compare.R's confidence interval at the threshold's level"
    scale = f"; linear within ±{linthresh:g} %, logarithmic beyond" if linthresh is not None else ""
    kinds_drawn = [(kind, KIND_LABELS[kind]) for kind in COLOURS if kind in kinds]
    effect = [("min-effect", f"±min effect ({policy.min_effect:g} %)")] if policy.min_effect > 0 else []
    what = "change of the mean rate per comparison, head vs base"
    title, subtitle = title_lines(gated, policy, len(table), what, which=shown.which)
    chart = {
        "width": left + PLOT_WIDTH + 230,
        "height": plot_bottom + 64 + (20 if shown.rest else 0),
        "left": left,
        "top": top,
        "bottom": plot_bottom,
        "title": title,
        "subtitle": subtitle,
        "legend": _legend(kinds_drawn + effect),
        "ticks": [(x(tick), percent(tick)) for tick in x_ticks(linthresh, limits)],
        "zero": x(0.0),
        "min_effect": [x(-policy.min_effect), x(policy.min_effect)] if policy.min_effect > 0 else [],
        "files": files,
        "stripes": stripes,
        "rows": rows,
        "xlabel": (f"change of the mean rate, head vs base (higher is faster){scale}", f"lines: {lines}"),
        "rest": shown.rest,
    }
    return TEMPLATES.get_template("report-charts.svg.j2").module.forest(chart, COLOURS)


def normalised(rates: np.ndarray, reference: float) -> np.ndarray:
    """Rates as percent change from ``reference`` (the base mean): 0 is the base mean, +10 is 10 % faster."""
    return (np.asarray(rates, dtype=float) / reference - 1.0) * 100.0


def box_stats(values: np.ndarray) -> tuple[float, float, float, float, float]:
    """Whisker low, first quartile, median, third quartile, whisker high (Tukey: 1.5 IQR, at a sample)."""
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    reach = 1.5 * (q3 - q1)
    inside = values[(values >= q1 - reach) & (values <= q3 + reach)]
    return float(inside.min()), float(q1), float(median), float(q3), float(inside.max())


def _panel(index: int, columns: int, row: Any, rates: dict[str, np.ndarray], failing: bool) -> dict[str, Any]:
    """The ``index``-th comparison's panel (in ``columns``, row by row): its scale, a box and the dots per side."""
    x0, y0 = 12 + index % columns * PANEL_WIDTH, 84 + index // columns * PANEL_HEIGHT  # the cell's top left corner
    left, right = x0 + 34, x0 + PANEL_WIDTH - 10
    reference = float(row.mean_base) if math.isfinite(row.mean_base) and row.mean_base > 0 else float(row.mean_head)
    values = {side: normalised(rates[side], reference) for side in SIDE_COLOURS}
    every = np.concatenate(list(values.values()))
    low, high = (min(float(every.min()), 0.0), max(float(every.max()), 0.0)) if every.size else (-1.0, 1.0)
    pad = max((high - low) * 0.06, 0.05)
    low, high = low - pad, high + pad

    def x(value: Any) -> list[float]:  # the panel's own scale onto its box
        return np.round(left + (np.asarray(value, dtype=float) - low) / (high - low) * (right - left), 1).tolist()

    rng = np.random.default_rng(index)  # seeded jitter: the same data draws the same picture
    sides = []
    for (side, colour), y in zip(SIDE_COLOURS.items(), (y0 + 63, y0 + 99), strict=True):
        jitter = np.round(y + rng.uniform(-0.6, 0.6, values[side].size) * HALF_BOX, 1).tolist()
        box = x(box_stats(values[side])) if values[side].size else None
        sides.append(
            {
                "name": side,
                "colour": colour,
                "y": y,
                "box": box,
                "dots": list(zip(x(values[side]), jitter, strict=True)),
            }
        )
    improvement, stars = change_and_stars(row)
    return {
        "left": left,
        "right": right,
        "top": y0 + 45,
        "bottom": y0 + 117,
        "fail": failing,
        "filename": label(row.filename, PANEL_LABEL - 18),
        "configuration": label(str(row.configuration) or "-", PANEL_LABEL),
        "change": f"{improvement} {stars}" + (" FAIL" if failing else ""),
        "ticks": [(x(tick), percent(tick)) for tick in nice_ticks(low, high, 3) if low <= tick <= high],
        "zero": x(0.0),
        "sides": sides,
        "first_column": index % columns == 0,  # it names the rows; the legend line above says it for the rest
    }


def distributions_svg(gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> str:
    """One panel per comparison (table order, left to right, top to bottom): base and head samples, each a dot, and
    a Tukey box of them."""
    kinds = row_kinds(gated)
    chosen = selection(gated, kinds, MAX_PANELS)
    table = gated.iloc[chosen]
    columns = 1 if len(table) <= 1 else 2 if len(table) <= 4 else 3 if len(table) <= 9 else 4
    grouped = samples.groupby(["filename", "configuration", "side"], observed=True, sort=False)["rate"]
    rates = {key: group.to_numpy(dtype=float) for key, group in grouped}
    panels = []
    for index, row in enumerate(table.itertuples(index=False)):
        by_side = {side: rates.get((row.filename, row.configuration, side), np.zeros(0)) for side in SIDE_COLOURS}
        panels.append(_panel(index, columns, row, by_side, kinds[chosen[index]] == FAIL))
    title, subtitle = title_lines(gated, policy, len(table), "samples per comparison, base vs head")
    chart = {
        "width": 24 + columns * PANEL_WIDTH,
        "height": 96 + max(math.ceil(len(table) / columns), 1) * PANEL_HEIGHT,
        "title": title,
        "subtitle": subtitle,
        "panels": panels,
    }
    return TEMPLATES.get_template("report-charts.svg.j2").module.distributions(chart, COLOURS)


def chart_files(path: Path, gated: pd.DataFrame, samples: pd.DataFrame, policy: GatePolicy) -> dict[Path, bytes]:
    """Both charts as ``{path: SVG bytes}``: the forest at ``path``, the distributions beside it."""
    forest, distributions = chart_paths(path)
    charts = {forest: forest_svg(gated, policy), distributions: distributions_svg(gated, samples, policy)}
    return {where: chart.encode("utf-8") for where, chart in charts.items()}
