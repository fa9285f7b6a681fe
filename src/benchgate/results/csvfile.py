"""The compare.js CSV (results.csv, docs/formats.md): the only module that reads or writes it. pandas' C parser reads
it as text and every column is checked at once; only a file with something off is walked record by record, to name
the line. Times are also read as whole nanoseconds (Int64): a float64 cannot hold ``"1234567890.123456789"``."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import itertools
import os
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

from benchgate.errors import InputError
from benchgate.results.jsformat import DECIMAL, format_sample_line

CSV_HEADER = '"binary","filename","configuration","rate","time"'
REQUIRED_COLUMNS = ("binary", "filename", "configuration", "rate")
BASE, HEAD = "base", "head"
SAMPLE_COLUMNS = ["side", "filename", "configuration", "rate", "time", "time_ns"]
_NOT_BLANK = re.compile(rb"\S")
_INT64_MAX = 2**63 - 1
_NANO = Decimal(10) ** 9
# The form Node's harness sends, under 10**6 s: float(text) * 1e9 is within 1/4 of its whole nanoseconds (< 2**50).
_NODE_FORM = re.compile(r"[0-9]{1,6}(?:\.[0-9]{0,9})?")
_PADDED_DECIMAL = re.compile(rf"\s*(?:{DECIMAL.pattern})\s*")


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


def _decimals(texts: np.ndarray) -> np.ndarray:
    """Each text (blanks around it allowed) as a float; NaN where it is not a number as JavaScript writes it."""
    import numpy as np

    decimal = np.fromiter(map(bool, map(_PADDED_DECIMAL.fullmatch, texts)), dtype=bool, count=len(texts))
    values = np.full(len(texts), np.nan)
    values[decimal] = texts[decimal].astype("float64")
    return values


def _times(texts: np.ndarray) -> tuple[np.ndarray, pd.arrays.IntegerArray, np.ndarray]:
    """A CSV's time fields as (seconds, nanoseconds, which are bad); an empty one is missing (NaN, NA)."""
    import numpy as np
    import pandas as pd

    seconds = _decimals(texts)
    bad = ~np.isfinite(seconds)  # unread, and then: not empty
    bad[bad] = [bool(text.strip()) for text in texts[bad]]
    nanos = np.zeros(len(texts), dtype=np.int64)
    known = np.fromiter(map(bool, map(_NODE_FORM.fullmatch, texts)), dtype=bool, count=len(texts))
    nanos[known] = np.rint(seconds[known] * 1e9)
    for index in np.flatnonzero(~known & np.isfinite(seconds)):
        exact = nanoseconds(texts[index])
        if exact is not None:
            nanos[index], known[index] = exact, True
    return seconds, pd.arrays.IntegerArray(nanos, ~known), bad


def _read_bytes(source: str | Path) -> tuple[str, bytes]:
    """(display name, raw bytes) of a path or "-" (stdin)."""
    if str(source) == "-":
        return "<stdin>", sys.stdin.buffer.read()
    path = Path(source)
    try:
        return str(path), path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", where=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a compare.js CSV file", where=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", where=str(path)) from None


def _decode(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"line {line}: not UTF-8 text (byte {error.start})", where=name) from None


def _header(name: str, data: bytes) -> list[str]:
    """The header's column names; InputError for an empty file or a missing required column."""
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    if not _NOT_BLANK.search(data, start):
        raise InputError(f"empty file, expected a compare.js CSV starting with the header {CSV_HEADER}", where=name)
    first_line = _decode(name, re.match(rb"[^\r\n]*", data)[0])  # utf-8-sig: without the BOM
    try:
        columns = [field.strip() for field in next(csv.reader([first_line], skipinitialspace=True))]
    except (csv.Error, StopIteration):
        columns = []
    missing = [column for column in REQUIRED_COLUMNS if column not in columns]
    if missing:
        raise InputError(
            f"line 1: missing column {', '.join(repr(c) for c in missing)}; expected the header {CSV_HEADER}, "
            f"found {first_line[:120]!r}",
            where=name,
        )
    return columns


