"""An adaptive run's record (``runs: "auto"``; docs/formats.md): its design, the looks it took, why units stopped.

A unit is one comparison of a file run one configuration a job, or a whole file (``configuration`` null).
"""

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator

from benchgate.results.recordfields import MAX_LOOKS, MAX_NAME, MAX_RUNS, Digest, Integer, Model, Text, invalid

AUTO = "auto"
STOPS_VERSION = 2  # "stopped" is a list of per-unit stops (before: an object of per-file stops)


class Look(Model):
    """One of run.json's ``looks``: after ``runs`` runs of every running file, results.csv was ``csv_bytes`` long."""

    runs: Integer(1, MAX_RUNS)
    csv_bytes: Integer(0, 2**62)
    csv_sha256: Digest | None = None  # of those bytes (None: before the digest)


def _short(value: Any) -> Any:
    if not isinstance(value, str) or len(value) > 32:
        raise invalid("must be a short string")
    return value


class Stop(Model):
    """One of run.json's ``stopped``: why a unit stopped after ``after_runs`` runs (look index ``look``)."""

    filename: Text(MAX_NAME)
    configuration: Text(MAX_NAME) | None = None  # None: the whole file
    after_runs: Integer(1, MAX_RUNS)
    look: Integer(0, MAX_LOOKS - 1)
    reason: Annotated[str, BeforeValidator(_short)]  # decided, hopeless or max-runs

    @property
    def unit(self) -> tuple[str, str | None]:
        return (self.filename, self.configuration)


@dataclass(frozen=True)
class AdaptiveRecord:
    """The adaptive part of one run.json, as the replay reads it."""

    design: dict[str, Any]
    files: tuple[str, ...]  # the selection's files, in the order the run knew them
    looks: tuple[Look, ...]
    stops: tuple[Stop, ...]
    row_files: frozenset[str] = frozenset()  # files whose comparisons stop one by one (one job per configuration)
    version: int = STOPS_VERSION  # 1: an older record, every stop a whole file


def legacy_stops(data: dict) -> dict:
    """A record before ``stops: 2``: its object of whole-file stops, as the list of stops it means."""
    stopped = data.get("stopped")
    if data.get("stops", 1) == 1 and isinstance(stopped, dict):
        items = [{**item, "filename": name} if isinstance(item, dict) else item for name, item in stopped.items()]
        data = {**data, "stopped": items}
    return data


def check_stops(files: tuple[str, ...], looks, stopped, row_files: frozenset[str], version: int) -> None:
    """Looks follow each other; each stop names a selected file, once, as a comparison exactly when its file ran
    one configuration a job (a version 1 record's stops are all whole files)."""
    for index in range(1, len(looks)):
        if looks[index].runs <= looks[index - 1].runs or looks[index].csv_bytes < looks[index - 1].csv_bytes:
            raise invalid("looks must follow each other: more runs, results.csv no shorter", f"looks[{index}]")
    seen: set[tuple[str, str | None]] = set()
    for index, stop in enumerate(stopped):
        path = f"stopped[{index}]"
        if stop.filename not in files:
            raise invalid("must name a selected file and say why it stopped", path)
        if version == STOPS_VERSION and (stop.configuration is not None) != (stop.filename in row_files):
            raise invalid(
                "must be a comparison of a file run one configuration a job, null for a file run whole",
                f"{path}.configuration",
            )
        unit = (stop.filename, stop.configuration if version == STOPS_VERSION else None)
        if unit in seen:
            raise invalid("stops a unit that already stopped", path)
        seen.add(unit)
