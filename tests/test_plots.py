"""The charts, checked by structure rather than pixels: what is drawn, where, in which order and colour.

Fonts and anti-aliasing differ between machines and matplotlib releases, so a committed PNG
would need a tolerance loose enough to miss a missing row. Instead these tests read the figure's
artists: one label per comparison in compare.R's order, one interval per row with its ends, the
failing rows bold in the gate's colour, the zero and min-effect lines, the axis limits; and, for
200 rows, that the figure grows with them and no two labels overlap once drawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

from matplotlib.colors import to_hex  # noqa: E402
from plotting import EXAMPLE, write_compare_csv  # noqa: E402

from benchgate import results, stats  # noqa: E402
from benchgate.report import chartdata, plots  # noqa: E402
from benchgate.stats import analysis
from benchgate.stats.gate import GatePolicy  # noqa: E402

POLICY = GatePolicy(min_effect=3.0)
STRICT = GatePolicy(min_effect=3.0, max_resolution=None)  # noisy: strict, so the 1,000-row report stays undecided


def analysed(path: Path, policy: GatePolicy = POLICY) -> tuple[pd.DataFrame, pd.DataFrame]:
    samples = results.read_samples([path])
    return analysis.compare_r_table(stats.compare_samples(samples), policy), samples


@pytest.fixture(scope="module")
def example() -> tuple[pd.DataFrame, pd.DataFrame]:
    return analysed(EXAMPLE)


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> tuple[pd.DataFrame, pd.DataFrame]:
    # compare.R's stars: p < 0.05, uncorrected
    policy = GatePolicy(threshold="*", correction="none", min_effect=3.0)
    return analysed(write_compare_csv(tmp_path_factory.mktemp("large") / "200.csv"), policy)


def forest_parts(figure):
    """The forest's axes, tick labels, interval segments and points by kind, header texts."""
    ax = figure.axes[0]
    segments = {
        collection.get_gid().removeprefix("interval-"): collection.get_segments()
        for collection in ax.collections
        if (collection.get_gid() or "").startswith("interval-")
    }
    points = {
        line.get_gid().removeprefix("point-"): line.get_xdata()
        for line in ax.lines
        if (line.get_gid() or "").startswith("point-")
    }
    headers = [
        t.get_text()
        for t in ax.texts
        if t.get_fontweight() == "bold" and t.get_ha() == "left" and t.get_position()[0] < 0
    ]
    return ax, ax.get_yticklabels(), segments, points, headers


def test_forest_has_one_row_per_comparison_in_compare_r_order_with_failing_rows_highlighted(example):
    gated, _ = example
    ax, labels, segments, points, headers = forest_parts(plots.forest_figure(gated, POLICY))

    assert [label.get_text() for label in labels] == list(gated["configuration"])
    assert headers == list(dict.fromkeys(gated["filename"]))  # every file once, in the table's order
    bold = [label.get_text() for label in labels if label.get_fontweight() == "bold"]
    assert (
        bold
        == list(gated.loc[gated["gating"], "configuration"])
        == ["n=1000000 size=16", "kind='transform' n=50000000"]
    )
    assert {to_hex(label.get_color()).upper() for label in labels if label.get_fontweight() == "bold"} == {"#D55E00"}
    assert len(points["fail"]) == 2 and sorted(points["fail"]) == sorted(gated.loc[gated["gating"], "improvement"])
    # Rows go down the page in the table's order: row i's y is below row i-1's.
    ticks = ax.get_yticks()
    assert list(ticks) == sorted(ticks) and ax.get_ylim()[0] > ax.get_ylim()[1]


def test_forest_draws_compare_r_interval_at_the_threshold_under_its_rule(example):
    gated, _ = example
    ax, _, segments, points, _ = forest_parts(plots.forest_figure(gated, POLICY))

    drawn = sorted((float(s[0][0]), float(s[1][0])) for kind in segments.values() for s in kind)
    expected = sorted(  # the *** level's accuracy
        zip(gated["improvement"] - gated["accuracy_3"], gated["improvement"] + gated["accuracy_3"], strict=True)
    )
    assert np.allclose(drawn, expected)
    assert sum(len(x) for x in points.values()) == len(gated)
    low, high = ax.get_xlim()
    assert low < min(e[0] for e in expected) and high > max(e[1] for e in expected)
    assert "compare.R's confidence interval at the threshold's level" in ax.get_xlabel()
    assert ax.get_xscale() == "linear"  # +43 % among a few percent is not extreme enough for a log axis


