"""run.json's limits, its field types, and the one-line error a bad field gets.

run.json is untrusted input (it comes back from the benchmark job). Every limit of the
record is here, once; the field types below check type, size and range and say what is
wrong in words, and ``describe`` turns pydantic's first error into "run record field
PATH: WHY" for the file, wherever the field is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
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
_SHA = re.compile(r"^[0-9a-f]{7,64}$")
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
    """A field's error, in words (through pydantic's context: braces in it are kept); ``field`` names the field
    when the check is the whole record's."""
    return PydanticCustomError("run_record", "{reason}", {"reason": reason, "field": field})


def _text(limit: int, optional: bool):
    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        if not isinstance(value, str):
            raise invalid(f"must be a string, not {json_name(value)}")
        if len(value) > limit:
            raise invalid(f"is {len(value)} characters long, more than {limit}")
        return value

    return BeforeValidator(check)


def _integer(low: int, high: int, optional: bool):
    def check(value: Any) -> Any:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(f"must be a whole number, not {json_name(value)}")
        if not low <= value <= high:
            raise invalid(f"must be a whole number from {low} to {high}, not {str(value)[:40]!r}")
        return value

    return BeforeValidator(check)


def _commit(value: Any) -> Any:
    if value is not None and not (isinstance(value, str) and _SHA.match(value)):
        raise invalid("must be a hexadecimal commit SHA")
    return value


def _flag(optional: bool):
    def check(value: Any) -> Any:
        if not (isinstance(value, bool) or (value is None and optional)):
            raise invalid("must be true or false")
        return value

    return BeforeValidator(check)


def _number(value: Any) -> Any:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
    ):
        raise invalid(f"must be a number, not {json_name(value)}")
    return value


def _one_of(choices: Sequence[Any], optional: bool, say: str | None):
    def check(value: Any) -> Any:
        if (value is None and optional) or (value in choices and not isinstance(value, bool)):
            return value
        raise invalid(f"{say or 'must be one of ' + ', '.join(map(str, choices))}, not {str(value)[:20]!r}")

    return BeforeValidator(check)


def _strings(items: int, length: int):
    def check(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise invalid(f"must be a list of strings, not {json_name(value)}")
        if len(value) > items:
            raise invalid(f"has {len(value)} entries, more than {items}")
        for item in value:
            if not isinstance(item, str) or len(item) > length:
                raise invalid(f"must be a list of strings of at most {length} characters")
        return tuple(value)

    return BeforeValidator(check)


def Text(limit: int = MAX_TEXT) -> Any:  # noqa: N802 - a type
    """An optional string of at most ``limit`` characters."""
    return Annotated[str | None, _text(limit, True)]


def RequiredText(limit: int = MAX_TEXT) -> Any:  # noqa: N802
    return Annotated[str, _text(limit, False)]


def Integer(low: int, high: int, *, optional: bool = True) -> Any:  # noqa: N802
    """A whole number from ``low`` to ``high`` (never true or false)."""
    return (
        Annotated[int | None, _integer(low, high, optional)] if optional else Annotated[int, _integer(low, high, False)]
    )


def OneOf(*choices: Any, optional: bool = False, say: str | None = None) -> Any:  # noqa: N802
    """One of ``choices`` (``say``: how the error says so)."""
    return Annotated[Any, _one_of(choices, optional, say)]


def Strings(items: int = 64, length: int = 256) -> Any:  # noqa: N802
    return Annotated[tuple[str, ...], _strings(items, length)]


Commit = Annotated[str | None, _text(64, True), BeforeValidator(_commit)]
Flag = Annotated[bool, _flag(False)]
OptionalFlag = Annotated[bool | None, _flag(True)]
Number = Annotated[float | int | None, BeforeValidator(_number)]


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
    "model_type": "must be an object, not {kind}",
    "model_attributes_type": "must be an object, not {kind}",
    "dict_type": "must be an object, not {kind}",
    "list_type": "must be a list, not {kind}",
    "tuple_type": "must be a list, not {kind}",
    "string_type": "must be a string, not {kind}",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number, not {kind}",
    "missing": "is missing",
}


def describe(error: ValidationError, where: str, prefix: str = "") -> InputError:
    """The first error of a record's validation in one line: the file, the field's JSON path and why."""
    first = error.errors(include_url=False)[0]
    template = _REASONS.get(first["type"])
    if template is not None:
        reason = template.format(kind=json_name(first.get("input")))
    elif first["type"] == "too_long":
        context = first.get("ctx") or {}
        reason = f"has {context.get('actual_length')} entries, more than {context.get('max_length')}"
    else:
        reason = first["msg"].removeprefix("Value error, ")
    path = (first.get("ctx") or {}).get("field") or _location(first["loc"])
    return InputError(
        f"{prefix}run record field {path}: {reason}" if path else f"{prefix}run record: {reason}", where=where
    )
