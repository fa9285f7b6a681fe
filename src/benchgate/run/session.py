"""One run: carries out the schedule, writes each sample as it arrives, checkpoints what ``--resume`` needs
(the schedule is rebuilt from the seed, its finished prefix skipped, no sample written twice). The ``Recorder``
is the one writer of the run's files, so a checkpoint counts exactly what is on disk."""

import io
import os
import signal
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from benchgate.results.csvfile import ResultsWriter
from benchgate.results.pairs import Pair, PairsWriter, pairing_record
from benchgate.results.runrecord import write_run_record
from benchgate.run import duet, protocol, say
from benchgate.run.process import BASE, CSV_LABELS, HEAD, BenchmarkProcess, Job, ProcessResult, RunPlan, job_argv
from benchgate.run.progress import Progress


def now() -> str:
    """The current UTC time as run.json records it."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_progress() -> dict:
    """run.json's fields that a session carries on, as a run that has not started holds them."""
    progress = {"completed_jobs": 0, "csv_bytes": 0, "jobs": 0}
    return {"durations": {}, "samples": 0, "failures": [], "skipped": [], "protocol_warnings": [], "progress": progress}


def mark_gating(failures: list[dict]) -> None:
    """A head failure is gating when the base never failed on the same file and configuration."""
    base_failed = {(item["filename"], item["configuration"]) for item in failures if item["side"] == BASE}
    base_failed_files = {item["filename"] for item in failures if item["side"] == BASE}
    for item in failures:
        item["gating"] = (
            item["side"] == HEAD
            and (item["filename"], item["configuration"]) not in base_failed
            and (item["configuration"] is not None or item["filename"] not in base_failed_files)
        )


class Recorder:
    """Writes the samples, pairs and checkpoints of one run; without a ``record_path`` (a test), no run.json."""

    def __init__(
        self,
        samples: ResultsWriter,
        record: dict | None = None,
        *,
        record_path: Path | None = None,
        pairs: PairsWriter | None = None,
    ) -> None:
        # run.json as the run goes (a test's: only what the session keeps): the state --resume continues from
        self.record = record if record is not None else new_progress()
        self._samples = samples
        self._record_path = record_path
        self._pairs = pairs

    @property
    def csv_bytes(self) -> int:
        """results.csv's size now."""
        return self._samples.path.stat().st_size

    def sample(self, label: str, filename: str, configuration: str, rate, time) -> int:
        """Write one sample; returns its line in results.csv (the header is line 1, one sample a line)."""
        self._samples.append(label, filename, configuration, rate, time)
        self.record["samples"] += 1
        return self.record["samples"] + 1

    def pairs(self, mode: str, pairs: list[Pair], unpaired: int = 0, dropped: int = 0) -> None:
        """A duet's pairs (and the samples outside any pair) to pairs.csv and run.json's ``pairing``."""
        assert self._pairs is not None or not pairs
        for pair in pairs:
            self._pairs.append(pair)
        added = {"pairs": len(pairs), "unpaired_samples": unpaired, "dropped": dropped}
        so_far = self.record.get("pairing") or {}
        self.record["pairing"] = pairing_record(
            mode, **{key: so_far.get(key, 0) + count for key, count in added.items()}
        )

    def checkpoint(self, jobs: int, *, final: bool = False) -> None:
        """run.json now: what ``--resume`` continues from (``final``: the run's end)."""
        if self._record_path is None:
            return
        mark_gating(self.record["failures"])
        self.record["progress"]["jobs"] = jobs
        if final:
            self.record["ended_at"] = now()
        write_run_record(self._record_path, self.record)


