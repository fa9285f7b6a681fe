"""The parts of run.json (``benchgate.results.runrecord.RunRecord``, docs/formats.md): its limits (all of them,
once), field types and sub-models, an adaptive run's looks and stops (``runs: "auto"``), the checks of its free-form
fields, and the one-line error a bad field gets ("run record field PATH: WHY", from pydantic's first error)."""

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, WrapValidator, model_validator
from pydantic_core import PydanticCustomError

from benchgate.errors import InputError

AUTO = "auto"
STOPS_VERSION = 2  # "stopped" is a list of per-unit stops (before: an object of per-file stops)
MAX_NAME = 512  # a benchmark file or configuration name (results.csv, pairs.csv, failures, skips)
MAX_TEXT = 4096  # a free text field (a log tail, a reason)
MAX_LIST = 5000  # failures, skips, configurations of a file
MAX_CONFIGURATIONS = 5000  # of one file (benchgate.run.configurations)
MAX_LOOKS = 1000
MAX_FILES = 5000
MAX_STOPS = 100_000
MAX_RUNS = 100_000
MAX_COUNT = 10**9  # samples, pairs
MAX_RECORD_BYTES = 16 * 1024 * 1024  # with one job per configuration, run.json lists every configuration run
MAX_CSV_BYTES = 64 * 1024 * 1024  # a shard's results.csv
MAX_PAIRS_BYTES = 64 * 1024 * 1024  # a duet shard's pairs.csv
MAX_SHARDS = 64  # result sets in one report
# How a JSON value's type is named in an error (JSON gives exactly these types).
_JSON_NAMES = {
    type(None): "null",
    bool: "true or false",
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "a whole number",
    float: "a number",
}


