"""The runner's environment, in the spirit of ``pyperf system show``: facts plus warnings (run.json's environment)."""

from __future__ import annotations

import os
from collections.abc import Sequence
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
    ranges: list[list[int]] = []
    for cpu in cpus:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(f"{low}-{high}" if high > low else f"{low}" for low, high in ranges)


def collect(root: Path = Path("/"), cpuset: str | None = None) -> dict:
    """Every check, reading ``/proc`` and ``/sys`` under ``root``: a flat mapping of facts plus ``warnings``."""
    cpus = parse_cpu_list(cpuset) if cpuset else None
    warnings: list[str] = []
    text = read_text(root, "proc/cpuinfo") or ""
    models = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
    online = parse_cpu_list(read_text(root, "sys/devices/system/cpu/online"))
    facts: dict[str, object] = {"cpu_model": models[0] if models else "unknown"}
    facts["cpu_count"] = len(online) or (os.cpu_count() or 0)
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
    count = len(online) or (os.cpu_count() or 1)
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
    memory = {}
    for line in (read_text(root, "proc/meminfo") or "").splitlines():
        name, _, rest = line.partition(":")
        if rest.split() and rest.split()[0].isdigit():
            memory[name] = int(rest.split()[0]) / 1048576  # kB -> GiB
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
