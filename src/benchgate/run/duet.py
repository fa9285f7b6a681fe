"""Duet runs and slots: which jobs run together, on which CPU sets, how a duet pairs up, and the ``SlotRunner``.

The design and its reasons: docs/statistics.md, "Duet runs" and "The machine's CPUs".
"""

from __future__ import annotations

import os
import random
import re
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.errors import InputError
from benchgate.results.pairs import PAIRS_FILE, Pair, truncate_pairs
from benchgate.run import say, suite, system
from benchgate.run.process import HEAD, BenchmarkProcess, ProcessResult

SEQUENTIAL, DUET = "sequential", "duet"
PAIRINGS = (SEQUENTIAL, DUET)
MAX_SLOTS = 256
EXCLUSIVE_CATEGORIES = frozenset(
    {"http", "http2", "net", "tls", "dgram", "worker", "worker_threads", "cluster", "child_process"}
)
# A file that loads one of these starts processes or threads of its own: it needs the machine to itself.
_SPAWNS = re.compile(
    r"""require\(\s*['"](?:node:)?(?:child_process|worker_threads|cluster)['"]\s*\)|"""
    r"""from\s+['"](?:node:)?(?:child_process|worker_threads|cluster)['"]"""
)


def unit_key(job) -> tuple:
    """What a duet pairs jobs by: (filename, configuration if the job has one, iteration)."""
    return (job.filename, getattr(job, "configuration", None), job.iteration)


def is_exclusive(benchmark_dir: Path, filename: str) -> bool:
    """Does this benchmark file start servers, workers or child processes (so it must run alone)?"""
    in_category = filename.split("/", 1)[0] in EXCLUSIVE_CATEGORIES
    return in_category or bool(_SPAWNS.search(suite.source(benchmark_dir / filename)))


def cpu_sets(cpuset: str | None, pairing: str, slots: int, machine: system.Topology | None = None) -> list[str]:
    """The slots' CPU sets (two a slot for duets) of whole cores of one type (``system.split``); else InputError."""
    if not 1 <= slots <= MAX_SLOTS:
        raise InputError(f"--slots {slots}: must be from 1 to {MAX_SLOTS}")
    wanted = slots * (2 if pairing == DUET else 1)
    if wanted == 1:
        return [cpuset] if cpuset else []
    machine = machine or system.read()
    cpus = system.parse_cpu_list(cpuset) if cpuset else list(machine.allowed)  # else those this process may use
    found = system.split(machine, cpus, wanted)
    if found is None:
        what = f"{slots} duet slot(s) need {wanted}" if pairing == DUET else f"--slots {slots} needs {wanted}"
        raise InputError(
            f"{what} disjoint CPU sets, but this run may use {len(cpus)} CPU(s) ({system.format_cpu_list(cpus)})"
            f"{system.shortfall(machine, cpus)}; use fewer slots"
            + (" or --pairing sequential" if pairing == DUET else "")
        )
    return [system.format_cpu_list(members) for members in found]


def head_on_first_set(seed: int, key: tuple) -> bool:
    """Does the head of this pair get the slot's first CPU set? Seeded, one pair each way in two iterations."""
    filename, configuration, iteration = key
    draw = random.Random(f"{seed}\x00{filename}\x00{configuration}\x00{iteration // 2}").random() < 0.5
    return draw != (iteration % 2 == 1)


@dataclass(frozen=True)
class Unit:
    """Jobs that start together: a duet (base and head), or one job; ``exclusive``: alone, the whole CPU set."""

    jobs: tuple
    exclusive: bool = False

    @property
    def duet(self) -> bool:
        return len(self.jobs) == 2


def units(schedule: Sequence, pairing: str, exclusive_files: frozenset[str]) -> list[Unit]:
    """The schedule as units, in its order: neighbouring base and head jobs of one key form a duet."""
    found: list[Unit] = []
    for job in schedule:
        last = found[-1].jobs if found else ()
        if (
            pairing == DUET
            and len(last) == 1
            and job.filename not in exclusive_files
            and unit_key(last[0]) == unit_key(job)
            and last[0].side != job.side
        ):
            found[-1] = Unit((last[0], job))
        else:
            found.append(Unit((job,), exclusive=job.filename in exclusive_files))
    return found


def batches(all_units: Sequence[Unit], slots: int) -> list[list[Unit]]:
    """Units that run at once: up to ``slots`` in schedule order; an exclusive unit alone."""
    found: list[list[Unit]] = []
    for unit in all_units:
        if unit.exclusive or not found or found[-1][0].exclusive or len(found[-1]) == slots:
            found.append([unit])
        else:
            found[-1].append(unit)
    return found