def test_forest_draws_zero_and_min_effect_lines(example):
    gated, _ = example
    ax = plots.forest_figure(gated, POLICY).axes[0]
    vertical = sorted(float(line.get_xdata()[0]) for line in ax.lines if not (line.get_gid() or "").startswith("point"))
    assert vertical == [-3.0, 0.0, 3.0]
    ax = plots.forest_figure(gated, GatePolicy()).axes[0]
    assert [line.get_gid() for line in ax.lines].count("min-effect") == 0


def test_forest_uses_the_gate_interval_and_estimate_when_the_table_has_them(example):
    gated, _ = example
    with_ci = gated.assign(
        change=gated["improvement"] * 0.9,
        ci_low=gated["improvement"] - 5.0,
        ci_high=gated["improvement"] + 7.0,
        decision=np.where(gated["improvement"] > 5, "improvement", "inconclusive"),
        gate_test="yuen_log",
    )
    ax, _, segments, points, _ = forest_parts(plots.forest_figure(with_ci, POLICY))

    drawn = sorted((float(s[0][0]), float(s[1][0])) for kind in segments.values() for s in kind)
    assert np.allclose(drawn, sorted(zip(with_ci["ci_low"], with_ci["ci_high"], strict=True)))
    assert np.allclose(sorted(np.concatenate(list(points.values()))), sorted(with_ci["change"]))
    assert "the gate's confidence interval" in ax.get_xlabel() and "compare.R" not in ax.get_xlabel()
    # The gate's decision, not compare.R's stars, says which rows are improvements.
    assert len(points["faster"]) == 2 and len(points["slower"]) == 0


def test_forest_of_200_rows_is_readable(large, example):
    gated, _ = large
    small = plots.forest_figure(example[0], POLICY)
    figure = plots.forest_figure(gated, POLICY)
    ax, labels, segments, _, headers = forest_parts(figure)
    figure.canvas.draw()  # text extents exist only once drawn

    # Past FOREST_ALL_ROWS rows only the significant ones are drawn (compare.R's stars: no decisions here).
    drawn = [i for i, kind in enumerate(chartdata.row_kinds(gated)) if kind != chartdata.UNCLEAR]
    assert 20 <= len(drawn) < 200 and len(labels) == len(drawn)
    assert [label.get_text() for label in labels] == [
        chartdata.text(chartdata.shorten(gated["configuration"].iloc[i], plots.MAX_LABEL)) for i in drawn
    ]
    assert len(headers) == gated["filename"].iloc[drawn].nunique()
    assert figure.get_figheight() >= (len(drawn) + len(headers)) * plots.ROW_INCHES > 1.5 * small.get_figheight()
    font = min(label.get_fontsize() for label in labels)
    row_points = plots.ROW_INCHES * 72
    assert font >= 7 and row_points >= 1.2 * font
    boxes = sorted((label.get_window_extent() for label in labels), key=lambda box: -box.y1)
    assert all(upper.y0 >= lower.y1 for upper, lower in zip(boxes, boxes[1:], strict=False))  # display y grows upwards
    assert min(box.x0 for box in boxes) >= 0  # no label cut at the figure's left edge
    assert max(len(label.get_text()) for label in labels) <= plots.MAX_LABEL
    # The +760 % row would squash the rest on a linear axis; the log axis keeps them apart.
    assert ax.get_xscale() == "symlog"
    bottom = ax.get_window_extent().y0
    ticks = [t for t in ax.get_xticklabels() if t.get_text() and t.get_window_extent().y1 <= bottom]  # bottom row
    extents = sorted((t.get_window_extent() for t in ticks), key=lambda box: box.x0)
    assert len(ticks) >= 5 and all(a.x1 <= b.x0 for a, b in zip(extents, extents[1:], strict=False))
    assert sum(len(kind) for kind in segments.values()) == len(drawn)
    # compare.R's order: by "filename configuration".
    names = [f"{f} {c}" for f, c in zip(gated["filename"], gated["configuration"], strict=True)]
    assert names == sorted(names)


