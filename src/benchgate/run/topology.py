"""The machine's CPUs from sysfs: core types (hybrid Intel) and SMT siblings; a run's CPU sets take whole cores
of one type (docs/statistics.md, "The machine's CPUs")."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.run.system import format_cpu_list, parse_cpu_list, read_text

PERFORMANCE, EFFICIENCY = "performance", "efficiency"
# The kernel's PMU devices of a hybrid Intel CPU: one per core type, each listing its CPUs.
CORE_TYPE_FILES = {PERFORMANCE: "sys/devices/cpu_core/cpus", EFFICIENCY: "sys/devices/cpu_atom/cpus"}
FACT_LIMIT = 400  # run.json's environment values are at most 512 characters


def _cpus(text: str | None) -> list[int]:
    try:
        return parse_cpu_list(text)
    except ValueError:  # a file the kernel did not write: treated as absent
        return []


@dataclass(frozen=True)
class Topology:
    """The CPUs this process may use and how they sit on physical cores of which type."""

    allowed: tuple[int, ...]  # the CPUs this process may run on (its affinity)
    online: tuple[int, ...] = ()
    core_types: dict[int, str] = field(default_factory=dict)  # CPU -> PERFORMANCE/EFFICIENCY; empty: not hybrid
    siblings: dict[int, tuple[int, ...]] = field(default_factory=dict)  # CPU -> its core's CPUs

    @property
    def hybrid(self) -> bool:
        return len(set(self.core_types.values())) > 1

    def core_of(self, cpu: int) -> tuple[int, ...]:
        return self.siblings.get(cpu, (cpu,))

    def cores(self, cpus: Iterable[int]) -> list[tuple[int, ...]]:
        """``cpus`` grouped by physical core, in order of each core's first CPU among them."""
        found: dict[tuple[int, ...], list[int]] = {}
        for cpu in cpus:
            found.setdefault(self.core_of(cpu), []).append(cpu)
        return [tuple(sorted(group)) for group in found.values()]

    def by_type(self, cpus: Iterable[int]) -> dict[str | None, list[int]]:
        """``cpus`` by core type: performance first, then efficiency, then any the kernel gave no type."""
        groups: dict[str | None, list[int]] = {PERFORMANCE: [], EFFICIENCY: [], None: []}
        for cpu in cpus:
            groups[self.core_types.get(cpu) if self.hybrid else None].append(cpu)
        return {kind: members for kind, members in groups.items() if members}


def read(root: Path = Path("/"), allowed: Iterable[int] | None = None) -> Topology:
    """The topology under ``root``; ``allowed`` defaults to this process's affinity."""
    if allowed is None:
        allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    online = _cpus(read_text(root, "sys/devices/system/cpu/online"))
    core_types = {cpu: kind for kind, path in CORE_TYPE_FILES.items() for cpu in _cpus(read_text(root, path))}
    siblings = {}
    for cpu in online:
        listed = _cpus(read_text(root, f"sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"))
        if cpu in listed:
            siblings[cpu] = tuple(sorted(listed))
    return Topology(tuple(sorted(allowed)), tuple(online), core_types, siblings)


def split(machine: Topology, cpus: Sequence[int], wanted: int) -> list[list[int]] | None:
    """``wanted`` disjoint sets of whole cores of the first type with a core for each, equal in size; None if none."""
    for members in machine.by_type(cpus).values():
        cores = machine.cores(members)
        if len(cores) >= wanted:
            size = len(cores) // wanted
            return [
                sorted(cpu for core in cores[index * size : (index + 1) * size] for cpu in core)
                for index in range(wanted)
            ]
    return None


def _plural(count: int | str, noun: str) -> str:
    return f"{count} {noun}{'' if str(count) == '1' else 's'}"


def _count(machine: Topology, cpus: Sequence[int], kind: str | None) -> str:
    cores = machine.cores(cpus)
    threads = sorted({len(core) for core in cores})
    per_core = f"{threads[0]}" if len(threads) == 1 else f"{threads[0]}-{threads[-1]}"
    name = _plural(len(cores), f"{kind} core" if kind else "core")
    return f"{name} ({format_cpu_list(sorted(cpus))}, {_plural(per_core, 'thread')} each)"


def shape(machine: Topology, cpus: Sequence[int]) -> str:
    """``cpus`` as cores of each type: ``6 performance cores (0-11, 2 threads each), 8 efficiency ...``."""
    return ", ".join(_count(machine, members, kind) for kind, members in machine.by_type(cpus).items())


def shortfall(machine: Topology, cpus: Sequence[int]) -> str:
    """Why ``cpus`` hold fewer CPU sets than CPUs, for the refusal: SMT siblings or mixed core types."""
    if not machine.hybrid and len(machine.cores(cpus)) == len(cpus):
        return ""
    return f"; a CPU set takes whole physical cores of one type, and these are {shape(machine, cpus)}"


def default_cpuset(machine: Topology) -> str | None:
    """The CPUs a run without ``--cpuset`` is pinned to: a hybrid machine's performance cores, else None."""
    # Unpinned, the kernel may move the base to a performance core and the head to an efficiency core.
    groups = machine.by_type(machine.allowed)
    return format_cpu_list(groups[PERFORMANCE]) if len(groups) > 1 and PERFORMANCE in groups else None


def mixed_types_warning(machine: Topology, cpuset: str | None) -> str | None:
    """One line when the run's CPUs (``--cpuset``'s, else all it may use) span more than one core type."""
    cpus = parse_cpu_list(cpuset) if cpuset else list(machine.allowed)
    groups = machine.by_type(cpus)
    if len(groups) < 2:
        return None
    what = f"--cpuset {cpuset}" if cpuset else f"the CPUs this run may use ({format_cpu_list(cpus)})"
    kinds = ", ".join(f"{format_cpu_list(members)} {kind or 'of no known type'}" for kind, members in groups.items())
    return (
        f"{what} mix core types ({kinds}): a job's speed depends on the type it lands on; "
        f"duets and slots keep to one type, a job run alone does not"
    )


def runner_facts(machine: Topology, cpuset: str | None, sets: Sequence[str]) -> dict[str, str]:
    """run.json's environment entries that name the cores: the machine's, and the ones this run uses."""
    every = list(machine.online or machine.allowed)
    if len(sets) > 1:  # one set is the run's --cpuset
        each = shape(machine, parse_cpu_list(sets[0])).split(" (", 1)[0]
        used = f"{len(sets)} CPU sets of {each} each: {' | '.join(sets)}"
    elif cpuset:
        used = shape(machine, parse_cpu_list(cpuset))
    else:
        used = f"not pinned: any of {shape(machine, list(machine.allowed))}"
    return {
        "cpu_topology": ("hybrid: " if machine.hybrid else "") + (shape(machine, every) or "unknown"),
        "cpus_used": used if len(used) <= FACT_LIMIT else used[: FACT_LIMIT - 1] + "…",
    }


def with_runner_facts(
    environment: dict, cpuset: str | None, sets: Sequence[str], machine: Topology | None = None
) -> dict:
    """run.json's environment (``system.collect``) with ``runner_facts`` and the mixed-core-types warning."""
    machine = machine or read()
    warning = mixed_types_warning(machine, cpuset)
    warnings = [*environment.get("warnings", []), *([warning] if warning else [])]
    return {**environment, **runner_facts(machine, cpuset, sets), "warnings": warnings}
