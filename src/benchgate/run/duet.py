"""Duet runs and slots: which jobs run together, on which CPU sets, and how a duet pairs up (run by ``Session``).

The design and its reasons: docs/statistics.md, "Duet runs" and "The machine's CPUs".
"""

import os
import random
import re
import shutil
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchgate.errors import InputError
from benchgate.results.pairs import PAIRS_FILE, truncate_pairs
from benchgate.run import say, suite, system

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
    return (job.filename, job.configuration, job.iteration)


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
        why = ""  # fewer CPU sets than CPUs: SMT siblings or mixed core types
        if machine.hybrid or len(machine.cores(cpus)) < len(cpus):
            why = f"; a CPU set takes whole physical cores of one type, and these are {system.shape(machine, cpus)}"
        raise InputError(
            f"{what} disjoint CPU sets, but this run may use {len(cpus)} CPU(s) ({system.format_cpu_list(cpus)})"
            f"{why}; use fewer slots" + (" or --pairing sequential" if pairing == DUET else "")
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
    waiting: defaultdict[str, deque[int]] = defaultdict(deque)
    for configuration, line in head_rows:
        waiting[configuration].append(line)
    paired = [(name, line, waiting[name].popleft()) for name, line in base_rows if waiting[name]]
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


def resume_from_checkpoint(output: Path, record: dict, csv_bytes: int) -> None:
    """A resumed duet run: results.csv and pairs.csv cut back to the checkpoint (no unpaired halves)."""
    csv_path = output / "results.csv"
    if csv_path.exists() and csv_path.stat().st_size > csv_bytes:
        os.truncate(csv_path, csv_bytes)
    truncate_pairs(output / PAIRS_FILE, int(record.get("pairing", {}).get("pairs", 0)))
