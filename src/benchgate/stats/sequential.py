"""``--runs auto``: the group-sequential design, alpha spending over planned looks, and its run.json record.
Look k spends ``a × w_k`` of a row's level (Lan–DeMets, Bonferroni over the looks; docs/statistics.md)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

import numpy as np
from scipy import special

from benchgate.errors import InputError
from benchgate.stats import decisions
from benchgate.stats.defaults import AUTO_MAX_RUNS, AUTO_MIN_RUNS, DEFAULT_MAX_RESOLUTION, DEFAULT_UNCHANGED_CONFIDENCE
from benchgate.stats.paired import PAIRED_TEST
from benchgate.stats.yuenwelch import GATE_TEST, TESTS

METHOD = "alpha-spending-bonferroni-looks"
SPENDING = ("pocock", "obrien-fleming")
MIN_RUNS, MAX_RUNS = AUTO_MIN_RUNS, AUTO_MAX_RUNS
DENSE_UNTIL, DENSE_MAX, LOOK_RATIO = 3, 10, 1.25  # a look after every run up to 3 x min-runs (10 runs at most), ...
DEFAULT_FUTILITY_VARIANCE = 0.5  # give up on a row only if half its variance could not decide it either
DEFAULT_SETTLE_ABOVE = 5.0  # percent: an unchanged row stops once it also rules out a regression this large...
DEFAULT_SETTLE_LEVEL = 0.001  # ...at this one-sided level (a guard for the power to find such regressions)
DEFAULT_UNCHANGED_SPENDING = "obrien-fleming"  # the unchanged risk, mostly at the last looks (simulate_gate.py)


def default_looks(min_runs: int = MIN_RUNS, max_runs: int = MAX_RUNS) -> tuple[int, ...]:
    """A look after every run from ``min_runs`` to 3 × ``min_runs`` (10 more at most), then ~1.25 × apart.
    Quiet benchmarks first rule out 10 % between 10 and 15 runs, each at its own (tests/perf/simulate_gate.py)."""
    if not (2 <= min_runs <= max_runs):
        raise ValueError(f"need 2 <= min_runs <= max_runs, not {min_runs}, {max_runs}")
    looks = list(range(min_runs, min(DENSE_UNTIL * min_runs, min_runs + DENSE_MAX, max_runs) + 1))
    value = float(looks[-1])
    while round(value * LOOK_RATIO) * LOOK_RATIO * 0.9 <= max_runs:  # else the next is too close to max_runs
        value *= LOOK_RATIO
        looks.append(int(round(value)))
    return tuple(sorted({*looks, max_runs}))


def spending_fraction(t: np.ndarray, spending: str, alpha: float) -> np.ndarray:
    """Share of the level spent by information fraction ``t`` (0 at 0, 1 at 1)."""
    t = np.asarray(t, dtype=float)
    if spending == "pocock":
        return np.log1p((math.e - 1) * t)
    if spending == "obrien-fleming":
        z = -special.ndtri(alpha / 2)
        with np.errstate(divide="ignore"):
            return np.where(t > 0, 2 * special.ndtr(-z / np.sqrt(t)) / alpha, 0.0)
    raise ValueError(f"spending must be one of {', '.join(SPENDING)}, not {spending!r}")


def spending_weights(looks: tuple[int, ...], spending: str, alpha: float) -> tuple[float, ...]:
    """The level's share at each look (summing to 1), by the runs' information fraction."""
    fractions = np.asarray(looks, dtype=float) / looks[-1]
    spent = spending_fraction(np.concatenate(([0.0], fractions)), spending, alpha)
    return tuple(float(w) for w in np.diff(spent))


@dataclass(frozen=True)
class Design:
    """The adaptive plan, as run.json records it."""

    looks: tuple[int, ...]
    weights: tuple[float, ...]
    spending: str = "pocock"
    alpha: float = decisions.DEFAULT_ALPHA
    correction: str = "holm"
    test: str = GATE_TEST
    min_effect: float = 0.0
    inconclusive_above: float = decisions.DEFAULT_INCONCLUSIVE_ABOVE
    power: float = decisions.DEFAULT_POWER
    futility_variance: float = DEFAULT_FUTILITY_VARIANCE
    settle_above: float = DEFAULT_SETTLE_ABOVE
    settle_level: float = DEFAULT_SETTLE_LEVEL
    method: str = METHOD
    version: int = 2
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE  # percent; None: recorded before it
    unchanged_spending: str = DEFAULT_UNCHANGED_SPENDING
    # percent: the coarsest resolution a row that cannot reach its target is gated at (None: strict, and
    # designs recorded before it; benchgate.stats.resolution)
    max_resolution: float | None = DEFAULT_MAX_RESOLUTION

    def unchanged_weights(self) -> tuple[float, ...]:
        """The share of the unchanged risk spent at each look."""
        if self.unchanged_confidence is None:  # the old rule spends no risk share: the row's whole level at each look
            return tuple(1.0 for _ in self.looks)
        return spending_weights(self.looks, self.unchanged_spending, 2 * (1 - self.unchanged_confidence / 100))

    @property
    def min_runs(self) -> int:
        return self.looks[0]

    @property
    def max_runs(self) -> int:
        return self.looks[-1]

    def to_json(self) -> dict:
        data = asdict(self)
        data.update(looks=list(self.looks), weights=list(self.weights))
        return data

    @classmethod
    def from_json(cls, data: dict, where: str = "run.json design") -> Design:
        """Rebuild a recorded design; refuses one whose weights its spending function does not give."""
        if not isinstance(data, dict):
            raise InputError("not an object", where=where)
        if data.get("method") != METHOD or data.get("version") != 2:
            raise InputError(f"unknown design {data.get('method')!r} version {data.get('version')!r}", where=where)
        try:
            if any(not isinstance(v, int) or isinstance(v, bool) for v in data["looks"]):
                raise TypeError("looks must be integers")
            names = [item for item in fields(cls)[2:] if item.name not in ("method", "version")]
            options = {item.name: _recorded(item, data) for item in names}  # looks and weights: below
            design = make_design(looks=tuple(data["looks"]), **options)
            recorded = [float(w) for w in data["weights"]]
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f"malformed design: {error}", where=where) from None
        if len(recorded) != len(design.weights) or not np.allclose(recorded, design.weights, rtol=0, atol=1e-12):
            raise InputError("the recorded weights are not what its spending function gives", where=where)
        return design


# The fields designs recorded before them lack, and what such a design replays with.
RECORDED_LATER = dict(unchanged_confidence=None, unchanged_spending=DEFAULT_UNCHANGED_SPENDING, max_resolution=None)


def _recorded(item, data: dict):
    """One recorded field of ``Design`` (``item``), its type checked (one recorded later may be absent)."""
    value = data.get(item.name, RECORDED_LATER[item.name]) if item.name in RECORDED_LATER else data[item.name]
    if item.type in ("str", "float"):
        return str(value) if item.type == "str" else float(value)
    if value is None:  # a percent recorded later
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{item.name} must be a number, not {value!r}")
    return float(value)


def make_design(
    alpha: float = decisions.DEFAULT_ALPHA,
    *,
    min_runs: int = MIN_RUNS,
    max_runs: int = MAX_RUNS,
    looks: tuple[int, ...] | None = None,
    spending: str = "pocock",
    **options,
) -> Design:
    """The design for ``--runs auto``, checked (``looks`` default: ``default_looks(min_runs, max_runs)``)."""
    looks = tuple(looks) if looks is not None else default_looks(min_runs, max_runs)
    if not looks or looks[0] < 2 or any(b <= a for a, b in zip(looks, looks[1:], strict=False)):
        raise ValueError(f"looks must increase from at least 2 runs, not {looks}")
    draft = Design(looks, (), spending, alpha, **options)
    if not (0 < alpha < 1) or draft.test not in (*TESTS, PAIRED_TEST) or draft.correction not in ("holm", "none"):
        raise ValueError("alpha in (0, 1), test one of yuenwelch.TESTS or the paired test, correction holm or none")
    if (
        not (0 < draft.power < 1)
        or not (0 < draft.futility_variance <= 1)
        or draft.min_effect < 0
        or draft.inconclusive_above <= 0
    ):
        raise ValueError("power in (0, 1), futility_variance in (0, 1], min_effect >= 0, inconclusive_above > 0")
    if draft.settle_above <= 0 or not (0 < draft.settle_level < 0.5):
        raise ValueError("settle_above must be positive and settle_level in (0, 0.5)")
    confidence = draft.unchanged_confidence
    if confidence is not None and not (50 <= confidence < 100):
        raise ValueError(f"unchanged_confidence must be a percentage from 50 to under 100, not {confidence}")
    if draft.unchanged_spending not in SPENDING:
        raise ValueError(f"unchanged_spending must be one of {', '.join(SPENDING)}, not {draft.unchanged_spending!r}")
    if draft.max_resolution is not None and not (0 < draft.max_resolution <= 1000):
        raise ValueError(f"max_resolution must be a percentage above 0, not {draft.max_resolution!r}")
    return replace(draft, weights=spending_weights(looks, spending, alpha))
