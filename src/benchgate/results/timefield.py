"""The ``time`` field of a compare.js CSV read back exactly (what may be written: ``jsformat.field_text``).

Times are read twice: ``seconds`` (float64, for display) and ``nanoseconds`` (exact whole nanoseconds,
pandas' nullable Int64), because a float64 cannot hold a 19-digit decimal such as
``"1234567890.123456789"`` to the nanosecond. An empty field is a missing time (NaN / NA).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import TYPE_CHECKING

from benchgate.results.jsformat import DECIMAL, is_decimal_text

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

_INT64_MAX = 2**63 - 1
_NANO = Decimal(10) ** 9
# The common case read without Python per row: digits, an optional point, at most 9 fraction digits.
_MAX_FAST_WIDTH = 20
_ZERO, _NINE, _POINT = ord("0"), ord("9"), ord(".")


def nanoseconds(text: str) -> int | None:
    """The decimal number of seconds ``text`` as whole nanoseconds (half to even); None when it is not one.

    None also for a value outside int64 (more than about 292 years).
    """
    text = text.strip()
    if not DECIMAL.fullmatch(text):
        return None
    try:
        value = int((Decimal(text) * _NANO).to_integral_value(rounding=ROUND_HALF_EVEN))
    except (InvalidOperation, OverflowError):
        return None
    return value if -_INT64_MAX <= value <= _INT64_MAX else None


def _fast_nanoseconds(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(nanoseconds as int64, mask of the rows this vectorised path could read) for an array of str.

    Handles the form Node's harness sends (``digits[.digits]``, at most 10 whole and 9 fraction
    digits) column by column over the bytes, with no Python per row; every other row (an exponent,
    a sign, blanks, more digits) is left to ``nanoseconds``.
    """
    import numpy as np

    count = len(texts)
    joined = "".join(texts)
    if "\x00" in joined or not joined.isascii():
        # NUL would end a numpy byte string early: such rows (and non-ASCII text) take the exact path.
        return np.zeros(count, dtype=np.int64), np.zeros(count, dtype=bool)
    # One byte more than the longest text read here: a non-zero last byte marks a longer text.
    raw = texts.astype(f"S{_MAX_FAST_WIDTH + 1}")
    columns = raw.view(np.uint8).reshape(count, _MAX_FAST_WIDTH + 1).T.copy()  # one contiguous row per column
    total = np.zeros(count, dtype=np.uint64)
    points = np.zeros(count, dtype=np.int64)
    fraction_digits = np.zeros(count, dtype=np.int64)
    whole_digits = np.zeros(count, dtype=np.int64)
    ok = (columns[0] != 0) & (columns[_MAX_FAST_WIDTH] == 0)
    for column in columns[:_MAX_FAST_WIDTH]:
        inside = column != 0  # no NUL inside a text (checked above): zero bytes are the padding
        digit = (column >= _ZERO) & (column <= _NINE) & inside
        point = (column == _POINT) & inside
        ok &= digit | point | ~inside
        # Horner's rule over the digits; at most 19 of them, so the sum stays below 10**19 < 2**64.
        total = np.where(digit, total * np.uint64(10) + (column - _ZERO).astype(np.uint64), total)
        fraction_digits += digit & (points > 0)
        whole_digits += digit & (points == 0)
        points += point
    ok &= (points <= 1) & (whole_digits > 0) & (whole_digits <= 10) & (fraction_digits <= 9)
    scale = np.power(np.uint64(10), np.where(ok, 9 - fraction_digits, 0).astype(np.uint64))
    total = np.where(ok, total, np.uint64(0)) * scale
    ok &= total <= np.uint64(_INT64_MAX)
    return np.where(ok, total, np.uint64(0)).astype(np.int64), ok


def parse_times(texts: Sequence[str] | np.ndarray) -> tuple[np.ndarray, pd.arrays.IntegerArray, int | None]:
    """Read a CSV's time fields: (seconds, nanoseconds, index of the first bad field or None).

    Blanks around a field are ignored; an empty field is a missing time (NaN, NA). A field that is
    not a finite decimal number is bad (its seconds are NaN). ``seconds`` equal ``float(text)`` (up to
    one unit in the last place past 104 days).
    """
    import numpy as np
    import pandas as pd

    array = np.asarray(texts, dtype=object)
    count = len(array)
    seconds = np.full(count, np.nan)
    nanos = np.zeros(count, dtype=np.int64)
    known = np.zeros(count, dtype=bool)
    if count:
        fast_ns, fast = _fast_nanoseconds(array)
        nanos[fast] = fast_ns[fast]
        known |= fast
        # Exactly float(text) below 2**53 ns (104 days): an exact integer over 1e9, rounded once.
        seconds[fast] = fast_ns[fast] / 1e9
    first_bad = None
    for index in np.flatnonzero(~known):
        text = array[index].strip()
        if not text:
            continue  # missing
        if not is_decimal_text(text):
            first_bad = int(index) if first_bad is None else first_bad
            continue
        seconds[index] = float(text)
        exact = nanoseconds(text)
        if exact is not None:
            nanos[index], known[index] = exact, True
    return seconds, pd.arrays.IntegerArray(nanos, ~known), first_bad
