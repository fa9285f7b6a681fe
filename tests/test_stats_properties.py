"""Properties of the statistics that hold for any data (hypothesis; modest example counts)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from benchgate import stats
from benchgate.results.csvfile import BASE, HEAD

rates = st.lists(st.floats(min_value=1.0, max_value=1e6, allow_nan=False), min_size=2, max_size=15)
groups = st.lists(st.tuples(rates, rates), min_size=1, max_size=6)


def samples_of(groups_data, *, scale: float = 1.0, swap: bool = False) -> pd.DataFrame:
    sides, filenames, configurations, values = [], [], [], []
    for index, (base, head) in enumerate(groups_data):
        for side, group in ((BASE, base), (HEAD, head)):
            side = (HEAD if side == BASE else BASE) if swap else side
            sides += [side] * len(group)
            filenames += [f"bench-{index % 2}.js"] * len(group)
            configurations += [f"n={index}"] * len(group)
            values += [value * scale for value in group]
    return pd.DataFrame(
        {
            "side": pd.Categorical(sides, categories=[BASE, HEAD]),
            "filename": filenames,
            "configuration": configurations,
            "rate": values,
            "time": np.nan,
        }
    )


def non_constant(table: pd.DataFrame) -> pd.DataFrame:
    return table[~table["constant"]]


@settings(max_examples=40, deadline=None)
@given(groups, st.sampled_from([1e-6, 0.37, 3.0, 1024.0, 1e9]))
def test_scaling_every_rate_changes_no_p_value(groups_data, factor):
    plain = stats.compare_samples(samples_of(groups_data))
    scaled = stats.compare_samples(samples_of(groups_data, scale=factor))
    keep = ~(plain["constant"] | scaled["constant"])
    np.testing.assert_allclose(scaled["p_value"][keep], plain["p_value"][keep], rtol=1e-7, atol=1e-300)
    np.testing.assert_allclose(scaled["df"][keep], plain["df"][keep], rtol=1e-7)
    np.testing.assert_allclose(scaled["improvement"], plain["improvement"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(scaled["accuracy_1"][keep], plain["accuracy_1"][keep], rtol=1e-7)


@settings(max_examples=40, deadline=None)
@given(groups)
def test_swapping_base_and_head_flips_t_and_keeps_p_and_df(groups_data):
    forward = stats.compare_samples(samples_of(groups_data))
    backward = stats.compare_samples(samples_of(groups_data, swap=True))
    np.testing.assert_allclose(backward["t_statistic"], -forward["t_statistic"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(backward["p_value"], forward["p_value"], rtol=1e-9)
    np.testing.assert_allclose(backward["df"], forward["df"], rtol=1e-12)
    same_sign = np.sign(forward["improvement"]) == np.sign(forward["t_statistic"])
    assert (same_sign | forward["constant"]).all()


# scipy, the reference here, warns that its own moments lose precision on near-identical samples; the
# assertions below bound that loss, so the warning says nothing about benchgate.
@pytest.mark.filterwarnings("ignore:Precision loss occurred in moment calculation:RuntimeWarning")
@example([([1.0, 1.0, 48576.5, 999999.5], [1.0, 48576.0, 999999.6700362744, 1.2406031427672133])])
@settings(max_examples=40, deadline=None)
@given(groups)
def test_welch_agrees_with_scipy_ttest(groups_data):
    table = non_constant(stats.compare_samples(samples_of(groups_data)))
    for index, row in table.iterrows():
        base, head = groups_data[int(row["configuration"].removeprefix("n="))]
        expected = scipy_stats.ttest_ind(head, base, equal_var=False)
        # Near t = 0 the difference of the means cancels: both sides carry rounding of the order of
        # eps * |mean| in the numerator, so t agrees to that much in absolute terms, not relatively.
        cancellation = (
            64
            * np.finfo(float).eps
            * max(row["mean_base"], row["mean_head"])
            / (abs(row["mean_head"] - row["mean_base"]) / abs(row["t_statistic"]) if row["t_statistic"] else 1.0)
        )
        assert math.isclose(row["t_statistic"], expected.statistic, rel_tol=1e-9, abs_tol=cancellation), index
        assert math.isclose(row["p_value"], expected.pvalue, rel_tol=1e-8, abs_tol=1e-300), index


p_values = st.lists(st.one_of(st.floats(0, 1), st.just(math.nan)), min_size=0, max_size=40)


def naive_holm(p: list[float]) -> list[float]:
    """Holm by its definition: adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j))."""
    present = sorted((value, index) for index, value in enumerate(p) if not math.isnan(value))
    m, out, running = len(present), [math.nan] * len(p), 0.0
    for rank, (value, index) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * value))
        out[index] = running
    return out


@settings(max_examples=80, deadline=None)
@given(p_values)
def test_holm_is_at_least_raw_at_most_one_monotone_and_matches_its_definition(p):
    raw = np.array(p, dtype=float)
    adjusted = stats.holm_adjust(raw)
    assert (np.isnan(adjusted) == np.isnan(raw)).all()
    present = ~np.isnan(raw)
    assert (adjusted[present] >= raw[present]).all() and (adjusted[present] <= 1).all()
    order = np.argsort(raw[present], kind="stable")
    assert (np.diff(adjusted[present][order]) >= 0).all()
    np.testing.assert_allclose(adjusted, naive_holm(p), rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), max_size=20))
def test_stars_are_compare_r_levels(p):
    expected = ["***" if v < 0.001 else "**" if v < 0.01 else "*" if v < 0.05 else "" for v in p]
    assert list(stats.stars(np.array(p, dtype=float))) == expected


def test_star_boundaries_are_strict():
    assert list(stats.stars(np.array([0.05, 0.01, 0.001, 0.0499999, math.nan]))) == ["", "*", "**", "*", "NA"]


@settings(max_examples=30, deadline=None)
@given(groups)
def test_accuracy_widens_with_confidence_and_is_never_negative(groups_data):
    table = non_constant(stats.compare_samples(samples_of(groups_data)))
    assert (table["accuracy_1"] >= 0).all()
    assert (table["accuracy_1"] <= table["accuracy_2"]).all() and (table["accuracy_2"] <= table["accuracy_3"]).all()
