"""compare.js's formatting: numbers as JavaScript prints them, configurations as ``util.inspect`` shows them."""

import json
import math
import re
from decimal import Decimal
from typing import Any

# A number as JavaScript writes it (and as a harness may send it as text): no "Infinity", no "1_000".
DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def js_number(value: float) -> str:
    """Format a float as JavaScript's Number#toString does, so our CSV matches compare.js byte for byte."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    mantissa, _, exponent = repr(value).partition("e")
    if not exponent and abs(value) < 2**53:
        return mantissa
    if -7 < int(exponent or 0) < 21:
        # Plain decimals, where Python may have switched to exponents; past 2**53 JavaScript prints the shortest
        # round-trip digits padded with zeros, not the exact integer (no numpy: the runner writes every sample here).
        text = format(Decimal(repr(value)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{mantissa}e{'+' if int(exponent) > 0 else '-'}{abs(int(exponent))}"


def quote(field: str) -> str:
    """A CSV field in double quotes, its quotes doubled (RFC 4180, as compare.js writes text)."""
    return '"' + field.replace('"', '""') + '"'


def field_text(value: Any) -> str | None:
    """The text compare.js writes for a ``rate`` or ``time`` (a number as JavaScript prints it), None if unsafe."""
    if isinstance(value, int | float) and not isinstance(value, bool):  # true and false are no numbers
        try:
            number = float(value)
        except OverflowError:  # a JSON integer beyond any double
            return None
        return js_number(number) if math.isfinite(number) else None
    # Text in JavaScript's notation is written as it is, when finite (safe in a CSV field).
    if isinstance(value, str) and DECIMAL.fullmatch(value) and math.isfinite(float(value)):
        return value
    return None


def format_sample_line(
    binary: str, filename: str, configuration: str, rate: float | str, time: float | str | None
) -> str:
    """One CSV line exactly as compare.js writes it (``time`` None: an empty field); ValueError for a bad value."""
    rate_text = field_text(rate)
    time_text = "" if time is None else field_text(time)
    if rate_text is None or time_text is None:
        bad = rate if rate_text is None else time
        raise ValueError(f"{'rate' if rate_text is None else 'time'} {bad!r} is not a finite number")
    return f"{quote(binary)},{quote(filename)},{quote(configuration)},{rate_text},{time_text}\n"


# --- The configuration string compare.js builds from a report's `conf` ---

# util.inspect escapes C0 controls, the quote in use, backslash, DEL and C1 controls.
_INSPECT_NAMED = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 92: "\\\\"}
_INSPECT_BREAK_LENGTH = 128  # util.inspect's default breakLength


def _inspect_quoted(text: str) -> str:
    quote = "'"
    if "'" in text:
        if '"' not in text:
            quote = '"'
        elif "`" not in text and "${" not in text:
            quote = "`"

    def escape(match: re.Match) -> str:
        point = ord(match[0])
        if point in _INSPECT_NAMED:
            return _INSPECT_NAMED[point]
        if point == ord(quote):
            return "\\" + quote
        # A lone surrogate (paired ones are one code point here) as \u, other controls as \x.
        return f"\\u{point:x}" if point >= 0xD800 else f"\\x{point:02X}"

    return quote + re.sub(rf"[\x00-\x1f\\\x7f-\x9f\ud800-\udfff{quote}]", escape, text) + quote


def js_inspect(value: Any) -> str:
    """A configuration value as Node's ``util.inspect`` shows it (strings quoted, numbers as JavaScript prints)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)  # null, true or false
    if isinstance(value, int):
        return str(value) if abs(value) < 10**21 else js_number(float(value))
    if isinstance(value, float):
        if value == 0 and math.copysign(1.0, value) < 0:
            return "-0"
        return js_number(value)
    if isinstance(value, str) and len(value) > _INSPECT_BREAK_LENGTH - 4:
        # util.inspect splits long strings after each newline (only "\n"), each piece quoted on its own.
        lines = value.split("\n")
        pieces = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
        return " +\n  ".join(_inspect_quoted(piece) for piece in pieces)
    if isinstance(value, str):
        return _inspect_quoted(value)
    return json.dumps(value, separators=(",", ":"))


def format_configuration(conf: dict[str, Any]) -> str:
    """compare.js's configuration column: `` key=inspect(value)`` for each key in order, joined by spaces."""
    return " ".join(f"{key}={js_inspect(value)}" for key, value in conf.items())
