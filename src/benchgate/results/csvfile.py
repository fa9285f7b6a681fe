"""The compare.js CSV (results.csv, docs/formats.md): the only module that reads or writes it. Reading takes two
paths to one sample frame: pandas' C parser (fast) and, when it finds anything off, an exact parse that names the
line. Times are also read as whole nanoseconds (Int64): a float64 cannot hold ``"1234567890.123456789"``."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
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
from benchgate.results.jsformat import DECIMAL, format_sample_line, is_decimal_text

CSV_HEADER = '"binary","filename","configuration","rate","time"'
REQUIRED_COLUMNS = ("binary", "filename", "configuration", "rate")
BASE, HEAD = "base", "head"
SAMPLE_COLUMNS = ["side", "filename", "configuration", "rate", "time", "time_ns"]
_NOT_BLANK = re.compile(rb"\S")
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
    """A CSV's time fields as (seconds, nanoseconds, index of the first bad field or None); empty: missing (NaN, NA)."""
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
    for index in np.flatnonzero(~known):
        text = array[index].strip()
        if not text:
            continue  # missing
        if not is_decimal_text(text):
            return seconds, pd.arrays.IntegerArray(nanos, ~known), int(index)
        seconds[index] = float(text)
        exact = nanoseconds(text)
        if exact is not None:
            nanos[index], known[index] = exact, True
    return seconds, pd.arrays.IntegerArray(nanos, ~known), None


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
    end = min((i for i in (data.find(b"\n", start), data.find(b"\r", start)) if i >= 0), default=len(data))
    first_line = _decode(name, data[start:end])
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


def _parse_fast(data: bytes, columns: list[str], base_label: str, head_label: str) -> pd.DataFrame | None:
    """pandas' C parser on the raw bytes; None whenever anything looks off, so the exact parser can name the line."""
    import numpy as np
    import pandas as pd

    # Text stays text: a "category" dtype would let pandas infer numeric categories ("00" -> 0, "1.50" -> 1.5).
    # The time too is read as text: exactly (Node's 9-decimal strings), and an empty time is a missing one.
    dtype = {"binary": str, "filename": str, "configuration": str, "rate": "float64", "time": str}
    try:
        with warnings.catch_warnings():
            # A ParserWarning means pandas dropped fields of a long row: never acceptable here.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # utf-8 is strict: bad bytes go to the exact path, which names their line.
            frame = pd.read_csv(
                io.BytesIO(data), encoding="utf-8", dtype=dtype, na_filter=False, skipinitialspace=True, index_col=False
            )
    except Exception:  # any parser complaint: the exact parser below finds and names the line
        return None
    if [str(column).strip() for column in frame.columns] != columns or frame.empty:
        return None
    is_head = (frame["binary"] == head_label).to_numpy(dtype=bool)
    is_base = (frame["binary"] == base_label).to_numpy(dtype=bool)
    if not (is_base | is_head).all() or (frame["filename"] == "").any():
        return None
    rate = frame["rate"].to_numpy()
    if not (np.isfinite(rate) & (rate > 0)).all():
        return None
    has_time = "time" in columns
    time, time_ns, bad = parse_times(frame["time"].to_numpy(dtype=object) if has_time else [""] * len(frame))
    if bad is not None or has_time and np.isnan(time).any():
        # An empty time is allowed, but pandas gives a row that lacks the field the same "": count fields.
        return None
    return _samples_frame(is_head, frame["filename"], frame["configuration"], rate, time, time_ns)


