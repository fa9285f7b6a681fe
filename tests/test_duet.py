"""Duet runs (``--pairing duet``) and ``--slots``: real node processes, pairs.csv read back as untrusted data."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from benchgate import cli, results
from benchgate.errors import EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, InputError
from benchgate.results import pairs as pairsfile
from benchgate.run import duet
from benchgate.run.process import Job
from benchgate.stats import decisions, paired

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
NODE_BENCHMARK = os.environ.get("BENCHGATE_NODE_BENCHMARK")
CPUS = len(os.sched_getaffinity(0))
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
needs_two_cpus = pytest.mark.skipif(CPUS < 2, reason="a duet needs two CPUs")
BOTH_NODE = ("--base-binary", str(NODE), "--head-binary", str(NODE))


def _run(capsys, *args, benchmark_dir: Path = BENCH):
    status = cli.main(["run", "--benchmark-dir", str(benchmark_dir), "--no-progress", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _pairs(out: Path) -> list[dict]:
    with (out / "pairs.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _lines(out: Path) -> list[list[str]]:
    with (out / "results.csv").open(newline="") as handle:
        return list(csv.reader(handle))


@needs_node
@needs_two_cpus
def test_duet_pairs_base_and_head_on_disjoint_cpus_and_records_every_pair(capsys, tmp_path):
    out = tmp_path / "out"
    status, stdout, err = _run(
        capsys,
        "calc",
        "--filter",
        "add",
        *BOTH_NODE,
        "--runs",
        "4",
        "--seed",
        "3",
        "--pairing",
        "duet",
        "--output",
        str(out),
    )
    assert status in (0, EXIT_INCONCLUSIVE), err  # A/A: pass or inconclusive, never a fail
    record = json.loads((out / "run.json").read_text())
    assert record["pairing"] == {"mode": "duet", "file": "pairs.csv", "pairs": 8, "unpaired_samples": 0, "dropped": 0}
    assert record["options"]["pairing"] == "duet"
    rows, lines = _pairs(out), _lines(out)
    assert len(rows) == 8 and lines[0] == ["binary", "filename", "configuration", "rate", "time"]
    for row in rows:
        base, head = lines[int(row["base_line"]) - 1], lines[int(row["head_line"]) - 1]
        assert base[0] == "old" and head[0] == "new"
        assert base[1:3] == head[1:3] == [row["filename"], row["configuration"]]
        assert {row["base_cpus"], row["head_cpus"]} == set(duet.cpu_sets(None, "duet", 1))
    # Which side got which CPU set is balanced over each two iterations, as drawn from the seed.
    by_configuration: dict[str, list[str]] = {}
    for row in rows:
        by_configuration.setdefault(row["configuration"], []).append(row["head_cpus"])
    assert all(len(set(sets)) == 2 for sets in by_configuration.values()), by_configuration
    assert "paired_cpu_trimmed_log" in stdout


@needs_node
@needs_two_cpus
@pytest.mark.parametrize("jobs", ["per-file", "per-configuration"])
def test_a_pair_whose_head_crashed_is_dropped_with_a_warning_and_the_rest_is_analysed(capsys, tmp_path, jobs):
    out = tmp_path / "out"
    status, stdout, err = _run(
        capsys,
        "fault",
        "calc",
        "--filter",
        "crash",
        "--filter",
        "add",
        *BOTH_NODE,
        "--head-node-args=--expose-gc",
        "--runs",
        "3",
        "--pairing",
        "duet",
        "--jobs",
        jobs,
        "--format",
        "markdown",
        "--output",
        str(out),
    )
    assert status == EXIT_GATE_FAILED  # the head failed where the base succeeded
    record = json.loads((out / "run.json").read_text())
    crash_pairs = [row for row in _pairs(out) if row["filename"] == "fault/crash.js"]
    if jobs == "per-file":
        # crash.js: the head reports size=1, then dies at size=2; the base's size=2 and size=3 stay unpaired.
        assert "duet fault/crash.js iteration 0: 2 sample(s) reported by one half only" in err
        assert record["pairing"]["pairs"] == 3 * 2 + 3 * 1 and record["pairing"]["unpaired_samples"] == 3 * 2
        assert {row["configuration"] for row in crash_pairs} == {"n=10 size=1"}
    else:
        # One job per configuration: only size=2's head dies, so only its base sample is unpaired; size=3 pairs.
        assert "duet fault/crash.js n=10 size=2 iteration 0: 1 sample(s) reported by one half only" in err
        assert record["pairing"]["pairs"] == 3 * 2 + 3 * 2 and record["pairing"]["unpaired_samples"] == 3
        assert {row["configuration"] for row in crash_pairs} == {"n=10 size=1", "n=10 size=3"}
        assert all(row["iteration"] in "012" for row in crash_pairs) and len(crash_pairs) == 6
    # The unpaired halves are kept in results.csv (compare.R reads them) ...
    samples = results.read_samples([out / "results.csv"])
    assert len(samples[(samples["filename"] == "fault/crash.js") & (samples["side"] == "base")]) == 9
    # ... and the report reads the record back and decides the paired rows.
    assert cli.main(["report", str(out), "--dry-run"]) == EXIT_GATE_FAILED
    reported = capsys.readouterr().out
    assert "paired_cpu_trimmed_log" in reported and "**duet**" in reported
    # The report recomputes from the files the decisions the run made: the same changes and intervals.
    # (the table's cells and, when a row is undecided, its line in the list above the table, escaped there)
    intervals = re.compile(r"-?[\d.]+ % \\?\[[^\]]*\\?\]")
    assert sorted(intervals.findall(reported)) == sorted(intervals.findall(stdout)) != []


def _forge(out: Path, edit) -> None:
    rows = (out / "pairs.csv").read_text().splitlines()
    (out / "pairs.csv").write_text("\n".join(edit(rows)) + "\n")


def _swap_field(row: str, index: int, value: str) -> str:
    fields = next(csv.reader([row]))
    fields[index] = value
    return ",".join(f'"{field}"' for field in fields)


@needs_node
@needs_two_cpus
def test_a_forged_pairing_record_is_refused_with_one_line(capsys, tmp_path):
    out = tmp_path / "out"
    status, _, err = _run(
        capsys,
        "calc",
        "--filter",
        "add",
        *BOTH_NODE,
        "--runs",
        "3",
        "--pairing",
        "duet",
        "--no-analyze",
        "--output",
        str(out),
    )
    assert status == 0, err
    original = (out / "pairs.csv").read_text()
    record = (out / "run.json").read_text()
    first = next(csv.reader([original.splitlines()[1]]))
    other = next(csv.reader([original.splitlines()[2]]))
    forgeries = {
        "already in the pair on line 2": lambda rows: [rows[0], rows[1], _swap_field(rows[2], 3, first[3]), *rows[3:]],
        "is a head sample": lambda rows: [rows[0], _swap_field(rows[1], 3, first[4]), *rows[2:]],
        "is a sample of another row": lambda rows: [rows[0], _swap_field(rows[1], 4, other[4]), rows[1], *rows[3:]],
        "past results.csv's last sample": lambda rows: [rows[0], _swap_field(rows[1], 3, "99"), *rows[2:]],
        "pairs, but run.json's pairing.pairs says 6": lambda rows: rows[:-1],
        "base_line must be a whole number": lambda rows: [rows[0], _swap_field(rows[1], 3, "2.5"), *rows[2:]],
        "base_cpus must be a CPU list": lambda rows: [rows[0], _swap_field(rows[1], 5, "0;rm"), *rows[2:]],
    }
    for message, edit in forgeries.items():
        (out / "pairs.csv").write_text(original)
        _forge(out, edit)
        assert cli.main(["report", str(out), "--dry-run"]) == 2, message
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "pairs.csv" in err, (message, err)
    (out / "pairs.csv").write_text(original)
    forged = json.loads(record)
    forged["pairing"]["unpaired_samples"] = 2
    (out / "run.json").write_text(json.dumps(forged))
    assert cli.main(["report", str(out), "--dry-run"]) == 2
    assert "results.csv has 12 samples, but run.json's pairing counts 6 pairs and 2 unpaired" in capsys.readouterr().err
    forged["pairing"] = {"mode": "duet", "file": "pairs.csv", "pairs": "6", "unpaired_samples": 0, "dropped": 0}
    (out / "run.json").write_text(json.dumps(forged))
    assert cli.main(["report", str(out), "--dry-run"]) == 2
    assert "run record field pairing.pairs: must be a whole number" in capsys.readouterr().err
    (out / "pairs.csv").unlink()
    (out / "run.json").write_text(record)
    assert cli.main(["report", str(out), "--dry-run"]) == 2
    assert "a duet run's pairing is missing" in capsys.readouterr().err


@needs_node
def test_more_slots_than_cpu_sets_are_refused_before_anything_runs(capsys, tmp_path):
    for args, message in (
        (("--slots", str(CPUS + 1)), f"--slots {CPUS + 1} needs {CPUS + 1} disjoint CPU sets, but this run may use"),
        (("--slots", "2", "--pairing", "duet", "--cpuset", "0"), "2 duet slot(s) need 4 disjoint CPU sets"),
        (("--pairing", "duet", "--cpuset", "0"), "1 duet slot(s) need 2 disjoint CPU sets, but this run may use 1"),
        (("--pairing", "duet", "--runs", "auto", "--cpuset", "0"), "1 duet slot(s) need 2 disjoint CPU sets"),
        (("--slots", "0"), "option --slots: key 'slots': must be a whole number from 1 to 256, not '0'"),
    ):
        status, _, err = _run(capsys, "calc", *BOTH_NODE, *args, "--output", str(tmp_path / "out"))
        assert status == 2, err
        assert message in err and err.count("\n") == 1, err
        assert not (tmp_path / "out").exists()


def _timed_suite(tmp_path: Path, jobs: str = "per-file") -> Path:
    """A benchmark dir whose files log when each job's process starts and ends (the harness is ours).

    A job is the file's parent process (per-file), or one configuration child (per-configuration: the
    parent then only lists the configurations, and is not logged).
    """
    bench = tmp_path / "benchmark"
    for category in ("calc", "child_process"):
        (bench / category).mkdir(parents=True)
    harness = Path(__file__).parents[1] / "examples" / "suite" / "benchmark" / "common.js"
    (bench / "common.js").write_text(f"module.exports = require({json.dumps(str(harness))});\n")
    timed = """'use strict';
