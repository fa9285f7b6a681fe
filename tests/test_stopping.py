"""The looks of --runs auto (benchgate.stats.stopping): settling, stopping, replay and the error control."""

from __future__ import annotations

import json

import numpy as np
import pytest
from perf import candidates
from synthetic import lognormal

from benchgate.stats import decisions, sequential, stopping


def run(design, base, head, file_of_row, files):
    """The looks of a run on these samples, as the session and the report replay them; and the looks it took."""
    looks_seen = [(base[:, :runs].copy(), head[:, :runs].copy()) for runs in design.looks]
    replayed = stopping.replay(design, looks_seen, file_of_row, files)
    return replayed, looks_seen[: len(replayed.history)]


def test_quiet_unchanged_files_stop_early_and_a_regression_is_found():
    rng = np.random.default_rng(1)
    design = sequential.make_design()
    file_of_row = np.repeat(np.arange(4), 5)
    base = lognormal(rng, 0.01, (20, 60))
    head = lognormal(rng, 0.01, (20, 60))
    head[7] *= 0.9  # file 1 regresses by 10 %
    replayed, _ = run(design, base, head, file_of_row, 4)
    names = replayed.result.decisions.names
    assert names[7] == "regression" and set(np.delete(names, 7)) == {"unchanged"}
    assert (np.asarray(design.looks)[replayed.stopped_after] <= 12).all()  # far fewer than 60 runs


def test_unchanged_uses_the_whole_level_at_every_look():
    """A row not rejected shows the fixed-runs interval of its samples so far: no share of the level is spent.
    Its unchanged decision is a fixed-runs one at the look's share of the unchanged risk (5 % x weight)."""
    rng = np.random.default_rng(5)
    design = sequential.make_design()
    base, head = lognormal(rng, 0.02, (40, 60)), lognormal(rng, 0.02, (40, 60))
    history = []
    shares = design.unchanged_weights()
    assert sum(shares) == pytest.approx(1.0) and shares[-1] > 0.3  # mostly spent at the last looks
    for k, runs in enumerate(design.looks[:8]):
        history.append(stopping.look_statistics(design, base[:, :runs], head[:, :runs]))
        result = stopping.decide_at_look(design, history).decisions
        fixed = candidates.decide(base[:, :runs], head[:, :runs], unchanged_confidence=100 - 5 * shares[k])
        assert not result.rejected.any()
        np.testing.assert_allclose(result.ci_low, fixed.ci_low, rtol=1e-12)
        np.testing.assert_allclose(result.ci_high, fixed.ci_high, rtol=1e-12)
        assert result.names.tolist() == fixed.names.tolist()


def test_a_five_percent_regression_is_not_stopped_as_unchanged():
    """The settle guard: at 1 % noise a -5 % row can look unchanged (its interval excludes -10 %) before it is
    rejected; it keeps running and ends a regression (the power target)."""
    rng = np.random.default_rng(6)
    design = sequential.make_design()
    rows = 200
    base, head = lognormal(rng, 0.01, (rows, 60)), lognormal(rng, 0.01, (rows, 60), -0.05)
    file_of_row = np.arange(rows)  # one row per file: each stops on its own
    replayed, _ = run(design, base, head, file_of_row, rows)
    assert (replayed.result.decisions.names == "regression").all()
    # without the guard (settle_above as large as the floor) some would have stopped "unchanged" early
    loose = sequential.make_design(settle_above=10.0, settle_level=0.49)
    replayed_loose, _ = run(loose, base, head, file_of_row, rows)
    assert (replayed_loose.result.decisions.names == "unchanged").any()


def test_significant_at_the_whole_level_but_not_yet_rejected_keeps_running():
    design = sequential.make_design(min_runs=5, max_runs=60)
    rng = np.random.default_rng(7)
    for _ in range(500):  # t of about 8: between the whole level (2.5e-6) and the first look's share of it
        base, head = lognormal(rng, 0.004, (1, 8)), lognormal(rng, 0.004, (1, 8), -0.017)
        st = stopping.look_statistics(design, base, head)
        result = stopping.decide_at_look(design, [st])
        d = result.decisions
        if d.fixed_high[0] < 0 and not d.rejected[0]:
            assert d.names[0] == "unchanged" and not result.settled[0]
            return
    pytest.fail("no sample fell between the whole level and the first look's share of it")


