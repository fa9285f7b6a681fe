"""An adaptive run's record (``runs: "auto"`` in run.json): its design, the looks it took and why files stopped.

``benchgate run --runs auto`` writes, beside the usual fields::

    "runs": "auto",
    "design": {...},                 # benchgate.stats.sequential.Design.to_json()
    "looks": [{"runs": 5, "csv_bytes": 123456, "at": "...", "running_files": 40,
               "stopped": ["buffers/buffer-tojson.js"], "undecided_rows": 37}, ...],
    "stopped": {"buffers/buffer-tojson.js": {"after_runs": 5, "look": 0, "reason": "decided"}}

Like all of run.json this is untrusted: ``adaptive_record`` checks types and sizes only
(the design's meaning is ``Design.from_json``'s to check, and the stops are checked
against a replay of the samples by whoever decides from them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchgate.results.recordfields import FieldChecker

AUTO = "auto"
MAX_LOOKS = 1000
MAX_FILES = 5000


@dataclass(frozen=True)
class Look:
    """One look: after ``runs`` runs of every running file, results.csv was ``csv_bytes`` long."""

    runs: int
    csv_bytes: int


@dataclass(frozen=True)
class Stop:
    """Why a file stopped after ``after_runs`` runs (look index ``look``): decided, hopeless or max-runs."""

    filename: str
    after_runs: int
    look: int
    reason: str


@dataclass(frozen=True)
class AdaptiveRecord:
    """The adaptive part of one run.json, type-checked."""

    design: dict[str, Any]
    files: tuple[str, ...]  # the selection's files, in the order the run knew them
    looks: tuple[Look, ...]
    stops: tuple[Stop, ...]


def is_adaptive(record: dict[str, Any]) -> bool:
    """True for a ``--runs auto`` run's record."""
    return record.get("runs") == AUTO


def adaptive_record(record: dict[str, Any], where: str) -> AdaptiveRecord:
    """The design, looks and stops of an adaptive run's record; InputError naming the field when malformed."""
    check = FieldChecker(where)
    design = record.get("design")
    if not isinstance(design, dict) or len(design) > 64:
        raise check.fail("design", "must be an object (the adaptive run's design)")
    selection = record.get("selection")
    files = selection.get("files") if isinstance(selection, dict) else None
    if not isinstance(files, list) or len(files) > MAX_FILES or not all(isinstance(f, str) for f in files):
        raise check.fail("selection.files", "must be a list of file names")
    looks_data = record.get("looks")
    if not isinstance(looks_data, list) or len(looks_data) > MAX_LOOKS:
        raise check.fail("looks", f"must be a list of at most {MAX_LOOKS} looks")
    looks = []
    for index, item in enumerate(looks_data):
        path = f"looks[{index}]"
        if not isinstance(item, dict):
            raise check.fail(path, "must be an object")
        look = Look(
            check.integer(item.get("runs"), f"{path}.runs", 1, 100_000, optional=False),
            check.integer(item.get("csv_bytes"), f"{path}.csv_bytes", 0, 2**62, optional=False),
        )
        if looks and (look.runs <= looks[-1].runs or look.csv_bytes < looks[-1].csv_bytes):
            raise check.fail(path, "looks must follow each other: more runs, results.csv no shorter")
        looks.append(look)
    stopped = record.get("stopped")
    if not isinstance(stopped, dict) or len(stopped) > MAX_FILES:
        raise check.fail("stopped", "must be an object: file name -> why it stopped")
    stops = []
    for filename, item in stopped.items():
        path = f"stopped[{str(filename)[:80]!r}]"
        if filename not in files or not isinstance(item, dict):
            raise check.fail(path, "must name a selected file and say why it stopped")
        reason = item.get("reason")
        if not isinstance(reason, str) or len(reason) > 32:
            raise check.fail(f"{path}.reason", "must be a short string")
        stops.append(
            Stop(
                filename,
                check.integer(item.get("after_runs"), f"{path}.after_runs", 1, 100_000, optional=False),
                check.integer(item.get("look"), f"{path}.look", 0, MAX_LOOKS - 1, optional=False),
                reason,
            )
        )
    return AdaptiveRecord(dict(design), tuple(files), tuple(looks), tuple(stops))
