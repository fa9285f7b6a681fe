"""The charts, checked by structure rather than pixels: what is drawn, where, in which order and colour.

The charts are SVG, so these tests read them back with the standard library's XML parser: one row per
comparison in compare.R's order, its interval where its values put it on the axis, the failing rows
bold in the gate's colour, the zero and min-effect lines; for 200 and 1,000 rows, which rows are drawn
and that the labels and ticks fit; and that a hostile benchmark name is text, never markup.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from plotting import EXAMPLE, SVG, parse, write_compare_csv

from benchgate import results, stats
from benchgate.report import plots
from benchgate.stats import analysis
from benchgate.stats.gate import GatePolicy

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


def by_class(root: ET.Element, tag: str, name: str) -> list[ET.Element]:
    """The ``tag`` elements whose class list holds ``name``."""
    return [element for element in root.iter(SVG + tag) if name in element.get("class", "").split()]


def forest_rows(root: ET.Element) -> list[dict]:
    """Each row's label, kind, weight, colour, interval and point (pixels) and tooltip."""
    rows = []
    for group in by_class(root, "g", "row"):
        interval = group.find(f"{SVG}line[@class='interval']")
        point = group.find(f"{SVG}use[@class='point']")
        rows.append(
            {
                "label": group.find(f"{SVG}text[@class='label']").text,
                "kind": group.get("class").split()[1],
                "bold": group.get("font-weight") == "bold",
                "fill": group.get("fill").upper(),
                "interval": (float(interval.get("x1")), float(interval.get("x2"))) if interval is not None else None,
                "point": float(point.get("x")) if point is not None else None,
                "y": float(group.find(f"{SVG}text[@class='label']").get("y")),
                "tooltip": group.find(f"{SVG}title").text,
                "value": group.find(f"{SVG}text[@class='value']").text,
            }
        )
    return rows


def file_headers(root: ET.Element) -> list[str]:
    return [text.text for text in by_class(root, "text", "file")]


def affine(values: list[float], pixels: list[float]) -> bool:
    """Whether ``pixels`` are one linear scale of ``values`` (to the 0.1 px the SVG is written in)."""
    slope, offset = np.polyfit(values, pixels, 1)
    return slope > 0 and np.allclose(np.polyval([slope, offset], values), pixels, atol=0.11)


def in_the_plot_box(root: ET.Element, rows: list[dict]) -> bool:
    """Whether every interval, point and grid line is drawn on the axis: from the chart's left (where the x label
    starts) to PLOT_WIDTH right of it."""
    left = float(by_class(root, "text", "xlabel")[0].get("x"))
    drawn = [x for row in rows for x in (*(row["interval"] or ()), row["point"]) if x is not None]
    ticks = [float(line.get("x1")) for line in by_class(root, "line", "grid")]
    return bool(drawn) and left <= min(drawn + ticks) and max(drawn + ticks) <= left + plots.PLOT_WIDTH


def test_forest_has_one_row_per_comparison_in_compare_r_order_with_failing_rows_highlighted(example):
    gated, _ = example
    root = parse(plots.forest_svg(gated, POLICY))
    rows = forest_rows(root)

    assert [row["label"] for row in rows] == list(gated["configuration"])
    assert file_headers(root) == list(dict.fromkeys(gated["filename"]))  # every file once, in the table's order
    bold = [row["label"] for row in rows if row["bold"]]
    assert (
        bold
        == list(gated.loc[gated["gating"], "configuration"])
        == ["n=1000000 size=16", "kind='transform' n=50000000"]
    )
    assert {row["fill"] for row in rows if row["bold"]} == {"#D55E00"}
    assert {row["fill"] for row in rows if not row["bold"]} == {"#1F2328"}
    assert [row["kind"] for row in rows if row["bold"]] == ["fail", "fail"]
    assert all(row["value"].rstrip().endswith("FAIL") == row["bold"] for row in rows)
    # Rows go down the page in the table's order.
    ys = [row["y"] for row in rows]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)


def test_forest_draws_compare_r_interval_at_the_threshold_under_its_rule(example):
    gated, _ = example
    root = parse(plots.forest_svg(gated, POLICY))
    rows = forest_rows(root)

    low, high = gated["improvement"] - gated["accuracy_3"], gated["improvement"] + gated["accuracy_3"]  # *** level
    for row, start, end in zip(rows, low, high, strict=True):
        assert row["tooltip"].endswith(f"interval {plots.percent(start, 2)} to {plots.percent(end, 2)}")
    # On one linear scale: every end and every point where its value puts it.
    values = [*low, *high, *gated["improvement"]]
    pixels = (
        [row["interval"][0] for row in rows] + [row["interval"][1] for row in rows] + [row["point"] for row in rows]
    )
    assert affine(values, pixels)
    assert in_the_plot_box(root, rows)
    labels = " ".join(text.text for text in by_class(root, "text", "xlabel"))
    assert "compare.R's confidence interval at the threshold's level" in labels and "logarithmic" not in labels


