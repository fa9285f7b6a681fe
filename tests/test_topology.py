"""The machine's CPUs: core types and SMT siblings read from fake sysfs trees, and the CPU sets chosen on them.

The trees (tests/fixtures/sysfs, described in its README): Node's benchmark machine (Hetzner EX44,
i5-13500: 6 performance cores with SMT as CPUs 0-11, 8 efficiency cores as 12-19), a non-hybrid SMT
desktop (8 cores, siblings n and n+8) and a 2-CPU VM without SMT.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from commentcases import context, run_summary

from benchgate import cli
from benchgate.errors import InputError
from benchgate.report.comment import render_comment
from benchgate.run import duet, system

SYSFS = Path(__file__).parent / "fixtures" / "sysfs"
EX44, DESKTOP, VM = "ex44", "smt-desktop", "vm-2cpu"
CPUS = {EX44: range(20), DESKTOP: range(16), VM: range(2)}


def machine(name: str, allowed=None) -> system.Topology:
    """A fake tree's topology; the process may use all its CPUs unless ``allowed`` says otherwise."""
    return system.read(SYSFS / name, allowed=CPUS[name] if allowed is None else allowed)


def test_the_ex44_has_six_smt_performance_cores_and_eight_efficiency_cores():
    ex44 = machine(EX44)
    assert ex44.hybrid and ex44.online == tuple(range(20))
    groups = ex44.by_type(ex44.allowed)
    assert list(groups) == [system.PERFORMANCE, system.EFFICIENCY]
    assert ex44.cores(groups[system.PERFORMANCE]) == [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9), (10, 11)]
    assert ex44.cores(groups[system.EFFICIENCY]) == [(cpu,) for cpu in range(12, 20)]


def test_the_desktop_pairs_n_with_n_plus_8_and_the_vm_has_no_smt():
    desktop, vm = machine(DESKTOP), machine(VM)
    assert not desktop.hybrid and not vm.hybrid
    assert desktop.cores(range(16)) == [(n, n + 8) for n in range(8)]
    assert vm.cores(range(2)) == [(0,), (1,)]
    assert list(desktop.by_type(range(16))) == [None]


def test_a_cpu_without_a_topology_file_is_a_core_of_its_own(tmp_path):
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/online").write_text("0-3\n")
    bare = system.read(tmp_path, allowed=range(4))
    assert bare.cores(range(4)) == [(0,), (1,), (2,), (3,)] and not bare.hybrid
    assert duet.cpu_sets(None, duet.DUET, 2, bare) == ["0", "1", "2", "3"]


def test_this_machine_reads_and_every_allowed_cpu_is_online():
    here = system.read()
    assert here.allowed and (not here.online or set(here.allowed) <= set(here.online))


@pytest.mark.parametrize(
    ("name", "cpuset", "pairing", "slots", "expected"),
    [
        # EX44: the performance cores, whole (both threads of a core in one set), never an efficiency core
        (EX44, None, duet.DUET, 1, ["0-5", "6-11"]),
        (EX44, "0-11", duet.DUET, 1, ["0-5", "6-11"]),
        (EX44, None, duet.DUET, 3, ["0-1", "2-3", "4-5", "6-7", "8-9", "10-11"]),
        (EX44, None, duet.SEQUENTIAL, 2, ["0-5", "6-11"]),
        (EX44, None, duet.SEQUENTIAL, 4, ["0-1", "2-3", "4-5", "6-7"]),
        (EX44, "12-19", duet.DUET, 2, ["12-13", "14-15", "16-17", "18-19"]),
        # a --cpuset that mixes types: the sets keep to the first type with a core for each set
        (EX44, "10-13", duet.DUET, 1, ["12", "13"]),
        (EX44, "0-19", duet.SEQUENTIAL, 7, [str(cpu) for cpu in range(12, 19)]),
        # the desktop: a core's siblings (n, n+8) stay in one set
        (DESKTOP, None, duet.DUET, 1, ["0-3,8-11", "4-7,12-15"]),
        (DESKTOP, None, duet.SEQUENTIAL, 8, [f"{n},{n + 8}" for n in range(8)]),
        (DESKTOP, "0-3", duet.DUET, 1, ["0-1", "2-3"]),
        # the VM: as before topology was read
        (VM, None, duet.DUET, 1, ["0", "1"]),
        (VM, None, duet.SEQUENTIAL, 2, ["0", "1"]),
        (VM, "1", duet.SEQUENTIAL, 1, ["1"]),
        (VM, None, duet.SEQUENTIAL, 1, []),
    ],
)
def test_cpu_sets_on_each_machine(name, cpuset, pairing, slots, expected):
    assert duet.cpu_sets(cpuset, pairing, slots, machine(name)) == expected


