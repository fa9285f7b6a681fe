"""run.json, one versioned model: written atomically by the run, read back as untrusted data by everyone else.

A PR's code ran on the machine that wrote these files, so every field of run.json is type-
and length-checked when it is read (``load_run_record``: one loader for resume, report, history,
versions and analyze), with the limits of ``benchgate.results.recordfields``. Fields this
version does not know are kept, never shown. ``RunRecord.summary`` reduces a record to the
plain values the report shows (``RunSummary``); reading whole run directories (shards,
samples) is ``benchgate.results.rundirs``.
"""

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationError, model_validator

from benchgate.errors import InputError
from benchgate.results.lookrecord import (
    AUTO,
    STOPS_VERSION,
    AdaptiveRecord,
    Look,
    LookEntry,
    Stop,
    StopEntry,
    check_stops,
    legacy_stops,
)
from benchgate.results.pairs import Pairing
from benchgate.results.recordfields import (
    MAX_CONFIGURATIONS,
    MAX_COUNT,
    MAX_FILES,
    MAX_LIST,
    MAX_LOOKS,
    MAX_NAME,
    MAX_RECORD_BYTES,
    MAX_RUNS,
    MAX_STOPS,
    MAX_TEXT,
    SHARD,
    Commit,
    Flag,
    Integer,
    Model,
    Number,
    Strings,
    Text,
    describe,
    invalid,
    json_name,
)

SCHEMA = 1


@dataclass(frozen=True)
class Failure:
    """A benchmark process that crashed or timed out, as the report shows it."""

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


class Binary(Model):
    """One side's node: run.json's ``binaries.base`` or ``binaries.head``."""

    path: Text() | None = None
    version: Text(64) | None = None
    sha256: Text(64) | None = None
    node_args: Strings(32, 256) = ()
    source: Text(256) | None = None
    ref: Text(256) | None = None
    sha: Commit | None = None


class Binaries(Model):
    base: Binary = Binary()
    head: Binary = Binary()


class Selection(Model):
    benchmark_dir: Text() | None = None
    categories: Strings(MAX_FILES, MAX_NAME) = ()
    filter: Strings(MAX_FILES, MAX_TEXT) = ()
    exclude: Strings(MAX_FILES, MAX_TEXT) = ()
    set: Strings(MAX_FILES, MAX_TEXT) = ()
    files: Strings(MAX_FILES, MAX_NAME) | None = None
    shard: Annotated[str, Field(pattern=SHARD, strict=True)] | None = None
    changed: dict[str, Any] | None = None  # --changed-from's placement (benchgate.run.changedfiles)


class Options(Model):
    timeout: Number | None = None
    cpuset: Text(256) | None = None
    pairing: Literal["sequential", "duet"] | None = None
    slots: Integer(1, 256) | None = None


class Progress(Model):
    completed_jobs: Integer(0, MAX_COUNT) = 0
    csv_bytes: Integer(0, 2**62) = 0
    jobs: Integer(0, MAX_COUNT) = 0


class FailureEntry(Model):
    filename: Text(MAX_NAME)
    configuration: Text(MAX_NAME) | None = None
    side: Literal["base", "head", "both"]
    exit_status: Integer(-255, 255) | None = None
    reason: Text(1024) | None = None
    stderr_tail: Text(16384) | None = None
    iteration: Integer(0, MAX_RUNS) | None = None
    configurations_done: Integer(0, MAX_COUNT) | None = None
    gating: Flag | None = None  # a head failure where the base did not fail (benchgate.run.session.mark_gating)


class SkipEntry(Model):
    filename: Text(MAX_NAME)
    reason: Text(1024) | None = None
    side: Literal["base", "head"] | None = None


class SandboxUse(Model):
    """How the head's code ran (run.json's ``sandbox``): confined by bwrap, or not, and why."""

    used: Flag
    untrusted_head: Flag | None = None  # None: an older record that does not say
    tool: Text(64) | None = None
    version: Text(64) | None = None
    reason: Text(512) | None = None

    @model_validator(mode="after")
    def _names_the_sandbox(self) -> "SandboxUse":
        if self.used and self.tool is None:
            raise invalid("must name the sandbox when it was used", "sandbox.tool")
        return self

    @property
    def unconfined_untrusted(self) -> bool:
        """A pull request's code ran without the sandbox (--no-sandbox): the comment warns."""
        return not self.used and self.untrusted_head is not False


def _side(value: Any) -> Any:
    if value not in ("base", "head"):
        raise invalid("must be base or head")
    return value


