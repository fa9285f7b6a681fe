"""run.json's limits (all of them, once), its field types, and the one-line error a bad field gets
("run record field PATH: WHY", from pydantic's first error)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from benchgate.errors import InputError

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
_JSON_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a whole number", float: "a number"}


class Model(BaseModel):
    """A part of run.json: frozen; fields this version does not know are kept as they are (never shown)."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)


def json_name(value: Any) -> str:
    """How a JSON value's type is named in an error."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return next((name for kind, name in _JSON_NAMES.items() if isinstance(value, kind)), type(value).__name__)


def invalid(reason: str, field: str | None = None) -> PydanticCustomError:
    """A field's error in words (``field``: its path, when the check is the whole record's)."""
    return PydanticCustomError("run_record", "{reason}", {"reason": reason, "field": field})


def Text(limit: int = MAX_TEXT) -> Any:  # noqa: N802 - a type
    """A string of at most ``limit`` characters."""
    return Annotated[str, Field(max_length=limit, strict=True)]


def Integer(low: int, high: int) -> Any:  # noqa: N802
    """A whole number from ``low`` to ``high`` (never true or false)."""
    return Annotated[int, Field(ge=low, le=high, strict=True)]


def Strings(items: int = 64, length: int = 256) -> Any:  # noqa: N802
    """A list of at most ``items`` strings of at most ``length`` characters."""
    return Annotated[tuple[Text(length), ...], Field(max_length=items)]


SHA = r"^[0-9a-f]{7,64}$"
SHARD = r"^[1-9][0-9]{0,3}/[1-9][0-9]{0,3}$"
SHA256 = r"^[0-9a-f]{64}$"
Commit = Annotated[str, Field(pattern=SHA, strict=True)]
Digest = Annotated[str, Field(pattern=SHA256, strict=True)]
Flag = Annotated[bool, Field(strict=True)]
Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
_PATTERNS = {
    SHA: "must be a hexadecimal commit SHA",
    SHARD: "must look like I/N",
    SHA256: "must be a sha256 in hex (64 lowercase hex digits)",
}


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
    if error["type"] == "string_pattern_mismatch":
        return _PATTERNS.get(context.get("pattern"), "is not in the expected form")
    template = _REASONS.get(error["type"])
    if template is None:
        return error["msg"]
    length = len(value) if isinstance(value, str | list | tuple | dict) else 0
    return template.format(kind=json_name(value), value=repr(str(value)[:40]), length=length, **context)


def describe(error: ValidationError, where: str, prefix: str = "") -> InputError:
    """The first error of a record's validation in one line: the file, the field's JSON path and why."""
    first = error.errors(include_url=False)[0]
    path = (first.get("ctx") or {}).get("field") or _location(first["loc"])
    reason = _reason(first)
    return InputError(
        f"{prefix}run record field {path}: {reason}" if path else f"{prefix}run record: {reason}", where=where
    )