def test_forest_draws_zero_and_min_effect_lines(example):
    gated, _ = example
    root = parse(plots.forest_svg(gated, POLICY))
    zero = float(by_class(root, "line", "zero")[0].get("x1"))
    low, high = sorted(float(line.get("x1")) for line in by_class(root, "line", "min-effect"))
    assert low < zero < high and abs((zero - low) - (high - zero)) <= 0.11  # -3 % and +3 % either side of 0
    rows = forest_rows(root)
    assert affine([0.0, -3.0, 3.0, *gated["improvement"]], [zero, low, high, *(row["point"] for row in rows)])
    assert by_class(parse(plots.forest_svg(gated, GatePolicy())), "line", "min-effect") == []


def test_forest_uses_the_gate_interval_and_estimate_when_the_table_has_them(example):
    gated, _ = example
    with_ci = gated.assign(
        change=gated["improvement"] * 0.9,
        ci_low=gated["improvement"] - 5.0,
        ci_high=gated["improvement"] + 7.0,
        decision=np.where(gated["improvement"] > 5, "improvement", "inconclusive"),
        gate_test="yuen_log",
    )
    root = parse(plots.forest_svg(with_ci, POLICY))
    rows = forest_rows(root)

    values = [*with_ci["ci_low"], *with_ci["ci_high"], *with_ci["change"]]
    pixels = (
        [row["interval"][0] for row in rows] + [row["interval"][1] for row in rows] + [row["point"] for row in rows]
    )
    assert affine(values, pixels)
    labels = " ".join(text.text for text in by_class(root, "text", "xlabel"))
    assert "the gate's confidence interval" in labels and "compare.R" not in labels
    # The gate's decision, not compare.R's stars, says which rows are improvements.
    kinds = [row["kind"] for row in rows]
    assert kinds.count("faster") == 2 and kinds.count("slower") == 0


def test_forest_of_200_rows_is_readable(large, example):
    gated, _ = large
    small = parse(plots.forest_svg(example[0], POLICY))
    root = parse(plots.forest_svg(gated, POLICY))
    rows, headers = forest_rows(root), file_headers(root)

    # Past FOREST_ALL_ROWS rows only the significant ones are drawn (compare.R's stars: no decisions here).
    drawn = [i for i, kind in enumerate(plots.row_kinds(gated)) if kind != plots.UNCLEAR]
    assert 20 <= len(drawn) < 200 and len(rows) == len(drawn)
    assert [row["label"] for row in rows] == [
        plots.label(gated["configuration"].iloc[i], plots.MAX_LABEL) for i in drawn
    ]
    assert len(headers) == gated["filename"].iloc[drawn].nunique()
    height = float(root.get("height"))
    assert height >= (len(drawn) + len(headers)) * plots.ROW > 1.5 * float(small.get("height"))
    ys = sorted(row["y"] for row in rows)
    assert min(b - a for a, b in zip(ys, ys[1:], strict=False)) >= plots.ROW >= 1.2 * 11  # 11 px text
    assert max(len(row["label"]) for row in rows) <= plots.MAX_LABEL
    left = min(float(group.find(f"{SVG}text[@class='label']").get("x")) for group in by_class(root, "g", "row"))
    assert left - max(len(row["label"]) for row in rows) * plots.CHAR >= 0  # no label cut at the chart's left edge
    # The +760 % row would squash the rest on a linear axis; the log axis keeps them apart.
    assert "logarithmic beyond" in " ".join(text.text for text in by_class(root, "text", "xlabel"))
    bottom = max(float(text.get("y")) for text in by_class(root, "text", "tick"))
    ticks = sorted((float(t.get("x")), t.text) for t in by_class(root, "text", "tick") if float(t.get("y")) == bottom)
    assert len(ticks) >= 5
    assert all(b[0] - a[0] >= (len(a[1]) + len(b[1])) / 2 * plots.CHAR for a, b in zip(ticks, ticks[1:], strict=False))
    value_column = min(float(text.get("x")) for text in by_class(root, "text", "value"))
    assert all(x + len(text) / 2 * plots.CHAR <= value_column for x, text in ticks)  # no tick under the values
    assert sum(row["interval"] is not None for row in rows) == len(drawn)
    assert in_the_plot_box(root, rows)
    # compare.R's order: by "filename configuration".
    names = [f"{f} {c}" for f, c in zip(gated["filename"], gated["configuration"], strict=True)]
    assert names == sorted(names)


