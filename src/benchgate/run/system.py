"""The runner's environment, in the spirit of ``pyperf system show``: facts plus warnings (run.json's environment)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

LOAD_WARNING_PER_CPU = 0.5  # a 1-minute load above half a core per CPU means something else is running


@dataclass
class Facts:
    """What the checks found, and what they warn about."""

    values: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


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
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            cpus.extend(range(int(low), int(high) + 1))
        else:
            cpus.append(int(part))
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


def cpu_model(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    text = read_text(root, "proc/cpuinfo") or ""
    models = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
    facts.values["cpu_model"] = models[0] if models else "unknown"


def cpu_count(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    online = parse_cpu_list(read_text(root, "sys/devices/system/cpu/online"))
    facts.values["cpu_count"] = len(online) or (os.cpu_count() or 0)
    if cpuset is not None:
        facts.values["cpuset"] = ",".join(map(str, cpuset))
        missing = [cpu for cpu in cpuset if online and cpu not in online]
        if missing:
            facts.warnings.append(f"--cpuset names CPUs that are not online: {missing}")


def governor(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    governors = {}
    for path in sorted((root / "sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor")):
        governors[path.parent.parent.name] = path.read_text().strip()
    if not governors:
        facts.values["governor"] = "unavailable (no cpufreq; a VM or container?)"
        return
    names = sorted(set(governors.values()))
    facts.values["governor"] = ", ".join(names)
    if any(name != "performance" for name in names):
        facts.warnings.append(f"CPU frequency governor is {', '.join(names)}, not 'performance'")


def turbo(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    no_turbo = read_text(root, "sys/devices/system/cpu/intel_pstate/no_turbo")
    boost = read_text(root, "sys/devices/system/cpu/cpufreq/boost")
    if no_turbo is None and boost is None:
        facts.values["turbo"] = "unknown"
        return
    enabled = no_turbo == "0" if no_turbo is not None else boost == "1"
    facts.values["turbo"] = "on" if enabled else "off"
    if enabled:
        facts.warnings.append("turbo boost is on: the CPU frequency varies with temperature and load")


def load_average(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    text = read_text(root, "proc/loadavg")
    if not text:
        facts.values["load_average"] = "unknown"
        return
    loads = [float(value) for value in text.split()[:3]]
    facts.values["load_average"] = " ".join(f"{value:.2f}" for value in loads)
    cpus = len(parse_cpu_list(read_text(root, "sys/devices/system/cpu/online"))) or (os.cpu_count() or 1)
    if loads[0] > LOAD_WARNING_PER_CPU * cpus:
        facts.warnings.append(f"load average {loads[0]:.2f} on {cpus} CPU(s): the machine is not idle")


def isolated_cpus(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    isolated = parse_cpu_list(read_text(root, "sys/devices/system/cpu/isolated"))
    facts.values["isolated_cpus"] = ",".join(map(str, isolated)) or "none"
    if cpuset is not None:
        outside = [cpu for cpu in cpuset if cpu not in isolated]
        if outside:
            facts.warnings.append(f"--cpuset CPUs {outside} are not isolated (isolcpus=): other tasks share them")
    elif not isolated:
        facts.warnings.append("no isolated CPUs and no --cpuset: benchmarks share CPUs with everything else")


def aslr(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    value = read_text(root, "proc/sys/kernel/randomize_va_space")
    facts.values["aslr"] = {"0": "disabled", "1": "partial", "2": "full"}.get(value or "", "unknown")


def memory(root: Path, cpuset: list[int] | None, facts: Facts) -> None:
    fields = {}
    for line in (read_text(root, "proc/meminfo") or "").splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            fields[name] = int(parts[0])  # kB
    if "MemTotal" not in fields:
        facts.values["memory"] = "unknown"
        return
    total, available = fields["MemTotal"], fields.get("MemAvailable", fields["MemTotal"])
    facts.values["memory"] = f"{total / 1048576:.1f} GiB total, {available / 1048576:.1f} GiB available"
    if available < 0.1 * total:
        facts.warnings.append(f"only {available / 1048576:.1f} GiB of memory available: swapping may skew results")


# Each check reads under ``root``, with the --cpuset CPUs (None: no --cpuset), into the facts.
CHECKS = (cpu_model, cpu_count, governor, turbo, load_average, isolated_cpus, aslr, memory)


def collect(root: Path = Path("/"), cpuset: str | None = None) -> dict:
    """Run every check; a flat mapping of facts plus ``warnings`` (run.json's "environment")."""
    cpus = parse_cpu_list(cpuset) if cpuset else None
    facts = Facts()
    for check in CHECKS:
        check(root, cpus, facts)
    return {**facts.values, "warnings": facts.warnings}


def render(environment: dict) -> str:
    """The environment as a few plain lines for the printed report."""
    lines = ["Runner environment:"]
    for key, value in environment.items():
        if key != "warnings":
            lines.append(f"  {key.replace('_', ' ')}: {value}")
    for warning in environment.get("warnings", []):
        lines.append(f"  WARNING: {warning}")
    return "\n".join(lines) + "\n"
