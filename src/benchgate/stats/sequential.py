"""``--runs auto``: a group-sequential design with alpha spending over planned looks.

Method. Looks at planned run counts (default 5, 7, 10, 15, 21, 30, 42, 60: geometric
from ``min_runs`` to ``max_runs``). Each row's two-sided level ``a`` (its Holm level, see
``decisions.holm_levels``) is spent over the looks by a Lan–DeMets spending function
(Lan & DeMets 1983, Biometrika 70:659; Pocock type ``f(t) = log(1 + (e - 1) t)``, Kim &
DeMets 1987, Biometrika 74:149; or O'Brien–Fleming type), ``t = runs / max_runs``: look k
gets ``a × w_k`` with ``w_k = f(t_k) - f(t_(k-1))``. The boundaries are the Bonferroni
bound over looks rather than the recursive-integration ones (Jennison & Turnbull 2000,
*Group Sequential Methods*, ch. 7 and 19): ``P(reject at some look) <= sum_k a w_k = a``
holds whatever the correlation between looks, so it needs no joint normality of the
trimmed-mean statistics and is exact at the tiny per-row levels the gate uses (4.85
sigma for 0.001 / 400), where the correlation between looks buys almost nothing.

The sequential p-value of a row, ``min_k p_k / w_k``, is a valid p-value under any
stopping rule, so Holm over the rows' sequential p-values controls the family-wise error
(the first Holm step is Bonferroni's ``alpha / m``, which decides the verdict). Each
look's interval at level ``a w_k`` is a repeated confidence interval (Jennison & Turnbull
1989, JRSS B 51:305); they hold simultaneously with probability ``1 - a``, so the row's
interval is their running intersection and a row may be called ``unchanged`` at any look.

Stopping: after each look, a benchmark file stops when every row of it is settled:
regression, improvement, constant or incomplete; unchanged with an interval that also rules
out a regression of ``settle_above`` (default 5 %; min-effect when one is set), or unchanged
and unable to get there by ``max_runs``; inconclusive and hopeless (it could not be decided
by ``max_runs``: it ends ``inconclusive``, never a pass). Projections assume the estimate
stays and the variance shrinks to ``futility_variance`` × the current (robust) one, so a
noisy start does not give a row up too early. At ``max_runs`` everything stops. The
settle floor is stricter than the decision's (``inconclusive_above``, 10 %) so that a 5 %
regression is not stopped early as "unchanged" (the power target at 1 % noise).

``Design.to_json()`` goes into run.json, ``Design.from_json`` rebuilds and checks it, and
``replay`` recomputes every look and stop from the samples each look saw (resume, report).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
from scipy import special

from benchgate.errors import InputError
from benchgate.stats import decisions

METHOD = "alpha-spending-bonferroni-looks"
SPENDING = ("pocock", "pocock-looks", "obrien-fleming")
MIN_RUNS, MAX_RUNS, LOOK_RATIO = 5, 60, 1.5
DEFAULT_FUTILITY_VARIANCE = 0.5
DEFAULT_SETTLE_ABOVE = 7.5  # percent: an unchanged row stops once it also rules out a regression this large
STOP_REASONS = ("decided", "hopeless", "max-runs")


def default_looks(min_runs: int = MIN_RUNS, max_runs: int = MAX_RUNS, ratio: float = LOOK_RATIO) -> tuple[int, ...]:
    """Geometric looks from ``min_runs`` to ``max_runs``, about ``ratio`` apart (5..60: 5 7 10 15 21 30 42 60)."""
    if not (2 <= min_runs <= max_runs):
        raise ValueError(f"need 2 <= min_runs <= max_runs, not {min_runs}, {max_runs}")
    if min_runs == max_runs:
        return (max_runs,)
    count = math.ceil(math.log(max_runs / min_runs) / math.log(ratio)) + 1
    looks = sorted({int(round(v)) for v in np.geomspace(min_runs, max_runs, count)})
    return tuple(looks)


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
    method: str = METHOD
    version: int = 1

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
        if data.get("method") != METHOD or data.get("version") != 1:
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
            )
            recorded = [float(w) for w in data["weights"]]
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f"malformed design: {error}", where=where) from None
        if len(recorded) != len(design.weights) or any(
            abs(a - b) > 1e-12 for a, b in zip(recorded, design.weights, strict=True)
        ):
            raise InputError("the recorded weights are not what its spending function gives", where=where)
        return design


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
) -> Design:
    """The design for ``--runs auto`` (``looks`` overrides the geometric default from min to max runs)."""
    looks = tuple(looks) if looks is not None else default_looks(min_runs, max_runs)
    if not looks or looks[0] < 2 or any(b <= a for a, b in zip(looks, looks[1:], strict=False)):
        raise ValueError(f"looks must increase from at least 2 runs, not {looks}")
    if not (0 < alpha < 1) or test not in decisions.TESTS or correction not in ("holm", "none"):
        raise ValueError("alpha must be in (0, 1), test one of decisions.TESTS, correction holm or none")
    if not (0 < power < 1) or not (0 < futility_variance <= 1) or min_effect < 0 or inconclusive_above <= 0:
        raise ValueError("power in (0, 1), futility_variance in (0, 1], min_effect >= 0, inconclusive_above > 0")
    if settle_above <= 0:
        raise ValueError("settle_above must be positive")
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


def look_statistics(design: Design, base: np.ndarray, head: np.ndarray, active: np.ndarray | None = None):
    """The design's test on the samples one look saw; rows not ``active`` (their file had stopped) sit it out.

    ``base``/``head``: NaN-padded rates ``(..., rows, n)``. Rows that sit out get no
    samples (n = 0, NaN statistics), which ``decisions.decide_looks`` skips.
    """
    base = np.asarray(base, dtype=float)
    head = np.asarray(head, dtype=float)
    if active is None:
        return decisions.gate_statistics(base, head, design.test)
    active = np.asarray(active, dtype=bool)
    shape = active.shape
    picked = decisions.gate_statistics(base[active], head[active], design.test)
    return _scatter(picked, active, shape)


def _scatter(st: decisions.Stats, rows: np.ndarray, shape: tuple[int, ...]) -> decisions.Stats:
    """The inverse of ``decisions.subset``: rows not picked get no samples."""
    values = {}
    for name, fill, kind in (
        ("delta", np.nan, float), ("se", np.nan, float), ("df", np.nan, float), ("n_base", 0, np.int64),
        ("n_head", 0, np.int64), ("scale_base", np.nan, float), ("var_base", np.nan, float),
        ("var_head", np.nan, float), ("constant", False, bool),
    ):  # fmt: skip
        full = np.full(shape, fill, dtype=kind)
        full[rows] = getattr(st, name)
        values[name] = full
    companion = None if st.companion is None else _scatter(st.companion, rows, shape)
    return decisions.Stats(test=st.test, companion=companion, **values)


@dataclass(frozen=True)
class LookResult:
    """What one look concludes: the rows' decisions so far and which rows are settled."""

    look: int  # index into design.looks
    decisions: decisions.Decisions
    hopeless: np.ndarray  # inconclusive rows that could not be decided by max_runs
    settled: np.ndarray  # decided, incomplete, constant or hopeless


