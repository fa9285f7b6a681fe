"""Run directories from a benchmark job, read as untrusted data.

A PR's code ran on the machine that wrote these files, so ``benchgate report``
trusts nothing in them: sizes are capped before reading, every field of run.json
is type- and length-checked (unknown fields are ignored, never echoed), and the
result is reduced to the plain values the report shows (``RunSummary``).
Shards of one run are merged; shards that ran different binaries are refused.
"""

from __future__ import annotations

import glob
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchgate import results
from benchgate.errors import InputError

MAX_CSV_BYTES = 64 * 1024 * 1024
MAX_RECORD_BYTES = 2 * 1024 * 1024
MAX_SHARDS = 64
MAX_LIST = 5000
MAX_NAME = 512
MAX_TEXT = 4096
_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_SIDES = ("base", "head", "both")
_SHARD = re.compile(r"^([1-9][0-9]{0,3})/([1-9][0-9]{0,3})$")


@dataclass(frozen=True)
class Failure:
    """A benchmark process that crashed or timed out."""

    filename: str
    configuration: str
    side: str
    exit_status: int | None
    reason: str
    stderr_tail: str


@dataclass(frozen=True)
class Skipped:
    filename: str
    reason: str


@dataclass(frozen=True)
class Binary:
    sha: str | None = None
    ref: str | None = None
    version: str | None = None
    node_args: tuple[str, ...] = ()
    source: str | None = None


@dataclass(frozen=True)
class BuildFailure:
    """A side that did not build, so nothing was measured (run.json's ``build_failure``)."""

    side: str
    ref: str | None
    sha: str | None
    log_tail: str
    infrastructure: bool  # True for the base: the machine or the base branch, not the PR


@dataclass(frozen=True)
class RunSummary:
    """What the report shows about the run: validated, merged over shards."""

    base: Binary = Binary()
    head: Binary = Binary()
    runs: int | None = None
    complete: bool = True
    environment: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    shards: int = 0
    has_record: bool = False
    shard: str | None = None  # "I/N" when this record is one shard of a sharded run
    build_failure: BuildFailure | None = None


