"""The --runs auto design (benchgate.stats.sequential): looks, weights and the JSON record."""

from __future__ import annotations

import json

import pytest

from benchgate.errors import InputError
from benchgate.stats import sequential


def test_default_looks_and_weights():
    design = sequential.make_design()
    assert design.looks == (5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 19, 23, 29, 37, 46, 60)
    assert sum(design.weights) == pytest.approx(1.0, abs=1e-12)
    assert all(w > 0 for w in design.weights)
    assert sequential.make_design(spending="obrien-fleming").weights[0] < 1e-20  # spends nothing early
    assert sequential.make_design(looks=(30,)).weights == (1.0,)
    assert next(look for look in design.looks if look >= 16) == 19 and max(design.looks) < 61  # the next look


@pytest.mark.parametrize("low,high", [(2, 10), (5, 60), (10, 30), (3, 100), (300, 1000), (7, 7)])
def test_default_looks_span_min_to_max_densely_then_geometrically(low, high):
    looks = sequential.default_looks(low, high)
    assert looks[0] == low and looks[-1] == high
    assert list(looks) == sorted(set(looks))
    dense = [look for look in looks if look <= min(3 * low, low + 10)]
    assert dense == list(range(low, dense[-1] + 1))  # a look after every run first
    ratios = [b / a for a, b in zip(looks[len(dense) - 1 :], looks[len(dense) :], strict=False)]
    assert all(1.1 < ratio < 1.6 for ratio in ratios)
    with pytest.raises(ValueError):
        sequential.default_looks(1, 10)


def test_design_json_round_trip_is_exact_and_checked():
    design = sequential.make_design(0.01, min_runs=4, max_runs=40, spending="obrien-fleming", min_effect=2.0)
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
        sequential.Design.from_json({**json.loads(text), "version": 1})  # the first design's records
    with pytest.raises(InputError, match="malformed"):
        sequential.Design.from_json({**json.loads(text), "settle_level": 0.7})


def test_a_design_recorded_before_unchanged_had_its_own_confidence_replays_with_the_old_rule():
    """run.json designs without unchanged_confidence (recorded before issue 17) decide unchanged as they did:
    the two-sided interval at the row's whole level, at every look; new designs record 95 and its spending."""
    import numpy as np
    from synthetic import lognormal

    from benchgate.stats import decisions, stopping

    design = sequential.make_design(looks=(10, 30))
    data = design.to_json()
    assert (data["unchanged_confidence"], data["unchanged_spending"]) == (95.0, "obrien-fleming")
    recorded_later = ("unchanged_confidence", "unchanged_spending", "max_resolution")
    old = {key: value for key, value in data.items() if key not in recorded_later}
    legacy = sequential.Design.from_json(old)
    assert legacy.unchanged_confidence is None and legacy.unchanged_weights() == (1.0,) * len(legacy.looks)
    with pytest.raises(InputError, match="unchanged_confidence must be a number"):
        sequential.Design.from_json({**data, "unchanged_confidence": "95"})
    rng = np.random.default_rng(3)
    base, head = lognormal(rng, 0.05, (400, 10)), lognormal(rng, 0.05, (400, 10))
    history = [stopping.look_statistics(legacy, base, head)]
    result = stopping.decide_at_look(legacy, history).decisions
    floor_ruled_out = result.fixed_low > -10
    assert (result.names[floor_ruled_out] == "unchanged").all() and not result.rejected.any()
    assert ((result.names == "unchanged") == floor_ruled_out).all()
    assert (stopping.decide_at_look(design, history).decisions.names == "unchanged").sum() > floor_ruled_out.sum()
    assert list(decisions.DECISIONS).index("unchanged") == decisions.UNCHANGED


def test_a_design_records_its_max_resolution_and_one_recorded_before_it_replays_strict():
    design = sequential.make_design(looks=(10, 30))
    assert design.max_resolution == 25.0 and design.to_json()["max_resolution"] == 25.0
    assert sequential.Design.from_json(design.to_json()) == design
    old = {key: value for key, value in design.to_json().items() if key != "max_resolution"}
    assert sequential.Design.from_json(old).max_resolution is None
    assert sequential.make_design(max_resolution=None).max_resolution is None
    with pytest.raises(InputError, match="max_resolution must be a number"):
        sequential.Design.from_json({**design.to_json(), "max_resolution": "25%"})
    with pytest.raises(ValueError, match="max_resolution"):
        sequential.make_design(max_resolution=0)


def test_run_records_the_unchanged_confidence_it_stops_by():
    from benchgate.run import adaptive

    design = adaptive.design_for("auto", None, None, unchanged_confidence=99.0)
    assert design is not None and design.to_json()["unchanged_confidence"] == 99.0
    assert sequential.Design.from_json(design.to_json()) == design
    assert adaptive.design_for("auto", None, None).unchanged_confidence == 95.0
    with pytest.raises(ValueError, match="unchanged_confidence must be a percentage"):
        adaptive.design_for("auto", None, None, unchanged_confidence=100.0)
