"""Checks of one run.json field at a time: type, size and range, failing with the file and the field's JSON path.

run.json is untrusted input (it comes back from the benchmark job); ``runrecord`` and
``lookrecord`` check every field they read with one ``FieldChecker``, so a bad record is
refused with the same one-line message wherever the field is.
"""

from __future__ import annotations

import re
from typing import Any

from benchgate.errors import InputError

MAX_LIST = 5000
MAX_TEXT = 4096
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


class FieldChecker:
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