class Session:
    """Carries out a schedule into the recorder in batches of units (duets or single jobs) on disjoint CPU sets, a
    thread each, what each job sent replayed in schedule order (a duet kept whole or not at all); a batch of one job
    runs in this thread, its samples written as they arrive. Stops on a signal."""

    def __init__(
        self,
        plan: RunPlan,
        recorder: Recorder,
        *,
        progress: Progress | None = None,
        already_written: Sequence[tuple[str, str, str]] = (),
        stopping=None,
    ) -> None:
        self.plan = plan
        self.recorder = recorder
        self.record = recorder.record
        self.done = self.record["progress"]  # completed_jobs: the schedule's prefix done; csv_bytes: its samples' end
        # When units stop (benchgate.run.adaptive.Adaptive for --runs auto): their jobs are skipped; None: none stop.
        self.stopping = stopping
        self.progress = progress or Progress(io.StringIO())  # no progress wanted: its lines go nowhere
        self._process = BenchmarkProcess()
        self.running = [self._process]  # the benchmark processes running now: a signal stops them all
        self.interrupted = False
        self.schedule = plan.schedule()
        # Samples an interrupted job already wrote: not written twice when it runs again on --resume.
        self.already_written = list(already_written)
        # Configurations in the order common.js runs them, per file: names the one a crash interrupted.
        self._configuration_order: dict[str, list[str]] = {}
        self._env = protocol.benchmark_environment(os.environ)
        self.sets = duet.cpu_sets(plan.cpuset, plan.pairing, plan.slots)
        exclusive = frozenset(name for name in plan.files if duet.is_exclusive(plan.benchmark_dir, name))
        self.units = duet.units(self.schedule, plan.pairing, exclusive)
        self._recorded: dict[int, tuple[list[dict], ProcessResult]] = {}  # a batch's jobs: messages, how each ended
        self._cpus: dict[int, str] = {}  # each started job's CPU set, for pairs.csv

    def _handle_signal(self, _signum, _frame) -> None:
        self.interrupted = True
        for process in list(self.running):
            process.stop()

    def run(self) -> None:
        """Run the jobs not done yet, batch by batch (one at a time, or several on disjoint CPU sets), until the end
        or a signal."""
        previous = {sig: signal.signal(sig, self._handle_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.progress.start(self.schedule, self.done["completed_jobs"])
            pending = [unit for unit in self.units if unit.jobs[-1].index >= self.done["completed_jobs"]]
            for batch in duet.batches(pending, self.plan.slots):
                if self.interrupted:
                    break
                self._run_batch(batch)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.progress.finish(interrupted=self.interrupted)

    def _cpus_of(self, unit: duet.Unit, job, slot: int) -> str | None:
        """The job's CPU set: its half of the slot's two in a duet, the slot's set, or the run's for an exclusive."""
        if unit.exclusive or not self.sets:
            return self.plan.cpuset
        if self.plan.pairing != duet.DUET:
            return self.sets[slot]
        if not unit.duet:
            return ",".join(self.sets[2 * slot : 2 * slot + 2])
        head_first = duet.head_on_first_set(self.plan.seed, duet.unit_key(job))
        return self.sets[2 * slot + (head_first != (job.side == HEAD))]  # the head's set first, or the base's

    def _execute_recorded(self, job: Job, cpus: str | None) -> tuple[list[dict], ProcessResult]:
        """Run a job of a batch (in a thread of its own): its IPC messages in order, and how its process ended."""
        process = BenchmarkProcess()
        self.running.append(process)  # a signal stops it with the others
        messages: list[dict] = []
        try:
            return messages, self.execute(job, process, messages.append, cpus)
        finally:
            self.running.remove(process)

    def _run_batch(self, batch: list[duet.Unit]) -> None:
        if len(batch) == 1 and not batch[0].duet:
            self._finish_unit(batch[0], live=True)
            return
        started = {}
        with ThreadPoolExecutor(max_workers=2 * len(batch), thread_name_prefix="benchgate-job") as threads:
            for slot, unit in enumerate(batch):
                for job in unit.jobs:
                    if job.index >= self.done["completed_jobs"] and self.runs(job):
                        self._cpus[job.index] = cpus = self._cpus_of(unit, job, slot)
                        started[job.index] = threads.submit(self._execute_recorded, job, cpus)
        # raised here, in this thread: what a job's thread raised (a sandbox that cannot start)
        self._recorded = {index: future.result() for index, future in started.items()}
        # Units replay in schedule order up to the first one a signal cut short: what ran to its end is kept.
        for unit in batch:
            interrupted = any(self._recorded[job.index][1].interrupted for job in unit.jobs if job.index in started)
            if not (interrupted and unit.duet):  # a duet is kept whole or not at all: --resume runs it again
                self._finish_unit(unit)  # a single job cut short keeps its samples, as one run live does
            if interrupted:
                self.interrupted = True
                return

    def _finish_unit(self, unit: duet.Unit, live: bool = False) -> None:
        """Run (``live``) or replay the unit's jobs, then mark them done and checkpoint (a duet: once, whole)."""
        rows: dict[str, list[tuple[str, int]]] = {}
        for job in unit.jobs:
            if job.index < self.done["completed_jobs"]:
                continue
            ran = job.index in self._recorded or (live and self.runs(job))
            if ran:
                lines = self.run_job(job, self._recorded.pop(job.index, None), self._cpus_of(unit, job, 0))
                if lines is None:
                    return  # cut short: not counted as done, --resume runs it again
                rows[job.side] = lines
            # not run: its unit stopped (skipped), or it failed too often (the note was added at the limit)
            skipped = not ran and self.stopping is not None and self.stopping.skips(job)
            if skipped:
                self.progress.job_skipped(job)
            self.done.update(completed_jobs=job.index + 1, csv_bytes=self.recorder.csv_bytes)
            self.already_written = []
            if job is not unit.jobs[-1] and unit.duet:
                continue  # a duet is checkpointed whole, with its pairs (its first half ends no iteration)
            if unit.duet:
                self._record_pairs(unit, rows)
            else:  # a file run alone: its samples are in no pair (counted in a duet run's pairing)
                self.recorder.pairs(self.plan.pairing, [], unpaired=len(rows.get(job.side, [])))
            # a look (it sees the pairs written so far), then a checkpoint (after a skipped job: at a look or the end)
            looked = self.stopping is not None and self.stopping.after_job(job)
            if not skipped or looked or self.done["completed_jobs"] == len(self.schedule):
                self.recorder.checkpoint(len(self.schedule))

    def _record_pairs(self, unit: duet.Unit, rows: dict[str, list[tuple[str, int]]]) -> None:
        base_job, head_job = sorted(unit.jobs, key=lambda job: job.side == HEAD)
        paired, unpaired = duet.pair_rows(rows.get(base_job.side, []), rows.get(HEAD, []))
        base_cpus, head_cpus = self._cpus.pop(base_job.index, ""), self._cpus.pop(head_job.index, "")
        pairs = [
            Pair(base_job.filename, configuration, base_job.iteration, base_line, head_line, base_cpus, head_cpus)
            for configuration, base_line, head_line in paired
        ]
        self.recorder.pairs(self.plan.pairing, pairs, unpaired, dropped=unpaired)
        if unpaired:
            say(
                f"warning: duet {base_job.filename}{f' {base_job.row}' if base_job.row else ''} iteration "
                f"{base_job.iteration}: {unpaired} sample(s) reported by one half only (the other failed or was "
                "skipped) are not paired"
            )

    def runs(self, job: Job) -> bool:
        """False for a job of a unit that stopped, or of a file (configuration) and side that failed too often."""
        stopped = self.stopping is not None and self.stopping.skips(job)
        return not stopped and self._failures_of(job) < self.plan.max_failures

    def _failures_of(self, job: Job) -> int:
        """The failures so far of the job's file and side (its configuration's, when it runs one)."""
        return sum(
            1
            for item in self.record["failures"]
            if item["filename"] == job.filename
            and item["side"] == job.side
            and (job.row is None or item["configuration"] == job.row)
        )

    def _name_failed_configurations(self, filename: str) -> None:
        """A failure seen before any complete run of its file gets its configuration once the order is known."""
        known = self._configuration_order.get(filename, [])
        for item in self.record["failures"]:
            done = item.get("configurations_done")
            if item["filename"] == filename and item["configuration"] is None and done in range(len(known)):
                item["configuration"] = known[done]

    def execute(self, job: Job, process: BenchmarkProcess, on_message, cpuset: str | None) -> ProcessResult:
        """Run ``job`` in ``process``, pinned to ``cpuset``: a whole file, or a configuration child."""
        plan, env = self.plan, self._env
        binary, file_path = plan.binaries[job.side], plan.benchmark_dir / job.filename
        arguments, flags = plan.set_args, ()
        if job.configuration is not None:
            # as the file's common.js forks the child
            arguments, flags = job.configuration, plan.configurations[job.filename].flags[job.side]
            env = {**env, protocol.RUN_FN_VARIABLE: ""}
        argv = job_argv(binary.path, binary.node_args, file_path, arguments, cpuset, flags)
        cwd = plan.benchmark_dir.parent
        return process.run(argv, cwd=cwd, env=env, timeout=plan.timeout, on_message=on_message, sandbox=plan.sandbox)

    def _warn(self, job: Job, message: str, configuration: str | None = None) -> None:
        protocol.add_warning(
            self.record["protocol_warnings"], message, filename=job.filename, side=job.side, configuration=configuration
        )

    def run_job(
        self, job: Job, recorded: tuple[list[dict], ProcessResult] | None = None, cpuset: str | None = None
    ) -> list[tuple[str, int]] | None:
        """Run ``job`` on ``cpuset`` (or replay what was ``recorded``): each sample's (configuration, line); None
        when a signal cut it short (the samples it sent are written all the same)."""
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
            self.progress.sample()

        self.progress.job_started(job)
        if recorded is None:
            result = self.execute(job, self._process, on_message, cpuset)
        else:
            for message in recorded[0]:
                on_message(message)
            result = recorded[1]
        durations = self.record["durations"]
        durations[job.filename] = round(durations.get(job.filename, 0.0) + result.duration, 3)
        for error in result.protocol_errors:
            self._warn(job, error)
        if result.interrupted:
            self.interrupted = True
            return None
        self.progress.job_finished(job, result.duration)
        reported = messages.reported
        if job.row is not None and reported and reported != [job.row]:
            self._warn(job, f"reported {', '.join(reported)[:200]} for the configuration {job.row}", job.row)
        known = [job.row] if job.row is not None else self._configuration_order.get(job.filename, [])
        if result.exit_status == 0 and len(reported) > len(known):
            self._configuration_order[job.filename] = list(reported)
        self._name_failed_configurations(job.filename)
        timed_out_after = self.plan.timeout if result.timed_out else None
        reason = messages.failure_reason(result.exit_status, result.stdout_tail, timed_out_after)
        if reason is None:
            # An empty queue is compare.js's success with no rows: one skip note per file and side, not a failure.
            note = {"filename": job.filename, "side": job.side, "reason": protocol.EMPTY_QUEUE_REASON}
            if (
                messages.had_nothing_to_run(result.exit_status, result.stdout_tail)
                and note not in self.record["skipped"]
            ):
                self.record["skipped"].append(note)
            return lines
        self.record["failures"].append(
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
        if self._failures_of(job) == self.plan.max_failures:
            on = f" on {job.row}" if job.row is not None else ""
            reason = f"{job.side} failed {self.plan.max_failures} times{on}; its remaining runs were skipped"
            self.record["skipped"].append({"filename": job.filename, "reason": reason, "side": job.side})
        return lines