def decide_at_look(
    design: Design,
    history: list[decisions.Stats],
    *,
    alpha: np.ndarray | float | None = None,
    min_effect: np.ndarray | float | None = None,
    cache: dict | None = None,
    with_mde: bool = True,
) -> LookResult:
    """Decisions after look ``len(history) - 1`` from the statistics of every look so far.

    ``alpha``/``min_effect`` override the design's per row (per-benchmark rules). Settled
    rows: every row at the last planned look; before, rows ``decisions.Decisions.settled``
    or hopeless.
    """
    k = len(history) - 1
    if not (0 <= k < len(design.looks)):
        raise ValueError(f"the design has {len(design.looks)} looks, not {len(history)}")
    alpha = design.alpha if alpha is None else alpha
    min_effect = design.min_effect if min_effect is None else min_effect
    result = decisions.decide_looks(
        history,
        design.weights[: k + 1],
        alpha,
        correction=design.correction,
        min_effect=min_effect,
        inconclusive_above=design.inconclusive_above,
        power=design.power,
        cache=cache,
        with_mde=with_mde,
    )
    dec = result.decision
    min_effect = np.broadcast_to(np.asarray(min_effect, dtype=float), dec.shape)
    floor = np.where(min_effect > 0, min_effect, design.inconclusive_above)
    settle = np.where(min_effect > 0, min_effect, min(design.inconclusive_above, design.settle_above))
    with np.errstate(invalid="ignore"):
        firm = (dec != decisions.UNCHANGED) & (dec != decisions.INCONCLUSIVE) | (
            (dec == decisions.UNCHANGED) & (result.ci_low > -settle)
        )
    soft = (dec == decisions.UNCHANGED) & ~firm
    undecided = dec == decisions.INCONCLUSIVE
    if k == len(design.looks) - 1:
        return LookResult(k, result, undecided, np.ones(dec.shape, dtype=bool))
    current = _scaled(history[k], design.futility_variance)
    remaining = np.asarray(design.looks[k + 1 :], dtype=float)
    weights = np.asarray(design.weights[k + 1 :])
    # Could more runs make a soft unchanged row firm, or decide an inconclusive one? If not, it stops.
    to_firm = decisions.runs_needed(
        current, result.level, min_effect, settle, candidates=remaining, levels=weights, rows=soft
    )
    to_decide = decisions.runs_needed(
        current, result.level, min_effect, floor, candidates=remaining, levels=weights, rows=undecided
    )
    hopeless = undecided & np.isnan(to_decide)
    return LookResult(k, result, hopeless, firm | (soft & np.isnan(to_firm)) | hopeless)