@pytest.mark.parametrize("name", [EX44, DESKTOP, VM])
def test_no_set_mixes_core_types_and_no_two_sets_share_a_core(name):
    found = machine(name)
    checked = 0
    for pairing, slots in itertools.product(duet.PAIRINGS, range(1, 21)):
        try:
            sets = [system.parse_cpu_list(text) for text in duet.cpu_sets(None, pairing, slots, found)]
        except InputError:
            continue
        if len(sets) < 2:
            continue
        checked += 1
        cores = [{found.core_of(cpu) for cpu in members} for members in sets]
        assert all(not (a & b) for a, b in itertools.combinations(cores, 2)), (pairing, slots, sets)
        assert all(set(found.core_of(cpu)) <= set(members) for members in sets for cpu in members)  # whole cores
        types = {found.core_types.get(cpu) for members in sets for cpu in members}
        assert len(types) == 1, (pairing, slots, sets)
        assert len({len(members) for members in sets}) == 1  # every set as large as the others
    assert checked >= 1


@pytest.mark.parametrize(
    ("name", "pairing", "slots", "cpuset", "expected"),
    [
        (EX44, duet.DUET, 4, "0-11", "a CPU set takes whole physical cores of one type, and these are 6 performance"),
        (EX44, duet.SEQUENTIAL, 9, None, "6 performance cores (0-11, 2 threads each), 8 efficiency cores (12-19"),
        (EX44, duet.DUET, 1, "11-12", "but this run may use 2 CPU(s) (11-12); a CPU set takes whole"),
        (DESKTOP, duet.SEQUENTIAL, 9, None, "may use 16 CPU(s) (0-15); a CPU set takes whole physical cores"),
        (VM, duet.SEQUENTIAL, 3, None, "--slots 3 needs 3 disjoint CPU sets, but this run may use 2 CPU(s) (0-1); use"),
    ],
)
def test_too_few_cores_of_one_type_are_refused_with_the_reason(name, pairing, slots, cpuset, expected):
    with pytest.raises(InputError) as refused:
        duet.cpu_sets(cpuset, pairing, slots, machine(name))
    assert expected in str(refused.value) and "\n" not in str(refused.value)


def test_a_hybrid_machine_defaults_to_its_performance_cores():
    assert system.default_cpuset(machine(EX44)) == "0-11"
    assert system.default_cpuset(machine(EX44, allowed=range(10, 14))) == "10-11"
    assert system.default_cpuset(machine(EX44, allowed=range(12, 20))) is None  # one type already
    assert system.default_cpuset(machine(DESKTOP)) is None and system.default_cpuset(machine(VM)) is None


def test_a_cpuset_that_mixes_core_types_is_warned_about_in_one_line():
    ex44 = machine(EX44)
    warning = system.mixed_types_warning(ex44, "8-15")
    assert warning is not None and "\n" not in warning
    assert warning.startswith("--cpuset 8-15 mix core types (8-11 performance, 12-15 efficiency)")
    unpinned = system.mixed_types_warning(ex44, None)
    assert unpinned is not None and unpinned.startswith("the CPUs this run may use (0-19) mix core types")
    for cpuset in ("0-11", "12-19", "3"):
        assert system.mixed_types_warning(ex44, cpuset) is None
    for name in (DESKTOP, VM):
        assert system.mixed_types_warning(machine(name), None) is None


@pytest.mark.parametrize(
    ("name", "cpuset", "pairing", "slots", "topology_text", "used"),
    [
        (
            EX44,
            "0-11",
            duet.DUET,
            1,
            "hybrid: 6 performance cores (0-11, 2 threads each), 8 efficiency cores (12-19, 1 thread each)",
            "2 CPU sets of 3 performance cores each: 0-5 | 6-11",
        ),
        (EX44, "0-11", duet.SEQUENTIAL, 1, None, "6 performance cores (0-11, 2 threads each)"),
        (
            DESKTOP,
            None,
            duet.SEQUENTIAL,
            2,
            "8 cores (0-15, 2 threads each)",
            "2 CPU sets of 4 cores each: 0-3,8-11 | 4-7,12-15",
        ),
        (
            VM,
            None,
            duet.SEQUENTIAL,
            1,
            "2 cores (0-1, 1 thread each)",
            "not pinned: any of 2 cores (0-1, 1 thread each)",
        ),
        (VM, None, duet.DUET, 1, None, "2 CPU sets of 1 core each: 0 | 1"),
    ],
)
def test_the_runner_section_names_the_cores_used(name, cpuset, pairing, slots, topology_text, used):
    found = machine(name)
    facts = system.runner_facts(found, cpuset, duet.cpu_sets(cpuset, pairing, slots, found))
    assert facts["cpus_used"] == used
    if topology_text is not None:
        assert facts["cpu_topology"] == topology_text
    printed = system.render({**facts, "warnings": []})
    assert f"cpus used: {used}" in printed
    comment = render_comment(context(run=run_summary(environment=tuple(facts.items()))))
    runner = comment.split("#### Runner", 1)[1]
    assert "`cpus_used`" in runner and used.split(": ")[-1] in runner


def test_the_mixed_cpuset_warning_reaches_the_comment():
    warning = system.mixed_types_warning(machine(EX44), "0-19")
    comment = render_comment(context(run=run_summary(warnings=(warning,))))
    assert "0-11 performance, 12-19 efficiency" in comment.split("#### Runner", 1)[1]


