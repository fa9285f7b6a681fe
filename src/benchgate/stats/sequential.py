"""``--runs auto``: the group-sequential design, alpha spending over planned looks, and its record.

Looks at planned run counts (``default_looks``: after every run from ``min_runs`` to
3 × ``min_runs``, then about 1.25 × apart up to ``max_runs``; 5..60 gives 17 looks). Each
row's two-sided level ``a`` (its Holm level, see ``decisions.holm_levels``) is spent on
*rejecting* over the looks by a Lan–DeMets spending function (Lan & DeMets 1983,
Biometrika 70:659; Pocock type ``f(t) = log(1 + (e - 1) t)``, Kim & DeMets 1987,
Biometrika 74:149; or O'Brien–Fleming type), ``t = runs / max_runs``: look k gets
``a × w_k`` with ``w_k = f(t_k) - f(t_(k-1))``. The boundaries are the Bonferroni bound
over looks rather than the recursive-integration ones (Jennison & Turnbull 2000, *Group
Sequential Methods*, ch. 7 and 19): ``P(reject at some look) <= sum_k a w_k = a`` holds
whatever the correlation between looks, so it needs no joint normality of the trimmed-mean
statistics, and at the gate's per-row levels (4.85 sigma for 0.001 / 400) the correlation
between looks would buy almost nothing.

The sequential p-value of a row, ``min_k p_k / w_k``, is a valid p-value under any
stopping rule, so Holm over the rows' sequential p-values controls the family-wise error
(the first Holm step is Bonferroni's ``alpha / m``, which decides the verdict); a rejected
row shows its repeated confidence interval (Jennison & Turnbull 1989, JRSS B 51:305).
Calling a row *unchanged* is no rejection: it is a non-binding futility stop, which cannot
raise the false-fail rate. Its own error, a missed regression, is a per-row risk: the one-sided
bound at ``unchanged_confidence`` (95 %) spends its risk ``1 - confidence`` over the looks by
its own spending function (``unchanged_spending``, O'Brien–Fleming type: most of it at the last
looks, where noisy rows are decided; quiet rows rule out 10 % at any level), so the chance of
calling a real regression of at least the floor (10 %) unchanged stays at most
``1 - confidence`` however many looks are taken and wherever the row stops
(``decisions.decide_looks``). A design recorded without ``unchanged_confidence`` (before it
existed) replays with the old rule, the row's whole level at each look. Which rows settle and
which files stop is ``benchgate.stats.stopping``.

``Design.to_json()`` goes into run.json, ``Design.from_json`` rebuilds and checks it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from benchgate.errors import InputError
from benchgate.stats import decisions
from benchgate.stats.defaults import (
    AUTO_MAX_RUNS,
    AUTO_MIN_RUNS,
    DEFAULT_MAX_RESOLUTION,
    DEFAULT_UNCHANGED_CONFIDENCE,
)
from benchgate.stats.paired import PAIRED_TEST

METHOD = "alpha-spending-bonferroni-looks"
SPENDING = ("pocock", "pocock-looks", "obrien-fleming")
MIN_RUNS, MAX_RUNS = AUTO_MIN_RUNS, AUTO_MAX_RUNS
DENSE_UNTIL, DENSE_MAX, LOOK_RATIO = 3, 10, 1.25  # a look after every run up to 3 x min-runs (10 runs at most), ...
DEFAULT_FUTILITY_VARIANCE = 0.5  # give up on a row only if half its variance could not decide it either
DEFAULT_SETTLE_ABOVE = 5.0  # percent: an unchanged row stops once it also rules out a regression this large...
DEFAULT_SETTLE_LEVEL = 0.001  # ...at this one-sided level (a guard for the power to find such regressions)
STOP_REASONS = ("decided", "hopeless", "max-runs")
DEFAULT_UNCHANGED_SPENDING = "obrien-fleming"  # the unchanged risk, mostly at the last looks (simulate_gate.py)


def default_looks(min_runs: int = MIN_RUNS, max_runs: int = MAX_RUNS) -> tuple[int, ...]:
    """A look after every run from ``min_runs`` to 3 × ``min_runs`` (10 more at most), then ~1.25 × apart.

    5..60: 5 6 7 8 9 10 11 12 13 14 15 19 23 29 37 46 60. Most quiet benchmarks (noise up to
    2 %) can first rule out a 10 % regression at the gate's level between 10 and 15 runs,
    once the trimmed test trims 2 samples a side, each at its own run count; a look after
    each of those runs stops every file at the first one it can (tests/perf/simulate_gate.py).
    Calling a row unchanged spends no false-fail level, so looks cost only a share of the
    rejection level each, and the bound on calling a real regression unchanged (looks × level).
    """
    if not (2 <= min_runs <= max_runs):
        raise ValueError(f"need 2 <= min_runs <= max_runs, not {min_runs}, {max_runs}")
    looks = list(range(min_runs, min(DENSE_UNTIL * min_runs, min_runs + DENSE_MAX, max_runs) + 1))
    value = float(looks[-1])
    while True:
        value *= LOOK_RATIO
        if round(value) * LOOK_RATIO * 0.9 > max_runs:  # the next one would be too close to max_runs
            break
        looks.append(int(round(value)))
    if looks[-1] != max_runs:
        looks.append(max_runs)
    return tuple(sorted(set(looks)))


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
    """The level's share spent at each look: increments of the spending function, summing to 1.

    Time is the information fraction ``runs / max_runs``, except for ``pocock-looks``:
    Pocock-type spending on the look index ``k / K`` (a calendar-type time scale, which
    Lan–DeMets spending allows), spending more at the early looks where most rows settle.
    """
    if spending == "pocock-looks":
        fractions = np.arange(1, len(looks) + 1, dtype=float) / len(looks)
        spending = "pocock"
    else:
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
    test: str = decisions.GATE_TEST
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
    max_resolution: float | None = None

    def unchanged_weights(self, confidence: float | None = None) -> tuple[float, ...]:
        """The share of the unchanged risk spent at each look, for ``confidence`` (default the design's)."""
        confidence = self.unchanged_confidence if confidence is None else confidence
        if confidence is None:  # the old rule spends no risk share: the row's whole level at each look
            return tuple(1.0 for _ in self.looks)
        return spending_weights(self.looks, self.unchanged_spending, 2 * (1 - confidence / 100))

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
            looks = tuple(int(v) for v in data["looks"])
            if any(not isinstance(v, int) or isinstance(v, bool) for v in data["looks"]):
                raise TypeError("looks must be integers")
            design = make_design(
                float(data["alpha"]),
                looks=looks,
                spending=str(data["spending"]),
                correction=str(data["correction"]),
                test=str(data["test"]),
                min_effect=float(data["min_effect"]),
                inconclusive_above=float(data["inconclusive_above"]),
                power=float(data["power"]),
                futility_variance=float(data["futility_variance"]),
                settle_above=float(data["settle_above"]),
                settle_level=float(data["settle_level"]),
                unchanged_confidence=_optional_percent(data.get("unchanged_confidence"), "unchanged_confidence"),
                unchanged_spending=str(data.get("unchanged_spending", DEFAULT_UNCHANGED_SPENDING)),
                max_resolution=_optional_percent(data.get("max_resolution"), "max_resolution"),
            )
            recorded = [float(w) for w in data["weights"]]
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f"malformed design: {error}", where=where) from None
        if len(recorded) != len(design.weights) or any(
            abs(a - b) > 1e-12 for a, b in zip(recorded, design.weights, strict=True)
        ):
            raise InputError("the recorded weights are not what its spending function gives", where=where)
        return design