class _Checker:
    """Type and size checks that name the file and the JSON path of a bad field."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, reason: str) -> InputError:
        return InputError(f"run record field {path}: {reason}", where=self.where)

    def text(self, value: Any, path: str, limit: int = MAX_TEXT, *, optional: bool = True) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, not {type(value).__name__}")
        if len(value) > limit:
            raise self.fail(path, f"is {len(value)} characters long, more than {limit}")
        return value

    def commit(self, value: Any, path: str) -> str | None:
        """An optional commit SHA (7 to 64 hexadecimal digits)."""
        sha = self.text(value, path, 64)
        if sha is not None and not _SHA.match(sha):
            raise self.fail(path, "must be a hexadecimal commit SHA")
        return sha

    def integer(self, value: Any, path: str, low: int, high: int, *, optional: bool = True) -> int | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(path, f"must be a whole number from {low} to {high}, not {str(value)[:40]!r}")
        return value

    def mapping(self, value: Any, path: str, *, optional: bool = True) -> dict[str, Any]:
        if value is None and optional:
            return {}
        if not isinstance(value, dict):
            raise self.fail(path, f"must be an object, not {type(value).__name__}")
        return value

    def items(self, value: Any, path: str, limit: int = MAX_LIST) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list, not {type(value).__name__}")
        if len(value) > limit:
            raise self.fail(path, f"has {len(value)} entries, more than {limit}")
        return value


def _binary(check: _Checker, value: Any, path: str) -> Binary:
    data = check.mapping(value, path)
    sha = check.commit(data.get("sha"), f"{path}.sha")
    args = tuple(
        check.text(arg, f"{path}.node_args[{i}]", 256, optional=False)
        for i, arg in enumerate(check.items(data.get("node_args"), f"{path}.node_args", 32))
    )
    return Binary(
        sha=sha,
        ref=check.text(data.get("ref"), f"{path}.ref", 256),
        version=check.text(data.get("version"), f"{path}.version", 64),
        node_args=args,  # type: ignore[arg-type]
        source=check.text(data.get("source"), f"{path}.source", 256),
    )


def _environment(check: _Checker, value: Any) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    data = check.mapping(value, "environment")
    if len(data) > 64:
        raise check.fail("environment", f"has {len(data)} fields, more than 64")
    pairs = []
    for key, item in data.items():
        check.text(key, "environment key", 64, optional=False)
        if key == "warnings":
            continue
        if isinstance(item, bool | int | str) or (isinstance(item, float) and math.isfinite(item)):
            text = str(item)
            if len(text) > 512:
                raise check.fail(f"environment.{key}", "is longer than 512 characters")
            pairs.append((key, text))
        elif isinstance(item, list) and len(item) <= 64 and all(isinstance(x, int | str) for x in item):
            pairs.append((key, ", ".join(str(x) for x in item)[:512]))
        # Nested values are not shown: the comment lists the machine, not every detail.
    warnings = tuple(
        check.text(item, f"environment.warnings[{i}]", 512, optional=False)
        for i, item in enumerate(check.items(data.get("warnings"), "environment.warnings", 64))
    )
    return tuple(pairs), warnings  # type: ignore[return-value]


def _build_failure(check: _Checker, value: Any) -> BuildFailure | None:
    if value is None:
        return None
    data = check.mapping(value, "build_failure", optional=False)
    side = check.text(data.get("side"), "build_failure.side", 8, optional=False)
    if side not in ("base", "head"):
        raise check.fail("build_failure.side", "must be base or head")
    sha = check.commit(data.get("sha"), "build_failure.sha")
    infrastructure = data.get("infrastructure")
    if not isinstance(infrastructure, bool):
        raise check.fail("build_failure.infrastructure", "must be true or false")
    # Only the base's failure is the infrastructure's: a head that does not build must never pass as one.
    if infrastructure != (side == "base"):
        raise check.fail("build_failure.infrastructure", f"must be {str(side == 'base').lower()} for the {side}")
    return BuildFailure(
        side=side,
        ref=check.text(data.get("ref"), "build_failure.ref", 256),
        sha=sha,
        log_tail=check.text(data.get("log_tail"), "build_failure.log_tail", MAX_TEXT) or "",
        infrastructure=infrastructure,
    )


def validate_record(record: dict[str, Any], where: str) -> RunSummary:
    """Check an untrusted run.json strictly and reduce it to a RunSummary."""
    check = _Checker(where)
    if record.get("schema") != 1:
        raise check.fail("schema", f"must be 1, not {str(record.get('schema'))[:20]!r}")
    binaries = check.mapping(record.get("binaries"), "binaries")
    complete = record.get("complete", True)
    if not isinstance(complete, bool):
        raise check.fail("complete", "must be true or false")
    failures = []
    for i, item in enumerate(check.items(record.get("failures"), "failures")):
        path = f"failures[{i}]"
        data = check.mapping(item, path, optional=False)
        side = check.text(data.get("side"), f"{path}.side", 8, optional=False)
        if side not in _SIDES:
            raise check.fail(f"{path}.side", f"must be one of {', '.join(_SIDES)}")
        failures.append(
            Failure(
                filename=check.text(data.get("filename"), f"{path}.filename", MAX_NAME, optional=False) or "",
                configuration=check.text(data.get("configuration"), f"{path}.configuration", MAX_NAME) or "",
                side=side,
                exit_status=check.integer(data.get("exit_status"), f"{path}.exit_status", -255, 255),
                reason=check.text(data.get("reason"), f"{path}.reason", 1024) or "",
                stderr_tail=check.text(data.get("stderr_tail"), f"{path}.stderr_tail", 16384) or "",
            )
        )
    skipped = []
    for i, item in enumerate(check.items(record.get("skipped"), "skipped")):
        data = check.mapping(item, f"skipped[{i}]", optional=False)
        skipped.append(
            Skipped(
                filename=check.text(data.get("filename"), f"skipped[{i}].filename", MAX_NAME, optional=False) or "",
                reason=check.text(data.get("reason"), f"skipped[{i}].reason", 1024) or "",
            )
        )
    environment, warnings = _environment(check, record.get("environment"))
    shard = check.text(check.mapping(record.get("selection"), "selection").get("shard"), "selection.shard", 16)
    if shard is not None and not _SHARD.match(shard):
        raise check.fail("selection.shard", "must look like I/N")
    return RunSummary(
        base=_binary(check, binaries.get("base"), "binaries.base"),
        head=_binary(check, binaries.get("head"), "binaries.head"),
        runs=check.integer(record.get("runs"), "runs", 1, 100000),
        complete=complete,
        environment=environment,
        warnings=warnings,
        failures=tuple(failures),
        skipped=tuple(skipped),
        shards=1,
        has_record=True,
        shard=shard,
        build_failure=_build_failure(check, record.get("build_failure")),
    )


def _missing_shards(records: list[RunSummary]) -> list[str]:
    """Shards of a sharded run with no results: a lost runner must not pass as a smaller selection."""
    given = [summary.shard for summary in records if summary.shard]
    if not given:
        return []
    counts = {int(shard.split("/")[1]) for shard in given}
    if len(counts) > 1:
        raise InputError(f"the shards disagree on the shard count: {', '.join(sorted(set(given)))}")
    count = counts.pop()
    present = {int(shard.split("/")[0]) for shard in given}
    return [f"{index}/{count}" for index in range(1, count + 1) if index not in present]


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
    missing = _missing_shards(records)
    if missing:
        warnings += (f"no results from shard(s) {', '.join(missing)}: those benchmarks were not measured",)
    build_failures = [summary.build_failure for summary in records if summary.build_failure is not None]
    # A head that did not build anywhere decides the verdict; otherwise a base failure is the news.
    build_failures.sort(key=lambda failure: failure.infrastructure)
    return RunSummary(
        base=records[0].base,
        head=records[0].head,
        runs=_same([summary.runs for summary in records], "the number of runs"),
        complete=all(summary.complete for summary in records) and len(records) == len(summaries) and not missing,
        environment=records[0].environment,
        warnings=warnings,
        failures=tuple(failure for summary in records for failure in summary.failures),
        skipped=tuple(skipped for summary in records for skipped in summary.skipped),
        shards=len(summaries),
        has_record=True,
        build_failure=build_failures[0] if build_failures else None,
    )


def _size_checked(path: Path, limit: int) -> Path:
    size = path.stat().st_size
    if size > limit:
        raise InputError(f"file is too large ({size} bytes, limit {limit})", where=str(path))
    return path


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


def load(arguments: list[str]) -> tuple[pd.DataFrame, RunSummary]:
    """Read, size-check and validate the samples and run records of every shard."""
    located = locate(arguments)
    csvs = [_size_checked(csv, MAX_CSV_BYTES) for csv, _ in located]
    summaries = []
    for _, record_path in located:
        if record_path is None:
            summaries.append(RunSummary(shards=1))
            continue
        record = results.read_run_record(_size_checked(record_path, MAX_RECORD_BYTES))
        summaries.append(validate_record(record, str(record_path)))
    run = merge(summaries)
    if run.build_failure is not None:
        # Nothing was measured (results.csv holds only its header); the failure is the report.
        return results.empty_samples(), run
    samples = results.read_samples(csvs)
    too_long = (samples["filename"].str.len() > MAX_NAME) | (samples["configuration"].str.len() > MAX_NAME)
    if too_long.any():
        row = samples[too_long].iloc[0]
        raise InputError(f"benchmark name longer than {MAX_NAME} characters: {str(row['filename'])[:60]!r}...")
    return samples, run


def nothing_selected(arguments: list[str]) -> RunSummary | None:
    """The run's summary when every argument is a run that selected no benchmark, else None.

    ``benchgate run --changed-from`` on a change that touches no benchmarked area
    (a docs-only PR) writes a complete run.json with an empty file selection and
    no results.csv: nothing to benchmark, which is a pass, not missing results.
    Anything else (a results.csv, an incomplete run, a non-empty selection) is None,
    so ``load`` reads it as usual and refuses what is missing.
    """
    summaries = []
    for argument in arguments:
        for match in _matches(argument):
            path = Path(match)
            record_path = path / "run.json"
            if not path.is_dir() or (path / "results.csv").exists() or not record_path.is_file():
                return None
            record = results.read_run_record(_size_checked(record_path, MAX_RECORD_BYTES))
            summary = validate_record(record, str(record_path))
            selection = record.get("selection")
            files = selection.get("files") if isinstance(selection, dict) else None
            measured = record.get("samples", 0) != 0 or record.get("build_failure") is not None
            if not summary.complete or files != [] or summary.failures or measured:
                return None
            summaries.append(summary)
    return merge(summaries) if summaries else None
