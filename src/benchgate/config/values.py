"""The value parsers ``(value, where, key) -> value``; each raises InputError naming where, the key and why."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from benchgate.errors import InputError
from benchgate.stats.gate import MAX_MIN_EFFECT, MAX_RUNS, THRESHOLDS, UNCHANGED_CONFIDENCES

AUTO_RUNS = "auto"


def fail(where: str, key: str, reason: str) -> InputError:
    return InputError(f"key {key!r}: {reason}", where=where)


def parse_threshold(value: Any, where: str, key: str = "threshold") -> str:
    if value is False:  # YAML 1.1 reads an unquoted `off` as false
        return "off"
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else None
    if text not in THRESHOLDS:
        raise fail(where, key, f"must be one of {', '.join(THRESHOLDS)} (quote the stars in YAML), not {value!r}")
    return text


def parse_percent(value: Any, where: str, key: str = "min-effect") -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError
        number = float(value.strip().removesuffix("%") if isinstance(value, str) else value)
    except ValueError:
        raise fail(where, key, f"must be a percentage such as 3 or 3%, not {value!r}") from None
    if not math.isfinite(number) or number < 0 or number > MAX_MIN_EFFECT:
        raise fail(where, key, f"must be between 0 and {MAX_MIN_EFFECT:g} percent, not {value!r}")
    return number


def parse_runs(value: Any, where: str, key: str = "runs") -> int | str:
    if key == "runs" and isinstance(value, str) and value.strip() == AUTO_RUNS:
        return AUTO_RUNS
    try:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError
        number = int(str(value).strip())
    except ValueError:
        or_auto = " or auto" if key == "runs" else ""
        raise fail(where, key, f"must be a whole number of runs{or_auto}, not {value!r}") from None
    if not 2 <= number <= MAX_RUNS:
        raise fail(where, key, f"must be between 2 and {MAX_RUNS} (the t-test needs 2 samples a side), not {number}")
    return number


def parse_bool(value: Any, where: str, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise fail(where, key, f"must be true or false, not {value!r}")


CATEGORY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
FILTER = re.compile(r"^[A-Za-z0-9_.\-/=]{1,128}$")
SET = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}=[^\s\x00-\x1f]{0,256}$")
PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/ ]{0,39}$")
CPUSET = re.compile(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$")
SHARD = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")


def choice(*choices: str) -> Callable[[Any, str, str], str]:
    def parse(value: Any, where: str, key: str) -> str:
        text = value.strip() if isinstance(value, str) else value
        if text not in choices:
            raise fail(where, key, f"must be one of {', '.join(choices)}, not {str(value)[:40]!r}")
        return text

    return parse


def parse_above_zero(value: Any, where: str, key: str) -> float:
    if (number := parse_percent(value, where, key)) <= 0:
        raise fail(where, key, f"must be a percentage above 0, not {value!r}")
    return number


def parse_confidence(value: Any, where: str, key: str) -> float:
    number, (low, high) = parse_percent(value, where, key), UNCHANGED_CONFIDENCES
    if not low <= number <= high:
        raise fail(where, key, f"must be a confidence from {low:g} to {high:g} percent, not {value!r}")
    return number


def items_of(pattern: re.Pattern[str], what: str) -> Callable[[Any, str, str], tuple[str, ...]]:
    """A parser of a list of at most 200 items, each matching ``pattern`` (``what`` names one in errors)."""

    def parse(value: Any, where: str, key: str) -> tuple[str, ...]:
        # Inputs and labels give comma/newline separated text; the file may give a YAML list.
        # A --set value may itself hold commas (type="a,b"), so set entries are one per line.
        if isinstance(value, str):
            value = re.split(r"\n" if key == "set" else r"[,\n]", value)
        elif not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
            raise fail(where, key, f"must be a list of strings or comma-separated text, not {value!r}")
        items = [item.strip() for item in value if item.strip()]
        if len(items) > 200:
            raise fail(where, key, f"too many entries ({len(items)} > 200)")
        for item in items:
            if not pattern.match(item):
                raise fail(where, key, f"{item[:80]!r} is not a valid {what}")
        return tuple(items)

    return parse


def text_of(pattern: re.Pattern[str], what: str) -> Callable[[Any, str, str], str]:
    """A parser of text that is empty or matches ``pattern`` (``what`` describes it in errors)."""

    def parse(value: Any, where: str, key: str) -> str:
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise fail(where, key, f"must be {what}, not {value!r}")
        text = str(value).strip()
        if text and not pattern.match(text):
            raise fail(where, key, f"must be {what}, not {text[:80]!r}")
        return text

    return parse


def parse_shard(value: Any, where: str, key: str) -> str:
    text = text_of(SHARD, "I/N with 1 <= I <= N, such as 1/4")(value, where, key)
    match = SHARD.match(text)
    if match and int(match.group(1)) > int(match.group(2)):
        raise fail(where, key, f"must be I/N with 1 <= I <= N, not {text!r}")
    return text


def parse_slots(value: Any, where: str, key: str) -> int:
    # 1..256 as benchgate.run.duet.MAX_SLOTS (not imported: config sits below run); run refuses more than CPU sets
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 3:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 256:
        raise fail(where, key, f"must be a whole number from 1 to 256, not {str(value)[:40]!r}")
    return value


def parse_prefix(value: Any, where: str, key: str) -> str:
    text = text_of(PREFIX, "a label prefix of letters, digits, '-', '_', '.'")(value, where, key)
    if not text:
        raise fail(where, key, "must not be empty")
    return text


def json_or(parse: Callable[[Any, str, str], Any]) -> Callable[[Any, str, str], Any]:
    """A file section that travels as JSON text in an action input (the run job never reads the file)."""

    def parse_json(value: Any, where: str, key: str) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as error:
                raise fail(where, key, f"must be JSON ({error})") from None
        return parse(value, where, key)

    return parse_json
