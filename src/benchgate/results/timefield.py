"""The ``time`` field of a compare.js CSV read back exactly: as seconds (float64) and as whole nanoseconds
(nullable Int64), because a float64 cannot hold ``"1234567890.123456789"`` to the nanosecond.
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
# The form Node's harness sends, read without Python per row: at most 9 whole and 9 fraction digits (< 2**63 ns).
_NODE_FORM = r"^([0-9]{1,9})(?:\.([0-9]{0,9}))?\Z"


def nanoseconds(text: str) -> int | None:
    """The decimal number of seconds ``text`` as whole nanoseconds (half to even); None when not one or past int64."""
    text = text.strip()
    if not DECIMAL.fullmatch(text):
        return None
    try:
        value = int((Decimal(text) * _NANO).to_integral_value(rounding=ROUND_HALF_EVEN))
    except (InvalidOperation, OverflowError):
        return None
    return value if -_INT64_MAX <= value <= _INT64_MAX else None


def parse_times(texts: Sequence[str] | np.ndarray) -> tuple[np.ndarray, pd.arrays.IntegerArray, int | None]:
    """A CSV's time fields as (seconds, nanoseconds, index of the first bad field or None); empty: missing (NaN, NA).

    Blanks around a field are ignored; a field that is not a finite decimal number is bad (its seconds are NaN).
    """
    import numpy as np
    import pandas as pd

    array = np.asarray(texts, dtype=object)
    seconds = np.full(len(array), np.nan)
    nanos = np.zeros(len(array), dtype=np.int64)
    parts = pd.Series(array, dtype=object).str.extract(_NODE_FORM)
    known = parts[0].notna().to_numpy(copy=True)
    whole, fraction = parts[0][known].astype("int64"), parts[1][known].fillna("").str.ljust(9, "0")
    nanos[known] = whole.to_numpy() * 10**9 + fraction.astype("int64").to_numpy()
    # Exactly float(text) below 2**53 ns (104 days): an exact integer over 1e9, rounded once.
    seconds[known] = nanos[known] / 1e9
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
