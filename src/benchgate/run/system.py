"""The runner's environment (``pyperf system show``-like facts plus warnings, run.json's environment) and the
machine's CPUs from sysfs: a run's CPU sets take whole cores of one type (docs/statistics.md, "The machine's CPUs")."""

import itertools
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

LOAD_WARNING_PER_CPU = 0.5  # a 1-minute load above half a core per CPU means something else is running


def read_text(root: Path, relative: str) -> str | None:
    """The stripped text of ``relative`` under ``root``; None when it cannot be read."""
    try:
        return (root / relative.lstrip("/")).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def parse_cpu_list(text: str | None) -> list[int]:
    """``0-2,5`` -> [0, 1, 2, 5] (the kernel's cpulist format; empty for none)."""
    cpus: list[int] = []
    for part in (text or "").replace("\n", ",").split(","):
        if part.strip():
            bounds = part.split("-", 1)
            cpus.extend(range(int(bounds[0]), int(bounds[-1]) + 1))
    return cpus


def format_cpu_list(cpus: Sequence[int]) -> str:
    """[0, 1, 2, 5] -> ``0-2,5``, the inverse of ``parse_cpu_list`` (the kernel's cpulist format)."""
    # consecutive CPUs share their offset from their position in the list
    runs = [[cpu for _, cpu in run] for _, run in itertools.groupby(enumerate(cpus), lambda item: item[1] - item[0])]
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}" for run in runs)


def collect(root: Path = Path("/"), cpuset: str | None = None) -> dict:
    """Every check, reading ``/proc`` and ``/sys`` under ``root``: a flat mapping of facts plus ``warnings``."""
    cpus = parse_cpu_list(cpuset) if cpuset else None
    warnings: list[str] = []
    text = read_text(root, "proc/cpuinfo") or ""
    models = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
    online = parse_cpu_list(read_text(root, "sys/devices/system/cpu/online"))
    facts: dict[str, object] = {"cpu_model": models[0] if models else "unknown"}
    count = len(online) or os.cpu_count() or 1
    facts["cpu_count"] = count
    if cpus is not None:
        facts["cpuset"] = ",".join(map(str, cpus))
        missing = [cpu for cpu in cpus if online and cpu not in online]
        if missing:
            warnings.append(f"--cpuset names CPUs that are not online: {missing}")
    found = (root / "sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor")
    governors = sorted({path.read_text().strip() for path in found})
    facts["governor"] = ", ".join(governors) or "unavailable (no cpufreq; a VM or container?)"
    if any(name != "performance" for name in governors):
        warnings.append(f"CPU frequency governor is {', '.join(governors)}, not 'performance'")
    no_turbo = read_text(root, "sys/devices/system/cpu/intel_pstate/no_turbo")
    boost = read_text(root, "sys/devices/system/cpu/cpufreq/boost")
    turbo = no_turbo == "0" if no_turbo is not None else boost == "1"
    facts["turbo"] = "unknown" if no_turbo is None and boost is None else "on" if turbo else "off"
    if turbo:
        warnings.append("turbo boost is on: the CPU frequency varies with temperature and load")
    loads = [float(value) for value in (read_text(root, "proc/loadavg") or "").split()[:3]]
    facts["load_average"] = " ".join(f"{value:.2f}" for value in loads) or "unknown"
    if loads and loads[0] > LOAD_WARNING_PER_CPU * count:
        warnings.append(f"load average {loads[0]:.2f} on {count} CPU(s): the machine is not idle")
    isolated = parse_cpu_list(read_text(root, "sys/devices/system/cpu/isolated"))
    facts["isolated_cpus"] = ",".join(map(str, isolated)) or "none"
    outside = [cpu for cpu in cpus or () if cpu not in isolated]
    if outside:
        warnings.append(f"--cpuset CPUs {outside} are not isolated (isolcpus=): other tasks share them")
    elif cpus is None and not isolated:
        warnings.append("no isolated CPUs and no --cpuset: benchmarks share CPUs with everything else")
    aslr = read_text(root, "proc/sys/kernel/randomize_va_space")
    facts["aslr"] = {"0": "disabled", "1": "partial", "2": "full"}.get(aslr or "", "unknown")
    meminfo = re.findall(r"^(\w+):\s*(\d+)", read_text(root, "proc/meminfo") or "", re.MULTILINE)
    memory = {name: int(kb) / 1048576 for name, kb in meminfo}  # kB -> GiB
    total = memory.get("MemTotal")
    available = memory.get("MemAvailable", total)
    facts["memory"] = f"{total:.1f} GiB total, {available:.1f} GiB available" if total is not None else "unknown"
    if total is not None and available < 0.1 * total:
        warnings.append(f"only {available:.1f} GiB of memory available: swapping may skew results")
    return {**facts, "warnings": warnings}


def render(environment: dict) -> str:
    """The environment as a few plain lines for the printed report."""
    facts = [f"  {key.replace('_', ' ')}: {value}" for key, value in environment.items() if key != "warnings"]
    warnings = [f"  WARNING: {warning}" for warning in environment.get("warnings", [])]
    return "\n".join(["Runner environment:", *facts, *warnings]) + "\n"


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