def pair_rows(
    base_rows: Sequence[tuple[str, int]], head_rows: Sequence[tuple[str, int]]
) -> tuple[list[tuple[str, int, int]], int]:
    """Each half's (configuration, line) paired k-th with k-th per configuration; the samples left unpaired."""
    waiting: dict[str, list[int]] = {}
    for configuration, line in head_rows:
        waiting.setdefault(configuration, []).append(line)
    paired = []
    for configuration, line in base_rows:
        if waiting.get(configuration):
            paired.append((configuration, line, waiting[configuration].pop(0)))
    return paired, len(base_rows) + len(head_rows) - 2 * len(paired)


def check_cpuset(cpuset: str | None) -> None:
    """``--cpuset`` checked before anything runs: a CPU list this process may use, and taskset to pin with."""
    if cpuset is None:
        return
    try:
        # A CPU number past any machine's (or a typo like 0-99999999) is refused before it is expanded.
        too_long = any(len(number) > 5 for number in cpuset.replace("-", ",").split(","))
        cpus = [] if too_long else system.parse_cpu_list(cpuset)
    except ValueError:
        cpus = []
    if not cpus:
        raise InputError(f"--cpuset {cpuset!r}: expected a CPU list such as 2-3 or 0,2")
    # taskset fails on CPUs this process may not use; every job would then fail, so say it now.
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    unusable = sorted(set(cpus) - allowed)
    if unusable:
        raise InputError(
            f"--cpuset {cpuset}: CPU {', '.join(map(str, unusable[:8]))} not available here "
            f"(this process may use CPUs {system.format_cpu_list(sorted(allowed))})"
        )
    if shutil.which("taskset") is None:
        raise InputError("--cpuset needs taskset (util-linux), which is not installed")


def check_options(
    pairing: str, slots: int, cpuset: str | None, machine: system.Topology | None = None
) -> tuple[str | None, list[str]]:
    """``--pairing`` and ``--slots`` checked: the run's ``--cpuset`` (a hybrid CPU's performance cores) and sets."""
    if pairing not in PAIRINGS:
        raise InputError(f"--pairing {pairing!r}: expected one of {', '.join(PAIRINGS)}")
    machine = machine or system.read()
    if cpuset is None and shutil.which("taskset") is not None:
        cpuset = system.default_cpuset(machine)
        if cpuset:
            say(f"a hybrid CPU: jobs run on its performance cores {cpuset}")
    return cpuset, cpu_sets(cpuset, pairing, slots, machine)


@dataclass
class _Recorded:
    """One job of a batch: its IPC messages in order, and how its process ended."""

    messages: list[dict] = field(default_factory=list)
    result: ProcessResult | None = None
    error: BaseException | None = None  # raised in the job's thread (a sandbox that cannot start): raised again


def resume_from_checkpoint(output: Path, record: dict, csv_bytes: int) -> None:
    """A resumed duet run: results.csv and pairs.csv cut back to the checkpoint (no unpaired halves)."""
    csv_path = output / "results.csv"
    if csv_path.exists() and csv_path.stat().st_size > csv_bytes:
        with csv_path.open("r+b") as handle:
            handle.truncate(csv_bytes)
    truncate_pairs(output / PAIRS_FILE, int(record.get("pairing", {}).get("pairs", 0)))


