"""`benchgate run`: exit statuses with and without --no-analyze, and bad paths and options refused before running."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from benchgate import cli

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(["run", "calc", "--filter", "add", "--benchmark-dir", str(BENCH), "--no-progress", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _both(*extra: str) -> tuple[str, ...]:
    return ("--base-binary", NODE, "--head-binary", NODE, "--runs", "2", *extra)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (("--set", "n=abc"), 5),  # every process fails on both sides: nothing measured
        (("--head-node-args=--no-such-flag",), 1),  # the head fails everywhere, the base does not: the gate fails
    ],
)
def test_no_analyze_exits_as_the_analysis_would(capsys, tmp_path, options, expected):
    analysed, out, err = _run(capsys, *_both(*options), "--output", str(tmp_path / "analysed"))
    assert analysed == expected, err
    assert "  on the" not in out  # a failure without a configuration is named without a double space
    silent, out, err = _run(capsys, *_both(*options), "--no-analyze", "--output", str(tmp_path / "silent"))
    assert silent == expected, err
    assert out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("benchgate: error: ") if expected == 5 else last.startswith("benchgate: verdict FAIL (")


def test_a_failure_before_any_configuration_is_named_without_a_double_space(capsys, tmp_path):
    status, out, _ = _run(capsys, *_both("--set", "n=abc"), "--output", str(tmp_path / "out"))
    assert status == 5
    assert "calc/add.js failed on the base (2 processes): crashed (exited with status 1)" in out.splitlines()


def _refused(capsys, tmp_path, *args: str) -> str:
    status, out, err = _run(capsys, *_both(*args))
    assert status == 2, err
    assert err.startswith("benchgate: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and out == ""
    return err


def test_output_that_is_a_file_is_refused(capsys, tmp_path):
    existing = tmp_path / "a-file"
    existing.write_text("keep me\n")
    err = _refused(capsys, tmp_path, "--output", str(existing))
    assert f"--output {existing}: exists and is not a directory" in err
    assert existing.read_text() == "keep me\n"
    err = _refused(capsys, tmp_path, "--output", str(existing / "below" / "out"))
    assert f"{existing} is not a directory" in err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_output_that_cannot_be_created_is_refused_before_running(capsys, tmp_path):
    err = _refused(capsys, tmp_path, "--output", "/proc/benchgate-output")
    assert "--output /proc/benchgate-output: cannot create /proc/benchgate-output" in err


def test_a_new_output_directory_is_not_left_behind_by_bad_input(capsys, tmp_path):
    _refused(capsys, tmp_path, "--output", str(tmp_path / "new" / "out"), "--cpuset", "x")
    assert list(tmp_path.iterdir()) == []


def test_unbalanced_quote_in_node_args(capsys, tmp_path):
    with pytest.raises(SystemExit) as stopped:  # argparse's own usage error, one line
        _run(capsys, *_both('--base-node-args="unterminated', "--output", str(tmp_path / "out")))
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "--base-node-args: cannot split '\"unterminated' into flags: no closing quotation" in err
    assert not (tmp_path / "out").exists()


def test_cpuset_naming_a_cpu_this_process_cannot_use(capsys, tmp_path):
    missing = max(os.sched_getaffinity(0)) + 1
    err = _refused(capsys, tmp_path, "--cpuset", str(missing), "--output", str(tmp_path / "out"))
    assert f"--cpuset {missing}: CPU {missing} not available here" in err
    assert not (tmp_path / "out").exists()
    assert "expected a CPU list" in _refused(capsys, tmp_path, "--cpuset", "0-99999999999", "--output", "x")


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({}, "--resume: run record field schema: must be 1"),
        ({"schema": 1}, "--resume: run record field binaries: is missing (an object expected)"),
        (
            {"schema": 1, "binaries": {"base": {"path": "x", "sha256": "y", "node_args": []}, "head": []}},
            "--resume: run record field binaries.head: must be an object",
        ),
        ({"schema": 1, "build_failure": {"side": "head"}}, "this run stopped because a build failed"),
    ],
)
def test_resume_validates_the_run_record(capsys, tmp_path, record, message):
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text(json.dumps(record))
    status = cli.main(["run", "--resume", "--no-progress", "--output", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and message in err, err
    assert sorted(path.name for path in out.iterdir()) == ["run.json"]


def test_resume_rejects_a_record_missing_what_the_schedule_needs(capsys, tmp_path):
    """A real record with one field damaged: named precisely, nothing run."""
    out = tmp_path / "out"
    status, _, err = _run(capsys, *_both("--no-analyze"), "--output", str(out))
    assert status == 0, err
    record = json.loads((out / "run.json").read_text())
    record.update(complete=False, seed="7")
    (out / "run.json").write_text(json.dumps(record))
    status = cli.main(["run", "--resume", "--no-progress", "--output", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and "--resume: run record field seed: must be a whole number, not a string" in err, err


def test_build_record_in_a_missing_directory_is_refused_before_building(capsys, tmp_path):
    status = cli.main(["build", "HEAD", "--repo", str(tmp_path), "--record", "/nonexistent-dir/x.json"])
    err = capsys.readouterr().err
    assert status == 2
    assert err == "benchgate: error: --record /nonexistent-dir/x.json: the directory /nonexistent-dir does not exist\n"
    status = cli.main(["build", "HEAD", "--repo", str(tmp_path), "--record", str(tmp_path)])
    assert status == 2 and "is a directory" in capsys.readouterr().err