def _samples_frame(sides: Any, filename: Any, configuration: Any, rate: Any, time: Any, time_ns: Any) -> pd.DataFrame:
    """The sample frame; ``sides`` holds 0 for base and 1 for head."""
    import numpy as np  # lazily, like pandas: writing samples (the runner) needs neither
    import pandas as pd

    return pd.DataFrame(
        {
            "side": pd.Categorical.from_codes(np.asarray(sides, dtype="int8"), categories=[BASE, HEAD]),
            "filename": filename,
            "configuration": configuration,
            "rate": np.asarray(rate, dtype="float64"),
            "time": np.asarray(time, dtype="float64"),
            "time_ns": pd.array(time_ns, dtype="Int64"),
        }
    )


def empty_samples() -> pd.DataFrame:
    """A sample frame with no rows (a run that measured nothing, e.g. because a build failed)."""
    return _samples_frame([], [], [], [], [], [])


def _locate(name: str, data: bytes, width: int, sample: int | None = None) -> int:
    """The line on which sample number ``sample`` starts (quoted newlines and blank lines counted); InputError for a
    record before it that is not CSV or not ``width`` fields (pandas fills in the fields a short one lacks)."""
    lines = io.StringIO(_decode(name, data), newline="").readlines()
    reader = csv.reader(lines, skipinitialspace=True)
    limit = csv.field_size_limit()
    # An unbalanced quote runs on to the end of the file: a field count error naming its line, not a field size one.
    csv.field_size_limit(max(limit, len(data) + 1))
    end, count = 0, 0
    try:
        next(reader)
        end = reader.line_num
        for record in reader:
            line, end = end + 1, reader.line_num
            if end == line and not lines[line - 1].strip(" \t\r\n"):
                continue  # a blank line holds no sample (pandas and R's read.csv skip it too)
            if len(record) != width:
                spans = f" (a quoted field runs on to line {end}: unbalanced quote?)" if end > line else ""
                raise InputError(
                    f"line {line}: expected {width} fields as in the header, found {len(record)}{spans}", where=name
                )
            if count == sample:
                return line
            count += 1
    except csv.Error as error:
        raise InputError(f"line {end + 1}: malformed CSV: {error}", where=name) from None
    finally:
        csv.field_size_limit(limit)
    return end


def _parse(name: str, data: bytes, base_label: str, head_label: str) -> pd.DataFrame:
    """One file's sample frame, every column checked (see the module's docstring); InputError naming a bad line."""
    import numpy as np
    import pandas as pd

    columns = _header(name, data)
    try:
        with warnings.catch_warnings():
            # A ParserWarning means pandas dropped fields of a long row: never acceptable here.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # All text: a number is checked as JavaScript writes it, and an empty time is a missing one.
            frame = pd.read_csv(
                io.BytesIO(data),
                encoding="utf-8",
                dtype=str,
                keep_default_na=False,
                skipinitialspace=True,
                index_col=False,
            )
    except (ValueError, pd.errors.ParserWarning) as error:  # ParserError and UnicodeDecodeError are ValueErrors
        _locate(name, data, len(columns))
        raise InputError(f"malformed CSV: {error}", where=name) from None
    text = {column: frame.iloc[:, columns.index(column)].to_numpy(dtype=object) for column in columns}
    labels = np.array([label.strip() for label in text["binary"]], dtype=object)
    rates = _decimals(text["rate"])
    times = text.get("time", np.full(len(frame), "", dtype=object))
    seconds, nanos, bad_times = _times(times)
    is_header = np.zeros(len(frame), dtype=bool)
    for row in np.flatnonzero(labels == "binary"):
        is_header[row] = [str(field).strip() for field in frame.iloc[row]] == columns
    checks = (
        (is_header, "a second header line (files joined with cat?); pass each CSV as its own argument"),
        (
            (labels != base_label) & (labels != head_label),
            "binary label {label!r} is neither the base label {base!r} nor the head label {head!r} "
            "(use --base-label/--head-label)",
        ),
        (text["filename"] == "", "empty filename"),
        # A number as compare.js writes it (no Python-only forms like 1_000), blanks around it allowed.
        (~(rates > 0) | np.isinf(rates), "rate {rate!r} is not a finite positive number"),
        (bad_times, "time {time!r} is not a finite number (nor empty)"),
    )
    failing = np.logical_or.reduce([mask for mask, _ in checks])
    if failing.any() or (frame.iloc[:, -1] == "").any():  # a short record's missing fields read as empty ones
        row = int(np.argmax(failing)) if failing.any() else None
        line = _locate(name, data, len(columns), row)
        if row is not None:
            why = next(why for mask, why in checks if mask[row])
            details = {"label": labels[row], "rate": text["rate"][row], "time": times[row]}
            raise InputError(f"line {line}: {why.format(base=base_label, head=head_label, **details)}", where=name)
    if frame.empty:
        raise InputError("no rows after the header", where=name)
    return _samples_frame(labels == head_label, text["filename"], text["configuration"], rates, seconds, nanos)


