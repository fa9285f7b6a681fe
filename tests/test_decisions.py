"""The gate's tests, intervals, decisions and verdict (benchgate.stats.decisions) on hand-made data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from perf import candidates
from scipy import special
from scipy import stats as scipy_stats
from synthetic import lognormal

from benchgate.stats import adaptivetable, decisions, yuenwelch
from benchgate.stats.gate import GatePolicy

RNG_SEED = 20240610


@pytest.mark.parametrize("n_base,n_head", [(4, 4), (10, 7), (30, 30), (2, 9)])
def test_welch_log_and_raw_match_scipy(n_base, n_head):
    rng = np.random.default_rng(RNG_SEED)
    base = lognormal(rng, 0.2, (6, n_base))
    head = lognormal(rng, 0.1, (6, n_head), -0.3)
    for test, transform in (("welch_log", np.log), ("welch_raw", lambda x: x)):
        st = candidates.gate_statistics(base, head, test)
        expected = scipy_stats.ttest_ind(transform(head), transform(base), axis=-1, equal_var=False)
        np.testing.assert_allclose(st.p_value, expected.pvalue, rtol=1e-10)
        np.testing.assert_allclose(st.delta / st.se, expected.statistic, rtol=1e-10)
        np.testing.assert_allclose(st.df, expected.df, rtol=1e-10)


def test_yuen_matches_scipy_trimmed_t_test_from_trim_from_samples():
    rng = np.random.default_rng(RNG_SEED)
    n = max(yuenwelch.TRIM_FROM, 30)
    base = lognormal(rng, 0.05, (5, n))
    head = lognormal(rng, 0.05, (5, n - 3), 0.02)
    st = yuenwelch.gate_statistics(base, head, "yuen_log")
    expected = scipy_stats.ttest_ind(np.log(head), np.log(base), axis=-1, equal_var=False, trim=0.2)
    np.testing.assert_allclose(st.delta / st.se, expected.statistic, rtol=1e-10)
    # the gate's df is Yuen's Satterthwaite df shrunk by YUEN_DF_FACTOR (its far tail is heavier than t's)
    np.testing.assert_allclose(st.df, expected.df * yuenwelch.YUEN_DF_FACTOR, rtol=1e-10)
    below = yuenwelch.gate_statistics(base[:, :5], head[:, :5], "yuen_log")
    plain = yuenwelch.gate_statistics(base[:, :5], head[:, :5], "welch_log")
    np.testing.assert_allclose(below.p_value, plain.p_value, rtol=1e-12)  # no trimming below TRIM_FROM


def test_nan_padding_is_missing_samples():
    rng = np.random.default_rng(RNG_SEED)
    base = lognormal(rng, 0.1, (1, 8))
    head = lognormal(rng, 0.1, (1, 5))
    padded = np.concatenate([head, np.full((1, 3), np.nan)], axis=1)
    a = yuenwelch.gate_statistics(base, head, "yuen_log")
    b = yuenwelch.gate_statistics(base, padded, "yuen_log")
    assert a.p_value[0] == pytest.approx(b.p_value[0], rel=1e-12)
    assert b.n_head[0] == 5


def test_interval_is_the_direct_formula():
    rng = np.random.default_rng(RNG_SEED)
    base = lognormal(rng, 0.03, (1, 12))
    head = lognormal(rng, 0.03, (1, 12), -0.1)
    st = yuenwelch.gate_statistics(base, head, "welch_log")
    level = 0.001 / 400
    low, high = st.interval(level)
    x, y = np.log(base[0]), np.log(head[0])
    se = np.sqrt(x.var(ddof=1) / 12 + y.var(ddof=1) / 12)
    df = se**4 / ((x.var(ddof=1) / 12) ** 2 / 11 + (y.var(ddof=1) / 12) ** 2 / 11)
    q = scipy_stats.t.ppf(1 - level / 2, df)
    assert low[0] == pytest.approx(100 * (np.exp(y.mean() - x.mean() - q * se) - 1), rel=1e-9)
    assert high[0] == pytest.approx(100 * (np.exp(y.mean() - x.mean() + q * se) - 1), rel=1e-9)
    raw = candidates.gate_statistics(base, head, "welch_raw")
    low, high = raw.interval(0.05)
    se_raw = np.sqrt(base[0].var(ddof=1) / 12 + head[0].var(ddof=1) / 12)
    q_raw = scipy_stats.t.ppf(0.975, raw.df[0])
    center = (head[0].mean() - base[0].mean()) / base[0].mean() * 100
    assert low[0] == pytest.approx(center - q_raw * se_raw / base[0].mean() * 100, rel=1e-9)  # compare.R's accuracy


def test_interval_excludes_zero_exactly_when_p_is_below_the_level():
    rng = np.random.default_rng(RNG_SEED)
    base = lognormal(rng, 0.05, (2000, 6))
    head = lognormal(rng, 0.05, (2000, 6), 0.05)
    for test in candidates.TESTS:
        st = candidates.gate_statistics(base, head, test)
        low, high = st.interval(0.01)
        assert ((low > 0) | (high < 0)).tolist() == (st.p_value < 0.01).tolist(), test


def test_mde_is_the_shift_detected_with_the_stated_power():
    rng = np.random.default_rng(RNG_SEED)
    base = lognormal(rng, 0.02, (1, 30))
    head = lognormal(rng, 0.02, (1, 30))
    st = yuenwelch.gate_statistics(base, head, "welch_log")
    level = 0.001 / 400
    got = st.mde(level, 0.8)[0]
    x = (special.stdtrit(st.df[0], 1 - level / 2) + special.stdtrit(st.df[0], 0.8)) * st.se[0]
    assert got == pytest.approx(100 * (1 - np.exp(-x)), rel=1e-12)
    assert st.mde(level, 0.9)[0] > got > st.mde(0.05, 0.8)[0]


def test_holm_levels_agree_with_holm_adjusted_p_values():
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(50):
        p = np.concatenate([rng.uniform(size=40), 10 ** rng.uniform(-9, -3, size=rng.integers(0, 6))])
        p[rng.integers(0, len(p))] = np.nan
        rejected, level = decisions.holm_levels(p, 0.001)
        valid = ~np.isnan(p)
        m = valid.sum()
        order = np.argsort(p[valid])
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(1, np.maximum.accumulate((m - np.arange(m)) * p[valid][order]))
        assert rejected[valid].tolist() == (adjusted < 0.001).tolist()
        assert ((p[valid] < level[valid]) == rejected[valid]).all()  # the interval excludes 0 exactly then
        r = int(rejected.sum())
        assert np.allclose(level[valid & ~rejected], 0.001 / (m - r))


def test_holm_levels_with_per_row_alpha_and_without_correction():
    p = np.array([1e-6, 2e-3, 0.2])
    rejected, level = decisions.holm_levels(p, np.array([0.001, 0.01, 0.05]))
    assert rejected.tolist() == [True, True, False]
    assert level.tolist() == pytest.approx([0.001 / 3, 0.01 / 2, 0.05 / 1])
    rejected, level = decisions.holm_levels(p, 0.05, "none")
    assert rejected.tolist() == [True, True, False] and level.tolist() == [0.05] * 3


def decide_one(base, head, **options):
    return candidates.decide(np.atleast_2d(base), np.atleast_2d(head), **options)


def test_the_issue_n4_shape_is_never_a_pass():
    """Node 20.0.0 vs 18.16.0, buffer-tojson len=4096: -88.5 % with 4 runs a side and 15-25 % noise."""
    base = np.array([101_000.0, 78_000.0, 96_500.0, 121_000.0])
    head = base * 0.115 * np.array([1.21, 0.83, 1.05, 0.92])
    raw = candidates.gate_statistics(base[None], head[None], "welch_raw").p_value[0]
    assert 0.001 < raw < 0.01  # compare.R: ** only, so the *** gate of compare.R's p passes it
    alone = decide_one(base, head)  # a report of this one row: the log test fails it
    assert alone.names.tolist() == ["regression"]
    assert alone.change[0] == pytest.approx(-88.5, abs=3)
    rng = np.random.default_rng(RNG_SEED)
    noise_base, noise_head = lognormal(rng, 0.2, (399, 4)), lognormal(rng, 0.2, (399, 4))
    crowded = candidates.decide(np.vstack([noise_base, base]), np.vstack([noise_head, head]))
    assert crowded.names[-1] in ("regression", "inconclusive")  # 400 comparisons: never unchanged
    assert candidates.verdict(crowded.decision) in ("fail", "inconclusive")


def test_pure_noise_is_unchanged_and_passes():
    rng = np.random.default_rng(RNG_SEED)
    base, head = lognormal(rng, 0.01, (400, 30)), lognormal(rng, 0.01, (400, 30))
    result = candidates.decide(base, head)
    assert set(result.names) == {"unchanged"}
    assert candidates.verdict(result.decision) == "pass"
    assert (result.ci_low < result.change).all() and (result.change < result.ci_high).all()
    assert (result.mde > 0).all() and (result.mde < 3).all()


def test_decision_rules():
    rng = np.random.default_rng(RNG_SEED)
    rows = {
        "regression": (0.01, -0.2, 30),
        "improvement": (0.01, 0.2, 30),
        "small regression": (0.002, -0.01, 30),
        "noisy": (0.3, -0.4, 5),
    }
    base = np.full((4, 30), np.nan)
    head = np.full((4, 30), np.nan)
    for index, (sigma, change, n) in enumerate(rows.values()):
        base[index, :n] = lognormal(rng, sigma, n)
        head[index, :n] = lognormal(rng, sigma, n, change)
    names = candidates.decide(base, head).names.tolist()
    assert names == ["regression", "improvement", "regression", "inconclusive"]
    with_floor = candidates.decide(base, head, min_effect=2.0).names.tolist()
    assert with_floor == ["regression", "improvement", "unchanged", "inconclusive"]


def test_incomplete_and_constant_rows():
    base = np.array([[1.0, np.nan], [5.0, 5.0], [5.0, 5.0], [5.0, 5.0]])
    head = np.array([[1.0, 2.0], [5.0, 5.0], [4.0, 4.0], [6.0, 6.0]])
    result = candidates.decide(base, head)
    assert result.names.tolist() == ["incomplete", "constant", "regression", "improvement"]
    assert result.ci_low[2] == result.ci_high[2] == pytest.approx(-20.0)
    assert candidates.verdict(result.decision) == "fail"
    assert candidates.verdict(result.decision, ignored=np.array([False, False, True, False])) == "pass"


def test_verdict_order():
    codes = decisions.DECISIONS.index
    assert candidates.verdict(np.array([codes("unchanged"), codes("improvement")])) == "pass"
    assert candidates.verdict(np.array([codes("unchanged"), codes("inconclusive")])) == "inconclusive"
    assert candidates.verdict(np.array([codes("inconclusive"), codes("regression")])) == "fail"
    assert candidates.verdicts(np.array([[0, 3], [2, 3], [2, 1]])).tolist() == [1, 2, 0]


def test_runs_needed_decides_an_undecided_row_when_rerun():
    rng = np.random.default_rng(RNG_SEED)
    base, head = lognormal(rng, 0.08, (1, 10)), lognormal(rng, 0.08, (1, 10), -0.06)
    result = candidates.decide(base, head)
    assert result.names.tolist() == ["inconclusive"]
    needed = adaptivetable.undecided_runs(result, 0.0, 10.0)[0]
    assert 10 < needed < 10_000
    more = lognormal(rng, 0.08, (1, int(needed) * 3)), lognormal(rng, 0.08, (1, int(needed) * 3), -0.06)
    assert candidates.decide(*more).names[0] != "inconclusive"


def test_either_is_bonferroni_over_its_two_tests():
    rng = np.random.default_rng(RNG_SEED)
    base, head = lognormal(rng, 0.1, (50, 8)), lognormal(rng, 0.1, (50, 8), -0.1)
    both = candidates.gate_statistics(base, head, "either")
    raw = candidates.gate_statistics(base, head, "welch_raw").p_value
    log = yuenwelch.gate_statistics(base, head, "welch_log").p_value
    np.testing.assert_allclose(both.p_value, np.minimum(1, 2 * np.minimum(raw, log)))


def test_decide_samples_frame():
    rng = np.random.default_rng(RNG_SEED)
    rows = []
    for config, change in (("n=1", 0.0), ("n=2", -0.3)):
        for side in ("base", "head"):
            for rate in lognormal(rng, 0.02, 12, change if side == "head" else 0.0):
                rows.append(("a.js", config, side, rate))
    samples = pd.DataFrame(rows, columns=["filename", "configuration", "side", "rate"])
    samples["side"] = pd.Categorical(samples["side"], categories=["base", "head"])
    table = adaptivetable.decide_samples(samples, [("a.js", "n=2"), ("a.js", "n=1")], GatePolicy(max_resolution=None))
    assert table["configuration"].tolist() == ["n=2", "n=1"]
    assert table["decision"].tolist() == ["regression", "unchanged"]
    assert table["runs_needed"].isna().all()
    assert decisions.format_change(-12.34, -14.06, -10.51) == "-12.3 % [-14.1, -10.5]"


def test_an_interval_that_overflows_is_still_a_tested_row():
    """Two runs a side at 0.001 / 400: the interval's upper end overflows to +inf, yet the row was tested."""
    rng = np.random.default_rng(RNG_SEED)
    base, head = lognormal(rng, 0.3, (400, 2)), lognormal(rng, 0.3, (400, 2))
    result = candidates.decide(base, head)
    assert np.isinf(result.ci_high).any()
    # Tested (not incomplete); the few whose one-sided 95 % bound lies above -10 % are unchanged.
    assert set(result.names) == {"inconclusive", "unchanged"}
    assert (result.unchanged_low[result.names == "unchanged"] > -10).all()
    assert decisions.format_change(12.0, -100.0, np.inf) == "12.0 % [-100.0, inf]"