def _scaled(st: decisions.Stats, factor: float) -> decisions.Stats:
    companion = None if st.companion is None else _scaled(st.companion, factor)
    return replace(st, var_base=st.var_base * factor, var_head=st.var_head * factor, companion=companion)


def files_to_stop(file_of_row: np.ndarray, settled: np.ndarray, files: int) -> np.ndarray:
    """Per file (last axis, ``files`` long): True when every row of that file is settled.

    ``file_of_row`` gives each row's file index (``(..., rows)``, like ``settled``); a
    file with no rows is not stopped here (it ran nothing to decide).
    """
    file_of_row = np.asarray(file_of_row, dtype=np.int64)
    settled = np.broadcast_to(np.asarray(settled, dtype=bool), np.broadcast_shapes(file_of_row.shape, settled.shape))
    file_of_row = np.broadcast_to(file_of_row, settled.shape)
    lead = int(np.prod(settled.shape[:-1], dtype=np.int64))
    offsets = (np.arange(lead, dtype=np.int64) * files)[:, None]
    codes = (file_of_row.reshape(lead, -1) + offsets).ravel()
    open_rows = np.bincount(codes, weights=(~settled).reshape(-1).astype(float), minlength=lead * files)
    rows = np.bincount(codes, minlength=lead * files)
    return ((open_rows == 0) & (rows > 0)).reshape(*settled.shape[:-1], files)


@dataclass(frozen=True)
class Replay:
    """Every look of a run recomputed: the final decisions and, per file, the look it stopped after."""

    result: LookResult  # the last look any row took part in
    stopped_after: np.ndarray  # per file: index of the look after which it stopped (-1: still running)
    reasons: list[str]  # per file: STOP_REASONS entry, or "" while it runs


def replay(design: Design, looks: list[tuple[np.ndarray, np.ndarray]], file_of_row: np.ndarray, files: int) -> Replay:
    """Recompute a (possibly unfinished) run from the samples each look saw, for one report.

    ``looks[k]`` holds the NaN-padded base and head rates (``(rows, n)``) as they stood
    when look k was taken (the live run records where, e.g. results.csv's size); only the
    looks taken so far are given. A file's rows take part in a look until the file
    stops, so the live run, a resumed run and ``benchgate report`` agree.
    """
    file_of_row = np.asarray(file_of_row, dtype=np.int64)
    stopped_after = np.full(files, -1, dtype=np.int64)
    reasons = [""] * files
    history: list[decisions.Stats] = []
    result = None
    for k, (base, head) in enumerate(looks):
        active = stopped_after[file_of_row] < 0
        history.append(look_statistics(design, base, head, active))
        result = decide_at_look(design, history)
        stopping = files_to_stop(file_of_row, result.settled | ~active, files) & (stopped_after < 0)
        for file in np.flatnonzero(stopping):
            rows = file_of_row == file
            if k == len(design.looks) - 1:
                reasons[file] = "max-runs"
            elif bool(result.hopeless[rows].any()):
                reasons[file] = "hopeless"
            else:
                reasons[file] = "decided"
        stopped_after[stopping] = k
    if result is None:
        raise ValueError("no look taken yet")
    return Replay(result, stopped_after, reasons)


def projected_runs(design: Design, result: LookResult, history: list[decisions.Stats]) -> np.ndarray:
    """Per row, the run count at which it is expected to settle (for the progress ETA).

    Settled rows: the current look's runs. Others: the first remaining look at which
    ``decisions.runs_needed`` (current estimate and variance) decides them, else max_runs.
    """
    k = result.look
    current = design.looks[k]
    if k == len(design.looks) - 1:
        return np.full(result.settled.shape, float(current))
    needed = decisions.runs_needed(
        history[k],
        result.decisions.level,
        design.min_effect,
        design.inconclusive_above,
        candidates=np.asarray(design.looks[k + 1 :], dtype=float),
        levels=np.asarray(design.weights[k + 1 :]),
    )
    needed = np.where(np.isnan(needed), float(design.max_runs), needed)
    return np.where(result.settled, float(current), needed)
