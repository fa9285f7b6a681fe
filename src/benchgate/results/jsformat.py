"""compare.js's formatting: numbers as JavaScript prints them, configurations as ``util.inspect`` shows them.

Pure string functions; ``benchgate.results`` uses them to write results.csv (it remains the only
module that reads or writes that file) and the session to name a benchmark's configuration.
"""

from __future__ import annotations

import json
import math
from typing import Any


def js_number(value: float) -> str:
    """Format a float as JavaScript's Number#toString does, so our CSV matches compare.js byte for byte."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value == int(value) and abs(value) < 1e21:
        if abs(value) < 2**53:
            return str(int(value))
        # Past 2**53 JavaScript prints the shortest round-trip digits padded with zeros, not the exact integer.
        return _positional(value)
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    exponent_value = int(exponent)
    if -7 < exponent_value < 21:
        # JS prints plain decimals in this range where Python already switched to exponents.
        return _positional(value)
    return f"{mantissa}e{'+' if exponent_value > 0 else '-'}{abs(exponent_value)}"


def _positional(value: float) -> str:
    """The shortest round-trip digits of ``value`` (Python's repr) written out without an exponent.

    Times under 1e-4 s take this path for many samples; it is plain string work so that the
    runner, which writes every sample through js_number, never loads numpy mid-benchmark.
    """
    mantissa, _, exponent = repr(value).partition("e")
    sign = "-" if mantissa.startswith("-") else ""
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    digits = whole + fraction
    point = len(whole) + int(exponent or 0)  # where the decimal point goes in ``digits``
    if point <= 0:
        text = "0." + "0" * -point + digits
    elif point >= len(digits):
        text = digits + "0" * (point - len(digits))
    else:
        text = digits[:point] + "." + digits[point:]
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return sign + text


def _quote(field: str) -> str:
    return '"' + field.replace('"', '""') + '"'


def format_sample_line(binary: str, filename: str, configuration: str, rate: float, time: float) -> str:
    """One CSV line exactly as compare.js writes it (quotes doubled in the configuration)."""
    return f"{_quote(binary)},{_quote(filename)},{_quote(configuration)},{js_number(rate)},{js_number(time)}\n"


# --- The configuration string compare.js builds from a report's `conf` ---

# util.inspect escapes C0 controls, the quote in use, backslash, DEL and C1 controls.
_INSPECT_NAMED = {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r", 92: "\\\\"}
_INSPECT_LINE_WIDTH = 16  # util.inspect's kMinLineWidth
_INSPECT_BREAK_LENGTH = 128  # util.inspect's default breakLength


def _inspect_escape(text: str, quote: str) -> str:
    out = []
    for char in text:
        point = ord(char)
        if point in _INSPECT_NAMED:
            out.append(_INSPECT_NAMED[point])
        elif char == quote:
            out.append("\\" + quote)
        elif point < 0x20 or 0x7F <= point <= 0x9F:
            out.append(f"\\x{point:02X}")
        elif 0xD800 <= point <= 0xDFFF:
            out.append(f"\\u{point:x}")  # a lone surrogate (paired ones are one code point here)
        else:
            out.append(char)
    return quote + "".join(out) + quote


def _inspect_quoted(text: str) -> str:
    quote = "'"
    if "'" in text:
        if '"' not in text:
            quote = '"'
        elif "`" not in text and "${" not in text:
            quote = "`"
    return _inspect_escape(text, quote)


def _inspect_string(text: str) -> str:
    if len(text) > _INSPECT_LINE_WIDTH and len(text) > _INSPECT_BREAK_LENGTH - 4:
        # util.inspect splits long strings after each newline (only "\n"), each piece quoted on its own.
        lines = text.split("\n")
        pieces = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
        return " +\n  ".join(_inspect_quoted(piece) for piece in pieces)
    return _inspect_quoted(text)


def js_inspect(value: Any) -> str:
    """A configuration value as Node's ``util.inspect`` shows it (strings quoted, numbers as JavaScript prints)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value) if abs(value) < 10**21 else js_number(float(value))
    if isinstance(value, float):
        if value == 0 and math.copysign(1.0, value) < 0:
            return "-0"
        return js_number(value)
    if isinstance(value, str):
        return _inspect_string(value)
    return json.dumps(value, separators=(",", ":"))


def format_configuration(conf: dict[str, Any]) -> str:
    """compare.js's configuration column: `` key=inspect(value)`` for each key in order, joined by spaces."""
    return " ".join(f"{key}={js_inspect(value)}" for key, value in conf.items())