def test_with_a_min_effect_an_unchanged_row_settles_without_the_guard():
    """A -3 % row whose interval holds 0 and rules out -10 %, but not (one-sided at 0.001) -5 %: it keeps
    running under min-effect 0, while with a min-effect of 8 % it is settled (a one-row report: level 0.001)."""
    rng = np.random.default_rng(8)
    # Pocock-type spending of the unchanged risk: a real share of it at the first look, where this row is.
    plain = sequential.make_design(unchanged_spending="pocock")
    floor = sequential.make_design(min_effect=8.0, unchanged_spending="pocock")
    for _ in range(500):
        base, head = lognormal(rng, 0.015, (1, 8)), lognormal(rng, 0.015, (1, 8), -0.03)
        st = stopping.look_statistics(plain, base, head)
        result = stopping.decide_at_look(plain, [st])
        d = result.decisions
        if d.names[0] == "unchanged" and d.fixed_low[0] <= 0 <= d.fixed_high[0]:
            guard, _ = st.interval(2 * plain.settle_level)
            if guard[0] <= -plain.settle_above:
                assert not result.settled[0]
                settled = stopping.decide_at_look(floor, [stopping.look_statistics(floor, base, head)])
                assert settled.decisions.names[0] == "unchanged" and settled.settled[0]
                return
    pytest.fail("no sample was unchanged with the guard failing")


def test_a_hopelessly_noisy_file_stops_at_once_and_ends_inconclusive():
    rng = np.random.default_rng(9)
    design = sequential.make_design()
    file_of_row = np.array([0, 0, 1])
    base = np.vstack([lognormal(rng, 0.01, (2, 60)), lognormal(rng, 1.5, (1, 60))])
    head = np.vstack([lognormal(rng, 0.01, (2, 60)), lognormal(rng, 1.5, (1, 60))])
    replayed, _ = run(design, base, head, file_of_row, 2)
    stopped, names = replayed.stopped_after, replayed.result.decisions.names
    assert stopped[1] <= 2 and names[2] == "inconclusive"  # 150 % noise: gives up at once
    assert replayed.reasons.tolist() == ["decided", "hopeless"]


def test_replay_reaches_the_live_runs_decisions_and_stops():
    """The report replays what results.csv recorded: a stopped file's rows got no samples after its stop (NaN here,
    so a replay that read them would differ), and the design went through run.json. It reaches the same stops and
    decisions as the looks on the whole samples."""
    rng = np.random.default_rng(2)
    design = sequential.make_design()
    file_of_row = np.repeat(np.arange(3), 4)
    sigmas = np.repeat([0.005, 0.05, 0.3], 4)[:, None]
    base = np.exp(sigmas * rng.standard_normal((12, 60)))
    head = np.exp(sigmas * rng.standard_normal((12, 60)))
    live, looks_seen = run(design, base, head, file_of_row, 3)
    stopped = live.stopped_after
    assert 0 <= stopped[0] < stopped.max()  # a file stopped while another ran on: it missed samples
    measured = []
    for base_seen, head_seen in looks_seen:
        base_csv, head_csv = base_seen.copy(), head_seen.copy()
        for row, unit in enumerate(file_of_row.tolist()):
            if stopped[unit] >= 0:  # none after the runs of the look it stopped at
                base_csv[row, design.looks[stopped[unit]] :] = np.nan
                head_csv[row, design.looks[stopped[unit]] :] = np.nan
        measured.append((base_csv, head_csv))
    assert np.isnan(measured[-1][0]).any()
    recorded = sequential.Design.from_json(json.loads(json.dumps(design.to_json())))
    replayed = stopping.replay(recorded, measured, file_of_row, 3)
    assert replayed.stopped_after.tolist() == stopped.tolist()
    assert replayed.result.decisions.names.tolist() == live.result.decisions.names.tolist()
    np.testing.assert_array_equal(replayed.result.decisions.ci_low, live.result.decisions.ci_low)
    assert replayed.reasons[0] == "decided" and replayed.reasons[2] in ("decided", "hopeless", "max-runs")
    if replayed.reasons[2] == "decided":  # 30 % noise cannot reach 10 %: its rows stop once they rule out what they can
        noisy = slice(8, 12)
        names = replayed.result.decisions.names
        assert (names[noisy] == "unchanged").all() and replayed.result.decisions.coarse[noisy].all()
    # a resumed run that has seen only the first looks replays the same prefix
    prefix = stopping.replay(recorded, measured[:2], file_of_row, 3)
    assert prefix.stopped_after.tolist() == [k if 0 <= k < 2 else -1 for k in stopped.tolist()]


def test_false_fail_rate_of_the_design_monte_carlo():
    """A/A with heavy noise and stopping at every look: false regressions stay within 3x the nominal rate.

    At the design's level alpha = 0.05 over 10 rows per report (Holm), a report falsely fails at most
    ~alpha / 2 of the time (one side). 600 reports, fixed seed: expected <= 15, bound 3x.
    """
    rng = np.random.default_rng(3)
    design = sequential.make_design(0.05)
    reports, rows = 600, 10
    file_of_row = np.repeat(np.arange(5), 2)
    base = lognormal(rng, 0.05, (reports, rows, 60))
    head = lognormal(rng, 0.05, (reports, rows, 60))
    base = np.where(rng.random(base.shape) < 0.02, base / 1.3, base)  # slow outliers on both sides
    head = np.where(rng.random(head.shape) < 0.02, head / 1.3, head)
    looks = ((base[..., :runs], head[..., :runs]) for runs in design.looks)
    result = stopping.replay(design, looks, file_of_row, 5, with_mde=False).result
    fails = int((candidates.verdicts(result.decisions.decision) == 1).sum())
    assert 0 < fails <= 3 * 0.05 / 2 * reports  # 0 would mean the test could not fail


