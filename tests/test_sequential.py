"""The --runs auto design (benchgate.stats.sequential): weights, JSON round trip, stopping and its error control."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchgate.errors import InputError
from benchgate.stats import decisions, sequential


def test_default_looks_and_weights():
    design = sequential.make_design()
    assert design.looks == (5, 7, 10, 15, 21, 29, 42, 60)
    assert sum(design.weights) == pytest.approx(1.0, abs=1e-12)
    assert all(w > 0 for w in design.weights)
    assert sequential.make_design(spending="obrien-fleming").weights[0] < 1e-20  # spends nothing early
    assert sequential.fixed_design(30).weights == (1.0,)
    assert sequential.next_look(design, 11) == 15 and sequential.next_look(design, 61) is None


def test_design_json_round_trip_is_exact_and_checked():
    design = sequential.make_design(0.01, min_runs=4, max_runs=40, spending="pocock-looks", min_effect=2.0)
    text = json.dumps(design.to_json())
    again = sequential.Design.from_json(json.loads(text))
    assert again == design and again.to_json() == design.to_json()
    tampered = json.loads(text)
    tampered["weights"][0] += 1e-6
    with pytest.raises(InputError, match="weights"):
        sequential.Design.from_json(tampered)
    with pytest.raises(InputError):
        sequential.Design.from_json({**json.loads(text), "looks": "5,10"})
    with pytest.raises(InputError, match="unknown design"):
        sequential.Design.from_json({**json.loads(text), "version": 2})


def lognormal(rng, sigma, shape, change=0.0):
    return np.exp(np.log1p(change) + sigma * rng.standard_normal(shape))


def run(design, base, head, file_of_row, files):
    """The live loop, as the session will run it: a look, then stop the files whose rows are all settled."""
    stopped = np.full(files, -1)
    history, cache, looks_seen = [], {}, []
    result = None
    for k, runs in enumerate(design.looks):
        active = stopped[file_of_row] < 0
        looks_seen.append((base[:, :runs].copy(), head[:, :runs].copy()))
        history.append(sequential.look_statistics(design, base[:, :runs], head[:, :runs], active))
        result = sequential.decide_at_look(design, history, cache=cache)
        stop = sequential.files_to_stop(file_of_row, result.settled | ~active, files) & (stopped < 0)
        stopped[stop] = k
        if (stopped >= 0).all():
            break
    return result, stopped, looks_seen


def test_quiet_unchanged_files_stop_early_and_a_regression_is_found():
    rng = np.random.default_rng(1)
    design = sequential.make_design()
    file_of_row = np.repeat(np.arange(4), 5)
    base = lognormal(rng, 0.01, (20, 60))
    head = lognormal(rng, 0.01, (20, 60))
    head[7] *= 0.9  # file 1 regresses by 10 %
    result, stopped, _ = run(design, base, head, file_of_row, 4)
    names = result.decisions.names
    assert names[7] == "regression" and set(np.delete(names, 7)) == {"unchanged"}
    assert (np.asarray(design.looks)[stopped] <= 21).all()  # far fewer than 60 runs


def test_replay_reaches_the_live_runs_decisions_and_stops():
    rng = np.random.default_rng(2)
    design = sequential.make_design()
    file_of_row = np.repeat(np.arange(3), 4)
    sigmas = np.repeat([0.005, 0.05, 0.3], 4)[:, None]
    base = np.exp(sigmas * rng.standard_normal((12, 60)))
    head = np.exp(sigmas * rng.standard_normal((12, 60)))
    live, stopped, looks_seen = run(design, base, head, file_of_row, 3)
    replayed = sequential.replay(
        sequential.Design.from_json(json.loads(json.dumps(design.to_json()))), looks_seen, file_of_row, 3
    )
    assert replayed.stopped_after.tolist() == stopped.tolist()
    assert replayed.result.decisions.names.tolist() == live.decisions.names.tolist()
    np.testing.assert_array_equal(replayed.result.decisions.ci_low, live.decisions.ci_low)
    assert replayed.reasons[0] == "decided" and replayed.reasons[2] in ("hopeless", "max-runs")
    # a resumed run that has seen only the first looks replays the same prefix
    prefix = sequential.replay(design, looks_seen[:2], file_of_row, 3)
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
    stopped = np.full((reports, 5), -1)
    history, cache = [], {}
    result = None
    for k, runs in enumerate(design.looks):
        active = stopped[:, file_of_row] < 0
        history.append(sequential.look_statistics(design, base[..., :runs], head[..., :runs], active))
        result = sequential.decide_at_look(design, history, cache=cache, with_mde=False)
        stop = sequential.files_to_stop(file_of_row, result.settled | ~active, 5) & (stopped < 0)
        stopped[stop] = k
    fails = int((decisions.verdicts(result.decisions.decision) == 1).sum())
    assert fails <= 3 * 0.05 / 2 * reports


def test_files_to_stop_per_report():
    settled = np.array([[True, True, False, True], [True, True, True, True]])
    stop = sequential.files_to_stop(np.array([0, 0, 1, 1]), settled, 3)
    assert stop.tolist() == [[True, False, False], [True, True, False]]  # file 2 has no rows: never stopped here


def test_projected_runs_for_the_eta():
    rng = np.random.default_rng(4)
    design = sequential.make_design()
    base, head = lognormal(rng, 0.04, (3, 5)), lognormal(rng, 0.04, (3, 5))
    history = [sequential.look_statistics(design, base, head)]
    result = sequential.decide_at_look(design, history)
    projected = sequential.projected_runs(design, result, history)
    assert ((projected >= 5) & (projected <= 60)).all()