def test_a_rows_resolution_is_the_bound_it_is_judged_by_and_a_coarse_row_is_gated_at_what_it_can_reach():
    """Resolution: minus the one-sided bound. Quiet rows are gated at 10 %; rows whose base-side noise cannot reach
    10 % by their runs at the gate's power are gated at what they reach, capped at the ceiling; strict gates all at
    10 %. A coarse row passes only when its resolution is under the resolution it is gated at."""
    from benchgate.stats.resolution import Coarsening

    rng = np.random.default_rng(51)
    sigma = np.array([0.01, 0.02, 0.12, 0.2, 1.2])[:, None]
    base = lognormal(rng, sigma, (5, 30))
    head = lognormal(rng, sigma, (5, 30))
    strict = candidates.decide(base, head)
    np.testing.assert_allclose(strict.resolution, -strict.unchanged_low)
    assert (strict.gated_at == 10).all() and not strict.coarse.any()
    result = candidates.decide(base, head, coarsening=Coarsening(25.0))
    assert result.coarse.tolist() == [False, False, True, True, False]  # 120 % noise cannot reach even 25 %
    assert (result.gated_at[:2] == 10).all() and 10 < result.gated_at[2] < result.gated_at[3] <= 25
    assert result.gated_at[4] == 10  # beyond the ceiling: gated strictly, as before
    unchanged = result.decision == decisions.UNCHANGED
    assert (result.resolution[unchanged] < result.gated_at[unchanged]).all()
    assert (result.resolution[~unchanged] >= result.gated_at[~unchanged]).all()
    # A ceiling below the target coarsens nothing.
    assert not candidates.decide(base, head, coarsening=Coarsening(5.0)).coarse.any()