def test_distributions_draw_every_sample_on_the_forests_rows(example, large):
    gated, samples = example
    root = parse(plots.distributions_svg(gated, samples, POLICY))
    rows = by_class(root, "g", "row")
    forest = forest_rows(parse(plots.forest_svg(gated, POLICY)))

    # The forest's rows, labels and emphasis, in its order.
    assert [group.find(f"{SVG}text[@class='label']").text for group in rows] == [row["label"] for row in forest]
    assert [group.get("font-weight") == "bold" for group in rows] == [row["bold"] for row in forest]
    assert file_headers(root) == list(dict.fromkeys(gated["filename"]))
    values, pixels = [0.0], [float(by_class(root, "line", "zero")[0].get("x1"))]  # the zero line: the base mean
    names = zip(gated["filename"], gated["configuration"], strict=True)
    for group, (filename, configuration) in zip(rows, names, strict=True):
        mine = samples[(samples["filename"] == filename) & (samples["configuration"] == configuration)]
        base_mean = mine.loc[mine["side"] == "base", "rate"].mean()
        for side, colour in plots.SIDE_COLOURS.items():
            (dots,) = by_class(group, "g", f"side-{side}")
            assert dots.get("fill") == colour
            xs = [float(circle.get("cx")) for circle in dots.iter(SVG + "circle")]
            rates = mine.loc[mine["side"] == side, "rate"].to_numpy()
            assert len(xs) == len(rates)  # every sample
            median = [float(line.get("x1")) for line in by_class(group, "line", "median")][side == "head"]
            assert median == pytest.approx(np.median(xs), abs=0.11)
            values += list((rates / base_mean - 1) * 100)
            pixels += xs
    # On one axis in percent of each row's base mean.
    assert affine(values, pixels)
    # Past FOREST_ALL_ROWS rows, the forest's rows too: no picture of 200 rows of noise.
    big, big_samples = large
    drawn = len(forest_rows(parse(plots.forest_svg(big, POLICY))))
    assert len(by_class(parse(plots.distributions_svg(big, big_samples, POLICY)), "g", "row")) == drawn < len(big)


def test_distributions_normalise_to_the_base_mean(tmp_path):
    rates = {"base": [90.0, 100.0, 110.0], "head": [105.0, 110.0, 115.0]}
    csv = tmp_path / "three.csv"
    lines = ['"binary","filename","configuration","rate","time"']
    lines += [f'"{"old" if side == "base" else "new"}","a.js","n=1",{rate},1' for side in rates for rate in rates[side]]
    csv.write_text("\n".join(lines) + "\n")
    gated, samples = analysed(csv)
    root = parse(plots.distributions_svg(gated, samples, POLICY))
    ticks = {text.text: float(text.get("x")) for text in by_class(root, "text", "tick")}
    per_percent = (ticks["+10 %"] - ticks["0"]) / 10
    for side, expected in (("base", [-10.0, 0.0, 10.0]), ("head", [5.0, 10.0, 15.0])):
        (dots,) = by_class(root, "g", f"side-{side}")
        drawn = [(float(circle.get("cx")) - ticks["0"]) / per_percent for circle in dots.iter(SVG + "circle")]
        assert drawn == pytest.approx(expected, abs=0.05)


def test_hostile_names_are_text_in_both_charts(tmp_path):
    filename = "a/</text><script>alert(1)</script>$\\frac{.js"
    configuration = "x='\"&amp;<b onload=alert(2)>' \x1b[31m y=1"
    csv = tmp_path / "hostile.csv"
    rows = ['"binary","filename","configuration","rate","time"']
    quoted = (f'"{value}"' for value in (filename.replace('"', '""'), configuration.replace('"', '""')))
    names = ",".join(quoted)
    for index in range(4):
        rows += [f'"old",{names},{100 + index},1', f'"new",{names},{104 + index},1']
    csv.write_text("\n".join(rows) + "\n")
    gated, samples = analysed(csv)
    files = plots.chart_files(tmp_path / "c.svg", gated, samples, POLICY)

    shown = configuration.replace("\x1b", " ")  # a control character is not XML: one_line makes it a space
    forest, distributions = (parse(data.decode("utf-8")) for data in files.values())
    for root in (forest, distributions):
        assert {element.tag.removeprefix(SVG) for element in root.iter()} <= {
            "svg",
            "rect",
            "text",
            "defs",
            "path",
            "circle",
            "g",
            "title",
            "line",
            "use",
        }
        assert all(not name.startswith("on") for element in root.iter() for name in element.attrib)
    for root in (forest, distributions):
        (row,) = by_class(root, "g", "row")
        assert row.find(f"{SVG}text[@class='label']").text == shown
        assert row.find(f"{SVG}title").text.startswith(f"{filename} {shown}: ")


def test_label_keeps_both_ends_on_one_line():
    value = "n=1000000 withTotalLength=0 pieceSize=1 pieces=16 type='a-very-long-value'"
    short = plots.label(value, 40)
    assert len(short) == 40 and short.startswith("n=1000000") and short.endswith("value'") and "…" in short
    assert plots.label("short\nline", 40) == "short line"