def test_files_to_stop_per_report():
    settled = np.array([[True, True, False, True], [True, True, True, True]])
    stop = stopping.files_to_stop(np.array([0, 0, 1, 1]), settled, 3)
    assert stop.tolist() == [[True, False, False], [True, True, False]]  # file 2 has no rows: never stopped here


def test_projected_runs_for_the_eta():
    rng = np.random.default_rng(4)
    design = sequential.make_design()
    base = np.vstack([lognormal(rng, 0.002, (1, 5)), lognormal(rng, 0.04, (2, 5))])
    head = np.vstack([lognormal(rng, 0.002, (1, 5)), lognormal(rng, 0.04, (2, 5))])
    result = stopping.decide_at_look(design, [stopping.look_statistics(design, base, head)])
    projected = stopping.projected_runs(design, result)
    assert result.settled[0] and projected[0] == 5
    assert (projected[1:] > 5).all() and (projected <= 60).all()
    assert set(projected.tolist()) <= set(design.looks)


def _live_loop(design, base, head):
    looks = ((base[..., :runs], head[..., :runs]) for runs in design.looks)
    replayed = stopping.replay(design, looks, np.zeros(1, dtype=np.int64), 1, with_mde=False)
    return replayed.result.decisions, np.asarray(design.looks)[replayed.stopped_after[:, 0]]


@pytest.mark.parametrize("sigma", [0.04, 0.08, 0.15])
def test_repeated_looks_do_not_inflate_the_missed_regression_rate(sigma):
    """A row truly regressed by exactly 10 % (the hardest case of 'at least 10 %'), one per report, through the live
    loop of --runs auto: called unchanged at most 1 - 95 % of the time wherever it stops, as at fixed runs (the
    unchanged risk is spent over the 17 looks). 1,500 reports: 5 % + 2 standard errors is 6.1 %. Strict (every row
    gated at 10 %) for all rows; by default for the rows whose stated resolution (gated_at) is at most 10 %, while
    a row gated coarser says so (a 10 % regression is under what it rules out)."""
    rng = np.random.default_rng(int(sigma * 1000))
    reports = 1500
    base = lognormal(rng, sigma, (reports, 1, 60))
    head = lognormal(rng, sigma, (reports, 1, 60), -0.1)
    strict, _ = _live_loop(sequential.make_design(max_resolution=None), base, head)
    missed_auto = float((strict.decision == decisions.UNCHANGED).mean())
    missed_fixed = float((candidates.decide(base[..., :30], head[..., :30]).decision == decisions.UNCHANGED).mean())
    assert missed_auto <= 0.061 and missed_fixed <= 0.061
    default, _ = _live_loop(sequential.make_design(), base, head)
    covered = default.gated_at[:, 0] <= 10
    assert (default.gated_at[~covered, 0] > 10).all() and default.coarse[~covered, 0].all()
    n = int(covered.sum())  # 5 % and two binomial standard errors of that many rows
    assert int((default.decision[covered, 0] == decisions.UNCHANGED).sum()) <= 0.05 * n + 2 * np.sqrt(0.0475 * n)
    assert (sigma < 0.1) == (covered.mean() > 0.5)  # quiet rows reach 10 % by 60 runs, a 15 % row cannot


def test_a_coarse_row_stops_once_it_reaches_its_resolution_and_a_head_cannot_make_it_coarser():
    """A/A at 20 % noise: 10 % is out of reach by 60 runs, so the row is gated at what its base's noise reaches
    (under 25 %); it stops as soon as it rules that out, well before max-runs, and passes. The same base with a
    head five times as noisy is gated exactly as coarsely as the calm head (only the base's samples decide it)."""
    rng = np.random.default_rng(41)
    reports = 300
    base = lognormal(rng, 0.2, (reports, 1, 60))
    head = lognormal(rng, 0.2, (reports, 1, 60))
    result, stopped_at = _live_loop(sequential.make_design(), base, head)
    assert result.coarse.mean() > 0.9 and (result.gated_at[result.coarse] <= 25).all()
    assert (result.decision == decisions.UNCHANGED).mean() > 0.95
    assert np.median(stopped_at) < 60 and stopped_at.mean() < 45
    strict, strict_stops = _live_loop(sequential.make_design(max_resolution=None), base, head)
    assert (strict.decision == decisions.INCONCLUSIVE).mean() > 0.2  # the rule before: many held undecided
    loud = np.exp(np.log(head) * 5)
    first = sequential.make_design()
    looks = [stopping.look_statistics(first, base[..., :5], h[..., :5]) for h in (head, loud)]
    calm, noisy = (stopping.decide_at_look(first, [look]).decisions for look in looks)
    np.testing.assert_array_equal(calm.gated_at, noisy.gated_at)
