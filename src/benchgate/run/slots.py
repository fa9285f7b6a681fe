"""Several processes at once (duets, ``--slots N``): a batch starts together, each job pinned to its CPU set; its
messages are recorded, then replayed to the session in schedule order. A duet is kept whole or not at all."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.results.pairs import PAIRS_FILE, Pair, truncate_pairs
from benchgate.run import duet
from benchgate.run.process import HEAD, BenchmarkProcess, ProcessResult


@dataclass
class _Recorded:
    """One job of a batch: its IPC messages in order, and how its process ended."""

    messages: list[dict] = field(default_factory=list)
    result: ProcessResult | None = None
    error: BaseException | None = None  # raised in the job's thread (a sandbox that cannot start): raised again


def resume_from_checkpoint(output: Path, record: dict, csv_bytes: int) -> None:
    """A resumed duet run: results.csv and pairs.csv cut back to the last checkpoint, so a unit started again
    whole (its pairs measured side by side again) leaves no unpaired halves."""
    csv_path = output / "results.csv"
    if csv_path.exists() and csv_path.stat().st_size > csv_bytes:
        with csv_path.open("r+b") as handle:
            handle.truncate(csv_bytes)
    truncate_pairs(output / PAIRS_FILE, int(record.get("pairing", {}).get("pairs", 0)))


class SlotRunner:
    """Runs a session's schedule in batches of units (duets or single jobs) on disjoint CPU sets."""

    def __init__(self, session) -> None:
        plan = session.plan
        self.session = session
        self.sets = duet.cpu_sets(plan.cpuset, plan.pairing, plan.slots)
        exclusive = frozenset(name for name in plan.files if duet.is_exclusive(plan.benchmark_dir, name))
        self.units = duet.units(session.schedule, plan.pairing, exclusive)
        self._recorded: dict[int, _Recorded] = {}
        self._cpus: dict[int, str] = {}  # each started job's CPU set, for pairs.csv

    def _cpus_of(self, unit: duet.Unit, job, slot: int) -> str | None:
        """The job's CPU set: its half of the slot's two in a duet, the slot's set, or the run's for an exclusive."""
        if unit.exclusive or not self.sets:
            return self.session.plan.cpuset
        if self.session.plan.pairing != duet.DUET:
            return self.sets[slot]
        if not unit.duet:
            return ",".join(self.sets[2 * slot : 2 * slot + 2])
        first, second = self.sets[2 * slot], self.sets[2 * slot + 1]
        head_first = duet.head_on_first_set(self.session.plan.seed, duet.unit_key(job))
        return (first if head_first else second) if job.side == HEAD else (second if head_first else first)

    def _start(self, job, cpus: str | None) -> threading.Thread:
        session, plan = self.session, self.session.plan
        recorded = self._recorded[job.index] = _Recorded()
        self._cpus[job.index] = cpus or ""
        argv, env = session.job_command(job, cpus)  # a whole file, or a configuration child
        process = BenchmarkProcess()
        session.running.append(process)  # a signal stops it with the others

        def work() -> None:
            try:
                recorded.result = process.run(
                    argv,
                    cwd=plan.benchmark_dir.parent,
                    env=env,
                    timeout=plan.timeout,
                    on_message=recorded.messages.append,
                    sandbox=plan.sandbox,
                )
            except BaseException as error:  # noqa: BLE001 - handed to the main thread, which raises it
                recorded.error = error
            finally:
                session.running.remove(process)

        thread = threading.Thread(target=work, name=f"benchgate-job-{job.index}", daemon=True)
        thread.start()
        return thread

    def replay(self, job):
        """The session's ``process.run`` for ``job``: its recorded messages, then its recorded result."""
        recorded = self._recorded.pop(job.index)

        def run(argv, *, cwd, env, timeout, on_message, sandbox=None) -> ProcessResult:
            for message in recorded.messages:
                on_message(message)
            assert recorded.result is not None
            return recorded.result

        return run

    def run(self) -> None:
        """Every batch from the first job not done yet; returns at the end or when a signal stopped it."""
        session = self.session
        done = session.state.completed_jobs
        pending = [unit for unit in self.units if unit.jobs[-1].index >= done]
        for batch in duet.batches(pending, session.plan.slots):
            if session.interrupted:
                break
            self._run_batch(batch)
            if session.interrupted:
                break

    def _run_batch(self, batch: list[duet.Unit]) -> None:
        session = self.session
        threads = []
        for slot, unit in enumerate(batch):
            for job in unit.jobs:
                if job.index >= session.state.completed_jobs and session.runs(job):
                    threads.append(self._start(job, self._cpus_of(unit, job, slot)))
        for thread in threads:
            thread.join()
        for recorded in self._recorded.values():
            if recorded.error is not None:
                raise recorded.error
        # Units replay in schedule order up to the first one a signal cut short: what ran to its end is kept.
        for unit in batch:
            interrupted = any(self._interrupted(job) for job in unit.jobs)
            if interrupted and unit.duet:  # a duet is kept whole or not at all: --resume runs it again
                session.interrupted = True
                return
            self._replay_unit(unit)
            if interrupted:  # a single job: the session kept its samples, as a run one job at a time does
                session.interrupted = True
                return

    def _interrupted(self, job) -> bool:
        recorded = self._recorded.get(job.index)
        return recorded is not None and (recorded.result is None or recorded.result.interrupted)

    def _replay_unit(self, unit: duet.Unit) -> None:
        session = self.session
        rows: dict[str, list[tuple[str, int]]] = {}
        for job in unit.jobs:
            if job.index < session.state.completed_jobs:
                continue
            ran = job.index in self._recorded
            if ran:
                cut_short = self._interrupted(job)
                rows[job.side] = session.run_job(job, replay=self.replay(job))
                if cut_short:
                    return  # not counted as done, as in Session.run
            session.job_done(job, skipped=not ran)
            if job is not unit.jobs[-1] and unit.duet:
                continue  # a duet is checkpointed whole, with its pairs (its first half ends no iteration)
            if unit.duet:
                self._record_pairs(unit, rows)
            else:  # a file run alone: its samples are in no pair
                session.recorder.pairs(session.plan.pairing, [], unpaired=len(rows.get(job.side, [])))
            session.checkpoint_after(job)  # a look sees the pairs written so far (pairs.csv, run.json)

    def _record_pairs(self, unit: duet.Unit, rows: dict[str, list[tuple[str, int]]]) -> None:
        base_job = next(job for job in unit.jobs if job.side != HEAD)
        head_job = next(job for job in unit.jobs if job.side == HEAD)
        base_rows, head_rows = rows.get(base_job.side, []), rows.get(HEAD, [])
        paired, unpaired = duet.pair_rows(base_rows, head_rows)
        base_cpus, head_cpus = self._cpus.pop(base_job.index, ""), self._cpus.pop(head_job.index, "")
        pairs = [
            Pair(base_job.filename, configuration, base_job.iteration, base_line, head_line, base_cpus, head_cpus)
            for configuration, base_line, head_line in paired
        ]
        self.session.recorder.pairs(self.session.plan.pairing, pairs, unpaired, dropped=unpaired)
        if unpaired:
            print(
                f"benchgate: warning: duet {base_job.filename}{f' {base_job.row}' if base_job.row else ''} "
                f"iteration {base_job.iteration}: {unpaired} sample(s) "
                f"reported by one half only (the other failed or was skipped) are not paired",
                file=sys.stderr,
            )
