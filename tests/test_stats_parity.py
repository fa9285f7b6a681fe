"""Parity with R: our numbers against R's own t.test/qt/p.adjust, our text against what compare.R printed.

The reference data under tests/fixtures/analyze was written by R (tests/tools/make_reference.sh:
``FIXTURE.r.csv`` from tests/tools/r_reference.R, ``FIXTURE.compare-R.txt`` from Node's compare.R run
with LC_COLLATE=C), so CI needs no R.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchgate import results, stats
from benchgate.report import tables as report
from benchgate.stats import analysis, gate

FIXTURES = Path(__file__).parent / "fixtures" / "analyze"
REFERENCES = sorted(path.name.removesuffix(".r.csv") for path in FIXTURES.glob("*.r.csv"))
COMPARE_R_OUTPUTS = sorted(path.name.removesuffix(".compare-R.txt") for path in FIXTURES.glob("*.compare-R.txt"))
# Our arithmetic follows R's step by step; what is left is scipy's vs R's t distribution (~1e-14 seen).
RELATIVE = 1e-12


def reference(name: str) -> pd.DataFrame:
    return pd.read_csv(FIXTURES / f"{name}.r.csv", dtype=str, keep_default_na=False, encoding="utf-8")


def ours(name: str) -> pd.DataFrame:
    return stats.compare_samples(results.read_samples([FIXTURES / f"{name}.csv"]))


def numbers(column: pd.Series) -> np.ndarray:
    return np.array([math.nan if value in ("NA", "NaN") else float(value) for value in column])


def test_every_reference_has_its_fixture():
    assert {"quoting", "unequal-n", "scales", "small-n", "constant", "many", "sorting"} <= set(REFERENCES)
    assert set(COMPARE_R_OUTPUTS) <= set(REFERENCES)


@pytest.mark.parametrize("name", REFERENCES)
def test_rows_and_order_match_r(name):
    expected, table = reference(name), ours(name)
    assert table["filename"].tolist() == expected["filename"].tolist()
    assert table["configuration"].tolist() == expected["configuration"].tolist()
    assert table["n_base"].tolist() == expected["n_old"].astype(int).tolist()
    assert table["n_head"].tolist() == expected["n_new"].astype(int).tolist()


@pytest.mark.parametrize("name", REFERENCES)
def test_numbers_match_r_tightly(name):
    expected, table = reference(name), ours(name)
    failed_t_test = expected["t_test_error"] != ""
    assert (table["constant"].to_numpy() == failed_t_test.to_numpy()).all()
    pairs = [
        ("mean_base", "mean_old"),
        ("mean_head", "mean_new"),
        ("improvement", "improvement"),
        ("t_statistic", "t"),
        ("df", "df"),
        ("p_value", "p"),
        ("p_adjusted", "p_holm"),
        ("accuracy_1", "accuracy_1"),
        ("accuracy_2", "accuracy_2"),
        ("accuracy_3", "accuracy_3"),
    ]
    for our_column, r_column in pairs:
        got, want = table[our_column].to_numpy(dtype=float), numbers(expected[r_column])
        checked = ~failed_t_test.to_numpy() | np.isin(our_column, ["p_value", "p_adjusted", "improvement"])
        assert (np.isnan(got[checked]) == np.isnan(want[checked])).all(), our_column
        both = checked & ~np.isnan(want)
        np.testing.assert_allclose(got[both], want[both], rtol=RELATIVE, atol=0, err_msg=our_column)


@pytest.mark.parametrize("name", REFERENCES)
def test_printed_digits_match_r(name):
    expected, table = reference(name), ours(name)
    assert table["confidence"].tolist() == expected["confidence"].tolist()
    assert [report.format_improvement(v) for v in table["improvement"]] == expected["improvement_text"].tolist()
    rows = ~(expected["t_test_error"] != "")
    for k in (1, 2, 3):
        printed = [report.format_accuracy(v) for v in table[f"accuracy_{k}"]]
        assert list(np.array(printed)[rows]) == expected[f"accuracy_{k}_text"][rows].tolist()


@pytest.mark.parametrize("name", COMPARE_R_OUTPUTS)
def test_text_output_starts_with_exactly_what_compare_r_printed(name):
    printed = (FIXTURES / f"{name}.compare-R.txt").read_text(encoding="utf-8")
    gated = analysis.compare_r_table(ours(name), gate.GatePolicy(threshold="off"))
    text = report.render_text(gated, gate.GatePolicy(threshold="off"))
    assert text.startswith(printed)


def test_gate_column_only_appends_to_compare_r_lines():
    printed = (FIXTURES / "many.compare-R.txt").read_text(encoding="utf-8").splitlines()
    gated = analysis.compare_r_table(ours("many"), gate.GatePolicy())
    assert gated["gating"].sum() == 3
    table = report.render_compare_table(gated).splitlines()
    assert table[0] == printed[0] + " gate"
    for ours_line, r_line, failing in zip(table[1:], printed[1:], gated["gating"], strict=False):
        assert ours_line == (r_line + " FAIL" if failing else r_line)


def test_constant_rows_where_r_aborts_follow_the_documented_convention():
    table = ours("constant").set_index("configuration")
    assert table.loc["equal", ["p_value", "t_statistic"]].tolist() == [1.0, 0.0]
    assert table.loc["slower", "p_value"] == 0.0 and table.loc["slower", "t_statistic"] == -math.inf
    assert table.loc["faster", "p_value"] == 0.0 and table.loc["faster", "confidence"] == "***"
    assert table.loc["equal", "confidence"] == ""
    assert table.loc[["equal", "slower", "faster"], ["accuracy_1", "accuracy_2", "accuracy_3"]].eq(0).all().all()
    assert table.loc[["equal", "slower", "faster"], "df"].isna().all()
    assert not table.loc[["normal", "normal-2"], "constant"].any()


def test_incomplete_rows_are_na_like_compare_r():
    table = ours("small-n").set_index("configuration")
    incomplete = ["n_old=1", "n_new=1", "only-old", "only-new"]
    assert table.loc[incomplete, "incomplete"].all() and not table.drop(index=incomplete)["incomplete"].any()
    assert (table.loc[incomplete, "confidence"] == "NA").all()
    assert table.loc[incomplete, ["p_value", "p_adjusted", "df", "accuracy_1"]].isna().all().all()
    assert table.loc[["only-old", "only-new"], "improvement"].isna().all()
    assert table.loc[["n_old=1", "n_new=1"], "improvement"].notna().all()


def test_holm_family_is_the_whole_report_without_na():
    table = ours("small-n")
    tested = table["p_value"].notna()
    assert table.loc[tested, "p_adjusted"].tolist() == pytest.approx(
        stats.holm_adjust(table.loc[tested, "p_value"].to_numpy()).tolist(), rel=0
    )
    expected = reference("small-n")
    np.testing.assert_allclose(table["p_adjusted"][tested], numbers(expected["p_holm"])[tested], rtol=RELATIVE)


def test_name_collision_keeps_pairs_apart():
    table = ours("name-collision")
    assert list(zip(table["filename"], table["configuration"], strict=True)) == [("x.js", "a b"), ("x.js a", "b")]
    assert table["improvement"].iloc[0] > 0 > table["improvement"].iloc[1]


def test_row_order_is_compare_rs_under_the_c_collation_not_icus():
    """R sorts by bytes only when LC_COLLATE is C; in a UTF-8 locale ICU orders case and punctuation otherwise."""
    byte_order = (FIXTURES / "sorting.compare-R.txt").read_text(encoding="utf-8").split("\n\n")[0].splitlines()[1:]
    icu_order = (
        (FIXTURES / "sorting.compare-R-utf8-collation.txt")
        .read_text(encoding="utf-8")
        .split("\n\n")[0]
        .splitlines()[1:]
    )
    assert sorted(byte_order) == sorted(icu_order) and byte_order != icu_order
    names = [f"{f} {c}" for f, c in zip(ours("sorting")["filename"], ours("sorting")["configuration"], strict=True)]
    assert names == sorted(names, key=lambda name: name.encode("utf-8"))
    assert [line[: len(name)] for line, name in zip(byte_order, names, strict=True)] == names


@pytest.mark.parametrize("name", COMPARE_R_OUTPUTS)
def test_the_gates_columns_only_append_to_compare_r_lines(name):
    """What `benchgate analyze` prints (the gate's decisions from the samples) keeps every compare.R line as is."""
    printed = (FIXTURES / f"{name}.compare-R.txt").read_text(encoding="utf-8").splitlines()
    samples = results.read_samples([FIXTURES / f"{name}.csv"])
    gated = analysis.analyze(analysis.RunData(samples), gate.GatePolicy()).table
    table = report.render_compare_table(gated).splitlines()
    assert len(table) == len(gated) + 1
    for ours_line, r_line in zip(table, printed, strict=False):
        assert ours_line.startswith(r_line + " ")
    for ours_line, row in zip(table[1:], gated.itertuples(index=False), strict=True):
        appended = ours_line[len(printed[0]) :].split()
        assert row.decision in appended and (("FAIL" in appended) == bool(row.gating))
