"""The gate's decision table of an adaptive run (``--runs auto``): the recorded looks replayed, checked, decided.

An adaptive run records its design and, for each look, how long results.csv was then
(``benchgate.results.lookrecord``). Deciding from it is replaying it: the samples each look
saw, the statistics of every look, which files stopped when. The replay must reach the
stops the run recorded (a changed results.csv or run.json does not), and the decisions are
those of the sequential design over the looks (``decisions.decide_looks`` with the design's
weights), never a fixed-runs test of the merged samples, which would ignore the looks and
spend the level again at every one. Samples written after the last recorded look (an
interrupted run) take part in compare.R's columns only.

Shards of one run (each its own run directory and design) are replayed one by one and
decided together: one Holm family over every row, each row's sequential p-value and
intervals from its own shard's looks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from benchgate.errors import InputError
from benchgate.stats import decisions
from benchgate.stats.gatetable import decision_frame, decision_table, sample_arrays, sitting_out, undecided_decisions
from benchgate.stats.gatetests import STAT_FIELDS, Stats, subset
from benchgate.stats.sequential import Design
from benchgate.stats.stopping import Replay, replay

if TYPE_CHECKING:
    import pandas as pd

    from benchgate.results.rundirs import AdaptiveShard


def file_rows(keys: list[tuple[str, str]], files: list[str] | tuple[str, ...]) -> np.ndarray:
    """Each row's index in ``files`` (the run's selection): which file it stops with."""
    index = {name: position for position, name in enumerate(files)}
    missing = [key[0] for key in keys if key[0] not in index]
    if missing:
        raise InputError(f"results for {missing[0]!r}, which the run's selection does not hold")
    return np.array([index[key[0]] for key in keys], dtype=np.int64)


def replay_samples(design: Design, files, look_samples: list[pd.DataFrame] | tuple[pd.DataFrame, ...], keys) -> Replay:
    """Replay the looks of one run from the samples each saw, for the rows ``keys``."""
    looks = [sample_arrays(samples, keys)[1:] for samples in look_samples]
    return replay(design, looks, file_rows(keys, files), len(files))


def check_shard(shard: AdaptiveShard, design: Design, keys: list[tuple[str, str]]) -> Replay | None:
    """Replay one adaptive run's recorded looks for the rows ``keys`` and check it against its record.

    None when no look was recorded. InputError when the looks are not the design's or the
    replay does not reach the recorded stops (results.csv or run.json changed).
    """
    replayed = None
    if shard.look_samples:
        replayed = replay_samples(design, shard.record.files, shard.look_samples, keys)
    _check_record(shard, design, replayed)
    return replayed


def _check_record(shard: AdaptiveShard, design: Design, replayed: Replay | None) -> None:
    """The looks must be the design's, and the recorded stops exactly what the replay reaches."""
    where = shard.where
    for index, look in enumerate(shard.record.looks):
        if index >= len(design.looks) or look.runs != design.looks[index]:
            raise InputError(f"look {index} after {look.runs} runs is not one of the design's looks", where=where)
    recorded = {stop.filename: (stop.look, stop.reason) for stop in shard.record.stops}
    replayed_stops = {}
    if replayed is not None:
        for position, look in enumerate(replayed.stopped_after.tolist()):
            if look >= 0:
                replayed_stops[shard.record.files[position]] = (look, replayed.reasons[position])
    if recorded != replayed_stops:
        differing = sorted(set(recorded.items()) ^ set(replayed_stops.items()))[0][0]
        raise InputError(
            f"the recorded stops do not follow from results.csv (first: {differing!r}: recorded "
            f"{recorded.get(differing)}, replayed {replayed_stops.get(differing)}); was either file changed?",
            where=where,
        )


def _concat(parts: list[Stats]) -> Stats:
    values = {name: np.concatenate([np.asarray(getattr(st, name)) for st in parts]) for name in STAT_FIELDS}
    return Stats(test=parts[0].test, **values)


def decide_shards(
    shards: list[AdaptiveShard],
    keys: list[tuple[str, str]],
    alpha: np.ndarray | float = decisions.DEFAULT_ALPHA,
    *,
    correction: str = "holm",
    min_effect: np.ndarray | float = 0.0,
    inconclusive_above: float = decisions.DEFAULT_INCONCLUSIVE_ABOVE,
    unchanged_confidence: float = decisions.DEFAULT_UNCHANGED_CONFIDENCE,
) -> pd.DataFrame:
    """The decision table (``gatetable.decide_samples``' columns) of ``keys`` from the adaptive runs ``shards``.

    ``alpha``/``min_effect`` per key (the report's policy and rules: the run stopped by its own
    design, which any stopping rule may; the decisions follow the report's, ``unchanged_confidence``
    too, its risk spent over the looks by the design's unchanged spending). InputError when a
    shard's design is malformed, the shards' designs differ, or a replay contradicts the record.
    """
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
        replayed = check_shard(shard, here, shard_keys)
        histories.append((len(shard_rows), replayed.history if replayed is not None else []))
        rows += shard_rows
    if design is None or sorted(rows) != list(range(len(keys))):
        raise InputError("every comparison must come from exactly one adaptive run directory")
    count = max(len(history) for _, history in histories)
    order = np.argsort(np.asarray(rows, dtype=np.int64), kind="stable")
    history = []
    for k in range(count):
        look = _concat([h[k] if k < len(h) else sitting_out(n) for n, h in histories])
        # Rows in ``keys``' order from the shards' concatenation (``order`` sorts its row indices).
        history.append(subset(look, order))
    if not history:  # no look taken yet (an interrupted run): nothing can be decided
        table = decision_frame(keys, undecided_decisions(len(keys)), np.full(len(keys), np.nan))
        return table.iloc[back].reset_index(drop=True)
    shares = design.unchanged_weights(unchanged_confidence)
    result = decisions.decide_looks(
        history, design.weights[:count], alpha, correction=correction,
        min_effect=min_effect, inconclusive_above=inconclusive_above, power=design.power,
        unchanged_confidence=unchanged_confidence, unchanged_weights=shares[:count],
    )  # fmt: skip
    table = decision_table(
        keys, result, min_effect, inconclusive_above, unchanged_confidence, max_runs=design.max_runs,
        last_share=shares[-1],
    )  # fmt: skip
    return table.iloc[back].reset_index(drop=True)


def _per_row(values: np.ndarray | float, wanted: list, position: dict, rows: int) -> np.ndarray:
    """Per-key values given in ``wanted``'s order, in the canonical order (a scalar stays one)."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 0:
        return values
    out = np.empty(rows)
    out[[position[key] for key in wanted]] = values
    return out
