"""The gate's decision tables: a fixed run's samples (``decide_samples``); an adaptive run's looks replayed, checked
and decided as one Holm family (``decide_shards``; a test of the merged samples would spend the level again)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from benchgate.errors import InputError
from benchgate.stats.decisions import INCONCLUSIVE, Decisions, Stats, decide_looks, subset
from benchgate.stats.defaults import AUTO_MAX_RUNS, DEFAULT_UNCHANGED_CONFIDENCE
from benchgate.stats.gate import DECISION_COLUMNS, GatePolicy, row_rules
from benchgate.stats.paired import PAIRED_TEST, test_statistics
from benchgate.stats.resolution import Coarsening, prior_for, reachable, runs_to_reach, trusted_variance
from benchgate.stats.sequential import Design
from benchgate.stats.stopping import Replay, decide_at_look, replay
from benchgate.stats.yuenwelch import (
    GATE_TEST,
    RUN_COUNTS,
    combine,
    first_runs,
    gate_statistics,
    regression_floor,
    unchanged_level,
)

if TYPE_CHECKING:
    from benchgate.results.rundirs import AdaptiveShard


Unit = tuple[str, "str | None"]  # (file, comparison): the comparison is None for a file run whole


def key_rows(samples, keys) -> np.ndarray:
    """Each sample's row: the index of its (filename, configuration) in ``keys`` (-1: not one of them)."""
    columns = [samples[name].astype(str) for name in ("filename", "configuration")]
    return pd.MultiIndex.from_tuples(keys).get_indexer(pd.MultiIndex.from_arrays(columns)).astype(np.int64)


def _padded(rows: np.ndarray, values: np.ndarray, count: int, fill=np.nan, width: int = 0) -> np.ndarray:
    """``values`` laid out ``(count, widest row)``, each row's entries in their order, ``fill`` as padding."""
    position = pd.Series(rows).groupby(rows).cumcount().to_numpy()
    widest = int(position.max()) + 1 if len(rows) else 0
    out = np.full((count, max(widest, width)), fill, dtype=np.asarray(values).dtype)
    out[rows, position] = values
    return out


