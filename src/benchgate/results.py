"""The compare.js CSV and the run record: the only module that reads or writes them.

The CSV is the format Node's ``benchmark/compare.js`` prints::

    "binary","filename","configuration","rate","time"
    "old","buffers/buffer-compare.js","n=1000000 size=16","12345.6","0.08"

Samples come back as a DataFrame with one row per sample and the columns
``side`` ("base" or "head"), ``filename``, ``configuration``, ``rate`` and
``time`` (NaN where the file has no time column).
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from benchgate.errors import InputError

CSV_HEADER = '"binary","filename","configuration","rate","time"'
REQUIRED_COLUMNS = ("binary", "filename", "configuration", "rate")
BASE, HEAD = "base", "head"
SAMPLE_COLUMNS = ["side", "filename", "configuration", "rate", "time"]


def _read_text(source: str | Path) -> tuple[str, str]:
    """Return (display name, text) for a path or "-" (stdin); BOM and CRLF tolerated."""
    if str(source) == "-":
        data = sys.stdin.buffer.read()
        name = "<stdin>"
    else:
        path = Path(source)
        name = str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InputError("no such file", where=name) from None
        except IsADirectoryError:
            raise InputError("is a directory, expected a compare.js CSV file", where=name) from None
        except OSError as error:
            raise InputError(f"cannot read: {error.strerror}", where=name) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", where=name) from None
    return name, text


def _parse_csv(name: str, text: str) -> pd.DataFrame:
    if not text.strip():
        raise InputError("empty file, expected a compare.js CSV with a header line", where=name)
    try:
        # skipinitialspace accepts the older '", "' separated header and rows.
        frame = pd.read_csv(
            io.StringIO(text),
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
            engine="c",
        )
    except pd.errors.ParserError as error:
        raise InputError(f"malformed CSV: {str(error).strip()}", where=name) from None
    frame.columns = [str(column).strip() for column in frame.columns]
    missing = [column for column in REQUIRED_COLUMNS if column not in frame.columns]
    if missing:
        raise InputError(
            f"line 1: missing column {', '.join(repr(c) for c in missing)}; expected header {CSV_HEADER}",
            where=name,
        )
    if frame.empty:
        raise InputError("no rows after the header", where=name)
    return frame


def _line_of(frame: pd.DataFrame, index: int) -> int:
    # Header is line 1; configurations never hold raw newlines (compare.js escapes them).
    return int(index) + 2


def read_samples(
    sources: Iterable[str | Path],
    *,
    base_label: str = "old",
    head_label: str = "new",
) -> pd.DataFrame:
    """Read one or more compare.js CSV files (``-`` is stdin) into one sample frame.

    Several files are concatenated, as shards of one run. Raises InputError naming
    the file and line for anything that is not a valid sample; no row is dropped.
    """
    frames = []
    for source in sources:
        name, text = _read_text(source)
        frame = _parse_csv(name, text)
        labels = frame["binary"].str.strip()
        unknown = ~labels.isin([base_label, head_label])
        if unknown.any():
            index = int(np.flatnonzero(unknown.to_numpy())[0])
            raise InputError(
                f"line {_line_of(frame, index)}: binary label {labels.iloc[index]!r} is neither "
                f"the base label {base_label!r} nor the head label {head_label!r} "
                "(use --base-label/--head-label)",
                where=name,
            )
        rate = pd.to_numeric(frame["rate"].str.strip(), errors="coerce").astype("float64")
        bad_rate = ~(np.isfinite(rate.to_numpy()) & (rate.to_numpy() > 0))
        if bad_rate.any():
            index = int(np.flatnonzero(bad_rate)[0])
            raise InputError(
                f"line {_line_of(frame, index)}: rate {frame['rate'].iloc[index]!r} is not a finite positive number",
                where=name,
            )
        if "time" in frame.columns:
            time = pd.to_numeric(frame["time"].str.strip(), errors="coerce").astype("float64")
        else:
            time = pd.Series(np.nan, index=frame.index)
        if frame["filename"].eq("").any():
            index = int(np.flatnonzero(frame["filename"].eq("").to_numpy())[0])
            raise InputError(f"line {_line_of(frame, index)}: empty filename", where=name)
        frames.append(
            pd.DataFrame(
                {
                    "side": np.where(labels.to_numpy() == base_label, BASE, HEAD),
                    "filename": frame["filename"].to_numpy(),
                    "configuration": frame["configuration"].to_numpy(),
                    "rate": rate.to_numpy(),
                    "time": time.to_numpy(),
                }
            )
        )
    if not frames:
        raise InputError("no CSV files given")
    return pd.concat(frames, ignore_index=True)


def js_number(value: float) -> str:
    """Format a float as JavaScript's Number#toString does, so our CSV matches compare.js byte for byte."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    exponent_value = int(exponent)
    if -7 < exponent_value < 21:
        # JS prints plain decimals in this range where Python already switched to exponents.
        return np.format_float_positional(value, trim="-")
    return f"{mantissa}e{'+' if exponent_value > 0 else '-'}{abs(exponent_value)}"


def _quote(field: str) -> str:
    return '"' + field.replace('"', '""') + '"'


def format_sample_line(binary: str, filename: str, configuration: str, rate: float, time: float) -> str:
    """One CSV line exactly as compare.js writes it (quotes doubled in the configuration)."""
    return f"{_quote(binary)},{_quote(filename)},{_quote(configuration)},{js_number(rate)},{js_number(time)}\n"


@dataclass
class ResultsWriter:
    """Appends samples to a results.csv, flushing each one so a crash loses nothing measured."""

    path: Path
    _handle: IO[str] | None = None

    def __enter__(self) -> ResultsWriter:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def open(self) -> None:
        new_file = not self.path.exists() or self.path.stat().st_size == 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8", newline="")
        if new_file:
            self._handle.write(CSV_HEADER + "\n")
            self._handle.flush()

    def append(self, binary: str, filename: str, configuration: str, rate: float, time: float) -> None:
        """Write one sample and flush it to the operating system."""
        if self._handle is None:
            self.open()
        assert self._handle is not None
        self._handle.write(format_sample_line(binary, filename, configuration, rate, time))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def write_run_record(path: Path, record: dict[str, Any]) -> None:
    """Write run.json atomically (write to a temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def read_run_record(path: Path) -> dict[str, Any]:
    """Read run.json; InputError naming the file when it is missing or not a JSON object."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no run record (run.json) here", where=str(path)) from None
    except json.JSONDecodeError as error:
        raise InputError(f"line {error.lineno}: not valid JSON: {error.msg}", where=str(path)) from None
    if not isinstance(record, dict):
        raise InputError("run record is not a JSON object", where=str(path))
    return record
