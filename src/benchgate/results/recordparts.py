"""The parts of run.json (``benchgate.results.runrecord.RunRecord``), an adaptive run's looks and stops
(``runs: "auto"``, docs/formats.md), and the checks of its free-form fields."""

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from benchgate.results import recordfields as fields

AUTO = "auto"
STOPS_VERSION = 2  # "stopped" is a list of per-unit stops (before: an object of per-file stops)


class Binary(fields.Model):
    """One side's node: run.json's ``binaries.base`` or ``binaries.head``."""

    path: fields.Text() | None = None
    version: fields.Text(64) | None = None
    sha256: fields.Text(64) | None = None
    node_args: fields.Strings(32, 256) = ()
    source: fields.Text(256) | None = None
    ref: fields.Text(256) | None = None
    sha: fields.Commit | None = None


class Binaries(fields.Model):
    base: Binary = Binary()
    head: Binary = Binary()


class Selection(fields.Model):
    benchmark_dir: fields.Text() | None = None
    categories: fields.Strings(fields.MAX_FILES, fields.MAX_NAME) = ()
    filter: fields.Strings(fields.MAX_FILES, fields.MAX_TEXT) = ()
    exclude: fields.Strings(fields.MAX_FILES, fields.MAX_TEXT) = ()
    set: fields.Strings(fields.MAX_FILES, fields.MAX_TEXT) = ()
    files: fields.Strings(fields.MAX_FILES, fields.MAX_NAME) | None = None
    shard: Annotated[str, Field(pattern=fields.SHARD, strict=True)] | None = None
    changed: dict[str, Any] | None = None  # --changed-from's placement (benchgate.run.changedfiles)


class Options(fields.Model):
    timeout: fields.Number | None = None
    cpuset: fields.Text(256) | None = None
    pairing: Literal["sequential", "duet"] | None = None
    slots: fields.Integer(1, 256) | None = None


class Progress(fields.Model):
    completed_jobs: fields.Integer(0, fields.MAX_COUNT) = 0
    csv_bytes: fields.Integer(0, 2**62) = 0
    jobs: fields.Integer(0, fields.MAX_COUNT) = 0


class FailureEntry(fields.Model):
    filename: fields.Text(fields.MAX_NAME)
    configuration: fields.Text(fields.MAX_NAME) | None = None
    side: Literal["base", "head", "both"]
    exit_status: fields.Integer(-255, 255) | None = None
    reason: fields.Text(1024) | None = None
    stderr_tail: fields.Text(16384) | None = None
    iteration: fields.Integer(0, fields.MAX_RUNS) | None = None
    configurations_done: fields.Integer(0, fields.MAX_COUNT) | None = None
    gating: fields.Flag | None = None  # a head failure where the base did not fail (benchgate.run.session.mark_gating)


class SkipEntry(fields.Model):
    filename: fields.Text(fields.MAX_NAME)
    reason: fields.Text(1024) | None = None
    side: Literal["base", "head"] | None = None


class SandboxUse(fields.Model):
    """How the head's code ran (run.json's ``sandbox``): confined by bwrap, or not, and why."""

    used: fields.Flag
    untrusted_head: fields.Flag | None = None  # None: an older record that does not say
    tool: fields.Text(64) | None = None
    version: fields.Text(64) | None = None
    reason: fields.Text(512) | None = None

    @model_validator(mode="after")
    def _names_the_sandbox(self) -> "SandboxUse":
        if self.used and self.tool is None:
            raise fields.invalid("must name the sandbox when it was used", "sandbox.tool")
        return self

    @property
    def unconfined_untrusted(self) -> bool:
        """A pull request's code ran without the sandbox (--no-sandbox): the comment warns."""
        return not self.used and self.untrusted_head is not False


def _side(value: Any) -> Any:
    if value not in ("base", "head"):
        raise fields.invalid("must be base or head")
    return value


class BuildFailure(fields.Model):
    """A side that did not build, so nothing was measured (run.json's ``build_failure``)."""

    side: Annotated[str, BeforeValidator(_side)]
    ref: fields.Text(256) | None = None
    sha: fields.Commit | None = None
    log_tail: fields.Text(fields.MAX_TEXT) | None = ""
    infrastructure: fields.Flag  # True for the base: the machine or the base branch, not the PR

    @model_validator(mode="after")
    def _only_the_base_is_infrastructure(self) -> "BuildFailure":
        # Only the base's failure is the infrastructure's: a head that does not build must never pass as one.
        if self.infrastructure != (self.side == "base"):
            expected = str(self.side == "base").lower()
            raise fields.invalid(f"must be {expected} for the {self.side}", "build_failure.infrastructure")
        return self