const common = require('../common.js');
const fs = require('fs');
const log = require('path').join(__dirname, '..', '..', 'times.log');
const job = (process.env.NODE_RUN_BENCHMARK_FN === undefined) === PARENT;
const started = Date.now();
if (job) process.on('exit', () => fs.appendFileSync(log, `${NAME} ${started} ${Date.now()}\\n`));
const bench = common.createBenchmark(main, { n: [200000], k: [1, 2] });
function main({ n }) {
  bench.start();
  const until = Date.now() + 150;
  let x = 0;
  while (Date.now() < until) x++;
  bench.end(n);
}
"""
    for name in ("calc/a.js", "calc/b.js", "calc/c.js", "child_process/spawn.js"):
        parent = "true" if jobs == "per-file" else "false"
        (bench / name).write_text(timed.replace("NAME", repr(name)).replace("PARENT", parent))
    return bench


@needs_node
@needs_two_cpus
@pytest.mark.parametrize("jobs", ["per-file", "per-configuration"])
def test_slots_run_jobs_at_once_but_an_exclusive_category_alone(capsys, tmp_path, jobs):
    bench = _timed_suite(tmp_path / "suite", jobs)
    out = tmp_path / "out"
    status, _, err = _run(
        capsys,
        "all",
        *BOTH_NODE,
        "--runs",
        "2",
        "--slots",
        "2",
        "--no-analyze",
        "--jobs",
        jobs,
        "--output",
        str(out),
        benchmark_dir=bench,
    )
    assert status == 0, err
    spans = [line.split() for line in (tmp_path / "suite" / "times.log").read_text().splitlines()]
    spans = [(name.strip("'"), int(start), int(end)) for name, start, end in spans]
    per_job = 1 if jobs == "per-file" else 2  # a job per file, or per configuration (k=1, k=2)
    assert len(spans) == 4 * 2 * 2 * per_job  # four files, two sides, two runs

    def overlap(a, b) -> bool:
        return a[1] < b[2] and b[1] < a[2]

    exclusive = [span for span in spans if span[0] == "child_process/spawn.js"]
    others = [span for span in spans if span[0] != "child_process/spawn.js"]
    assert len(exclusive) == 4 * per_job
    assert not any(overlap(a, b) for a in exclusive for b in spans if b is not a)
    assert any(overlap(a, b) for a in others for b in others if b is not a)  # two slots did run together
    assert duet.is_exclusive(bench, "child_process/spawn.js") and not duet.is_exclusive(bench, "calc/a.js")


def test_units_pair_neighbours_and_batches_keep_exclusive_units_alone(tmp_path):
    schedule = [
        Job(0, 0, "a.js", "base"),
        Job(1, 0, "a.js", "head"),
        Job(2, 0, "http/s.js", "head"),
        Job(3, 0, "http/s.js", "base"),
        Job(4, 0, "b.js", "head"),
        Job(5, 0, "b.js", "base"),
    ]
    units = duet.units(schedule, "duet", frozenset({"http/s.js"}))
    assert [[job.index for job in unit.jobs] for unit in units] == [[0, 1], [2], [3], [4, 5]]
    assert [unit.exclusive for unit in units] == [False, True, True, False]
    assert [[len(unit.jobs) for unit in batch] for batch in duet.batches(units, 2)] == [[2], [1], [1], [2]]
    sequential = duet.units(schedule, "sequential", frozenset({"http/s.js"}))
    assert [[job.index for unit in batch for job in unit.jobs] for batch in duet.batches(sequential, 2)] == [
        [0, 1],
        [2],
        [3],
        [4, 5],
    ]
    spawning = tmp_path / "misc"
    spawning.mkdir()
    (spawning / "startup.js").write_text("const { spawnSync } = require('node:child_process');\n")
    assert duet.is_exclusive(tmp_path, "misc/startup.js")


def test_rows_pair_by_configuration_and_a_repeated_configuration_pairs_in_order():
    base = [("n=1", 2), ("n=2", 3), ("n=1", 4), ("n=3", 5)]
    head = [("n=1", 6), ("n=1", 7), ("n=2", 8)]
    assert duet.pair_rows(base, head) == ([("n=1", 2, 6), ("n=2", 3, 8), ("n=1", 4, 7)], 1)
    assert duet.pair_rows(base, []) == ([], 4)


def test_the_cpu_set_assignment_is_seeded_and_balanced_over_two_iterations():
    for iteration in range(0, 20, 2):
        first = duet.head_on_first_set(7, ("f.js", None, iteration))
        assert duet.head_on_first_set(7, ("f.js", None, iteration + 1)) is not first
    draws = [duet.head_on_first_set(seed, ("f.js", None, 0)) for seed in range(200)]
    assert 60 < sum(draws) < 140


def test_paired_test_cancels_shared_interference_and_a_cpu_set_bias():
    rng = np.random.default_rng(11)
    shared = rng.normal(0, 0.05, (200, 30))  # interference that hits both halves: 5 % noise
    head_first = (np.arange(30) % 2 == 0)[None, :].repeat(200, 0)
    bias = np.where(head_first, 0.02, -0.02)  # one CPU set 4 % faster than the other
    base = np.exp(10 + shared + rng.normal(0, 0.005, (200, 30)) - bias / 2)
    head = np.exp(10 + shared + rng.normal(0, 0.005, (200, 30)) + bias / 2)
    st = paired.paired_statistics(base, head, strata=head_first.astype(int))
    unpaired = paired.gate_statistics(base, head)
    assert np.median(st.se) < np.median(unpaired.se) / 5
    assert np.median(st.se) < 0.002  # the bias is aligned away, not left in the spread
    duet = paired.test_statistics(paired.PAIRED_TEST, base, head, (base, head, head_first.astype(int)))
    result = decisions.decide_looks([duet], [1.0])
    assert not (result.decision == 0).any()  # A/A: no regression


def test_run_pairs_refuses_a_pairing_that_counts_more_pairs_than_written(tmp_path):
    path = tmp_path / pairsfile.PAIRS_FILE
    with pairsfile.PairsWriter(path):
        pass
    with pytest.raises(InputError, match="0 pairs, but run.json's pairing.pairs says 1"):
        pairsfile.run_pairs(
            pairsfile.Pairing(mode="duet", file="pairs.csv", pairs=1, unpaired_samples=0, dropped=0),
            tmp_path / "run.json",
            results.empty_samples(),
        )
    with pytest.raises(InputError, match="pairing.mode: must be one of sequential, duet"):
        results.parse_run_record({"schema": 1, "pairing": {"mode": "trio"}}, "run.json")


def _wait_for_pairs(path: Path, count: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") > count:
            return
        time.sleep(0.05)
    raise AssertionError("the duet run wrote no pair in time")


@needs_node
@needs_two_cpus
def test_an_interrupted_duet_resumes_to_whole_pairs_and_shards_merge(tmp_path):
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "benchgate",
        "run",
        "calc",
        "text",
        "--benchmark-dir",
        str(BENCH),
        *BOTH_NODE,
        "--runs",
        "3",
        "--seed",
        "5",
        "--pairing",
        "duet",
        "--no-analyze",
        "--no-progress",
    ]
    process = subprocess.Popen(
        [*command, "--output", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for_pairs(out / "pairs.csv", 3, time.monotonic() + 60)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    resumed = subprocess.run(
        [*command[:4], "--resume", "--output", str(out), "--no-progress", "--no-analyze"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    record = json.loads((out / "run.json").read_text())
    samples = results.read_samples([out / "results.csv"])
    # calc/add.js 2 rows, calc/flags.js 1, text/quote.js 4: 7 rows x 3 runs, every one in a pair
    assert record["complete"] and record["pairing"]["pairs"] == 21 and len(samples) == 42
    assert (
        len(pairsfile.run_pairs(pairsfile.Pairing.model_validate(record["pairing"]), out / "run.json", samples)[0])
        == 21
    )
    shards = [tmp_path / "shard1", tmp_path / "shard2"]
    for index, shard in enumerate(shards, start=1):
        done = subprocess.run(
            [*command, "--shard", f"{index}/2", "--output", str(shard)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
    merged, run, _ = results.load([str(shard) for shard in shards])
    base_rows, head_rows, _ = run.pairs
    assert run.pairing == "duet" and len(base_rows) == 21
    assert (merged["side"].to_numpy()[base_rows] == "base").all() and (
        merged["side"].to_numpy()[head_rows] == "head"
    ).all()
    assert (merged["configuration"].to_numpy()[base_rows] == merged["configuration"].to_numpy()[head_rows]).all()
    assert cli.main(["report", *map(str, shards), "--dry-run"]) in (0, EXIT_INCONCLUSIVE)


@needs_node
@needs_two_cpus
@pytest.mark.skipif(NODE_BENCHMARK is None, reason="BENCHGATE_NODE_BENCHMARK names no Node benchmark/ directory")
def test_an_aa_duet_of_real_node_files_does_not_fail(capsys, tmp_path):
    out = tmp_path / "out"
    status, stdout, err = _run(
        capsys,
        "string_decoder",
        "--filter",
        "string-decoder-create",
        "--set",
        "n=20000",
        "--set",
        "encoding=utf8",
        "--set",
        "encoding=ascii",
        *BOTH_NODE,
        "--runs",
        "10",
        "--pairing",
        "duet",
        "--output",
        str(out),
        benchmark_dir=Path(NODE_BENCHMARK),
    )
    assert status in (0, EXIT_INCONCLUSIVE), stdout + err  # pass or inconclusive: an A/A duet never fails
    assert "verdict: FAIL" not in stdout
    assert json.loads((out / "run.json").read_text())["pairing"]["pairs"] == 20


@needs_node
@needs_two_cpus
def test_the_action_input_and_authorizes_run_settings_start_a_duet(tmp_path):
    from actionsim import run_action

    repo_root = Path(__file__).resolve().parent.parent
    work = tmp_path / "job"
    (work / "temp").mkdir(parents=True)
    runner_env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_WORKSPACE": str(tmp_path),
        "RUNNER_TEMP": str(work / "temp"),
        "GITHUB_ACTION_PATH": str(repo_root),
        "BENCHGATE_SYSTEM_PACKAGES": "1",
    }
    inputs = {
        "mode": "run",
        "python": sys.executable,
        "base-binary": str(NODE),
        "head-binary": str(NODE),
        "benchmark-dir": str(repo_root / "examples" / "suite" / "benchmark"),
        "runs": "3",
        "categories": "json",
        "set": "n=50",
    }
    github = {"event_name": "push", "event": {}, "repository": "nodejs/node", "token": ""}
    for name, given in (("input", {"pairing": "duet"}), ("run-settings", {"run-settings": '{"pairing": "duet"}'})):
        results_dir = work / f"results-{name}"
        result = run_action(
            repo_root,
            with_inputs={**inputs, **given, "results": str(results_dir)},
            github=github,
            runner_env=runner_env,
            workdir=work,
        )
        assert result.failed is None, result.failed and result.failed.stderr[-3000:]
        record = json.loads((results_dir / "run.json").read_text())
        assert record["pairing"]["mode"] == "duet" and record["pairing"]["pairs"] == 6, name  # 2 rows x 3 runs
        assert len(_pairs(results_dir)) == 6
    # slots, a configuration key: authorize's run-settings carry it to benchgate run --slots
    results_dir = work / "results-slots"
    given = {"run-settings": '{"slots": "2"}', "results": str(results_dir)}
    result = run_action(repo_root, with_inputs={**inputs, **given}, github=github, runner_env=runner_env, workdir=work)
    assert result.failed is None, result.failed and result.failed.stderr[-3000:]
    record = json.loads((results_dir / "run.json").read_text())
    assert record["options"]["slots"] == 2 and record["pairing"] == {"mode": "sequential"}


def test_slots_is_a_configuration_key_checked_like_the_option():
    from benchgate import config

    assert config.parse_setting("slots", 2, where="benchgate.yml") == 2
    assert config.parse_setting("slots", "4", where="authorize --slots") == 4
    for bad in (0, 257, "two", True, 1.5):
        with pytest.raises(InputError, match="key 'slots': must be a whole number from 1 to 256"):
            config.parse_setting("slots", bad, where="benchgate.yml")