NODE = shutil.which("node")
BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
needs_node = pytest.mark.skipif(NODE is None or shutil.which("taskset") is None, reason="needs node and taskset")


@pytest.fixture
def hybrid_here(monkeypatch):
    """This machine's CPUs 0 and 1 seen as one performance and one efficiency core."""
    read = system.read
    monkeypatch.setattr(system, "read", lambda root=None, allowed=None: read(SYSFS / "hybrid-2cpu", allowed))


def _run(capsys, tmp_path, *args):
    out = tmp_path / "out"
    argv = ["run", "--benchmark-dir", str(BENCH), "--no-progress", "calc", "--filter", "add"]
    argv += ["--base-binary", NODE, "--head-binary", NODE, "--runs", "2", "--output", str(out), *args]
    status = cli.main(argv)
    err = capsys.readouterr().err
    record = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else None
    return status, err, record


@needs_node
@pytest.mark.usefixtures("hybrid_here")
def test_a_run_on_a_hybrid_machine_records_its_cores_and_pins_to_the_performance_core(capsys, tmp_path):
    status, err, record = _run(capsys, tmp_path)
    assert status != 2 and record is not None, err
    assert "benchgate: a hybrid CPU: jobs run on its performance cores 0" in err
    assert record["options"]["cpuset"] == "0"
    environment = record["environment"]
    assert (
        environment["cpu_topology"]
        == "hybrid: 1 performance core (0, 1 thread each), 1 efficiency core (1, 1 thread each)"
    )
    assert environment["cpus_used"] == "1 performance core (0, 1 thread each)"
    assert not any("mix core types" in warning for warning in environment["warnings"])


@needs_node
@pytest.mark.usefixtures("hybrid_here")
def test_a_mixed_cpuset_is_warned_about_once_on_stderr_and_in_run_json(capsys, tmp_path):
    status, err, record = _run(capsys, tmp_path, "--cpuset", "0-1")
    assert status != 2 and record is not None, err
    lines = [line for line in err.splitlines() if "mix core types" in line]
    assert len(lines) == 1 and lines[0].startswith("benchgate: warning: --cpuset 0-1 mix core types")
    assert [warning for warning in record["environment"]["warnings"] if "mix core types" in warning] == [
        lines[0].removeprefix("benchgate: warning: ")
    ]


@needs_node
@pytest.mark.usefixtures("hybrid_here")
def test_a_duet_across_core_types_is_refused_before_anything_runs(capsys, tmp_path):
    status, err, record = _run(capsys, tmp_path, "--pairing", "duet", "--cpuset", "0-1")
    assert status == 2 and record is None
    assert "1 duet slot(s) need 2 disjoint CPU sets, but this run may use 2 CPU(s) (0-1); a CPU set" in err


def test_many_sets_stay_within_run_json_limits():
    big = system.Topology(allowed=tuple(range(256)), online=tuple(range(256)))
    sets = duet.cpu_sets(None, duet.DUET, 128, big)
    assert len(sets) == 256 and sets[:2] == ["0", "1"]
    facts = system.runner_facts(big, None, sets)
    assert all(len(value) <= 512 for value in facts.values()) and facts["cpus_used"].endswith("…")


@pytest.mark.skipif(shutil.which("taskset") is None, reason="the default pinning needs taskset")
def test_check_options_pins_a_hybrid_run_to_the_performance_cores_and_says_so(capsys):
    assert duet.check_options(duet.DUET, 1, None, machine(EX44)) == ("0-11", ["0-5", "6-11"])
    assert capsys.readouterr().err == "benchgate: a hybrid CPU: jobs run on its performance cores 0-11\n"
    assert duet.check_options(duet.SEQUENTIAL, 1, "12-19", machine(EX44)) == ("12-19", ["12-19"])
    assert duet.check_options(duet.DUET, 1, None, machine(DESKTOP)) == (None, ["0-3,8-11", "4-7,12-15"])
    assert duet.check_options(duet.SEQUENTIAL, 1, None, machine(VM)) == (None, [])
    assert capsys.readouterr().err == ""


def test_the_environment_keeps_the_checks_warnings_and_adds_the_mixed_types_one():
    checked = {"cpu_model": "13th Gen Intel(R) Core(TM) i5-13500", "warnings": ["turbo boost is on"]}
    environment = system.with_runner_facts(checked, "0-19", ["0-19"], machine(EX44))
    assert environment["cpu_model"] == checked["cpu_model"] and checked["warnings"] == ["turbo boost is on"]
    assert environment["warnings"][0] == "turbo boost is on" and len(environment["warnings"]) == 2
    assert environment["warnings"][1].startswith("--cpuset 0-19 mix core types (0-11 performance, 12-19 efficiency)")
    assert environment["cpus_used"].startswith("6 performance cores (0-11, 2 threads each), 8 efficiency cores")
    quiet = system.with_runner_facts({"warnings": []}, "0-11", ["0-11"], machine(EX44))
    assert quiet["warnings"] == [] and quiet["cpus_used"] == "6 performance cores (0-11, 2 threads each)"
