"""One run: carries out the schedule, writes each sample as it arrives, checkpoints what ``--resume`` needs
(the schedule is rebuilt from the seed, its finished prefix skipped, no sample written twice). The ``Recorder``
is the one writer of the run's files, so a checkpoint counts exactly what is on disk."""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from benchgate.build import releases
from benchgate.errors import InputError
from benchgate.results.csvfile import ResultsWriter
from benchgate.results.pairs import Pair, PairsWriter, pairing_record
from benchgate.results.runrecord import RunRecord, write_run_record
from benchgate.run import configurations, protocol
from benchgate.run.process import BASE, CSV_LABELS, HEAD, BenchmarkProcess, Job, ProcessResult, build_schedule, job_argv

if TYPE_CHECKING:
    from benchgate.sandbox import Confinement


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


@dataclass(frozen=True)
class RunPlan:
    """Everything one run needs, fixed before the first process starts (``benchgate.run.plan.prepare``)."""

    benchmark_dir: Path
    files: tuple[str, ...]
    binaries: dict  # side -> releases.NodeBinary
    runs: int
    seed: int
    set_args: tuple[str, ...] = ()
    timeout: float | None = None
    cpuset: str | None = None
    max_failures: int = 3  # per file (or configuration) and side; later jobs of one that keeps failing are skipped
    sandbox: Confinement | None = None  # an untrusted head: every job, on both sides, starts in the sandbox
    # Files whose jobs run one configuration each (benchgate.run.configurations.Expansion); the others run whole.
    configurations: dict = field(default_factory=dict)
    pairing: str = "sequential"  # or "duet": base and head side by side (benchgate.run.duet)
    slots: int = 1  # units run at once on disjoint CPU sets (benchgate.run.duet.SlotRunner)

    def schedule(self) -> list[Job]:
        """The jobs in the order they run (``benchgate.run.process.build_schedule``): the same again on --resume."""
        units = {name: found.configurations for name, found in self.configurations.items()}
        return build_schedule(self.files, self.runs, self.seed, units)