class BuildFailure(Model):
    """A side that did not build, so nothing was measured (run.json's ``build_failure``)."""

    side: Annotated[str, BeforeValidator(_side)]
    ref: Text(256) | None = None
    sha: Commit | None = None
    log_tail: Text(MAX_TEXT) | None = ""
    infrastructure: Flag  # True for the base: the machine or the base branch, not the PR

    @model_validator(mode="after")
    def _only_the_base_is_infrastructure(self) -> "BuildFailure":
        # Only the base's failure is the infrastructure's: a head that does not build must never pass as one.
        if self.infrastructure != (self.side == "base"):
            expected = str(self.side == "base").lower()
            raise invalid(f"must be {expected} for the {self.side}", "build_failure.infrastructure")
        return self


class ConfigurationRow(Model):
    args: Strings(64, MAX_TEXT)
    configuration: Text(MAX_NAME)


class FileConfigurations(Model):
    """One file's configuration children (benchgate.run.configurations.Expansion)."""

    rows: Annotated[tuple[ConfigurationRow, ...], Field(max_length=MAX_CONFIGURATIONS)] = ()
    flags: dict[str, Strings(64, MAX_TEXT)] = {}


def _environment(value: Any) -> Any:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(f"must be an object, not {json_name(value)}")
    if len(value) > 64:
        raise invalid(f"has {len(value)} fields, more than 64")
    for key, item in value.items():
        if len(key) > 64:
            raise invalid("has a key longer than 64 characters")
        if key == "warnings":
            if not isinstance(item, list) or len(item) > 64:
                raise invalid("must be a list of at most 64 warnings", "environment.warnings")
            if not all(isinstance(text, str) and len(text) <= 512 for text in item):
                raise invalid("must be strings of at most 512 characters", "environment.warnings")
        elif isinstance(item, bool | int | float | str) and len(str(item)) > 512:
            raise invalid("is longer than 512 characters", f"environment.{key}")
    return value


def _runs(value: Any) -> Any:
    if value is None or value == AUTO:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNS:
        raise invalid(f"must be a whole number from 1 to {MAX_RUNS}, or auto, not {str(value)[:20]!r}")
    return value


def _durations(value: Any) -> Any:
    if not isinstance(value, dict) or len(value) > MAX_FILES:
        raise invalid("must map file names to seconds")
    if not all(isinstance(seconds, int | float) and not isinstance(seconds, bool) for seconds in value.values()):
        raise invalid("must map file names to seconds")
    return value


def _design(value: Any) -> Any:
    if value is not None and (not isinstance(value, dict) or len(value) > 64):
        raise invalid("must be an object (the adaptive run's design)")
    return value


