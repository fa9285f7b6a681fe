"""The parts of run.json (``benchgate.results.runrecord.RunRecord``): binaries, selection, options, progress,
failures and skips, the sandbox, a build failure, the configurations of each file, and the checks of the free-form
fields (environment, durations, design).
"""

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from benchgate.results.lookrecord import AUTO
from benchgate.results.recordfields import (
    MAX_CONFIGURATIONS,
    MAX_COUNT,
    MAX_FILES,
    MAX_NAME,
    MAX_RUNS,
    MAX_TEXT,
    SHARD,
    Commit,
    Flag,
    Integer,
    Model,
    Number,
    Strings,
    Text,
    invalid,
    json_name,
)


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


def check_environment(value: Any) -> Any:
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


def check_runs(value: Any) -> Any:
    if value is None or value == AUTO:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNS:
        raise invalid(f"must be a whole number from 1 to {MAX_RUNS}, or auto, not {str(value)[:20]!r}")
    return value


def check_durations(value: Any) -> Any:
    if not isinstance(value, dict) or len(value) > MAX_FILES:
        raise invalid("must map file names to seconds")
    if not all(isinstance(seconds, int | float) and not isinstance(seconds, bool) for seconds in value.values()):
        raise invalid("must map file names to seconds")
    return value


def check_design(value: Any) -> Any:
    if value is not None and (not isinstance(value, dict) or len(value) > 64):
        raise invalid("must be an object (the adaptive run's design)")
    return value
