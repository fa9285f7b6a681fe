"""run.json: written atomically by the run, read back as untrusted data by everyone else.

A PR's code ran on the machine that wrote these files, so ``benchgate report``
trusts nothing in them: every field of run.json is type- and length-checked
(unknown fields are ignored, never echoed), and the result is reduced to the
plain values the report shows (``RunSummary``). Reading whole run directories
(size caps, shards) is ``benchgate.results.rundirs``.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchgate.errors import InputError
from benchgate.results.lookrecord import AUTO, is_adaptive
from benchgate.results.pairs import validate_pairing
from benchgate.results.recordfields import MAX_LIST, MAX_TEXT, FieldChecker

MAX_NAME = 512
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
class SandboxUse:
    """How the head's code ran (run.json's ``sandbox``): confined by bwrap, or not, and why."""

    used: bool
    untrusted_head: bool | None  # None: an older record that does not say
    tool: str | None = None
    version: str | None = None
    reason: str | None = None

    @property
    def unconfined_untrusted(self) -> bool:
        """A pull request's code ran without the sandbox (--no-sandbox): the comment warns."""
        return not self.used and self.untrusted_head is not False


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


def _binary(check: FieldChecker, value: Any, path: str) -> Binary:
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


def _environment(check: FieldChecker, value: Any) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
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


def _build_failure(check: FieldChecker, value: Any) -> BuildFailure | None:
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


def _flag(check: FieldChecker, value: Any, path: str, *, optional: bool) -> bool | None:
    if value is None and optional:
        return None
    if not isinstance(value, bool):
        raise check.fail(path, "must be true or false")
    return value


def _sandbox(check: FieldChecker, value: Any) -> SandboxUse | None:
    if value is None:
        return None
    data = check.mapping(value, "sandbox", optional=False)
    used = _flag(check, data.get("used"), "sandbox.used", optional=False)
    tool = check.text(data.get("tool"), "sandbox.tool", 64)
    if used and tool is None:
        raise check.fail("sandbox.tool", "must name the sandbox when it was used")
    return SandboxUse(
        used=bool(used),
        untrusted_head=_flag(check, data.get("untrusted_head"), "sandbox.untrusted_head", optional=True),
        tool=tool,
        version=check.text(data.get("version"), "sandbox.version", 64),
        reason=check.text(data.get("reason"), "sandbox.reason", 512),
    )


def _runs(check: FieldChecker, record: dict[str, Any]) -> int | str | None:
    if is_adaptive(record):
        return AUTO
    return check.integer(record.get("runs"), "runs", 1, 100000)


def _adaptive_runs(check: FieldChecker, record: dict[str, Any]) -> tuple[int, int] | None:
    """The design's first and last look of an adaptive run (its fewest and most runs per side)."""
    if not is_adaptive(record):
        return None
    looks = check.mapping(record.get("design"), "design", optional=False).get("looks")
    if not isinstance(looks, list) or not looks or len(looks) > MAX_LIST:
        raise check.fail("design.looks", "must be a list of run counts")
    first = check.integer(looks[0], "design.looks[0]", 1, 100000, optional=False)
    last = check.integer(looks[-1], "design.looks[-1]", 1, 100000, optional=False)
    assert first is not None and last is not None
    return first, last


def validate_record(record: dict[str, Any], where: str) -> RunSummary:
    """Check an untrusted run.json strictly and reduce it to a RunSummary."""
    check = FieldChecker(where)
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
        runs=_runs(check, record),
        adaptive_runs=_adaptive_runs(check, record),
        complete=complete,
        environment=environment,
        warnings=warnings,
        failures=tuple(failures),
        skipped=tuple(skipped),
        shards=1,
        has_record=True,
        shard=shard,
        build_failure=_build_failure(check, record.get("build_failure")),
        sandbox=_sandbox(check, record.get("sandbox")),
        pairing=validate_pairing(record.get("pairing"), where).mode,
    )


def write_run_record(path: Path, record: dict[str, Any]) -> None:
    """Write run.json atomically (write to a temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def read_run_record(path: Path) -> dict[str, Any]:
    """Read run.json; InputError naming the file when it is missing or not a JSON object."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no run record (run.json) here", where=str(path)) from None
    except json.JSONDecodeError as error:
        raise InputError(f"line {error.lineno}: not valid JSON: {error.msg}", where=str(path)) from None
    if not isinstance(record, dict):
        raise InputError("run record is not a JSON object", where=str(path))
    return record