def _parse_exact(name: str, text: str, columns: list[str], base_label: str, head_label: str) -> pd.DataFrame:
    """Record-by-record parse that tracks physical lines (quoted newlines, blank lines) for its errors."""
    position = {column: columns.index(column) for column in (*REQUIRED_COLUMNS, "time") if column in columns}
    samples, lines = [], []
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))
    line_end = 0
    try:
        next(reader)
        line_end = reader.line_num
        for record in reader:
            line, line_end = line_end + 1, reader.line_num
            if len(record) == 0 or (len(record) == 1 and not record[0].strip()):
                continue  # blank lines hold no sample (R's read.csv skips them too)
            if len(record) != len(columns):
                spans = f" (a quoted field runs on to line {line_end}: unbalanced quote?)" if line_end > line else ""
                problem = f"expected {len(columns)} fields as in the header, found {len(record)}{spans}"
                raise InputError(f"line {line}: {problem}", where=name)
            label, filename, configuration, rate = (record[position[column]] for column in REQUIRED_COLUMNS)
            if [field.strip() for field in record] == columns:
                problem = "a second header line (files joined with cat?); pass each CSV as its own argument"
            elif label.strip() not in (base_label, head_label):
                problem = (
                    f"binary label {label.strip()!r} is neither the base label {base_label!r} nor the head "
                    f"label {head_label!r} (use --base-label/--head-label)"
                )
            elif not filename:
                problem = "empty filename"
            # A number as compare.js writes it (no Python-only forms like 1_000), blanks around it allowed.
            elif not (is_decimal_text(rate.strip()) and float(rate) > 0):
                problem = f"rate {rate!r} is not a finite positive number"
            else:
                time = record[position["time"]] if "time" in position else ""
                samples.append((int(label.strip() == head_label), filename, configuration, float(rate), time))
                lines.append(line)
                continue
            raise InputError(f"line {line}: {problem}", where=name)
    except csv.Error as error:
        raise InputError(f"line {line_end + 1}: malformed CSV: {error}", where=name) from None
    finally:
        csv.field_size_limit(limit)
    if not samples:
        raise InputError("no rows after the header", where=name)
    sides, filenames, configurations, rates, times = zip(*samples, strict=True)
    seconds, nanoseconds, bad = parse_times(times)
    if bad is not None:
        raise InputError(f"line {lines[bad]}: time {times[bad]!r} is not a finite number (nor empty)", where=name)
    return _samples_frame(sides, list(filenames), list(configurations), rates, seconds, nanoseconds)


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


def _parse(name: str, data: bytes, base_label: str, head_label: str) -> pd.DataFrame:
    columns = _header(name, data)
    frame = _parse_fast(data, columns, base_label, head_label)
    if frame is None:
        frame = _parse_exact(name, _decode(name, data), columns, base_label, head_label)
    return frame


def read_samples_prefixes(
    path: Path, sizes: Sequence[int], digests: Sequence[str | None] = ()
) -> tuple[pd.DataFrame, ...]:
    """The samples in the first ``size`` bytes of results.csv per look, whose recorded ``digests`` must still match."""
    name, data = _read_bytes(path)
    for look, (size, digest) in enumerate(zip(sizes, digests, strict=False)):
        if digest is not None and 0 <= size <= len(data) and hashlib.sha256(data[:size]).hexdigest() != digest:
            raise InputError(
                f"the recorded looks do not follow from results.csv: its first {size} bytes changed after "
                f"look {look} (their sha256 is not the one run.json holds)",
                where=name,
            )
    return tuple(_prefix_samples(name, data, size) for size in sizes)


def file_prefix_sha256(path: Path, size: int) -> str:
    """The digest a look records of the results.csv it saw (its first ``size`` bytes)."""
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(size)).hexdigest()


def _prefix_samples(name: str, data: bytes, size: int) -> pd.DataFrame:
    if not 0 <= size <= len(data):
        raise InputError(f"a look at byte {size} is past the end of the file ({len(data)} bytes)", where=name)
    data = data[:size]
    body = data.split(b"\n", 1)[1] if b"\n" in data else b""
    if not _NOT_BLANK.search(body):
        return empty_samples()
    return _parse(name, data, "old", "new")


class AppendedCsv:
    """A CSV appended in a ``with`` block, header first, each line flushed (``fsync``: on the disk) as it is written."""

    header = ""
    fsync = False

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Self:
        new_file = not self.path.exists() or self.path.stat().st_size == 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8", newline="")
        if new_file:
            self.write_line(self.header)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._handle.close()

    def write_line(self, line: str) -> None:
        """Append one line and flush it."""
        self._handle.write(line)
        self._handle.flush()
        if self.fsync:
            os.fsync(self._handle.fileno())


class ResultsWriter(AppendedCsv):
    """Appends samples to a results.csv, each one on the disk before the next, so a crash loses nothing measured."""

    header = CSV_HEADER + "\n"
    fsync = True

    def append(
        self, binary: str, filename: str, configuration: str, rate: float | str, time: float | str | None
    ) -> None:
        """Write one sample as compare.js does (``jsformat.format_sample_line``); ValueError for a bad value."""
        self.write_line(format_sample_line(binary, filename, configuration, rate, time))


def sample_keys_after(path: Path, offset: int) -> list[tuple[str, str, str]]:
    """(binary, filename, configuration) of the samples past byte ``offset``: what an interrupted job wrote."""
    with path.open("rb") as handle:
        handle.seek(offset)
        tail = handle.read().decode("utf-8")
    records = csv.reader(io.StringIO(tail, newline=""))
    return [(record[0], record[1], record[2]) for record in records if len(record) >= 3 and record[0] in ("old", "new")]