def test_axis_is_linear_unless_a_few_rows_dwarf_the_rest():
    assert plots.x_scale(np.array([-5.0, 3.0, 40.0]))[0] is None
    linthresh, (low, high) = plots.x_scale(np.array([-3.0, -1.0, 0.5, 2.0, 2.5, 760.0]), min_effect=2.0)
    assert linthresh == 5.0 and low < -3.0 and high > 760.0
    ticks = plots.x_ticks(linthresh, (low, high))
    assert 0.0 in ticks and 5.0 in ticks and ticks == sorted(ticks) and len(ticks) >= 5
    assert all(f"{t:g}".lstrip("-")[0] in "125" and set(f"{t:g}".lstrip("-")[1:]) <= {"0"} for t in ticks if t)
    assert plots.axis_position(50.0, 5.0) == 2.0 and plots.axis_position(-2.5, 5.0) == -0.5  # a decade past 5 %
    assert plots.x_ticks(None, (-7.5, 42.0)) == [0, 10, 20, 30, 40]  # steps of 1, 2 or 5 times ten to a power


def test_above_the_cap_the_failing_and_significant_rows_are_kept_in_table_order(large):
    gated, _ = large
    kinds = plots.row_kinds(gated)
    chosen, _ = plots.forest_rows(gated, kinds, 0, 20)
    assert len(chosen) == 20 and list(chosen) == sorted(chosen)
    assert {i for i, kind in enumerate(kinds) if kind == plots.FAIL} <= set(chosen)


def test_chart_paths_put_the_distributions_beside_the_forest():
    assert plots.chart_paths(Path("out/benchmark.svg")) == (
        Path("out/benchmark.svg"),
        Path("out/benchmark-distributions.svg"),
    )


@pytest.fixture(scope="module")
def thousand(tmp_path_factory) -> pd.DataFrame:
    """A 1,000-row report decided by the gate: mostly undecided rows, a few regressions and gains."""
    samples = results.read_samples([write_compare_csv(tmp_path_factory.mktemp("thousand") / "1000.csv", rows=1000)])
    return analysis.analyze(analysis.RunData(samples), STRICT).table


def test_forest_of_1000_rows_draws_the_decided_and_undecided_rows_and_sums_up_the_rest(thousand):
    gated = thousand
    kinds = plots.row_kinds(gated)
    failing = {i for i, kind in enumerate(kinds) if kind == plots.FAIL}
    decided = {i for i, kind in enumerate(kinds) if kind != plots.UNCLEAR}
    undecided = set(np.flatnonzero(gated["undecided"].to_numpy()))
    unchanged = len(gated) - len(decided | undecided)
    assert len(failing) == 3 and len(decided) == 5 and len(undecided) > plots.MAX_FOREST_ROWS and unchanged > 20

    positions, rest = plots.forest_rows(gated, kinds, plots.FOREST_ALL_ROWS, plots.MAX_FOREST_ROWS)
    chosen = set(positions.tolist())
    # Every decided row is drawn, the rest of the cap goes to undecided rows; no unchanged row is drawn.
    assert len(chosen) == plots.MAX_FOREST_ROWS and decided <= chosen and chosen <= decided | undecided
    assert list(positions) == sorted(positions)  # still compare.R's order
    left = len(undecided) - (plots.MAX_FOREST_ROWS - len(decided))
    assert rest.startswith(f"{unchanged} unchanged rows not drawn: changes from ")
    assert f"not drawn either: {left} undecided" in rest

    root = parse(plots.forest_svg(gated, STRICT))
    rows = forest_rows(root)
    assert len(rows) == plots.MAX_FOREST_ROWS == sum(row["interval"] is not None for row in rows)
    assert in_the_plot_box(root, rows)
    assert [text.text for text in by_class(root, "text", "rest")] == [rest]
    subtitle = by_class(root, "text", "subtitle")[0].text
    assert "showing 80 of 1000: the decided and undecided rows" in subtitle
    assert float(root.get("width")) <= 1400 and float(root.get("height")) <= 2100  # 18,000 px with every row


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
    kinds = plots.row_kinds(rows)
    every, rest = plots.forest_rows(rows.iloc[:-1], kinds[:-1], plots.FOREST_ALL_ROWS, plots.MAX_FOREST_ROWS)
    assert len(every) == plots.FOREST_ALL_ROWS and rest == ""
    past, rest = plots.forest_rows(rows, kinds, plots.FOREST_ALL_ROWS, plots.MAX_FOREST_ROWS)
    assert past.tolist() == [0]
    assert rest.startswith(f"{plots.FOREST_ALL_ROWS} unchanged rows not drawn: changes from +0.10 % to +0.10 %")