def read_samples(sources: Iterable[str | Path], *, base_label: str = "old", head_label: str = "new") -> pd.DataFrame:
    """One sample frame of compare.js CSV files (``-``: stdin; several: shards); InputError naming a bad line."""
    if base_label == head_label:
        raise InputError(f"the base and head labels are both {base_label!r}")
    return concat_samples([_parse(*_read_bytes(source), base_label, head_label) for source in sources])


def concat_samples(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The sample frames of several files (shards of one run) as one, in their order."""
    import pandas as pd

    if not frames:
        raise InputError("no CSV files given")
    return pd.concat(frames, ignore_index=True)  # every frame's side has the same categories: they stay


def read_samples_prefixes(
    path: Path, sizes: Sequence[int], digests: Sequence[str | None] = ()
) -> tuple[pd.DataFrame, ...]:
    """The samples in the first ``size`` bytes of results.csv per look, whose recorded ``digests`` must still match."""
    name, data = _read_bytes(path)
    frames = []
    for look, (size, digest) in enumerate(itertools.zip_longest(sizes, digests)):
        if not 0 <= size <= len(data):
            raise InputError(f"a look at byte {size} is past the end of the file ({len(data)} bytes)", where=name)
        if digest is not None and hashlib.sha256(data[:size]).hexdigest() != digest:
            raise InputError(
                f"the recorded looks do not follow from results.csv: its first {size} bytes changed after "
                f"look {look} (their sha256 is not the one run.json holds)",
                where=name,
            )
        seen = data[:size]
        past_header = seen.partition(b"\n")[2]
        frames.append(_parse(name, seen, "old", "new") if _NOT_BLANK.search(past_header) else empty_samples())
    return tuple(frames)


def file_prefix_sha256(path: Path, size: int) -> str:
    """The digest a look records of the results.csv it saw (its first ``size`` bytes)."""
    with path.open("rb") as handle:  # only the prefix: results.csv grows past it during a run
        return hashlib.sha256(handle.read(size)).hexdigest()


class AppendedCsv:
    """A CSV appended in a ``with`` block, header first, each line on the disk (fsynced) as it is written."""

    header = ""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Self:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8", newline="")
        if self._handle.tell() == 0:  # a new or empty file
            self.write_line(self.header)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._handle.close()

    def write_line(self, line: str) -> None:
        """Append one line and flush it."""
        self._handle.write(line)
        self._handle.flush()
        os.fsync(self._handle.fileno())


class ResultsWriter(AppendedCsv):
    """Appends samples to a results.csv, each one on the disk before the next, so a crash loses nothing measured."""

    header = CSV_HEADER + "\n"

    def append(
        self, binary: str, filename: str, configuration: str, rate: float | str, time: float | str | None
    ) -> None:
        """Write one sample as compare.js does (``jsformat.format_sample_line``); ValueError for a bad value."""
        self.write_line(format_sample_line(binary, filename, configuration, rate, time))


def sample_keys_after(path: Path, offset: int) -> list[tuple[str, str, str]]:
    """(binary, filename, configuration) of the samples past byte ``offset``: what an interrupted job wrote."""
    with path.open("rb") as handle:  # only the tail past the checkpoint, not the whole file again
        handle.seek(offset)
        tail = handle.read().decode("utf-8")
    records = csv.reader(io.StringIO(tail, newline=""))
    return [(record[0], record[1], record[2]) for record in records if len(record) >= 3 and record[0] in ("old", "new")]