def test_a_head_that_makes_a_row_noisier_cannot_push_it_to_a_coarser_gate():
    """The resolution a row is gated at comes from the base's samples only: a head ten times as noisy leaves it."""
    from benchgate.stats.resolution import Coarsening

    rng = np.random.default_rng(52)
    base = lognormal(rng, 0.03, (50, 30))
    calm = lognormal(rng, 0.03, (50, 30))
    loud = lognormal(rng, 0.3, (50, 30))
    gated = [candidates.decide(base, head, coarsening=Coarsening(25.0)) for head in (calm, loud)]
    np.testing.assert_array_equal(gated[0].gated_at, gated[1].gated_at)
    assert not gated[1].coarse.any() and (gated[1].decision != decisions.UNCHANGED).mean() > 0.3
    sigma = [adaptivetable.noise_sigma(result.current) for result in gated]
    np.testing.assert_array_equal(sigma[0], sigma[1])  # the noise the report and the budget read: the base's


def test_the_projection_is_conservative_at_few_runs():
    """3 runs at 35 % noise (the issue's HTTP row): the old projection promised about 4 runs; the conservative
    sigma and t quantiles ask for many more (a few rows whose three samples happen to agree still get a small
    count), and a quiet undecided row gets a modest one."""
    rng = np.random.default_rng(53)
    loud = candidates.decide(lognormal(rng, 0.35, (200, 3)), lognormal(rng, 0.35, (200, 3)), unchanged_confidence=99)
    undecided = loud.decision == decisions.INCONCLUSIVE
    needed = adaptivetable.undecided_runs(loud, 0.0, 10.0, 99.0)[undecided]
    assert undecided.sum() > 150 and np.nanmedian(needed) > 100 and np.mean(needed > 10) > 0.9
    quiet = candidates.decide(lognormal(rng, 0.04, (200, 5)), lognormal(rng, 0.04, (200, 5)), unchanged_confidence=99.9)
    rows = quiet.decision == decisions.INCONCLUSIVE
    counts = adaptivetable.undecided_runs(quiet, 0.0, 10.0, 99.9)[rows]
    assert rows.any() and (counts > 5).all() and np.nanmedian(counts) < 60