def test_distributions_have_a_panel_per_comparison_with_every_sample(example):
    gated, samples = example
    figure = plots.distributions_figure(gated, samples, POLICY)
    ax = figure.axes[0]
    by_gid = {collection.get_gid(): collection for collection in ax.collections if collection.get_gid()}

    assert len(by_gid["frames-True"].get_paths()) == int(gated["gating"].sum()) == 2
    assert len(by_gid["frames-False"].get_paths()) == len(gated) - 2
    for side in ("base", "head"):
        assert len(by_gid[f"boxes-{side}"].get_paths()) == len(gated)
        assert len(by_gid[f"dots-{side}"].get_offsets()) == int((samples["side"] == side).sum())
    titles = [t.get_text() for t in ax.texts if t.get_fontweight() == "bold" and t.get_ha() == "left"]
    assert [title for title in titles if title.endswith(".js")] == list(gated["filename"])  # one panel each, in order
    failing = [t.get_text() for t in ax.texts if to_hex(t.get_color()).upper() == "#D55E00"]
    assert any("n=1000000 size=16" in value for value in failing) and any("FAIL" in value for value in failing)


def test_distributions_normalise_to_the_base_mean():
    assert np.allclose(plots.normalised(np.array([90.0, 100.0, 110.0]), 100.0), [-10.0, 0.0, 10.0])
    assert plots.box_stats(np.array([1.0, 2.0, 3.0, 4.0, 100.0]))[-1] == 4.0  # whisker stops short of the outlier


def test_untrusted_names_are_drawn_literally(tmp_path):
    csv = tmp_path / "dollar.csv"
    rows = ['"binary","filename","configuration","rate","time"']
    for index in range(4):
        for side in ("old", "new"):
            rows.append(f'"{side}","a/$\\frac{{.js","x=\'$\\bad{{$\' y=1",{100 + index},1')
    csv.write_text("\n".join(rows) + "\n")
    gated, samples = analysed(csv)
    files = plots.chart_files(tmp_path / "c.png", gated, samples, POLICY)  # mathtext would raise on these
    assert all(data.startswith(b"\x89PNG") for data in files.values())
    label = plots.forest_figure(gated, POLICY).axes[0].get_yticklabels()[0].get_text()
    assert label == r"x='\$\bad{\$' y=1"


def test_shorten_keeps_both_ends():
    value = "n=1000000 withTotalLength=0 pieceSize=1 pieces=16 type='a-very-long-value'"
    short = chartdata.shorten(value, 40)
    assert len(short) == 40 and short.startswith("n=1000000") and short.endswith("value'") and "…" in short
    assert chartdata.shorten("short", 40) == "short"


def test_axis_is_linear_unless_a_few_rows_dwarf_the_rest():
    assert chartdata.x_scale(np.array([-5.0, 3.0, 40.0]))[0] is None
    linthresh, (low, high) = chartdata.x_scale(np.array([-3.0, -1.0, 0.5, 2.0, 2.5, 760.0]), min_effect=2.0)
    assert linthresh == 5.0 and low < -3.0 and high > 760.0
    ticks = chartdata.symlog_ticks(linthresh, (low, high))
    assert 0.0 in ticks and 5.0 in ticks and ticks == sorted(ticks) and len(ticks) >= 5
    assert all(f"{t:g}".lstrip("-")[0] in "125" and set(f"{t:g}".lstrip("-")[1:]) <= {"0"} for t in ticks if t)


def test_above_the_cap_the_failing_and_significant_rows_are_kept_in_table_order(large):
    gated, _ = large
    kinds = chartdata.row_kinds(gated)
    chosen = chartdata.selection(gated, kinds, 20)
    assert len(chosen) == 20 and list(chosen) == sorted(chosen)
    assert {i for i, kind in enumerate(kinds) if kind == chartdata.FAIL} <= set(chosen)
    title, subtitle = chartdata.title_lines(gated, POLICY, 20, "x")
    assert "showing 20 of 200" in subtitle