class ConfigurationRow(fields.Model):
    args: fields.Strings(64, fields.MAX_TEXT)
    configuration: fields.Text(fields.MAX_NAME)


class FileConfigurations(fields.Model):
    """One file's configuration children (benchgate.run.configurations.Expansion)."""

    rows: Annotated[tuple[ConfigurationRow, ...], Field(max_length=fields.MAX_CONFIGURATIONS)] = ()
    flags: dict[str, fields.Strings(64, fields.MAX_TEXT)] = {}


class PriorRow(fields.Model):
    """One row's prior: the per-sample variance of its log rates main's history gave, from ``runs`` stored runs."""

    filename: fields.Text(fields.MAX_NAME)
    configuration: fields.Text(fields.MAX_NAME)
    variance: Annotated[fields.Number, Field(gt=0)]
    runs: fields.Integer(1, fields.MAX_RUNS)


class Prior(fields.Model):
    """run.json's ``prior`` (``benchgate.run.plan``, docs/formats.md): main's history of each row's noise."""

    store: fields.Text(1024)
    runner: fields.Text(64)
    branch: fields.Text(256) = "main"
    node_flags: fields.Text(fields.MAX_TEXT) = ""
    recent: fields.Integer(1, fields.MAX_RUNS)
    rows: Annotated[tuple[PriorRow, ...], Field(max_length=fields.MAX_STOPS)] = ()

    def variances(self) -> tuple[tuple[str, str, float], ...]:
        """(filename, configuration, variance) per row, as ``RunSummary.prior`` holds them."""
        return tuple((row.filename, row.configuration, row.variance) for row in self.rows)


def check_environment(value: Any) -> Any:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fields.invalid(f"must be an object, not {fields.json_name(value)}")
    if len(value) > 64:
        raise fields.invalid(f"has {len(value)} fields, more than 64")
    for key, item in value.items():
        if len(key) > 64:
            raise fields.invalid("has a key longer than 64 characters")
        if key == "warnings":
            if not isinstance(item, list) or len(item) > 64:
                raise fields.invalid("must be a list of at most 64 warnings", "environment.warnings")
            if not all(isinstance(text, str) and len(text) <= 512 for text in item):
                raise fields.invalid("must be strings of at most 512 characters", "environment.warnings")
        elif isinstance(item, bool | int | float | str) and len(str(item)) > 512:
            raise fields.invalid("is longer than 512 characters", f"environment.{key}")
    return value


def check_runs(value: Any) -> Any:
    if value is None or value == AUTO:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= fields.MAX_RUNS:
        raise fields.invalid(f"must be a whole number from 1 to {fields.MAX_RUNS}, or auto, not {str(value)[:20]!r}")
    return value


class Look(fields.Model):
    """One of run.json's ``looks``: after ``runs`` runs of every running file, results.csv was ``csv_bytes`` long."""

    runs: fields.Integer(1, fields.MAX_RUNS)
    csv_bytes: fields.Integer(0, 2**62)
    csv_sha256: fields.Digest | None = None  # of those bytes (None: before the digest)


def _short(value: Any) -> Any:
    if not isinstance(value, str) or len(value) > 32:
        raise fields.invalid("must be a short string")
    return value


class Stop(fields.Model):
    """One of run.json's ``stopped``: why a unit stopped after ``after_runs`` runs (look index ``look``)."""

    filename: fields.Text(fields.MAX_NAME)
    configuration: fields.Text(fields.MAX_NAME) | None = None  # None: the whole file
    after_runs: fields.Integer(1, fields.MAX_RUNS)
    look: fields.Integer(0, fields.MAX_LOOKS - 1)
    reason: Annotated[str, BeforeValidator(_short)]  # decided, hopeless or max-runs

    @property
    def unit(self) -> tuple[str, str | None]:
        return (self.filename, self.configuration)


@dataclass(frozen=True)
class AdaptiveRecord:
    """The adaptive part of one run.json, as the replay reads it."""

    design: dict[str, Any]
    files: tuple[str, ...]  # the selection's files, in the order the run knew them
    looks: tuple[Look, ...]
    stops: tuple[Stop, ...]
    row_files: frozenset[str] = frozenset()  # files whose comparisons stop one by one (one job per configuration)