class SlotRunner:
    """Runs a session's schedule in batches of units (duets or single jobs) on disjoint CPU sets, a thread each;
    what each job sent is replayed to the session in schedule order. A duet is kept whole or not at all.
    A batch of one job runs in this thread, its samples written as they arrive."""

    def __init__(self, session) -> None:
        plan = session.plan
        self.session = session
        self.sets = cpu_sets(plan.cpuset, plan.pairing, plan.slots)
        exclusive = frozenset(name for name in plan.files if is_exclusive(plan.benchmark_dir, name))
        self.units = units(session.schedule, plan.pairing, exclusive)
        self._recorded: dict[int, _Recorded] = {}
        self._cpus: dict[int, str] = {}  # each started job's CPU set, for pairs.csv

    def _cpus_of(self, unit: Unit, job, slot: int) -> str | None:
        """The job's CPU set: its half of the slot's two in a duet, the slot's set, or the run's for an exclusive."""
        if unit.exclusive or not self.sets:
            return self.session.plan.cpuset
        if self.session.plan.pairing != DUET:
            return self.sets[slot]
        if not unit.duet:
            return ",".join(self.sets[2 * slot : 2 * slot + 2])
        first, second = self.sets[2 * slot], self.sets[2 * slot + 1]
        head_first = head_on_first_set(self.session.plan.seed, unit_key(job))
        return (first if head_first else second) if job.side == HEAD else (second if head_first else first)

    def _start(self, job, cpus: str | None) -> threading.Thread:
        session = self.session
        recorded = self._recorded[job.index] = _Recorded()
        self._cpus[job.index] = cpus or ""
        process = BenchmarkProcess()
        session.running.append(process)  # a signal stops it with the others

        def work() -> None:
            try:
                recorded.result = session.execute(job, process, recorded.messages.append, cpus)
            except BaseException as error:  # noqa: BLE001 - handed to the main thread, which raises it
                recorded.error = error
            finally:
                session.running.remove(process)

        thread = threading.Thread(target=work, name=f"benchgate-job-{job.index}", daemon=True)
        thread.start()
        return thread

    def run(self) -> None:
        """Every batch from the first job not done yet; returns at the end or when a signal stopped it."""
        session = self.session
        done = session.state.completed_jobs
        pending = [unit for unit in self.units if unit.jobs[-1].index >= done]
        for batch in batches(pending, session.plan.slots):
            if session.interrupted:
                break
            self._run_batch(batch)

    def _run_batch(self, batch: list[Unit]) -> None:
        session = self.session
        if len(batch) == 1 and not batch[0].duet:
            self._finish_unit(batch[0], live=True)
            return
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
            if not (interrupted and unit.duet):  # a duet is kept whole or not at all: --resume runs it again
                self._finish_unit(unit)  # a single job cut short keeps its samples, as one run live does
            if interrupted:
                session.interrupted = True
                return

    def _interrupted(self, job) -> bool:
        recorded = self._recorded.get(job.index)
        return recorded is not None and (recorded.result is None or recorded.result.interrupted)

    def _finish_unit(self, unit: Unit, live: bool = False) -> None:
        """Run (``live``) or replay the unit's jobs, then mark them done and checkpoint (a duet: once, whole)."""
        session, state = self.session, self.session.state
        rows: dict[str, list[tuple[str, int]]] = {}
        for job in unit.jobs:
            if job.index < state.completed_jobs:
                continue
            ran = job.index in self._recorded or (live and session.runs(job))
            if ran:
                cut_short = not live and self._interrupted(job)
                rows[job.side] = session.run_job(job, self._recorded.pop(job.index, None), self._cpus_of(unit, job, 0))
                if cut_short or (live and session.interrupted):
                    return  # not counted as done: --resume runs it again
            # not run: its unit stopped (skipped), or it failed too often (the note was added at the limit)
            skipped = not ran and session.stopping is not None and session.stopping.skips(job)
            if skipped and session.progress:
                session.progress.job_skipped(job)
            state.completed_jobs = job.index + 1
            state.csv_bytes = session.recorder.csv_bytes
            session.already_written = []
            if job is not unit.jobs[-1] and unit.duet:
                continue  # a duet is checkpointed whole, with its pairs (its first half ends no iteration)
            if unit.duet:
                self._record_pairs(unit, rows)
            else:  # a file run alone: its samples are in no pair (counted in a duet run's pairing)
                session.recorder.pairs(session.plan.pairing, [], unpaired=len(rows.get(job.side, [])))
            # a look (it sees the pairs written so far), then a checkpoint (after a skipped job: at a look or the end)
            looked = session.stopping is not None and session.stopping.after_job(job)
            if not skipped or looked or state.completed_jobs == len(session.schedule):
                session.recorder.checkpoint(len(session.schedule))

    def _record_pairs(self, unit: Unit, rows: dict[str, list[tuple[str, int]]]) -> None:
        base_job, head_job = sorted(unit.jobs, key=lambda job: job.side == HEAD)
        paired, unpaired = pair_rows(rows.get(base_job.side, []), rows.get(HEAD, []))
        base_cpus, head_cpus = self._cpus.pop(base_job.index, ""), self._cpus.pop(head_job.index, "")
        pairs = [
            Pair(base_job.filename, configuration, base_job.iteration, base_line, head_line, base_cpus, head_cpus)
            for configuration, base_line, head_line in paired
        ]
        self.session.recorder.pairs(self.session.plan.pairing, pairs, unpaired, dropped=unpaired)
        if unpaired:
            say(
                f"warning: duet {base_job.filename}{f' {base_job.row}' if base_job.row else ''} iteration "
                f"{base_job.iteration}: {unpaired} sample(s) reported by one half only (the other failed or was "
                "skipped) are not paired"
            )
