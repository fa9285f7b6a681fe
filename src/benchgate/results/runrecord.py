"""run.json (docs/formats.md), one versioned model: written atomically by the run, read back as untrusted data
(a PR's code ran where it was written: every field is checked, unknown fields are kept, never shown)."""

import itertools
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from benchgate.errors import InputError
from benchgate.results import recordparts as parts
from benchgate.results.pairs import Pairing
from benchgate.results.recordparts import Binary, BuildFailure, SandboxUse

SCHEMA = 1


class RunRecord(parts.Model):
    """run.json (schema 1). Every field but ``schema`` may be absent from a record; the run writes them all."""

    schema_version: int = Field(alias="schema")
    tool: parts.Text(64) | None = None
    binaries: parts.Binaries = parts.Binaries()
    selection: parts.Selection = parts.Selection()
    seed: parts.Integer(0, 2**64) | None = None
    runs: parts.Runs = None  # "auto": an adaptive run
    started_at: parts.Text(64) | None = None
    ended_at: parts.Text(64) | None = None
    complete: parts.Flag = True
    interrupted: parts.Flag = False
    schedule: parts.Text(64) | None = None
    options: parts.Options = parts.Options()
    durations: Annotated[dict[str, Annotated[float, Field(strict=True)]], Field(max_length=parts.MAX_FILES)] = {}
    samples: parts.Integer(0, parts.MAX_COUNT) = 0
    environment: parts.Environment = {}
    pairing: Pairing = Pairing()
    failures: Annotated[tuple[parts.FailureEntry, ...], Field(max_length=parts.MAX_LIST)] = ()
    skipped: Annotated[tuple[parts.SkipEntry, ...], Field(max_length=parts.MAX_LIST)] = ()
    protocol_warnings: Annotated[tuple[dict[str, Any], ...], Field(max_length=parts.MAX_LIST)] = ()
    progress: parts.Progress = parts.Progress()
    sandbox: SandboxUse | None = None  # None: a record from before the sandbox
    build: dict[str, Any] | None = None  # side -> benchgate.build's BuildResult.record()
    build_failure: BuildFailure | None = None
    jobs: Literal["per-configuration", "per-file"] | None = None
    configurations: Annotated[dict[str, parts.FileConfigurations], Field(max_length=parts.MAX_FILES)] = {}
    whole_files: dict[str, parts.Text(parts.MAX_TEXT)] = {}
    design: Annotated[dict[str, Any], Field(max_length=64)] | None = None
    looks: Annotated[tuple[parts.Look, ...], Field(max_length=parts.MAX_LOOKS)] = ()
    stops: Literal[1, 2] = 1  # 2: STOPS_VERSION, per-unit stops (1: an older record's whole-file stops)
    stopped: Annotated[tuple[parts.Stop, ...], Field(max_length=parts.MAX_STOPS)] = ()
    prior: parts.Prior | None = None  # None: no history store, or a record from before the prior

    @model_validator(mode="before")
    @classmethod
    def _this_version(cls, data: Any) -> Any:
        value = data.get("schema") if isinstance(data, dict) else None
        if value != SCHEMA or isinstance(value, bool):
            raise parts.invalid(f"must be {SCHEMA}, not {str(value)[:20]!r}", "schema")
        stopped = data.get("stopped")
        if data.get("stops", 1) == 1 and isinstance(stopped, dict):  # an older record's whole-file stops, as a list
            items = [{**item, "filename": name} if isinstance(item, dict) else item for name, item in stopped.items()]
            data = {**data, "stopped": items}
        return data

    @model_validator(mode="after")
    def _fits_the_selection(self) -> "RunRecord":
        files = self.selection.files
        # Before the stops: a file's configurations say how its stops are read.
        unknown = [name for name in self.configurations if name not in (files or ())]
        if unknown:
            raise parts.invalid("must name a selected file", f"configurations[{unknown[0][:80]!r}]")
        if self.adaptive_run:
            if self.design is None:
                raise parts.invalid("must be an object (the adaptive run's design)", "design")
            if files is None:
                raise parts.invalid("must be a list of file names", "selection.files")
            looks = self.design.get("looks")  # the design's first and last look: its fewest and most runs
            if not (isinstance(looks, list) and 0 < len(looks) <= parts.MAX_LOOKS) or not all(
                type(runs) is int and 1 <= runs <= parts.MAX_RUNS for runs in looks
            ):
                raise parts.invalid("must be a list of run counts", "design.looks")
            for index, (earlier, later) in enumerate(itertools.pairwise(self.looks), start=1):
                if later.runs <= earlier.runs or later.csv_bytes < earlier.csv_bytes:
                    raise parts.invalid(
                        "looks must follow each other: more runs, results.csv no shorter", f"looks[{index}]"
                    )
            # Each stop names a selected file, once, as a comparison exactly when its file ran one configuration a job
            # (a version 1 record's stops are all whole files).
            per_unit = self.stops == parts.STOPS_VERSION
            seen: set[tuple[str, str | None]] = set()
            for index, stop in enumerate(self.stopped):
                path = f"stopped[{index}]"
                if stop.filename not in files:
                    raise parts.invalid("must name a selected file and say why it stopped", path)
                if per_unit and (stop.configuration is not None) != (stop.filename in self.configurations):
                    raise parts.invalid(
                        "must be a comparison of a file run one configuration a job, null for a file run whole",
                        f"{path}.configuration",
                    )
                unit = (stop.filename, stop.configuration if per_unit else None)
                if unit in seen:
                    raise parts.invalid("stops a unit that already stopped", path)
                seen.add(unit)
        return self

    def to_json(self) -> dict[str, Any]:
        """The record as run.json holds it: exactly the fields it was given."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    @property
    def adaptive_run(self) -> bool:
        """A ``--runs auto`` run."""
        return self.runs == parts.AUTO

    @property
    def row_files(self) -> frozenset[str]:
        """The files whose comparisons stop one by one (one job per configuration); none in an older record."""
        return frozenset(self.configurations) if self.stops == parts.STOPS_VERSION else frozenset()

    def stopped_units(self) -> dict[tuple[str, str | None], parts.Stop]:
        """Each stop by its unit, (filename, configuration or None: the whole file); an older record's are whole."""
        per_unit = self.stops == parts.STOPS_VERSION
        return {(stop.filename, stop.configuration if per_unit else None): stop for stop in self.stopped}

    def summary(self) -> "RunSummary":
        """What the report shows about this one record."""
        looks = self.design["looks"] if self.adaptive_run else None
        return RunSummary(
            base=self.binaries.base,
            head=self.binaries.head,
            runs=self.runs,
            adaptive_runs=(looks[0], looks[-1]) if looks else None,
            complete=self.complete,
            environment=_shown_environment(self.environment),
            warnings=tuple(self.environment.get("warnings", ())),
            failures=self.failures,
            skipped=self.skipped,
            shards=1,
            has_record=True,
            shard=self.selection.shard,
            build_failure=self.build_failure,
            sandbox=self.sandbox,
            pairing=self.pairing.mode,
            prior={} if self.prior is None else self.prior.variances(),
        )

    def check_resumable(self, where: str) -> None:
        """What ``--resume`` rebuilds the run from is all there; InputError naming the first missing field."""
        binary = (("path", "a string"), ("sha256", "a string"), ("node_args", "a list"))
        required = [
            ("binaries", "an object"),
            *((f"binaries.{side}.{key}", kind) for side in ("base", "head") for key, kind in binary),
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
        if self.adaptive_run and self.stops != parts.STOPS_VERSION:
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
        if isinstance(item, bool | int | str) or (isinstance(item, float) and math.isfinite(item)):
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
    runs: int | str | None = None  # "auto": an adaptive run (benchgate.results.recordparts)
    adaptive_runs: tuple[int, int] | None = None  # an adaptive run's fewest and most runs per side
    complete: bool = True
    environment: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    failures: tuple[parts.FailureEntry, ...] = ()
    skipped: tuple[parts.SkipEntry, ...] = ()
    shards: int = 0
    has_record: bool = False
    shard: str | None = None  # "I/N" when this record is one shard of a sharded run
    build_failure: BuildFailure | None = None
    sandbox: SandboxUse | None = None  # None: a record from before the sandbox
    pairing: str = "sequential"  # "duet": base and head ran side by side (benchgate.results.pairs)
    pairs: tuple | None = None  # a duet run's (base rows, head rows, head CPU sets) in the samples, by rundirs.load
    prior: dict[tuple[str, str], float] = field(default_factory=dict)  # run.json's prior: variance per row key


def parse_run_record(data: Any, where: str, *, prefix: str = "") -> RunRecord:
    """A run record from parsed JSON; InputError (one line: the file, the field's path and why) when malformed."""
    if not isinstance(data, dict):
        raise InputError("run record is not a JSON object", where=where)
    try:
        return RunRecord.model_validate(data)
    except ValidationError as error:
        raise parts.describe(error, where, prefix) from None


def load_run_record(path: Path, *, resume: bool = False) -> RunRecord:
    """Read and check run.json (size-capped, then every field; ``resume``: also what --resume needs) or InputError."""
    where = str(path)
    try:
        parts.check_size(path, parts.MAX_RECORD_BYTES)
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


def write_run_record(path: Path, fields: dict[str, Any]) -> RunRecord:
    """The one writer of run.json: checked against the model, then written atomically (a temporary file, renamed)."""
    record = RunRecord.model_validate(fields)
    write_atomically(path, json.dumps(record.to_json(), indent=2) + "\n")
    return record


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` whole: a temporary file, fsynced, renamed over it, the rename fsynced (a crash
    leaves the old file or the new one, never a part)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        os.fchmod(handle, 0o644)  # as an ordinary file: other jobs and users read run.json (mkstemp's is 0600)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
