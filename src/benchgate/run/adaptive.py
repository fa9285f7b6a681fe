"""``benchgate run --runs auto``: the looks of an adaptive run, the units that stop, and its record.

Every look is replayed from results.csv's recorded prefixes, so the run, ``--resume`` and ``benchgate report``
compute the same stops (docs/statistics.md, "Adaptive runs").
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from benchgate.errors import InputError
from benchgate.results.csvfile import file_prefix_sha256, read_samples_prefixes
from benchgate.results.recordparts import AUTO, STOPS_VERSION, Look, Stop
from benchgate.results.rundirs import AdaptiveShard
from benchgate.results.runrecord import parse_run_record
from benchgate.run.session import now
from benchgate.stats.gate import DISPLAY_LEVEL, MAX_RUNS, MIN_RUNS, THRESHOLDS

if TYPE_CHECKING:  # numpy, scipy and pandas load with the first adaptive run, not with every `benchgate run`
    import pandas as pd

    from benchgate.stats.sequential import Design
    from benchgate.stats.stopping import Replay


def design_for(
    runs: int | str,
    min_runs: int | None,
    max_runs: int | None,
    *,
    threshold: str = "***",
    pairing: str = "sequential",
    **settings,
) -> Design | None:
    """The design of ``--runs auto`` (None for fixed runs, checked here too); ``settings``: other ``Design`` fields."""
    if runs != AUTO:
        if min_runs is not None or max_runs is not None:
            raise InputError("--min-runs and --max-runs apply to --runs auto only")
        if isinstance(runs, bool) or not isinstance(runs, int) or not MIN_RUNS <= runs <= MAX_RUNS:
            # One run per side tests nothing: Welch's t-test needs 2 samples a side.
            raise InputError(
                f"--runs {runs}: must be from {MIN_RUNS} to {MAX_RUNS} or auto (the t-test needs 2 samples a side)"
            )
        return None
    from benchgate.stats import sequential

    low = sequential.MIN_RUNS if min_runs is None else min_runs
    high = sequential.MAX_RUNS if max_runs is None else max_runs
    if not MIN_RUNS <= low <= high <= MAX_RUNS:
        raise InputError(f"--min-runs {low}, --max-runs {high}: need {MIN_RUNS} <= min-runs <= max-runs <= {MAX_RUNS}")
    alpha = THRESHOLDS.get(threshold) or DISPLAY_LEVEL
    from benchgate.stats.paired import PAIRED_TEST

    # A duet run's looks are decided by the paired test (tests/perf/simulate_gate.py's duet-auto column).
    paired_test = {"test": PAIRED_TEST} if pairing == "duet" else {}
    return sequential.make_design(alpha, min_runs=low, max_runs=high, **paired_test, **settings)


def new_record_fields(design: Design) -> dict:
    """What run.json holds from the start of an adaptive run."""
    return {"runs": AUTO, "design": design.to_json(), "looks": [], "stops": STOPS_VERSION, "stopped": []}


def _unit_name(unit: tuple[str, str | None]) -> str:
    return unit[0] if unit[1] is None else f"{unit[0]} {unit[1]}"


class Adaptive:
    """Decides, look by look, which units (comparisons, or files run whole) keep running; asked around each job."""

    def __init__(self, schedule, record: dict, csv_path: Path, *, where: str = "run.json"):
        from benchgate.stats import adaptivetable
        from benchgate.stats.sequential import Design

        self.record = record
        self.csv_path = csv_path
        self.design = Design.from_json(record["design"], where=f"{where} design")
        parsed = parse_run_record(record, where)
        # main's history's noise per row (benchgate.run.plan.read_prior), read before the run: every look gates by it
        self.prior = {} if parsed.prior is None else parsed.prior.variances()
        self.files = list(parsed.selection.files)
        self.row_files = parsed.row_files
        self.last_of_iteration = {job.iteration: job.index for job in schedule}
        # Per file run one configuration a job: its comparisons (the file is done when all have stopped).
        self.rows_of: dict[str, set[str]] = {}
        for job in schedule:
            if job.row is not None:
                self.rows_of.setdefault(job.filename, set()).add(job.row)
        self.scheduled_files = {job.filename for job in schedule}
        self.look_samples = []
        self.duet = isinstance(record.get("pairing"), dict) and record["pairing"].get("mode") == "duet"
        self.pairs = None  # a duet run's pairs so far (results.pairs.run_pairs), read back at each look
        # The progress ETA's: per comparison (file, row) and file (file, None), the runs it is expected to need.
        self.expected: dict[tuple[str, str | None], int] = {}
        self.stopped: set[tuple[str, str | None]] = set(parsed.stopped_units())
        if record["looks"]:  # --resume: the looks taken must replay to the stops recorded
            sizes, digests = [look.csv_bytes for look in parsed.looks], [look.csv_sha256 for look in parsed.looks]
            self.look_samples = list(read_samples_prefixes(csv_path, sizes, digests))
            if self.duet:  # the last look can be before the last finished job
                self._read_pairs(read_samples_prefixes(csv_path, [record["progress"]["csv_bytes"]])[0])
            shard = AdaptiveShard(where, parsed, tuple(self.look_samples), self.pairs)
            adaptivetable.check_shard(shard, self.design, self._keys(), self.prior)

    def _read_pairs(self, samples: pd.DataFrame) -> None:
        """A duet run: pairs.csv as far as the last finished job, checked against run.json and ``samples``
        (results.csv as far)."""
        from benchgate.results.pairs import Pairing, run_pairs

        self.pairs = run_pairs(
            Pairing.model_validate(self.record["pairing"]), self.csv_path.parent / "run.json", samples
        )

    def _keys(self) -> list[tuple[str, str]]:
        last = self.look_samples[-1] if self.look_samples else []
        if not len(last):
            return []
        return sorted(set(zip(last["filename"].astype(str), last["configuration"].astype(str), strict=True)))

    def _file_done(self, name: str) -> bool:
        rows = self.rows_of.get(name)
        return (name, None) in self.stopped or (bool(rows) and all((name, row) in self.stopped for row in rows))

    def running_files(self) -> list[str]:
        """The scheduled files with a comparison still running."""
        return sorted(name for name in self.scheduled_files if not self._file_done(name))

    def skips(self, job) -> bool:
        """A job of a comparison, or of a file run whole, that has stopped is not run."""
        return (job.filename, job.row) in self.stopped if job.row is not None else self._file_done(job.filename)

    def expected_runs(self, job, *, worst: bool = False) -> int:
        """The runs ``job``'s comparison (or file) is expected to need, for the ETA (``worst``: at most; 0: stopped)."""
        if self.skips(job):
            return 0
        if worst:
            return self.design.max_runs
        upcoming = self.design.looks[min(len(self.record["looks"]), len(self.design.looks) - 1)]
        return self.expected.get((job.filename, job.row), self.expected.get((job.filename, None), upcoming))

    def after_job(self, job) -> bool:
        """Take a look when ``job`` ends an iteration at one of the design's looks; True when one was taken."""
        if self.last_of_iteration.get(job.iteration) != job.index or not self.running_files():
            return False  # not the end of an iteration, or every file has stopped: no look to take
        taken = len(self.record["looks"])
        runs = job.iteration + 1
        if taken >= len(self.design.looks) or self.design.looks[taken] != runs:
            return False
        self._look(taken, runs)
        return True

    def _look(self, k: int, runs: int) -> None:
        import numpy as np

        from benchgate.stats import adaptivetable

        self.look_samples.append(read_samples_prefixes(self.csv_path, [self.record["progress"]["csv_bytes"]])[0])
        if self.duet:  # read once: the look's samples are results.csv as far as the last finished job
            self._read_pairs(self.look_samples[-1])
        keys = self._keys()
        running_before = len(self.running_files())
        if not keys:  # nothing measured yet (every process failed): no file can be judged
            self.record["looks"].append(self._look_entry(runs, running_before, [], 0))
            return
        replayed, units = adaptivetable.replay_samples(
            self.design, self.files, self.look_samples, keys, self.row_files, self.pairs, self.prior
        )
        for position, look in enumerate(replayed.stopped_after.tolist()):
            if look >= 0 and look < k and units[position] not in self.stopped:
                raise InputError(
                    f"the replay of look {look} stops {_unit_name(units[position])!r}, which the run did not stop"
                )
        stopping_now = np.flatnonzero(replayed.stopped_after == k).tolist()
        _, unit_of_row = adaptivetable.stop_units(keys, self.files, self.row_files)
        active = np.array([units[unit] not in self.stopped for unit in unit_of_row.tolist()], dtype=bool)
        undecided = int((active & ~replayed.result.settled).sum())
        names = [_unit_name(units[position]) for position in stopping_now]
        self.record["looks"].append(self._look_entry(runs, running_before, names, undecided))
        for position in stopping_now:
            unit, reason = units[position], replayed.reasons[position]
            stop = Stop(filename=unit[0], configuration=unit[1], after_runs=runs, look=k, reason=reason)
            self.record["stopped"].append(stop.model_dump())
            self.stopped.add(unit)
        self._expect(replayed, keys)

    def _look_entry(self, runs: int, running: int, stopped: list[str], undecided: int) -> dict:
        digest = file_prefix_sha256(self.csv_path, self.record["progress"]["csv_bytes"])
        look = Look(runs=runs, csv_bytes=self.record["progress"]["csv_bytes"], csv_sha256=digest).model_dump()
        return dict(look, at=now(), running_files=running, stopped=stopped, undecided_rows=undecided)

    def _expect(self, replayed: Replay, keys: list[tuple[str, str]]) -> None:
        """After a look, the runs each comparison is expected to need, and each file its slowest one's."""
        from benchgate.stats import stopping

        projected = stopping.projected_runs(self.design, replayed.result).tolist()
        self.expected = {}
        for (name, row), runs, settled in zip(keys, projected, replayed.result.settled.tolist(), strict=True):
            if not settled:  # a comparison still running: its file runs at least until it settles
                self.expected[name, None] = max(self.expected.get((name, None), 0), int(runs))
            if name in self.row_files:  # a comparison that stops on its own: its own projection
                self.expected[name, row] = int(runs)

    def summary(self) -> str:
        """One line for the end of the run: looks taken, comparisons and files stopped before max-runs, and why."""
        looks = self.record["looks"]
        reasons = Counter(item["reason"] for item in self.record["stopped"])
        early = sum(item["after_runs"] < self.design.max_runs for item in self.record["stopped"])
        why = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
        units = sum(len(self.rows_of.get(name, ())) or 1 for name in self.scheduled_files)
        return (
            f"adaptive: {len(looks)} looks (last after {looks[-1]['runs'] if looks else 0} runs); "
            f"{early} of {units} units (comparisons, or files run whole) stopped before {self.design.max_runs} runs"
            + (f" ({why})" if why else "")
        )
