"""The one writer of a run's files (results.csv, pairs.csv, run.json): a checkpoint counts exactly what is on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benchgate.results.csvfile import ResultsWriter
from benchgate.results.pairs import Pair, PairsWriter, pairing_record
from benchgate.results.runrecord import write_run_record
from benchgate.run.process import BASE, HEAD


def now() -> str:
    """The current UTC time as run.json records it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class SessionState:
    """What run.json's "progress" keeps so ``--resume`` can continue: a prefix of the schedule is done."""

    completed_jobs: int = 0
    csv_bytes: int = 0
    failures: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)
    samples: int = 0
    protocol_warnings: list[dict] = field(default_factory=list)

    @classmethod
    def from_record(cls, record: dict) -> SessionState:
        """The state run.json holds: empty for a new run, the finished prefix for ``--resume``."""
        return cls(
            completed_jobs=record["progress"]["completed_jobs"],
            csv_bytes=record["progress"]["csv_bytes"],
            failures=list(record["failures"]),
            skipped=list(record["skipped"]),
            durations=dict(record["durations"]),
            samples=int(record.get("samples", 0)),
            protocol_warnings=list(record.get("protocol_warnings", [])),
        )


def mark_gating(failures: list[dict]) -> list[dict]:
    """A head failure is gating when the base never failed on the same file and configuration."""
    base_failed = {(item["filename"], item["configuration"]) for item in failures if item["side"] == BASE}
    base_failed_files = {item["filename"] for item in failures if item["side"] == BASE}
    for item in failures:
        item["gating"] = (
            item["side"] == HEAD
            and (item["filename"], item["configuration"]) not in base_failed
            and (item["configuration"] is not None or item["filename"] not in base_failed_files)
        )
    return failures


class Recorder:
    """Writes the samples, pairs and checkpoints of one run; without a ``record_path`` (a test), no run.json."""

    def __init__(
        self,
        samples: ResultsWriter,
        state: SessionState,
        *,
        record: dict | None = None,
        record_path: Path | None = None,
        pairs: PairsWriter | None = None,
    ) -> None:
        self.state = state
        self.record = record if record is not None else {}
        self._samples = samples
        self._record_path = record_path
        self._pairs = pairs
        pairing = self.record.get("pairing") or {}
        self._pair_counts = {key: int(pairing.get(key, 0)) for key in ("pairs", "unpaired_samples", "dropped")}

    @property
    def csv_bytes(self) -> int:
        """results.csv's size now."""
        return self._samples.path.stat().st_size

    def sample(self, label: str, filename: str, configuration: str, rate, time) -> int:
        """Write one sample; returns its line in results.csv (the header is line 1, one sample a line)."""
        self._samples.append(label, filename, configuration, rate, time)
        self.state.samples += 1
        return self.state.samples + 1

    def pairs(self, mode: str, pairs: list[Pair], unpaired: int = 0, dropped: int = 0) -> None:
        """A duet's pairs (and the samples outside any pair) to pairs.csv and run.json's ``pairing``."""
        assert self._pairs is not None or not pairs
        for pair in pairs:
            self._pairs.append(pair)
        for key, count in (("pairs", len(pairs)), ("unpaired_samples", unpaired), ("dropped", dropped)):
            self._pair_counts[key] += count
        self.record["pairing"] = pairing_record(mode, **self._pair_counts)

    def checkpoint(self, jobs: int, *, final: bool = False) -> None:
        """run.json with the state now: what ``--resume`` continues from (``final``: the run's end)."""
        if self._record_path is None:
            return
        state = self.state
        self.record.update(
            durations=state.durations,
            failures=mark_gating(state.failures),
            skipped=state.skipped,
            samples=state.samples,
            protocol_warnings=state.protocol_warnings,
            progress={"completed_jobs": state.completed_jobs, "csv_bytes": state.csv_bytes, "jobs": jobs},
        )
        if final:
            self.record["ended_at"] = now()
        write_run_record(self._record_path, self.record)
