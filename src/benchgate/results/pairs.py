"""A duet run's pairing (``--pairing duet``, docs/formats.md): pairs.csv next to results.csv, and run.json's
``pairing``; read back as untrusted input, every field checked."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import model_validator

from benchgate.errors import InputError
from benchgate.results.csvfile import AppendedCsv
from benchgate.results.jsformat import quote
from benchgate.results.recordparts import MAX_COUNT, MAX_PAIRS_BYTES, Integer, Model, check_size, invalid

if TYPE_CHECKING:
    import pandas as pd

PAIRS_FILE = "pairs.csv"
PAIRS_HEADER = ("filename", "configuration", "iteration", "base_line", "head_line", "base_cpus", "head_cpus")
SEQUENTIAL, DUET = "sequential", "duet"
_CPUS = re.compile(r"^\d{1,5}(-\d{1,5})?(,\d{1,5}(-\d{1,5})?)*$")


class Pair(NamedTuple):
    """One duet pair: the results.csv lines of its base and head sample, and their CPU sets."""

    filename: str
    configuration: str
    iteration: int
    base_line: int
    head_line: int
    base_cpus: str
    head_cpus: str


class Pairing(Model):
    """run.json's ``pairing``: how the samples were taken, and what pairs.csv must add up to (absent: sequential)."""

    mode: Literal["sequential", "duet"] = SEQUENTIAL
    file: Literal["pairs.csv"] | None = None
    pairs: Integer(0, MAX_COUNT) = 0
    unpaired_samples: Integer(0, MAX_COUNT) = 0
    dropped: Integer(0, MAX_COUNT) = 0

    @model_validator(mode="after")
    def _duet_counts(self) -> Pairing:
        missing = [key for key in ("file", "pairs", "unpaired_samples", "dropped") if key not in self.model_fields_set]
        if self.mode == DUET and missing:
            raise invalid("is missing (a duet run's pairing names pairs.csv and counts)", f"pairing.{missing[0]}")
        return self


def _csv_line(fields: Sequence[object]) -> str:
    return ",".join(quote(str(field)) for field in fields) + "\n"


def pairing_record(mode: str, pairs: int = 0, unpaired_samples: int = 0, dropped: int = 0) -> dict[str, Any]:
    """run.json's ``pairing`` object."""
    record: dict[str, Any] = {"mode": mode}
    if mode == DUET:
        record.update(file=PAIRS_FILE, pairs=pairs, unpaired_samples=unpaired_samples, dropped=dropped)
    return record


class PairsWriter(AppendedCsv):
    """Appends pairs to pairs.csv, each on the disk before the next (like results.csv: a crash loses no pair)."""

    header = _csv_line(PAIRS_HEADER)

    def append(self, pair: Pair) -> None:
        """Write one pair."""
        self.write_line(_csv_line(pair))


def truncate_pairs(path: Path, pairs: int) -> None:
    """Keep the header and the first ``pairs`` pairs: ``--resume`` drops what the last checkpoint did not count."""
    if path.exists():
        path.write_bytes(b"\n".join(path.read_bytes().split(b"\n")[: pairs + 1]) + b"\n")


def _fail(where: str, line: int, reason: str) -> InputError:
    return InputError(f"line {line}: {reason}", where=where)


def _number(text: str, where: str, line: int, what: str, low: int, high: int) -> int:
    if not text.isdigit() or len(text) > 10 or not low <= int(text) <= high:
        raise _fail(where, line, f"{what} must be a whole number from {low} to {high}, not {text[:20]!r}")
    return int(text)


def run_pairs(pairing: Pairing, record_path: Path, samples: pd.DataFrame) -> tuple | None:
    """A duet run's pairs (else None): each pair's base and head row in ``samples`` and its head CPU set, pairs.csv
    checked against results.csv (``samples``) and run.json (``pairing``); InputError naming a bad line."""
    import numpy as np

    if pairing.mode != DUET:
        return None
    path = record_path.parent / PAIRS_FILE
    where = str(path)
    try:
        check_size(path, MAX_PAIRS_BYTES)
        rows = list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))
    except FileNotFoundError:
        raise InputError("a duet run's pairing is missing (run.json says pairing duet)", where=where) from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"not a pairs file: {error}", where=where) from None
    if not rows or tuple(rows[0]) != PAIRS_HEADER:
        raise _fail(where, 1, f"expected the header {','.join(PAIRS_HEADER)}")
    count = len(samples)
    last_line = count + 1
    sides = samples["side"].astype(str).to_numpy(dtype=object)
    filenames = samples["filename"].to_numpy(dtype=object)
    configurations = samples["configuration"].to_numpy(dtype=object)
    used: dict[int, int] = {}
    pairs = []  # (base row, head row, head CPU set)
    for number, fields in enumerate(rows[1:], start=2):
        if len(fields) != len(PAIRS_HEADER):
            raise _fail(where, number, f"{len(fields)} fields, expected {len(PAIRS_HEADER)}")
        # Its names are bounded by the samples': each side's must be its sample's.
        filename, configuration, iteration, base_line, head_line, base_cpus, head_cpus = fields
        lines = {}
        for side, text in (("base", base_line), ("head", head_line)):
            line = _number(text, where, number, f"{side}_line", 2, MAX_COUNT)
            if line > last_line:
                raise _fail(where, number, f"{side}_line {line} is past results.csv's last sample (line {last_line})")
            if line in used:
                raise _fail(where, number, f"results.csv line {line} is already in the pair on line {used[line]}")
            used[line] = number
            index = line - 2
            if sides[index] != side:
                raise _fail(where, number, f"{side}_line {line} is a {sides[index]} sample")
            if filenames[index] != filename or configurations[index] != configuration:
                row = f"{filenames[index]} {configurations[index]}"
                raise _fail(where, number, f"{side}_line {line} is a sample of another row ({row})"[:300])
            lines[side] = line
        for what, cpus in (("base_cpus", base_cpus), ("head_cpus", head_cpus)):
            if len(cpus) > 256 or not _CPUS.match(cpus):
                raise _fail(where, number, f"{what} must be a CPU list such as 0 or 2-3, not {cpus[:20]!r}")
        _number(iteration, where, number, "iteration", 0, MAX_COUNT)
        pairs.append((lines["base"] - 2, lines["head"] - 2, head_cpus))
    if len(pairs) != pairing.pairs:
        raise InputError(f"{len(pairs)} pairs, but run.json's pairing.pairs says {pairing.pairs}", where=where)
    if count != 2 * pairing.pairs + pairing.unpaired_samples:
        raise InputError(
            f"results.csv has {count} samples, but run.json's pairing counts {pairing.pairs} pairs and "
            f"{pairing.unpaired_samples} unpaired samples ({2 * pairing.pairs + pairing.unpaired_samples})",
            where=where,
        )
    base, head = (np.array([pair[side] for pair in pairs], dtype=np.int64) for side in (0, 1))
    return base, head, [pair[2] for pair in pairs]
