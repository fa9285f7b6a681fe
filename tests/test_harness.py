"""The example suite's own harness (examples/suite/benchmark/common.js), and HTTP benchmarks through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchgate import cli, results

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
LOADGEN = Path(__file__).parent / "fixtures" / "loadgen"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def _node(*args: str) -> subprocess.CompletedProcess:
    """A benchmark file run from a shell: no IPC channel, so reports are printed."""
    return subprocess.run([NODE, *args], cwd=BENCH.parent, capture_output=True, text=True, timeout=60)


def test_from_a_shell_each_configuration_prints_one_line():
    completed = _node("benchmark/calc/add.js", "type=float", "type=int", "n=30")
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert [line.split("  ")[0] for line in lines] == [
        'calc/add.js [n=30, type="float"]',
        'calc/add.js [n=30, type="int"]',
    ]
    assert all(line.endswith(" s)") and " ops/s " in line for line in lines)


@pytest.mark.parametrize(
    ("argument", "message"),
    [("n=abc", "n=abc: n takes a number"), ("n=", "n=: n takes a number"), ("=5", "is not of the form key=value")],
)
def test_bad_arguments_stop_the_file_with_one_line(argument, message):
    completed = _node("benchmark/calc/add.js", argument)
    assert completed.returncode == 1
    assert completed.stdout == ""
    assert completed.stderr == f"benchmark harness: {completed.stderr.split(': ', 1)[1]}"
    assert message in completed.stderr and completed.stderr.count("\n") == 1


def test_a_failing_configuration_stops_the_file_with_its_status_after_earlier_reports():
    completed = _node("--expose-gc", "benchmark/fault/crash.js")
    assert completed.returncode == 3
    assert completed.stdout.startswith("fault/crash.js [n=10, size=1]") and completed.stdout.count("\n") == 1
    assert "fault/crash.js n=10 size=2 exited with status 3" in completed.stderr


def test_values_other_than_numbers_and_strings_are_refused(tmp_path):
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "bool.js").write_text(
        f"const common = require({json.dumps(str(BENCH / 'common.js'))});\n"
        "common.createBenchmark(() => {}, { flag: [true], n: [1] });\n"
    )
    completed = _node(str(tmp_path / "cat" / "bool.js"))
    assert completed.returncode == 1
    assert "option flag: values must be numbers or strings, not boolean" in completed.stderr


def _http_run(capsys, tmp_path, *args: str) -> tuple[int, str, dict, list[dict]]:
    """`benchgate run net` with ``args`` added (e.g. ``--set benchmarker=...``): status, stderr, run.json, samples."""
    out = tmp_path / "out"
    status = cli.main(
        ["run", "net", "--benchmark-dir", str(BENCH), "--base-binary", NODE, "--head-binary", NODE, *args]
        + ["--runs", "2", "--no-progress", "--no-analyze", "--output", str(out)]
    )
    err = capsys.readouterr().err
    record = json.loads((out / "run.json").read_text())
    if record["samples"] == 0:
        return status, err, record, []
    frame = results.read_samples([out / "results.csv"])
    return status, err, record, frame.to_dict("records")


def _check_http_samples(status, err, record, samples):
    assert status == 0, err
    assert record["skipped"] == [] and record["failures"] == []
    assert sorted(row["side"] for row in samples) == ["base", "base", "head", "head"]
    # As Node's current harness does, bench.http adds the load generator it used to the configuration.
    assert {(row["filename"], row["configuration"]) for row in samples} == {
        ("net/http-simple.js", "duration=1 connections=10 benchmarker='wrk'")
    }
    # requests per second over a one-second load: the server answered many requests, far fewer than a tight loop
    assert all(50 < row["rate"] < 10_000_000 for row in samples)


def _stand_in(tmp_path, monkeypatch, name: str, script: str) -> None:
    """Put an executable ``name`` (``script``) first on PATH, before node's directory and the system's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / name).write_text(script)
    (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), str(Path(NODE).parent), "/usr/bin", "/bin"]))


def test_http_benchmark_is_measured_with_a_load_generator_on_the_path(capsys, tmp_path, monkeypatch):
    """Runs everywhere: the wrk test double (a Node script speaking wrk's command line and output)."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(LOADGEN), str(Path(NODE).parent), "/usr/bin", "/bin"]))
    _check_http_samples(*_http_run(capsys, tmp_path))


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed")
def test_http_benchmark_is_measured_with_the_real_wrk(capsys, tmp_path):
    _check_http_samples(*_http_run(capsys, tmp_path))


def test_a_load_generator_failure_is_a_crash_with_its_reason(capsys, tmp_path, monkeypatch):
    _stand_in(tmp_path, monkeypatch, "wrk", "#!/bin/sh\necho 'unable to connect' >&2\nexit 1\n")
    status, err, record, samples = _http_run(capsys, tmp_path)
    assert status == 5 and samples == []
    assert {failure["side"] for failure in record["failures"]} == {"base", "head"}
    assert "wrk: Command failed" in record["failures"][0]["stderr_tail"]
    assert "unable to connect" in record["failures"][0]["stderr_tail"]


def test_autocannon_is_driven_with_json_output_and_its_average_is_the_rate(capsys, tmp_path, monkeypatch):
    """A stand-in autocannon: checks the command line it gets, makes real requests, answers in autocannon's JSON."""
    _stand_in(
        tmp_path,
        monkeypatch,
        "autocannon",
        "#!/usr/bin/env node\n"
        "const args = process.argv.slice(2);\n"
        "const expected = ['-j', '-n', '-c', '10', '-d', '1'];\n"
        "if (JSON.stringify(args.slice(0, 6)) !== JSON.stringify(expected)) { console.error(args); process.exit(2); }\n"
        "let done = 0;\n"
        "const next = () => require('http').get(args[6], (res) => { res.resume(); res.on('end', () => {\n"
        "  if (++done < 20) return next();\n"
        "  console.log(JSON.stringify({ requests: { average: 4321.5 }, errors: 0, non2xx: 0 }));\n"
        "}); });\n"
        "next();\n",
    )
    status, err, record, samples = _http_run(capsys, tmp_path, "--set", "benchmarker=autocannon")
    assert record["failures"] == [], err
    assert [row["rate"] for row in samples] == [4321.5] * 4
    assert status == 0, err


def test_h2load_rate_arrives_as_text_and_is_written_verbatim(capsys, tmp_path, monkeypatch):
    """A stand-in h2load (real requests, h2load's summary line): its rate is text in the report and the CSV."""
    _stand_in(
        tmp_path,
        monkeypatch,
        "h2load",
        "#!/usr/bin/env node\n"
        "const args = process.argv.slice(2);\n"
        "if (JSON.stringify(args.slice(0, 4)) !== JSON.stringify(['-c', '10', '-D', '1'])) process.exit(2);\n"
        "let done = 0;\n"
        "const next = () => require('http').get(args[4], (res) => { res.resume(); res.on('end', () => {\n"
        "  if (++done < 20) return next();\n"
        "  console.log('finished in 1.00s, 2345.60 req/s, 1.2MB/s');\n"
        "}); });\n"
        "next();\n",
    )
    status, err, _, _ = _http_run(capsys, tmp_path, "--set", "benchmarker=h2load")
    assert status == 0, err
    rows = (tmp_path / "out" / "results.csv").read_text().splitlines()[1:]
    assert len(rows) == 4
    # "2345.60" keeps its trailing zero: the text h2load printed, not a float written back.
    assert all(
        row.startswith('"') and ",\"duration=1 connections=10 benchmarker='h2load'\",2345.60," in row for row in rows
    )
