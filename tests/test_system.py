"""Runner environment checks, pyperf-style: read /proc and /sys (a prepared tree, and the real machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchgate.run import system


def _tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


QUIET = {
    "proc/cpuinfo": "processor\t: 0\nmodel name\t: Test CPU 9000\nprocessor\t: 1\nmodel name\t: Test CPU 9000\n",
    "sys/devices/system/cpu/online": "0-3\n",
    "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
    "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance\n",
    "sys/devices/system/cpu/intel_pstate/no_turbo": "1\n",
    "proc/loadavg": "0.10 0.20 0.30 1/100 1234\n",
    "sys/devices/system/cpu/isolated": "2-3\n",
    "proc/sys/kernel/randomize_va_space": "2\n",
    "proc/meminfo": "MemTotal:       16777216 kB\nMemFree: 1 kB\nMemAvailable:   8388608 kB\n",
}


def test_a_quiet_tuned_machine_has_no_warnings(tmp_path):
    facts = system.collect(_tree(tmp_path, QUIET), cpuset="2-3")
    assert facts == {
        "cpu_model": "Test CPU 9000",
        "cpu_count": 4,
        "cpuset": "2,3",
        "governor": "performance",
        "turbo": "off",
        "load_average": "0.10 0.20 0.30",
        "isolated_cpus": "2,3",
        "aslr": "full",
        "memory": "16.0 GiB total, 8.0 GiB available",
        "warnings": [],
    }


def test_a_noisy_machine_is_warned_about(tmp_path):
    noisy = dict(QUIET)
    noisy["sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"] = "powersave\n"
    noisy["sys/devices/system/cpu/intel_pstate/no_turbo"] = "0\n"
    noisy["proc/loadavg"] = "3.50 2.00 1.00 1/100 1234\n"
    noisy["proc/meminfo"] = "MemTotal: 16777216 kB\nMemAvailable: 1048576 kB\n"
    warnings = system.collect(_tree(tmp_path, noisy), cpuset="0-1")["warnings"]
    assert any("governor is performance, powersave" in warning for warning in warnings)
    assert any("turbo boost is on" in warning for warning in warnings)
    assert any("load average 3.50 on 4 CPU(s)" in warning for warning in warnings)
    assert any("CPUs [0, 1] are not isolated" in warning for warning in warnings)
    assert any("1.0 GiB of memory available" in warning for warning in warnings)


def test_amd_boost_and_missing_cpufreq(tmp_path):
    files = {key: value for key, value in QUIET.items() if "cpufreq" not in key and "intel_pstate" not in key}
    files["sys/devices/system/cpu/cpufreq/boost"] = "1\n"
    facts = system.collect(_tree(tmp_path, files))
    assert facts["turbo"] == "on" and facts["governor"].startswith("unavailable")
    assert "cpuset" not in facts


def test_cpu_lists():
    assert system.parse_cpu_list("0-2,5,7-8\n") == [0, 1, 2, 5, 7, 8]
    assert system.parse_cpu_list("") == []


def test_the_real_machine_reports_every_fact_flat():
    facts = system.collect()
    assert {"cpu_model", "cpu_count", "governor", "turbo", "load_average", "isolated_cpus", "aslr", "memory"} <= set(
        facts
    )
    assert facts["cpu_count"] >= 1
    # run.json's environment is flat: the report shows scalar values only
    assert all(isinstance(value, str | int) for key, value in facts.items() if key != "warnings")
    assert "Runner environment:" in system.render(facts)


@pytest.mark.parametrize("text", ["0", "0-2,5", "1,3,5", "0-3,8-11", ""])
def test_a_cpu_list_formats_back_to_the_kernels_text(text):
    assert system.format_cpu_list(system.parse_cpu_list(text)) == text