def test_chart_paths_put_the_distributions_beside_the_forest():
    assert plots.chart_paths(Path("out/benchmark.png")) == (
        Path("out/benchmark.png"),
        Path("out/benchmark-distributions.png"),
    )


@pytest.fixture(scope="module")
def thousand(tmp_path_factory) -> pd.DataFrame:
    """A 1,000-row report decided by the gate: mostly undecided rows, a few regressions and gains."""
    samples = results.read_samples([write_compare_csv(tmp_path_factory.mktemp("thousand") / "1000.csv", rows=1000)])
    return analysis.analyze(analysis.RunData.of(samples), STRICT).table


def test_forest_of_1000_rows_draws_the_decided_and_undecided_rows_and_sums_up_the_rest(thousand):
    gated = thousand
    kinds = chartdata.row_kinds(gated)
    failing = {i for i, kind in enumerate(kinds) if kind == chartdata.FAIL}
    decided = {i for i, kind in enumerate(kinds) if kind != chartdata.UNCLEAR}
    undecided = set(np.flatnonzero(gated["undecided"].to_numpy()))
    unchanged = len(gated) - len(decided | undecided)
    assert len(failing) == 3 and len(decided) == 5 and len(undecided) > plots.MAX_FOREST_ROWS and unchanged > 20

    shown = chartdata.forest_rows(gated, kinds, plots.FOREST_ALL_ROWS, plots.MAX_FOREST_ROWS)
    chosen = set(shown.positions.tolist())
    # Every decided row is drawn, the rest of the cap goes to undecided rows; no unchanged row is drawn.
    assert len(chosen) == plots.MAX_FOREST_ROWS and decided <= chosen and chosen <= decided | undecided
    assert list(shown.positions) == sorted(shown.positions)  # still compare.R's order
    left = len(undecided) - (plots.MAX_FOREST_ROWS - len(decided))
    assert shown.rest.startswith(f"{unchanged} unchanged rows not drawn: changes from ")
    assert f"not drawn either: {left} undecided" in shown.rest

    figure = plots.forest_figure(gated, STRICT)
    _, labels, segments, _, _ = forest_parts(figure)
    assert len(labels) == plots.MAX_FOREST_ROWS == sum(len(kind) for kind in segments.values())
    assert [t.get_text() for t in figure.texts if t.get_gid() == "rest"] == [shown.rest]
    assert any("showing 80 of 1000: the decided and undecided rows" in t.get_text() for t in figure.texts)
    width, height = (figure.get_size_inches() * plots.DPI).round()
    assert width <= 1400 and height <= 2100  # it was 965 x 23,015 with every row


def test_forest_draws_every_row_up_to_the_threshold():
    rows = pd.DataFrame(
        {
            "filename": ["a.js"] * (plots.FOREST_ALL_ROWS + 1),
            "configuration": [f"n={i}" for i in range(plots.FOREST_ALL_ROWS + 1)],
            "improvement": [-5.0] + [0.1] * plots.FOREST_ALL_ROWS,
            "confidence": ["***"] + [""] * plots.FOREST_ALL_ROWS,
            "gating": [False] * (plots.FOREST_ALL_ROWS + 1),
            "decision": ["regression"] + ["unchanged"] * plots.FOREST_ALL_ROWS,
            "undecided": [False] * (plots.FOREST_ALL_ROWS + 1),
        }
    )
    kinds = chartdata.row_kinds(rows)
    every = chartdata.forest_rows(rows.iloc[:-1], kinds[:-1], plots.FOREST_ALL_ROWS, plots.MAX_FOREST_ROWS)
    assert len(every.positions) == plots.FOREST_ALL_ROWS and every.rest == "" and every.which == ""
    past = chartdata.forest_rows(rows, kinds, plots.FOREST_ALL_ROWS, plots.MAX_FOREST_ROWS)
    assert past.positions.tolist() == [0]
    assert past.rest.startswith(f"{plots.FOREST_ALL_ROWS} unchanged rows not drawn: changes from +0.10 % to +0.10 %")