def _optional_percent(value, name: str) -> float | None:
    """A recorded percent that designs recorded before it lack (None), else a number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {value!r}")
    return float(value)


def make_design(
    alpha: float = decisions.DEFAULT_ALPHA,
    *,
    min_runs: int = MIN_RUNS,
    max_runs: int = MAX_RUNS,
    looks: tuple[int, ...] | None = None,
    spending: str = "pocock",
    correction: str = "holm",
    test: str = decisions.GATE_TEST,
    min_effect: float = 0.0,
    inconclusive_above: float = decisions.DEFAULT_INCONCLUSIVE_ABOVE,
    power: float = decisions.DEFAULT_POWER,
    futility_variance: float = DEFAULT_FUTILITY_VARIANCE,
    settle_above: float = DEFAULT_SETTLE_ABOVE,
    settle_level: float = DEFAULT_SETTLE_LEVEL,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
    unchanged_spending: str = DEFAULT_UNCHANGED_SPENDING,
    max_resolution: float | None = DEFAULT_MAX_RESOLUTION,
) -> Design:
    """The design for ``--runs auto`` (``looks`` overrides the geometric default from min to max runs;
    ``max_resolution`` None: every row gated at its target, ``noisy: strict``)."""
    looks = tuple(looks) if looks is not None else default_looks(min_runs, max_runs)
    if not looks or looks[0] < 2 or any(b <= a for a, b in zip(looks, looks[1:], strict=False)):
        raise ValueError(f"looks must increase from at least 2 runs, not {looks}")
    if not (0 < alpha < 1) or test not in (*decisions.TESTS, PAIRED_TEST) or correction not in ("holm", "none"):
        raise ValueError("alpha in (0, 1), test one of decisions.TESTS or the paired test, correction holm or none")
    if not (0 < power < 1) or not (0 < futility_variance <= 1) or min_effect < 0 or inconclusive_above <= 0:
        raise ValueError("power in (0, 1), futility_variance in (0, 1], min_effect >= 0, inconclusive_above > 0")
    if settle_above <= 0 or not (0 < settle_level < 0.5):
        raise ValueError("settle_above must be positive and settle_level in (0, 0.5)")
    if unchanged_confidence is not None and not (50 <= unchanged_confidence < 100):
        raise ValueError(f"unchanged_confidence must be a percentage from 50 to under 100, not {unchanged_confidence}")
    if unchanged_spending not in SPENDING:
        raise ValueError(f"unchanged_spending must be one of {', '.join(SPENDING)}, not {unchanged_spending!r}")
    if max_resolution is not None and not (0 < max_resolution <= 1000):
        raise ValueError(f"max_resolution must be a percentage above 0, not {max_resolution!r}")
    weights = spending_weights(looks, spending, alpha)
    return Design(
        looks=looks,
        weights=weights,
        spending=spending,
        alpha=alpha,
        correction=correction,
        test=test,
        min_effect=min_effect,
        inconclusive_above=inconclusive_above,
        power=power,
        futility_variance=futility_variance,
        settle_above=settle_above,
        settle_level=settle_level,
        unchanged_confidence=unchanged_confidence,
        unchanged_spending=unchanged_spending,
        max_resolution=max_resolution,
    )


def fixed_design(runs: int, **options) -> Design:
    """A fixed-runs analysis as a design: one look at ``runs``, the whole level spent there."""
    return make_design(looks=(runs,), **options)


def next_look(design: Design, runs_done: int) -> int | None:
    """The run count of the next look at or after ``runs_done`` runs (None past the last)."""
    for look in design.looks:
        if look >= runs_done:
            return look
    return None