class Model(BaseModel):
    """A part of run.json: frozen; fields this version does not know are kept as they are (never shown)."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)


def check_size(path: Path, limit: int) -> None:
    """InputError when the untrusted file ``path`` is larger than ``limit`` bytes: it is not read."""
    if (size := path.stat().st_size) > limit:
        raise InputError(f"file is too large ({size} bytes, limit {limit})", where=str(path))


def invalid(reason: str, field: str | None = None) -> PydanticCustomError:
    """A field's error in words (``field``: its path, when the check is the whole record's)."""
    return PydanticCustomError("run_record", "{reason}", {"reason": reason, "field": field})


def Text(limit: int = MAX_TEXT) -> Any:  # noqa: N802 - a type
    """A string of at most ``limit`` characters."""
    return Annotated[str, Field(max_length=limit, strict=True)]


def Integer(low: int, high: int) -> Any:  # noqa: N802
    """A whole number from ``low`` to ``high`` (never true or false)."""
    return Annotated[int, Field(ge=low, le=high, strict=True)]


def Checked(kind: Any, reason: str) -> Any:  # noqa: N802
    """``kind``, whose every error reads ``reason`` (``{value}``: the value given, shortened)."""

    def check(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise invalid(reason.format(value=repr(str(value)[:20]))) from None

    return Annotated[kind, WrapValidator(check)]


def Strings(items: int = 64, length: int = 256) -> Any:  # noqa: N802
    """A list of at most ``items`` strings of at most ``length`` characters."""
    return Annotated[tuple[Text(length), ...], Field(max_length=items)]


Commit = Checked(Annotated[str, Field(pattern=r"^[0-9a-f]{7,64}$", strict=True)], "must be a hexadecimal commit SHA")
Digest = Checked(
    Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", strict=True)], "must be a sha256 in hex (64 lowercase hex digits)"
)
Shard = Checked(Annotated[str, Field(pattern=r"^[1-9][0-9]{0,3}/[1-9][0-9]{0,3}$", strict=True)], "must look like I/N")
Flag = Annotated[bool, Field(strict=True)]
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]


def _location(parts: Sequence[int | str]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.startswith(("function-", "union[", "tagged-union")) or "[" in part and part.endswith("]"):
            continue  # pydantic's name of a validator or a union member, not a field
        else:
            text += f".{part}" if text else part
    return text


_REASONS = {
    **dict.fromkeys(("model_type", "model_attributes_type", "dict_type"), "must be an object, not {kind}"),
    **dict.fromkeys(("list_type", "tuple_type"), "must be a list, not {kind}"),
    "string_type": "must be a string, not {kind}",
    "string_too_long": "is {length} characters long, more than {max_length}",
    "too_long": "has {length} entries, more than {max_length}",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number, not {kind}",
    "greater_than_equal": "must be a whole number of at least {ge}, not {value}",
    "less_than_equal": "must be a whole number of at most {le}, not {value}",
    "float_type": "must be a number, not {kind}",
    "finite_number": "must be a finite number",
    "missing": "is missing",
}  # and a run_record error (``invalid``): its reason


def _reason(error: dict) -> str:
    context, value = error.get("ctx") or {}, error.get("input")
    if error["type"] == "literal_error":
        expected = context["expected"]  # 'a', 'b' or 'c': "one of a, b, c"; numbers as they are ("1 or 2")
        if "'" in expected:
            return f"must be one of {expected.replace(chr(39), '').replace(' or ', ', ')}"
        return f"must be {expected}"
    template = _REASONS.get(error["type"])
    if template is None:
        return error["msg"]
    length = len(value) if isinstance(value, str | list | tuple | dict) else 0
    return template.format(
        kind=_JSON_NAMES.get(type(value), type(value).__name__), value=repr(str(value)[:40]), length=length, **context
    )


def describe(error: ValidationError, where: str, prefix: str = "") -> InputError:
    """The first error of a record's validation in one line: the file, the field's JSON path and why."""
    first = error.errors(include_url=False)[0]
    path = (first.get("ctx") or {}).get("field") or _location(first["loc"])
    field = f" field {path}" if path else ""
    return InputError(f"{prefix}run record{field}: {_reason(first)}", where=where)


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
    shard: Shard | None = None
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


class BuildFailure(Model):
    """A side that did not build, so nothing was measured (run.json's ``build_failure``)."""

    side: Checked(Literal["base", "head"], "must be base or head")
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
    """One file's configuration children, as benchgate.run.configurations lists them and the run's plan uses them."""

    rows: Annotated[tuple[ConfigurationRow, ...], Field(max_length=MAX_CONFIGURATIONS)] = ()
    flags: dict[str, Strings(64, MAX_TEXT)] = {}


class PriorRow(Model):
    """One row's prior: the per-sample variance of its log rates main's history gave, from ``runs`` stored runs."""

    filename: Text(MAX_NAME)
    configuration: Text(MAX_NAME)
    variance: Annotated[Number, Field(gt=0)]
    runs: Integer(1, MAX_RUNS)


class Prior(Model):
    """run.json's ``prior`` (``benchgate.run.plan``, docs/formats.md): main's history of each row's noise."""

    store: Text(1024)
    runner: Text(64)
    branch: Text(256) = "main"
    node_flags: Text(MAX_TEXT) = ""
    recent: Integer(1, MAX_RUNS)
    rows: Annotated[tuple[PriorRow, ...], Field(max_length=MAX_STOPS)] = ()

    def variances(self) -> dict[tuple[str, str], float]:
        """Each row's variance by (filename, configuration), as ``RunSummary.prior`` holds them."""
        return {(row.filename, row.configuration): row.variance for row in self.rows}


def _shown_sizes(environment: dict[str, Any] | None) -> dict[str, Any]:
    environment = environment or {}
    warnings = environment.get("warnings", [])
    if not isinstance(warnings, list) or len(warnings) > 64 or not all(isinstance(text, str) for text in warnings):
        raise invalid("must be a list of at most 64 warnings", "environment.warnings")
    for key, item in environment.items():
        texts = item if key == "warnings" else [str(item)] if isinstance(item, bool | int | float | str) else []
        if any(len(text) > 512 for text in texts):
            raise invalid("is longer than 512 characters", f"environment.{key}")
    return environment


# run.json's ``environment``: free-form, but small (null: none); its values are shown, so each is short.
Environment = Annotated[Annotated[dict[Text(64), Any], Field(max_length=64)] | None, AfterValidator(_shown_sizes)]


Runs = Checked(
    Integer(1, MAX_RUNS) | Literal["auto"] | None,
    f"must be a whole number from 1 to {MAX_RUNS}, or auto, not {{value}}",
)


class Look(Model):
    """One of run.json's ``looks``: after ``runs`` runs of every running file, results.csv was ``csv_bytes`` long."""

    runs: Integer(1, MAX_RUNS)
    csv_bytes: Integer(0, 2**62)
    csv_sha256: Digest | None = None  # of those bytes (None: before the digest)


class Stop(Model):
    """One of run.json's ``stopped``: why a unit stopped after ``after_runs`` runs (look index ``look``)."""

    filename: Text(MAX_NAME)
    configuration: Text(MAX_NAME) | None = None  # None: the whole file
    after_runs: Integer(1, MAX_RUNS)
    look: Integer(0, MAX_LOOKS - 1)
    reason: Checked(Text(32), "must be a short string")  # decided, hopeless or max-runs
