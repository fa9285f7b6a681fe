"""The looks of an adaptive run (``--runs auto``): which rows are settled, which units stop, the replay.
A unit (a row, or a file run whole) stops once all its rows are decided, *calm* or *futile* (docs/statistics.md);
``replay`` recomputes a recorded run, so that the live run, ``--resume`` and reports agree."""

from dataclasses import dataclass, replace

import numpy as np

from benchgate.stats import decisions, paired
from benchgate.stats.resolution import Coarsening
from benchgate.stats.sequential import Design
from benchgate.stats.yuenwelch import Stats, combine, first_runs, subset, unchanged_level

_FIRM = (decisions.REGRESSION, decisions.IMPROVEMENT, decisions.CONSTANT, decisions.INCOMPLETE)


def look_statistics(
    design: Design, base: np.ndarray, head: np.ndarray, active: np.ndarray | None = None, pairs: tuple | None = None
) -> Stats:
    """The design's test on the samples one look saw (rows not ``active`` sit it out: no samples); a duet design
    takes ``pairs``: the paired rates and CPU-set assignments (``adaptivetable.pair_arrays``)."""
    base, head = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    # Only the active rows are tested (most rows of a simulated report stop early); the others get no samples.
    active = np.ones(base.shape[:-1], dtype=bool) if active is None else np.asarray(active, dtype=bool)
    picked_pairs = None if pairs is None else tuple(np.asarray(part)[active] for part in pairs)
    picked = paired.test_statistics(design.test, base[active], head[active], picked_pairs)

    def spread(values: np.ndarray) -> np.ndarray:  # the inverse of ``subset``
        full = np.full(active.shape, {"b": False, "i": 0}.get(values.dtype.kind, np.nan), dtype=values.dtype)
        full[active] = values
        return full

    return combine(spread, picked)


@dataclass(frozen=True)
class LookResult:
    """What one look concludes: the rows' decisions so far and which rows need no more runs."""

    look: int  # index into design.looks
    decisions: decisions.Decisions
    hopeless: np.ndarray  # inconclusive rows that stop: they could not be decided by max_runs
    settled: np.ndarray  # decided, calm, futile (hopeless included); every row at the last look


def _calm(design: Design, result: decisions.Decisions, unchanged: np.ndarray, guarded: np.ndarray) -> np.ndarray:
    """Unchanged rows that may stop: all with a min-effect or gated coarse, else only the guarded-safe ones."""
    guarded = guarded & ~result.coarse
    calm = unchanged & ~guarded
    candidates = unchanged & guarded & (result.fixed_low <= 0) & (result.fixed_high >= 0)
    # Both ways: a row that may still be a 5 % improvement keeps running until that is rejected too (an
    # improvement found is what the table is for); a design recorded before keeps its one-sided guard.
    low, high = subset(result.current, candidates).interval(2 * design.settle_level)
    legacy, effect = design.unchanged_confidence is None, min(design.settle_above, design.inconclusive_above)
    calm[candidates] = (low > -effect) & (legacy | (high < effect))
    return calm


def _reachable(
    design: Design, result: decisions.Decisions, rows: np.ndarray, min_effect: np.ndarray, floor: np.ndarray
) -> np.ndarray:
    """Of ``rows``, those that more runs could still reject, or turn from inconclusive into unchanged."""
    out = np.zeros(rows.shape, dtype=bool)
    st, factor = subset(result.current, rows), design.futility_variance
    st = replace(st, var_base=st.var_base * factor, var_head=st.var_head * factor)
    level = result.level[rows]
    runs = float(design.max_runs)
    low, high = st.projected(runs, level * design.weights[-1])
    change, effect = st.change, min_effect[rows]
    with np.errstate(invalid="ignore"):
        rejectable = ((high < 0) & (change <= -effect)) | ((low > 0) & (change >= effect))
        # Becoming unchanged is judged from an estimate one standard error nearer 0 (never past it), as a noisy row's
        # moves that much with more runs; one that could not be unchanged even at 0 stops at once. (Older designs:
        # the estimate itself.)
        share = design.unchanged_weights()[-1]
        nearer = np.fmin(st.delta + np.where(np.isfinite(st.se), st.se, 0.0), 0.0)
        hopeful = st if design.unchanged_confidence is None else replace(st, delta=np.fmax(st.delta, nearer))
        bound, _ = hopeful.projected(runs, unchanged_level(design.unchanged_confidence, level, share))
        settles = (result.decision[rows] == decisions.INCONCLUSIVE) & (bound > -floor[rows])
    out[rows] = rejectable | settles
    return out


