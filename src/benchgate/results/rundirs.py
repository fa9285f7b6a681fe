"""Run directories from benchmark jobs (untrusted): results.csv and run.json of each shard, size-capped and merged;
shards that ran different binaries are refused."""

from __future__ import annotations

import glob
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchgate.errors import InputError
from benchgate.results.csvfile import concat_samples, empty_samples, read_samples, read_samples_prefixes
from benchgate.results.pairs import DUET, run_pairs
from benchgate.results.recordparts import MAX_CSV_BYTES, MAX_NAME, MAX_SHARDS, check_size
from benchgate.results.runrecord import RunRecord, RunSummary, load_run_record

if TYPE_CHECKING:
    import pandas as pd


def _same(values: list[Any], what: str) -> Any:
    known = [value for value in values if value is not None]
    if len(set(known)) > 1:
        raise InputError(f"the shards disagree on {what}: {', '.join(sorted(map(str, set(known))))}")
    return known[0] if known else None


def merge(summaries: list[RunSummary]) -> RunSummary:
    """One summary for the shards of a run; refuses shards that benchmarked different binaries."""
    records = [summary for summary in summaries if summary.has_record]
    if not records:
        return RunSummary(shards=len(summaries))
    for side in ("base", "head"):
        _same([getattr(summary, side).sha for summary in records], f"the {side} commit")
    warnings = tuple(dict.fromkeys(warning for summary in records for warning in summary.warnings))
    # Shards of a sharded run with no results: a lost runner must not pass as a smaller selection.
    given = [summary.shard.split("/") for summary in records if summary.shard]  # "I/N"
    count = _same([int(total) for _, total in given], "the shard count") or 0
    present = {int(index) for index, _ in given}
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in present]
    if missing:
        warnings += (f"no results from shard(s) {', '.join(missing)}: those benchmarks were not measured",)
    failures = [summary.build_failure for summary in records if summary.build_failure is not None]
    sandboxes = [summary.sandbox for summary in records if summary.sandbox is not None]
    return replace(
        records[0],  # its binaries and environment
        runs=_same([summary.runs for summary in records], "the number of runs"),
        adaptive_runs=_same([summary.adaptive_runs for summary in records], "the adaptive design's runs"),
        complete=all(summary.complete for summary in records) and len(records) == len(summaries) and not missing,
        warnings=warnings,
        failures=tuple(failure for summary in records for failure in summary.failures),
        skipped=tuple(skipped for summary in records for skipped in summary.skipped),
        shards=len(summaries),
        shard=None,
        # A head that did not build anywhere decides the verdict; otherwise a base failure is the news.
        build_failure=min(failures, key=lambda failure: failure.infrastructure, default=None),
        # One shard whose pull-request code ran unconfined makes the whole run so: that is what the report shows.
        sandbox=min(sandboxes, key=lambda use: not use.unconfined_untrusted, default=None),
        pairing=_same([summary.pairing for summary in records], "the pairing (sequential or duet)"),
        prior={key: variance for summary in records for key, variance in summary.prior.items()},  # each shard's own
    )


def _matches(argument: str) -> list[str]:
    """The paths a glob argument matches, in order; any other argument is the one path."""
    return sorted(glob.glob(argument)) if glob.has_magic(argument) else [argument]


def locate(arguments: list[str]) -> list[tuple[Path, Path | None]]:
    """(results.csv, run.json or None) for each argument: a run directory, a CSV file or a glob of either."""
    found: list[tuple[Path, Path | None]] = []
    for argument in arguments:
        matches = _matches(argument)
        if not matches:
            raise InputError("no results match this pattern", where=argument)
        for match in matches:
            path = Path(match)
            if path.is_dir():
                csv = path / "results.csv"
                if not csv.is_file():
                    raise InputError("no results.csv in this directory", where=str(path))
                record = path / "run.json"
                found.append((csv, record if record.is_file() else None))
            elif path.is_file():
                found.append((path, None))
            else:
                raise InputError("no such file or directory", where=str(path))
    if len(found) > MAX_SHARDS:
        raise InputError(f"{len(found)} result sets given, more than {MAX_SHARDS}")
    return found


def load(arguments: list[str]) -> tuple[pd.DataFrame, RunSummary, list[AdaptiveShard]]:
    """The samples, merged run summary and adaptive runs (with each look's samples) of every shard, checked."""
    located = locate(arguments)
    for csv, _ in located:
        check_size(csv, MAX_CSV_BYTES)
    records = [load_run_record(path) if path is not None else None for _, path in located]
    run = merge([record.summary() if record is not None else RunSummary(shards=1) for record in records])
    if run.build_failure is not None:
        # Nothing was measured (results.csv holds only its header); the failure is the report.
        return empty_samples(), run, []
    frames = [read_samples([csv]) for csv, _ in located]
    samples = concat_samples(frames)
    too_long = (samples["filename"].str.len() > MAX_NAME) | (samples["configuration"].str.len() > MAX_NAME)
    if too_long.any():
        row = samples[too_long].iloc[0]
        raise InputError(f"benchmark name longer than {MAX_NAME} characters: {str(row['filename'])[:60]!r}...")
    pairs, shards = [], []  # each shard's duet pairs (pairs.csv size-capped there), read once; the adaptive runs
    for (csv_path, record_path), record, frame in zip(located, records, frames, strict=True):
        if record is None and run.pairing == DUET:
            raise InputError("a duet run's results need their run.json and pairs.csv", where=str(csv_path))
        pairs.append(None if record is None else run_pairs(record.pairing, record_path, frame))
        if record is not None and record.adaptive_run:
            # Each look's samples: results.csv's first bytes, as long as they were at that look.
            sizes, digests = [look.csv_bytes for look in record.looks], [look.csv_sha256 for look in record.looks]
            look_samples = read_samples_prefixes(csv_path, sizes, digests)
            shards.append(AdaptiveShard(str(record_path), record, look_samples, pairs[-1]))
    if run.pairing == DUET:
        run = replace(run, pairs=_duet_pairs(frames, pairs))
    return samples, run, shards


def _duet_pairs(frames: list, pairs: list) -> tuple:
    """A duet run's shards' pairs as ``run_pairs`` gives one shard's: their rows among the merged samples."""
    import numpy as np

    offsets = np.cumsum([0, *(len(frame) for frame in frames[:-1])])
    base, head = (np.concatenate([one[side] + at for one, at in zip(pairs, offsets, strict=True)]) for side in (0, 1))
    return base, head, [cpus for _, _, head_cpus in pairs for cpus in head_cpus]


def nothing_selected(arguments: list[str]) -> RunSummary | None:
    """The summary when every argument is a complete run that selected nothing (``--changed-from``), else None."""
    summaries = []
    for argument in arguments:
        for match in _matches(argument):
            path = Path(match)
            record_path = path / "run.json"
            if not path.is_dir() or (path / "results.csv").exists() or not record_path.is_file():
                return None
            record = load_run_record(record_path)
            measured = record.samples != 0 or record.build_failure is not None or record.failures
            if not record.complete or record.selection.files != () or measured:
                return None
            summaries.append(record.summary())
    return merge(summaries) if summaries else None


@dataclass(frozen=True)
class AdaptiveShard:
    """One ``--runs auto`` run directory: its record and, per recorded look, the samples that look saw."""

    where: str
    record: RunRecord  # an adaptive run's: its design, files, looks and stops
    look_samples: tuple[pd.DataFrame, ...]
    pairs: tuple | None = None  # a duet run's pairs (results.pairs.run_pairs): its looks are decided on them