class RunRecord(Model):
    """run.json (schema 1). Every field but ``schema`` may be absent from a record; the run writes them all."""

    schema_version: int = Field(alias="schema")
    tool: Text(64) | None = None
    binaries: Binaries = Binaries()
    selection: Selection = Selection()
    seed: Integer(0, 2**64) | None = None
    runs: Annotated[int | str | None, BeforeValidator(_runs)] = None  # "auto": an adaptive run
    started_at: Text(64) | None = None
    ended_at: Text(64) | None = None
    complete: Flag = True
    interrupted: Flag = False
    schedule: Text(64) | None = None
    options: Options = Options()
    durations: Annotated[dict[str, float], BeforeValidator(_durations)] = {}
    samples: Integer(0, MAX_COUNT) = 0
    environment: Annotated[dict[str, Any], BeforeValidator(_environment)] = {}
    pairing: Pairing = Pairing()
    failures: Annotated[tuple[FailureEntry, ...], Field(max_length=MAX_LIST)] = ()
    skipped: Annotated[tuple[SkipEntry, ...], Field(max_length=MAX_LIST)] = ()
    protocol_warnings: Annotated[tuple[dict[str, Any], ...], Field(max_length=MAX_LIST)] = ()
    progress: Progress = Progress()
    sandbox: SandboxUse | None = None  # None: a record from before the sandbox
    build: dict[str, Any] | None = None  # side -> benchgate.build's BuildResult.record()
    build_failure: BuildFailure | None = None
    jobs: Literal["per-configuration", "per-file"] | None = None
    configurations: Annotated[dict[str, FileConfigurations], Field(max_length=MAX_FILES)] = {}
    whole_files: dict[str, Text(MAX_TEXT)] = {}
    design: Annotated[dict[str, Any] | None, BeforeValidator(_design)] = None
    looks: Annotated[tuple[LookEntry, ...], Field(max_length=MAX_LOOKS)] = ()
    stops: Literal[1, 2] | None = None  # 2: STOPS_VERSION
    stopped: Annotated[tuple[StopEntry, ...], Field(max_length=MAX_STOPS)] = ()

    @model_validator(mode="before")
    @classmethod
    def _this_version(cls, data: Any) -> Any:
        value = data.get("schema") if isinstance(data, dict) else None
        if value != SCHEMA or isinstance(value, bool):
            raise invalid(f"must be {SCHEMA}, not {str(value)[:20]!r}", "schema")
        return legacy_stops(data)  # an older adaptive record's stops, as the list they mean

    @model_validator(mode="before")
    @classmethod
    def _configurations_of_selected_files(cls, data: Any) -> Any:
        # Checked first: a file's configurations say how its stops are read.
        configurations = data.get("configurations") if isinstance(data, dict) else None
        if isinstance(configurations, dict) and configurations:
            selection = data.get("selection")
            files = selection.get("files") if isinstance(selection, dict) else None
            files = files if isinstance(files, list) else []
            unknown = [name for name in configurations if name not in files]
            if unknown:
                raise invalid("must name a selected file", f"configurations[{str(unknown[0])[:80]!r}]")
        return data

    @model_validator(mode="after")
    def _fits_the_selection(self) -> "RunRecord":
        files = self.selection.files
        if self.adaptive_run:
            if self.design is None:
                raise invalid("must be an object (the adaptive run's design)", "design")
            if files is None:
                raise invalid("must be a list of file names", "selection.files")
            check_stops(files, self.looks, self.stopped, frozenset(self.configurations), self.stops_version)
        return self

    def to_json(self) -> dict[str, Any]:
        """The record as run.json holds it: exactly the fields it was given."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    @property
    def adaptive_run(self) -> bool:
        """A ``--runs auto`` run."""
        return self.runs == AUTO

    @property
    def stops_version(self) -> int:
        return 1 if self.stops is None else self.stops

    def adaptive(self) -> AdaptiveRecord:
        """The design, looks and stops of an adaptive run, as the replay reads them."""
        version = self.stops_version
        return AdaptiveRecord(
            dict(self.design or {}),
            tuple(self.selection.files or ()),
            tuple(Look(look.runs, look.csv_bytes) for look in self.looks),
            tuple(
                Stop(
                    stop.filename,
                    stop.configuration if version == STOPS_VERSION else None,
                    stop.after_runs,
                    stop.look,
                    stop.reason,
                )
                for stop in self.stopped
            ),
            frozenset(self.configurations) if version == STOPS_VERSION else frozenset(),
            version,
        )

    def summary(self) -> "RunSummary":
        """What the report shows about this one record."""
        looks = (self.design or {}).get("looks") if self.adaptive_run else None
        if looks is not None and (
            not isinstance(looks, list)
            or not looks
            or len(looks) > MAX_LOOKS
            or not all(isinstance(runs, int) and not isinstance(runs, bool) and 1 <= runs <= MAX_RUNS for runs in looks)
        ):
            raise ValueError("design.looks: must be a list of run counts")
        warnings = tuple(self.environment.get("warnings", ()))
        return RunSummary(
            base=self.binaries.base,
            head=self.binaries.head,
            runs=self.runs,
            adaptive_runs=(looks[0], looks[-1]) if looks else None,
            complete=self.complete,
            environment=_shown_environment(self.environment),
            warnings=warnings,
            failures=tuple(
                Failure(
                    item.filename,
                    item.configuration or "",
                    item.side,
                    item.exit_status,
                    item.reason or "",
                    item.stderr_tail or "",
                )
                for item in self.failures
            ),
            skipped=tuple(Skipped(item.filename, item.reason or "") for item in self.skipped),
            shards=1,
            has_record=True,
            shard=self.selection.shard,
            build_failure=self.build_failure,
            sandbox=self.sandbox,
            pairing=self.pairing.mode,
        )

    def check_resumable(self, where: str) -> None:
        """What ``--resume`` rebuilds the run from is all there; InputError naming the first missing field."""
        required = [
            ("binaries", "an object"),
            *(
                (f"binaries.{side}.{key}", kind)
                for side in ("base", "head")
                for key, kind in (("path", "a string"), ("sha256", "a string"), ("node_args", "a list"))
            ),
            ("selection", "an object"),
            ("selection.benchmark_dir", "a string"),
            ("selection.files", "a list"),
            ("selection.set", "a list"),
            ("runs", "a whole number"),
            ("seed", "a whole number"),
            ("options", "an object"),
            ("progress", "an object"),
            ("progress.completed_jobs", "a whole number"),
            ("progress.csv_bytes", "a whole number"),
        ]
        for path, kind in required:
            part: Any = self
            for name in path.split("."):
                if name not in part.model_fields_set:
                    raise InputError(f"--resume: run record field {path}: is missing ({kind} expected)", where=where)
                part = getattr(part, name)
        if self.adaptive_run and self.stops_version != STOPS_VERSION:
            raise InputError(
                "--resume: an adaptive run recorded by an older benchgate (its files stopped whole); "
                "`benchgate report` reads it, but it cannot be continued: start a new run",
                where=where,
            )
        for name, found in self.configurations.items():
            if not found.rows or set(found.flags) < {"base", "head"}:
                raise InputError(
                    f"--resume: run record field configurations[{name[:80]!r}]: must be a selected file's rows "
                    "(args, configuration) and flags",
                    where=where,
                )


def _shown_environment(environment: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for key, item in environment.items():
        if key == "warnings":
            continue
        if isinstance(item, bool | int | str) or (
            isinstance(item, float) and item == item and abs(item) != float("inf")
        ):
            pairs.append((key, str(item)))
        elif isinstance(item, list) and len(item) <= 64 and all(isinstance(x, int | str) for x in item):
            pairs.append((key, ", ".join(str(x) for x in item)[:512]))
        # Nested values are not shown: the comment lists the machine, not every detail.
    return tuple(pairs)


@dataclass(frozen=True)
class RunSummary:
    """What the report shows about the run: validated, merged over shards."""

    base: Binary = Binary()
    head: Binary = Binary()
    runs: int | str | None = None  # "auto": an adaptive run (benchgate.results.lookrecord)
    adaptive_runs: tuple[int, int] | None = None  # an adaptive run's fewest and most runs per side
    complete: bool = True
    environment: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    shards: int = 0
    has_record: bool = False
    shard: str | None = None  # "I/N" when this record is one shard of a sharded run
    build_failure: BuildFailure | None = None
    sandbox: SandboxUse | None = None  # None: a record from before the sandbox
    pairing: str = "sequential"  # "duet": base and head ran side by side (benchgate.results.pairs)
    pairs: tuple | None = None  # a duet run's (base rows, head rows) in the samples, set by rundirs.load


def parse_run_record(data: Any, where: str, *, prefix: str = "") -> RunRecord:
    """A run record from parsed JSON; InputError (one line: the file, the field's path and why) when malformed."""
    if not isinstance(data, dict):
        raise InputError("run record is not a JSON object", where=where)
    try:
        record = RunRecord.model_validate(data)
        record.summary()  # what only the report reads (the design's looks) is checked now, not at the report
        return record
    except ValidationError as error:
        raise describe(error, where, prefix) from None
    except ValueError as error:
        raise InputError(f"{prefix}run record field {error}", where=where) from None


def load_run_record(path: Path, *, resume: bool = False) -> RunRecord:
    """Read and check run.json (size-capped, then every field); InputError naming the file, the field and why.

    ``resume``: for ``--resume``, which also needs every field the run is rebuilt from
    (``RunRecord.check_resumable``) and refuses a run that stopped at its build.
    """
    where = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_RECORD_BYTES:
            raise InputError(f"file is too large ({size} bytes, limit {MAX_RECORD_BYTES})", where=where)
        data = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise InputError("no run record (run.json) here", where=where) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", where=where) from None
    except json.JSONDecodeError as error:
        raise InputError(f"line {error.lineno}: not valid JSON: {error.msg}", where=where) from None
    if resume and isinstance(data, dict) and data.get("build_failure") is not None:
        raise InputError("--resume: this run stopped because a build failed; nothing was run to continue", where=where)
    record = parse_run_record(data, where, prefix="--resume: " if resume else "")
    if resume:
        record.check_resumable(where)
    return record


def write_run_record(path: Path, record: RunRecord | dict[str, Any]) -> RunRecord:
    """The one writer of run.json: checked against the model, then written atomically (a temporary file, renamed).

    A dict is the run's record as it is being filled; what is written is exactly its fields.
    """
    if not isinstance(record, RunRecord):
        record = RunRecord.model_validate(record)
    data = record.to_json()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return record