def decide_at_look(
    design: Design,
    history: list[Stats],
    *,
    alpha: np.ndarray | float | None = None,
    min_effect: np.ndarray | float | None = None,
    with_mde: bool = True,
    prior_var: np.ndarray | None = None,
) -> LookResult:
    """Decisions and settled rows after look ``len(history) - 1``; ``alpha``/``min_effect`` override the design's,
    ``prior_var``: per row, main's history variance (NaN: the base's decides)."""
    k = len(history) - 1
    if not (0 <= k < len(design.looks)):
        raise ValueError(f"the design has {len(design.looks)} looks, not {len(history)}")
    alpha = design.alpha if alpha is None else alpha
    min_effect = design.min_effect if min_effect is None else min_effect
    # Rows that cannot reach their target are gated by what they reach at max-runs (None: strict).
    shares = design.unchanged_weights()
    coarsening = Coarsening(design.max_resolution, float(design.max_runs), shares[-1], prior_var)
    result = decisions.decide_looks(
        history,
        design.weights[: k + 1],
        alpha,
        correction=design.correction,
        min_effect=min_effect,
        inconclusive_above=design.inconclusive_above,
        power=design.power,
        with_mde=with_mde,
        unchanged_confidence=design.unchanged_confidence,
        unchanged_weights=shares[: k + 1],
        coarsening=coarsening,
    )
    dec = result.decision
    undecided = dec == decisions.INCONCLUSIVE
    if k == len(design.looks) - 1:
        return LookResult(k, result, undecided, np.ones(dec.shape, dtype=bool))
    min_effect = np.broadcast_to(np.asarray(min_effect, dtype=float), dec.shape)
    floor = result.gated_at  # a coarse row's, else its target
    settled = np.isin(dec, _FIRM) | _calm(design, result, dec == decisions.UNCHANGED, min_effect == 0)
    futile = ~settled & ~_reachable(design, result, ~settled, min_effect, floor)
    return LookResult(k, result, futile & undecided, settled | futile)


def files_to_stop(unit_of_row: np.ndarray, settled: np.ndarray, units: int) -> np.ndarray:
    """Per unit (last axis): True when every row of that unit (``unit_of_row``) is settled and it has one."""
    unit_of_row, settled = np.asarray(unit_of_row, dtype=np.int64), np.asarray(settled, dtype=bool)
    runs = settled.reshape(int(np.prod(settled.shape[:-1])), settled.shape[-1])  # the leading axes: one run each
    codes = (unit_of_row + units * np.arange(len(runs))[:, None]).ravel()  # bincount: an int matmul has no BLAS
    open_rows = np.bincount(codes, weights=~runs.ravel(), minlength=len(runs) * units)
    return (open_rows.reshape(*settled.shape[:-1], units) == 0) & (np.bincount(unit_of_row, minlength=units) > 0)


REASONS = ("", "decided", "hopeless", "max-runs")  # why a unit stopped ("": it runs)


@dataclass(frozen=True)
class Replay:
    """Every look of a run recomputed: the final decisions and, per unit, the look it stopped after."""

    result: LookResult  # the last look taken
    stopped_after: np.ndarray  # per unit: index of the look after which it stopped (-1: still running)
    reasons: np.ndarray  # per unit, one of REASONS
    history: list[Stats]  # each look's statistics (rows whose unit had stopped sat it out)


def replay(
    design: Design,
    looks,
    unit_of_row: np.ndarray,
    units: int,
    *,
    prior_var: np.ndarray | None = None,
    with_mde: bool = True,
) -> Replay:
    """Recompute a (possibly unfinished) run from the samples each look saw (``looks``: per look, the base, head
    and pairs ``look_statistics`` takes; leading axes: one run each, as the simulator has them); a unit's rows
    take part in the looks until it stops, and the run ends when every unit has."""
    unit_of_row = np.asarray(unit_of_row, dtype=np.int64)
    history: list[Stats] = []
    result = None
    for k, (base, head, *pairs) in enumerate(looks):
        if result is None:  # per run and unit: the look it stopped after (-1: it runs) and why (into REASONS)
            stopped_after = np.full((*np.shape(base)[:-2], units), -1)
            reasons = np.zeros(stopped_after.shape, dtype=np.int8)
        active = stopped_after[..., unit_of_row] < 0
        history.append(look_statistics(design, base, head, active, pairs[0] if pairs else None))
        result = decide_at_look(design, history, prior_var=prior_var, with_mde=with_mde)
        stopping = files_to_stop(unit_of_row, result.settled | ~active, units) & (stopped_after < 0)
        hopeless = ~files_to_stop(unit_of_row, ~result.hopeless, units)  # units with a hopeless row
        reasons[stopping] = 3 if k == len(design.looks) - 1 else np.where(hopeless, 2, 1)[stopping]
        stopped_after[stopping] = k
        if (stopped_after >= 0).all():  # every unit has stopped: no look is taken after that
            break
    if result is None:
        raise ValueError("no look taken yet")
    return Replay(result, stopped_after, np.asarray(REASONS, dtype=object)[reasons], history)


def projected_runs(design: Design, result: LookResult) -> np.ndarray:
    """Per row, the first remaining look at which it would settle, estimate and variance kept (the ETA; else max)."""
    k = result.look
    out = np.where(result.settled, float(design.looks[k]), float(design.max_runs))
    rows = ~result.settled
    if k == len(design.looks) - 1 or not rows.any():
        return out
    st = subset(result.decisions.current, rows)
    level = result.decisions.level[rows]
    floor = result.decisions.gated_at[rows]
    weights, shares = design.weights[k + 1 :], design.unchanged_weights()[k + 1 :]

    def settles(index: int, look: int) -> np.ndarray:
        low, high = st.projected(float(look), level * weights[index])
        bound, _ = st.projected(float(look), unchanged_level(design.unchanged_confidence, level, shares[index]))
        return (high < 0) | (low > 0) | (bound > -floor)

    found = first_runs(design.looks[k + 1 :], st.delta.shape, settles)
    out[rows] = np.where(np.isnan(found), float(design.max_runs), found)
    return out