class Session:
    """Carries out a schedule (by ``duet.SlotRunner``) into the recorder; stops on a signal."""

    def __init__(
        self,
        plan: RunPlan,
        recorder: Recorder,
        *,
        progress=None,
        already_written: Sequence[tuple[str, str, str]] = (),
        stopping=None,
    ) -> None:
        self.plan = plan
        self.recorder = recorder
        self.state = recorder.state
        # When units stop (benchgate.run.adaptive.Adaptive for --runs auto): their jobs are skipped; None: none stop.
        self.stopping = stopping
        self.progress = progress
        self._process = BenchmarkProcess()
        self.running = [self._process]  # the benchmark processes running now: a signal stops them all
        self.interrupted = False
        self.schedule = plan.schedule()
        # Samples an interrupted job already wrote: not written twice when it runs again on --resume.
        self.already_written = list(already_written)
        # Configurations in the order common.js runs them, per file: names the one a crash interrupted.
        self._configuration_order: dict[str, list[str]] = {}
        self._env = protocol.benchmark_environment(os.environ)

    def _handle_signal(self, _signum, _frame) -> None:
        self.interrupted = True
        for process in list(self.running):
            process.stop()

    def run(self) -> None:
        """Run the jobs not done yet (``duet.SlotRunner``: one at a time, or in batches) until the end or a signal."""
        from benchgate.run.duet import SlotRunner

        previous = {sig: signal.signal(sig, self._handle_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            if self.progress:
                self.progress.start(self.schedule, self.state.completed_jobs)
            SlotRunner(self).run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self.progress:
                self.progress.finish(interrupted=self.interrupted)

    def runs(self, job: Job) -> bool:
        """False for a job of a unit that stopped, or of a file (configuration) and side that failed too often."""
        return not (self.stopping is not None and self.stopping.skips(job)) and not (
            self.plan.max_failures and self._failures_of(job) >= self.plan.max_failures
        )

    def _failures_of(self, job: Job) -> int:
        """The failures so far of the job's file and side (its configuration's, when it runs one)."""
        return sum(
            1
            for item in self.state.failures
            if item["filename"] == job.filename
            and item["side"] == job.side
            and (job.row is None or item["configuration"] == job.row)
        )

    def _name_failed_configurations(self, filename: str) -> None:
        """A failure seen before any complete run of its file gets its configuration once the order is known."""
        known = self._configuration_order.get(filename, [])
        for item in self.state.failures:
            done = item.get("configurations_done")
            if item["filename"] == filename and item["configuration"] is None and done in range(len(known)):
                item["configuration"] = known[done]

    def execute(self, job: Job, process: BenchmarkProcess, on_message, cpuset: str | None) -> ProcessResult:
        """Run ``job`` in ``process``, pinned to ``cpuset``: a whole file, or a configuration child."""
        plan, env = self.plan, self._env
        binary, file_path = plan.binaries[job.side], plan.benchmark_dir / job.filename
        if job.configuration is None:
            argv = job_argv(binary.path, binary.node_args, file_path, plan.set_args, cpuset)
        else:
            flags = plan.configurations[job.filename].flags[job.side]  # as the file's common.js forks the child
            argv = job_argv(binary.path, binary.node_args, file_path, job.configuration, cpuset, flags)
            env = {**env, protocol.RUN_FN_VARIABLE: ""}
        cwd = plan.benchmark_dir.parent
        return process.run(argv, cwd=cwd, env=env, timeout=plan.timeout, on_message=on_message, sandbox=plan.sandbox)

    def _warn(self, job: Job, message: str, configuration: str | None = None) -> None:
        protocol.add_warning(
            self.state.protocol_warnings, message, filename=job.filename, side=job.side, configuration=configuration
        )

    def run_job(self, job: Job, recorded=None, cpuset: str | None = None) -> list[tuple[str, int]]:
        """Run ``job`` on ``cpuset`` (or replay what was ``recorded``): each sample's (configuration, line)."""
        label = CSV_LABELS[job.side]
        lines: list[tuple[str, int]] = []
        messages = protocol.JobMessages()

        def on_message(message: dict) -> None:
            sample = messages.read(message)
            if sample is None:
                return
            if sample.warning:
                self._warn(job, sample.warning, sample.configuration)
            key = (label, job.filename, sample.configuration)
            if key in self.already_written:
                self.already_written.remove(key)
            else:
                line = self.recorder.sample(label, job.filename, sample.configuration, sample.rate, sample.time)
                lines.append((sample.configuration, line))
            if self.progress:
                self.progress.sample()

        if self.progress:
            self.progress.job_started(job)
        if recorded is None:
            result = self.execute(job, self._process, on_message, cpuset)
        else:
            for message in recorded.messages:
                on_message(message)
            result = recorded.result
        self.state.durations[job.filename] = round(self.state.durations.get(job.filename, 0.0) + result.duration, 3)
        for error in result.protocol_errors:
            self._warn(job, error)
        if result.interrupted:
            self.interrupted = True
            return lines
        if self.progress:
            self.progress.job_finished(job, result.duration)
        reported = messages.reported
        if job.row is not None and reported and reported != [job.row]:
            self._warn(job, f"reported {', '.join(reported)[:200]} for the configuration {job.row}", job.row)
        known = [job.row] if job.row is not None else self._configuration_order.get(job.filename, [])
        if result.exit_status == 0 and len(reported) > len(known):
            self._configuration_order[job.filename] = list(reported)
        self._name_failed_configurations(job.filename)
        reason = _failure_reason(result, messages, self.plan.timeout)
        if reason is None:
            # An empty queue is compare.js's success with no rows: one skip note per file and side, not a failure.
            note = {"filename": job.filename, "side": job.side, "reason": protocol.EMPTY_QUEUE_REASON}
            if messages.had_nothing_to_run(result.exit_status, result.stdout_tail) and note not in self.state.skipped:
                self.state.skipped.append(note)
            return lines
        self.state.failures.append(
            {
                "filename": job.filename,
                "configuration": known[len(reported)] if len(reported) < len(known) else None,
                "side": job.side,
                "exit_status": result.exit_status,
                "stderr_tail": result.stderr_tail,
                "reason": reason,
                "iteration": job.iteration,
                "configurations_done": len(reported),
            }
        )
        if self.plan.max_failures and self._failures_of(job) == self.plan.max_failures:
            on = f" on {job.row}" if job.row is not None else ""
            reason = f"{job.side} failed {self.plan.max_failures} times{on}; its remaining runs were skipped"
            self.state.skipped.append({"filename": job.filename, "reason": reason, "side": job.side})
        return lines


def _failure_reason(result: ProcessResult, messages: protocol.JobMessages, timeout: float | None) -> str | None:
    if result.timed_out:
        return f"timed out after {timeout:g} s"
    if result.exit_status:
        how = (
            f"killed by signal {-result.exit_status}"
            if result.exit_status < 0
            else f"exited with status {result.exit_status}"
        )
        return f"crashed ({how})"
    return messages.failure_reason(result.exit_status, result.stdout_tail)


def plan_from_record(record: RunRecord, output: Path, sandbox: Confinement | None = None) -> RunPlan:
    """The plan of an interrupted run from its run.json (binaries unchanged); ``sandbox`` confines an untrusted head."""
    binaries = {}
    for side in ("base", "head"):
        stored = getattr(record.binaries, side)
        binary = releases.inspect_binary(
            stored.path, side=side, node_args=stored.node_args, sandbox=sandbox if side == HEAD else None
        )
        if binary.sha256 != stored.sha256:
            raise InputError(
                f"--resume: the {side} binary {stored.path} changed since the run started", where=str(output)
            )
        binaries[side] = binary
    selection = record.selection
    if not Path(selection.benchmark_dir).is_dir():
        raise InputError(f"--resume: the benchmark directory {selection.benchmark_dir} is gone", where=str(output))
    skipped_files = {item.filename for item in record.skipped if item.side is None}
    return RunPlan(
        benchmark_dir=Path(selection.benchmark_dir),
        files=tuple(name for name in selection.files if name not in skipped_files),
        binaries=binaries,
        runs=int(record.design["looks"][-1]) if record.adaptive_run else int(record.runs),
        seed=record.seed,
        set_args=selection.set,
        timeout=record.options.timeout,
        cpuset=record.options.cpuset,
        sandbox=sandbox,
        configurations=configurations.from_record(record),
        pairing=record.options.pairing or "sequential",
        slots=record.options.slots or 1,
    )
