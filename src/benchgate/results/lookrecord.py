"""An adaptive run's record (``runs: "auto"`` in run.json): its design, the looks it took and why files stopped.

``benchgate run --runs auto`` writes, beside the usual fields::

    "runs": "auto",
    "design": {...},                 # benchgate.stats.sequential.Design.to_json()
    "looks": [{"runs": 5, "csv_bytes": 123456, "at": "...", "running_files": 40,
               "stopped": ["buffers/buffer-tojson.js"], "undecided_rows": 37}, ...],
    "stops": 2,                      # STOPS_VERSION: what "stopped" holds
    "stopped": [{"filename": "buffers/buffer-tojson.js", "configuration": "n=1000 len=256",
                 "after_runs": 5, "look": 0, "reason": "decided"}, ...],
    "configurations": {"buffers/buffer-tojson.js": {...}, ...}   # benchgate.run.configurations

A stop is a *unit*: one comparison (``configuration`` set) of a file whose jobs run one
configuration each (the files in ``configurations``), or a whole file (``configuration``
null) whose jobs run it all. Records before ``stops: 2`` (every job a whole file) kept
``"stopped": {filename: {"after_runs", "look", "reason"}}``: they are read as whole-file stops,
which is what they were; ``--resume`` refuses them (``STOPS_VERSION``).

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
MAX_STOPS = 100_000
STOPS_VERSION = 2  # "stopped" is a list of per-unit stops (before: an object of per-file stops)


@dataclass(frozen=True)
class Look:
    """One look: after ``runs`` runs of every running file, results.csv was ``csv_bytes`` long."""

    runs: int
    csv_bytes: int


@dataclass(frozen=True)
class Stop:
    """Why a unit stopped after ``after_runs`` runs (look index ``look``): decided, hopeless or max-runs.

    The unit is one comparison of ``filename`` (``configuration``: compare.js's column), or the whole
    file when ``configuration`` is None.
    """

    filename: str
    configuration: str | None
    after_runs: int
    look: int
    reason: str

    @property
    def unit(self) -> tuple[str, str | None]:
        return (self.filename, self.configuration)


@dataclass(frozen=True)
class AdaptiveRecord:
    """The adaptive part of one run.json, type-checked."""

    design: dict[str, Any]
    files: tuple[str, ...]  # the selection's files, in the order the run knew them
    looks: tuple[Look, ...]
    stops: tuple[Stop, ...]
    row_files: frozenset[str] = frozenset()  # files whose comparisons stop one by one (one job per configuration)
    version: int = STOPS_VERSION  # 1: an older record, every stop a whole file


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
    version = record.get("stops", 1)
    if version not in (1, STOPS_VERSION) or isinstance(version, bool):
        raise check.fail("stops", f"must be 1 or {STOPS_VERSION}, not {str(version)[:20]!r}")
    row_files = _row_files(record, files, check) if version == STOPS_VERSION else frozenset()
    stops = _stops(record.get("stopped"), version, files, row_files, check)
    return AdaptiveRecord(dict(design), tuple(files), tuple(looks), tuple(stops), row_files, version)


def _row_files(record: dict[str, Any], files: list[str], check: FieldChecker) -> frozenset[str]:
    configurations = record.get("configurations", {})
    if not isinstance(configurations, dict) or len(configurations) > MAX_FILES:
        raise check.fail("configurations", "must be an object: file name -> its configurations")
    unknown = [name for name in configurations if name not in files]
    if unknown:
        raise check.fail(f"configurations[{str(unknown[0])[:80]!r}]", "must name a selected file")
    return frozenset(configurations)


def _stops(stopped: Any, version: int, files: list[str], row_files: frozenset[str], check: FieldChecker) -> list[Stop]:
    """The recorded stops: a list of units (version 2), or an older record's object of whole files."""
    if version == 1:
        if not isinstance(stopped, dict) or len(stopped) > MAX_FILES:
            raise check.fail("stopped", "must be an object: file name -> why it stopped")
        entries = [
            (f"stopped[{str(name)[:80]!r}]", {**item, "filename": name, "configuration": None})
            if isinstance(item, dict)
            else (f"stopped[{str(name)[:80]!r}]", item)
            for name, item in stopped.items()
        ]
    else:
        if not isinstance(stopped, list) or len(stopped) > MAX_STOPS:
            raise check.fail("stopped", f"must be a list of at most {MAX_STOPS} stops")
        entries = [(f"stopped[{index}]", item) for index, item in enumerate(stopped)]
    stops: list[Stop] = []
    seen: set[tuple[str, str | None]] = set()
    for path, item in entries:
        if not isinstance(item, dict) or item.get("filename") not in files:
            raise check.fail(path, "must name a selected file and say why it stopped")
        filename = item["filename"]
        configuration = check.text(item.get("configuration"), f"{path}.configuration", 2048)
        if (configuration is not None) != (filename in row_files):
            raise check.fail(
                f"{path}.configuration",
                "must be a comparison of a file run one configuration a job, null for a file run whole",
            )
        reason = item.get("reason")
        if not isinstance(reason, str) or len(reason) > 32:
            raise check.fail(f"{path}.reason", "must be a short string")
        stop = Stop(
            filename,
            configuration,
            check.integer(item.get("after_runs"), f"{path}.after_runs", 1, 100_000, optional=False),
            check.integer(item.get("look"), f"{path}.look", 0, MAX_LOOKS - 1, optional=False),
            reason,
        )
        if stop.unit in seen:
            raise check.fail(path, "stops a unit that already stopped")
        seen.add(stop.unit)
        stops.append(stop)
    return stops