def sample_arrays(samples, keys: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Each key's rates per side, ``(base, head)``, NaN-padded ``(rows, n)``."""
    if not keys:
        return np.zeros((0, 0)), np.zeros((0, 0))
    rows = key_rows(samples, keys)
    sides = samples["side"].astype(str).to_numpy(dtype=object)
    rates = samples["rate"].to_numpy(dtype=float)
    chosen = [(sides == side) & (rows >= 0) for side in ("base", "head")]
    return tuple(_padded(rows[mask], rates[mask], len(keys)) for mask in chosen)


def pair_arrays(samples, keys, pairs: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each key's paired rates, of the ``pairs`` (base rows, head rows, head CPU sets) that ``samples`` holds,
    NaN-padded ``(rows, pairs)``, and each pair's stratum: the rank of its head CPU set (-1 pads)."""
    base_rows, head_rows = (np.asarray(part, dtype=np.int64) for part in pairs[:2])
    strata = np.unique(np.asarray(list(pairs[2]), dtype=str), return_inverse=True)[1].astype(np.int64)
    seen = np.maximum(base_rows, head_rows) < len(samples)  # pairs are written after both their samples
    rows = key_rows(samples, keys)[base_rows[seen]]
    kept, rates = rows >= 0, samples["rate"].to_numpy(dtype=float)
    # One column of padding when nothing is paired.
    base, head = (_padded(rows[kept], rates[index[seen][kept]], len(keys), width=1) for index in (base_rows, head_rows))
    return base, head, _padded(rows[kept], strata[seen][kept], len(keys), -1, width=1)


def undecided_table(keys) -> pd.DataFrame:
    """The decision table of rows nothing has decided (no look taken yet): inconclusive, nothing known."""
    table = pd.DataFrame({"filename": [key[0] for key in keys], "configuration": [key[1] for key in keys]})
    return table.assign(**{**dict.fromkeys(DECISION_COLUMNS, np.nan), "decision": "inconclusive"})


def noise_sigma(st: Stats) -> np.ndarray:
    """Each row's per-sample noise (percent) from the base side's robust variance only, which the head cannot move."""
    with np.errstate(invalid="ignore"):
        return 100 * np.sqrt(np.asarray(st.var_base, dtype=float))


def undecided_runs(
    result: Decisions,
    min_effect: np.ndarray | float,
    inconclusive_above: float,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
) -> np.ndarray:
    """Per inconclusive row, the runs a side after which it would be decided: its bound reaching its target
    (``resolution.runs_to_reach``), else rejected or unchanged with its estimate and spread kept; NaN: none up
    to 10,000, or decided."""
    current, level = result.current, result.level
    runs = np.fmin(current.n_base, current.n_head)
    target = np.broadcast_to(regression_floor(min_effect, inconclusive_above), runs.shape)
    settle = unchanged_level(unchanged_confidence, level)
    out = np.full(runs.shape, np.nan)
    rows = result.decision == INCONCLUSIVE
    out[rows] = runs_to_reach(subset(current, rows), target[rows], settle[rows], runs[rows])
    pending = rows & np.isnan(out) & ~np.isnan(current.delta)
    picked, effect = subset(current, pending), np.broadcast_to(min_effect, runs.shape)[pending]

    def decided(_, count) -> np.ndarray:  # rejected, or unchanged by its bound, with this many runs
        low, high = picked.projected(float(count), level[pending])
        bound = picked.projected(float(count), settle[pending])[0]
        return ((low > 0) | (high < 0)) & (np.abs(picked.change) >= effect) | (bound > -target[pending])

    out[pending] = first_runs(RUN_COUNTS, picked.delta.shape, decided, runs[pending])
    return out


def decision_table(
    keys,
    result: Decisions,
    min_effect: np.ndarray | float,
    inconclusive_above: float,
    unchanged_confidence: float | None = DEFAULT_UNCHANGED_CONFIDENCE,
    *,
    max_runs: int = AUTO_MAX_RUNS,
    last_share: float = 1.0,
    prior_var: np.ndarray | None = None,
):
    """The decision table of ``result``, one row per key; ``noisy_mde``: the resolution reached at ``max_runs`` with
    the trusted noise (``sigma``, history's where known) and an estimate of 0 (``last_share``: the risk spent)."""
    needed = undecided_runs(result, min_effect, inconclusive_above, unchanged_confidence)
    current = result.current
    level = unchanged_level(unchanged_confidence, result.level, last_share)
    sigma = noise_sigma(current)
    if prior_var is not None:  # the noise that gated the row is the one the reports show
        sigma = np.where(np.isfinite(prior_var), 100 * np.sqrt(prior_var), sigma)
    return pd.DataFrame(
        {
            "filename": [key[0] for key in keys],
            "configuration": [key[1] for key in keys],
            "decision": result.names,
            "change": result.change,
            "ci_low": result.ci_low,
            "ci_high": result.ci_high,
            "ci_level": result.level,
            "gate_p": result.p_value,
            "mde": result.mde,
            "sigma": sigma,
            "noisy_mde": reachable(current, trusted_variance(current, prior_var), float(max_runs), level, 0.5),
            "runs_needed": needed,
            "resolution": result.resolution,
            "gated_at": result.gated_at,
        }
    )


def decide_samples(samples, keys: list[tuple[str, str]], policy: GatePolicy, pairs=None, prior=None):
    """The fixed-runs decision table, one row per key, as ``policy`` and its rules say: one look spending the whole
    level. ``pairs``: a duet run's (base rows, head rows, CPU-set assignment per pair), decided on the pairs at their
    target; the others are gated by ``prior`` (``resolution.prior_for``'s mapping) where known."""
    if not keys:
        return undecided_table(keys)
    rules = row_rules([key[0] for key in keys], policy)
    shared = dict(
        min_effect=np.asarray(rules.min_effect, dtype=float),
        inconclusive_above=policy.inconclusive_above,
        unchanged_confidence=policy.unchanged_confidence,
    )
    base, head = sample_arrays(samples, keys)
    pair_rates = None if pairs is None else pair_arrays(samples, keys, pairs)
    st = test_statistics(GATE_TEST if pairs is None else PAIRED_TEST, base, head, pair_rates)
    prior_var = prior_for(keys, prior) if pairs is None else None
    coarsening = Coarsening(policy.max_resolution, trusted_var=prior_var)
    alpha = np.asarray(rules.alpha, dtype=float)
    result = decide_looks([st], [1.0], alpha, correction=policy.correction, coarsening=coarsening, **shared)
    return decision_table(keys, result, prior_var=prior_var, **shared)


def stop_units(
    keys: list[tuple[str, str]], files: list[str] | tuple[str, ...], row_files: frozenset[str] | set[str] = frozenset()
) -> tuple[list[Unit], np.ndarray]:
    """The units that stop (by file order, then ``keys``') and each row's: its own in ``row_files``, else its file."""
    selected = set(files)
    missing = [key[0] for key in keys if key[0] not in selected]
    if missing:
        raise InputError(f"results for {missing[0]!r}, which the run's selection does not hold")
    units: list[Unit] = []
    for name in files:
        if name in row_files:
            units += [(name, key[1]) for key in keys if key[0] == name]
        else:
            units.append((name, None))
    position = {unit: index for index, unit in enumerate(units)}
    unit_of_row = [position[(name, configuration if name in row_files else None)] for name, configuration in keys]
    return units, np.array(unit_of_row, dtype=np.int64)


def replay_samples(
    design: Design,
    files,
    look_samples: list[pd.DataFrame] | tuple[pd.DataFrame, ...],
    keys,
    row_files: frozenset[str] | set[str] = frozenset(),
    pairs: tuple | None = None,
    prior=None,
) -> tuple[Replay, list[Unit]]:
    """Replay one run's looks for the rows ``keys``: the replay and its units (``pairs``: a duet run's, as
    ``results.pairs.run_pairs`` gives them; ``prior``: ``resolution.prior_for``'s mapping)."""
    looks = [sample_arrays(samples, keys) for samples in look_samples]
    if pairs is not None:  # a duet run's looks: also its pairs' rates and CPU-set assignments
        looks = [
            (*rates, pair_arrays(samples, keys, pairs)) for rates, samples in zip(looks, look_samples, strict=True)
        ]
    units, unit_of_row = stop_units(keys, files, row_files)
    return replay(design, looks, unit_of_row, len(units), prior_var=prior_for(keys, prior)), units


def check_shard(shard: AdaptiveShard, design: Design, keys: list[tuple[str, str]], prior=None) -> Replay | None:
    """Replay one adaptive run's looks for ``keys`` and check them against its record (None: no look).
    InputError when the looks are not the design's or the replay does not reach the recorded stops."""
    replayed, units = None, []
    if shard.look_samples:
        replayed, units = replay_samples(
            design, shard.record.selection.files, shard.look_samples, keys, shard.record.row_files, shard.pairs, prior
        )
    where = shard.where
    for index, look in enumerate(shard.record.looks):
        if index >= len(design.looks) or look.runs != design.looks[index]:
            raise InputError(f"look {index} after {look.runs} runs is not one of the design's looks", where=where)
    recorded = {unit: (stop.look, stop.reason) for unit, stop in shard.record.stopped_units().items()}
    stopped = () if replayed is None else zip(units, replayed.stopped_after.tolist(), replayed.reasons, strict=True)
    replayed_stops = {unit: (look, reason) for unit, look, reason in stopped if look >= 0}
    if recorded != replayed_stops:
        differing = sorted(set(recorded.items()) ^ set(replayed_stops.items()), key=str)[0][0]
        shown = " ".join(part for part in differing if part)
        raise InputError(
            f"the recorded stops do not follow from results.csv (first: {shown!r}: recorded "
            f"{recorded.get(differing)}, replayed {replayed_stops.get(differing)}); was either file changed?",
            where=where,
        )
    return replayed


def decide_shards(
    shards: list[AdaptiveShard], keys: list[tuple[str, str]], policy: GatePolicy, prior=None
) -> pd.DataFrame:
    """The decision table of ``keys`` from adaptive runs ``shards`` by the report's ``policy`` and its rules;
    InputError when a design is malformed, the shards' designs differ or a replay contradicts the record."""
    wanted = [(str(f), str(c)) for f, c in keys]
    # One canonical row order (the live run's): Holm breaks ties between equal p-values by position.
    canonical = sorted(range(len(wanted)), key=wanted.__getitem__)  # the keys are distinct: a permutation
    keys, back = [wanted[index] for index in canonical], np.argsort(canonical)
    rules = row_rules([key[0] for key in keys], policy)
    alpha, min_effect = np.asarray(rules.alpha, dtype=float), np.asarray(rules.min_effect, dtype=float)
    design = None
    histories, rows = [], []
    for shard in shards:
        here = Design.from_json(shard.record.design, where=f"{shard.where} design")
        if design is not None and here != design:
            raise InputError("the shards' adaptive designs differ", where=shard.where)
        design = here
        files = set(shard.record.selection.files)
        shard_rows = [index for index, key in enumerate(keys) if key[0] in files]
        shard_keys = [keys[index] for index in shard_rows]
        replayed = check_shard(shard, here, shard_keys, prior)
        histories.append((len(shard_rows), replayed.history if replayed is not None else []))
        rows += shard_rows
    if design is None or sorted(rows) != list(range(len(keys))):
        raise InputError("every comparison must come from exactly one adaptive run directory")
    order = np.argsort(rows)  # ``keys``' order of the shards' rows, concatenated
    history = []
    # A shard that stopped before look k: its n rows sit it out, without samples, labelled with the design's test
    # (``combine`` keeps the first part's label, which the decisions go by).
    sat_out = [replace(gate_statistics(*np.full((2, n, 1), np.nan)), test=design.test) for n, _ in histories]
    for k in range(max(len(h) for _, h in histories)):
        parts = [h[k] if k < len(h) else out for (_, h), out in zip(histories, sat_out, strict=True)]
        history.append(combine(lambda *arrays: np.concatenate(arrays)[order], *parts))
    if not history:  # no look taken yet (an interrupted run): nothing can be decided
        return undecided_table(wanted)
    # The report's policy decides, on the looks the run's design took.
    gate = dict(inconclusive_above=policy.inconclusive_above, unchanged_confidence=policy.unchanged_confidence)
    final = replace(design, correction=policy.correction, max_resolution=policy.max_resolution, **gate)
    prior_var = prior_for(keys, prior)
    result = decide_at_look(final, history, alpha=alpha, min_effect=min_effect, prior_var=prior_var).decisions
    last_share = final.unchanged_weights()[-1]
    options = dict(max_runs=design.max_runs, last_share=last_share, prior_var=prior_var, **gate)
    table = decision_table(keys, result, min_effect, **options)
    return table.iloc[back].reset_index(drop=True)
