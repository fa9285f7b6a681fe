"""The gate's decision table of an adaptive run (``--runs auto``): the recorded looks replayed, checked, decided.
Never a fixed-runs test of the merged samples, which would spend the level again at every look; shards
are replayed one by one and decided as one Holm family."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from benchgate.errors import InputError
from benchgate.stats import decisions
from benchgate.stats.gatetable import decision_table, pair_arrays, sample_arrays, sitting_out, undecided_decisions
from benchgate.stats.resolution import Coarsening, prior_for
from benchgate.stats.sequential import Design
from benchgate.stats.stopping import Replay, replay
from benchgate.stats.yuenwelch import combine, subset

if TYPE_CHECKING:
    import pandas as pd

    from benchgate.results.rundirs import AdaptiveShard


Unit = tuple[str, "str | None"]  # (file, comparison): the comparison is None for a file run whole


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
    looks = [_look(samples, keys, pairs) for samples in look_samples]
    units, unit_of_row = stop_units(keys, files, row_files)
    return replay(design, looks, unit_of_row, len(units), prior_var=prior_for(keys, prior)), units


def _look(samples: pd.DataFrame, keys, pairs: tuple | None) -> tuple:
    """One look's rates per row (and, for a duet run, its pairs' rates and CPU-set assignments)."""
    _, base, head = sample_arrays(samples, keys)
    if pairs is None:
        return base, head
    base_rows, head_rows, head_cpus = np.asarray(pairs[0]), np.asarray(pairs[1]), list(pairs[2])
    seen = np.maximum(base_rows, head_rows) < len(samples)  # pairs are written after both their samples
    codes = {cpus: code for code, cpus in enumerate(sorted(set(head_cpus)))}
    strata = np.asarray([codes[cpus] for cpus in head_cpus], dtype=np.int64)
    return base, head, pair_arrays(samples, base_rows[seen], head_rows[seen], keys, strata[seen])


def check_shard(shard: AdaptiveShard, design: Design, keys: list[tuple[str, str]], prior=None) -> Replay | None:
    """Replay one adaptive run's looks for ``keys`` and check them against its record (None: no look).
    InputError when the looks are not the design's or the replay does not reach the recorded stops."""
    replayed, units = None, []
    if shard.look_samples:
        replayed, units = replay_samples(
            design, shard.record.files, shard.look_samples, keys, shard.record.row_files, shard.pairs, prior
        )
    where = shard.where
    for index, look in enumerate(shard.record.looks):
        if index >= len(design.looks) or look.runs != design.looks[index]:
            raise InputError(f"look {index} after {look.runs} runs is not one of the design's looks", where=where)
    recorded = {stop.unit: (stop.look, stop.reason) for stop in shard.record.stops}
    replayed_stops = {}
    if replayed is not None:
        for position, look in enumerate(replayed.stopped_after.tolist()):
            if look >= 0:
                replayed_stops[units[position]] = (look, replayed.reasons[position])
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
    shards: list[AdaptiveShard],
    keys: list[tuple[str, str]],
    alpha: np.ndarray | float = decisions.DEFAULT_ALPHA,
    *,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = decisions.DEFAULT_INCONCLUSIVE_ABOVE,
    unchanged_confidence: float = decisions.DEFAULT_UNCHANGED_CONFIDENCE,
    max_resolution: float | None = None,
    prior=None,
) -> pd.DataFrame:
    """The decision table (``gatetable.decide_samples``') of ``keys`` from the adaptive runs ``shards``.
    The run stopped by its own design; the decisions follow the report's policy (``alpha``/``min_effect`` per key).
    InputError when a design is malformed, the shards' designs differ, or a replay contradicts the record."""
    wanted = [(str(f), str(c)) for f, c in keys]
    # One canonical row order (the live run's): Holm breaks ties between equal p-values by position.
    keys = sorted(set(wanted))
    position = {key: index for index, key in enumerate(keys)}
    back = np.array([position[key] for key in wanted], dtype=np.int64)
    alpha = _per_row(alpha, wanted, position, len(keys))
    min_effect = _per_row(min_effect, wanted, position, len(keys))
    design = None
    histories, rows = [], []
    for shard in shards:
        here = Design.from_json(shard.record.design, where=f"{shard.where} design")
        if design is not None and here != design:
            raise InputError("the shards' adaptive designs differ", where=shard.where)
        design = here
        files = set(shard.record.files)
        shard_rows = [index for index, key in enumerate(keys) if key[0] in files]
        shard_keys = [keys[index] for index in shard_rows]
        replayed = check_shard(shard, here, shard_keys, prior)
        histories.append((len(shard_rows), replayed.history if replayed is not None else []))
        rows += shard_rows
    if design is None or sorted(rows) != list(range(len(keys))):
        raise InputError("every comparison must come from exactly one adaptive run directory")
    count = max(len(history) for _, history in histories)
    order = np.argsort(np.asarray(rows, dtype=np.int64), kind="stable")
    history = []
    for k in range(count):
        parts = [h[k] if k < len(h) else sitting_out(n) for n, h in histories]
        look = combine(lambda *arrays: np.concatenate(arrays), *parts)
        # Rows in ``keys``' order from the shards' concatenation (``order`` sorts its row indices).
        history.append(subset(look, order))
    if not history:  # no look taken yet (an interrupted run): nothing can be decided
        result = undecided_decisions(len(keys))
        return decision_table(keys, result, min_effect, inconclusive_above).iloc[back].reset_index(drop=True)
    shares, prior_var = design.unchanged_weights(unchanged_confidence), prior_for(keys, prior)
    coarse = (
        None if max_resolution is None else Coarsening(max_resolution, float(design.max_runs), shares[-1], prior_var)
    )
    shared = dict(
        min_effect=min_effect, inconclusive_above=inconclusive_above, unchanged_confidence=unchanged_confidence
    )
    options = dict(unchanged_weights=shares[:count], power=design.power, correction=correction, coarsening=coarse)
    result = decisions.decide_looks(history, design.weights[:count], alpha, **options, **shared)
    table = decision_table(keys, result, max_runs=design.max_runs, last_share=shares[-1], prior_var=prior_var, **shared)
    return table.iloc[back].reset_index(drop=True)


def _per_row(values: np.ndarray | float, wanted: list, position: dict, rows: int) -> np.ndarray:
    """Per-key values given in ``wanted``'s order, in the canonical order (a scalar stays one)."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 0:
        return values
    out = np.empty(rows)
    out[[position[key] for key in wanted]] = values
    return out