def test_mains_history_gives_a_rows_noise_before_the_run_and_a_row_never_seen_falls_back_to_the_base():
    """A prior from main's recent runs on the same runner sets how coarsely a row is gated from the first look;
    a row with fewer than 3 stored runs is gated by its base's samples. The prior comes from main only: the head's
    samples never enter it."""
    from benchgate.stats import resolution

    prior = resolution.prior_variance([[0.12] * 12, [0.12, 0.5], [], [0.01, 0.012, 0.011, 9.0, 0.01]])
    assert prior[0] == pytest.approx(0.0144) and np.isnan(prior[1]) and np.isnan(prior[2])
    assert prior[3] == pytest.approx(0.011**2)  # the median: one run's outlier spread does not set it
    rng = np.random.default_rng(54)
    base, head = lognormal(rng, 0.02, (4, 5)), lognormal(rng, 0.02, (4, 5))
    st = yuenwelch.gate_statistics(base, head)
    level = np.full(4, 0.1)
    with_prior = resolution.gated_at(st, np.full(4, 10.0), level, resolution.Coarsening(25.0, 60.0, 1.0, prior))
    without = resolution.gated_at(st, np.full(4, 10.0), level, resolution.Coarsening(25.0, 60.0, 1.0))
    assert with_prior[1][0] and not without[1][0]  # main knows the row is noisy: coarse from the first look
    np.testing.assert_array_equal(with_prior[0][1:3], without[0][1:3])  # never seen: the base decides
