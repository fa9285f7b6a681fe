"""`benchgate run --runs auto` end to end: looks, comparisons that stop, the record, the report's replay, resume.

The runs use the example suite (examples/suite/benchmark): arrays/typed-sum.js is ~85 % slower
with V8's optimizing compiler off on the head (decided at the first look), strings/split.js is
unchanged and, on a busy machine, noisy.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchgate import cli, results
from benchgate.run.process import build_schedule

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "examples" / "suite" / "benchmark"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
ARGS = [
    "run",
    "all",
    "--benchmark-dir",
    str(SUITE),
    "--filter",
    "typed-sum",
    "--filter",
    "split",
    "--base-binary",
    str(NODE),
    "--head-binary",
    str(NODE),
    "--head-node-args=--no-opt --stack-trace-limit=0",
    "--runs",
    "auto",
    "--min-runs",
    "5",
    "--max-runs",
    "9",
    "--seed",
    "3",
]


@pytest.fixture(scope="module")
def adaptive_run(tmp_path_factory) -> tuple[Path, int, str]:
    """One adaptive run, shared by the tests that read it: (output, exit status, stdout)."""
    out = tmp_path_factory.mktemp("adaptive") / "out"
    completed = subprocess.run(
        [sys.executable, "-m", "benchgate", *ARGS, "--progress-interval", "0", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode in (1, 6), completed.stderr  # the typed-sum regression: never a pass
    (out.parent / "stderr.txt").write_text(completed.stderr)  # the progress lines: read by one test
    return out, completed.returncode, completed.stdout


def _record(out: Path) -> dict:
    return json.loads((out / "run.json").read_text())


def _stops(record: dict) -> dict[tuple[str, str], dict]:
    return {(stop["filename"], stop["configuration"]): stop for stop in record["stopped"]}


def _schedule(record: dict) -> list:
    units = {
        name: [(tuple(row["args"]), row["configuration"]) for row in found["rows"]]
        for name, found in record["configurations"].items()
    }
    return build_schedule(record["selection"]["files"], record["design"]["looks"][-1], record["seed"], units)


def assert_failing_interval_in(stdout: str, comment: str) -> None:
    """The run's own printed interval of a failing typed-sum row is in the comment: the report's analysis is
    the run's (sequential) one, not a fixed-runs test of the same samples."""
    failing = next(line for line in stdout.splitlines() if "typed-sum" in line and "FAIL" in line)
    interval = failing.split(" % ")[-1].split("]")[0] + "]"
    assert interval in comment


def assert_a_moved_stop_is_refused(out: Path, tmp_path: Path, capsys) -> Path:
    """A copy of ``out`` whose typed-sum stop names a look it did not stop at is refused in one line;
    returns the copy, restored to ``out``'s files, for the next forgery."""
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    record = _record(copy)
    stop = next(stop for stop in record["stopped"] if stop["filename"] == "arrays/typed-sum.js")
    # a look it did not stop at (usually the first; the second when noise hid a row there)
    stop["look"] = 1 if stop["look"] == 0 else 0
    (copy / "run.json").write_text(json.dumps(record))
    assert cli.main(["report", str(copy), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "the recorded stops do not follow from results.csv" in err and err.count("\n") == 1
    shutil.copytree(out, copy, dirs_exist_ok=True)
    return copy


def test_the_record_holds_the_design_the_looks_and_why_each_comparison_stopped(adaptive_run):
    out, _, _ = adaptive_run
    record = _record(out)
    assert record["runs"] == "auto" and record["complete"] is True and record["stops"] == 2
    assert record["design"]["looks"] == [5, 6, 7, 8, 9] and record["design"]["version"] == 2
    # one job per configuration: both files' configurations listed by their common.js, none run whole
    assert record["jobs"] == "per-configuration" and record["whole_files"] == {}
    assert set(record["configurations"]) == {"arrays/typed-sum.js", "strings/split.js"}
    looks = record["looks"]
    assert [look["runs"] for look in looks] == record["design"]["looks"][: len(looks)]
    assert all(a["csv_bytes"] <= b["csv_bytes"] for a, b in zip(looks, looks[1:], strict=False))
    samples = results.read_samples([out / "results.csv"])
    rows = set(zip(samples["filename"], samples["configuration"], strict=True))
    listed = {(name, row["configuration"]) for name, found in record["configurations"].items() for row in found["rows"]}
    assert rows == listed and set(_stops(record)) == rows  # every comparison has stopped by the last look
    typed = [stop for (name, _), stop in _stops(record).items() if name == "arrays/typed-sum.js"]
    # the regression is found well before --max-runs (at the first look unless the machine's noise hides it; a row
    # the noise hid that could still be gated at a coarser resolution runs on to max-runs, and is found there)
    _, _, stdout = adaptive_run
    for (_, configuration), stop in _stops(record).items():
        if stop in typed and stop["reason"] == "max-runs":
            assert f"FAIL arrays/typed-sum.js {configuration}:" in stdout
    assert all(
        stop["after_runs"] < 9 and stop["reason"] in ("decided", "hopeless") or stop["reason"] == "max-runs"
        for stop in typed
    )
    for (name, configuration), stop in _stops(record).items():
        assert f"{name} {configuration}" in looks[stop["look"]]["stopped"]
        assert stop["after_runs"] == looks[stop["look"]]["runs"]
        assert stop["reason"] in ("decided", "hopeless", "max-runs")
    # a stopped comparison's later jobs were skipped: each row has exactly the runs it stopped after, a side
    counts = Counter(zip(samples["filename"], samples["configuration"], samples["side"], strict=True))
    for (filename, configuration, _side), count in counts.items():
        assert count == _stops(record)[(filename, configuration)]["after_runs"]


def test_progress_counts_the_files_still_running_and_the_eta_up_to_max_runs(adaptive_run):
    out, _, _ = adaptive_run
    lines = [line for line in (out.parent / "stderr.txt").read_text().splitlines() if " jobs " in line]
    assert lines[0].startswith("benchgate: 0/") and "| 2/2 files running |" in lines[0]
    assert all("files running" in line for line in lines[:-1]) and lines[-1].startswith("benchgate: done: ")
    timed = [line for line in lines[:-1] if "| ETA --:--" not in line]
    etas = [re.search(r"\| ETA (\d+):(\d\d) \(at most (\d+):(\d\d)\) \|", line) for line in timed]
    assert timed and all(etas), timed
    for eta in etas:
        minutes, seconds, most_minutes, most_seconds = map(int, eta.groups())
        assert minutes * 60 + seconds <= most_minutes * 60 + most_seconds  # the projection, then max-runs


def test_the_run_the_report_and_the_replay_agree(adaptive_run, capsys):
    out, status, stdout = adaptive_run
    # the row parsed, not its spacing (the column widths follow the measured numbers)
    rows = [line.split() for line in stdout.splitlines()]
    decisions = [fields[-2:] for fields in rows if fields[:1] == ["arrays/typed-sum.js"]]
    assert ["regression", "FAIL"] in decisions, stdout
    assert cli.main(["report", str(out), "--dry-run"]) == status
    comment = capsys.readouterr().out
    assert "(adaptive, from 5 to 9) runs per side" in comment
    assert comment.count("❌ fails") >= 2  # both typed-sum rows, in the significant and the full table
    # the analysis is the sequential one: the run's own printed interval of a failing row, not a fixed-runs one
    assert_failing_interval_in(stdout, comment)


def test_a_changed_record_or_results_file_is_refused(adaptive_run, tmp_path, capsys):
    out, _, _ = adaptive_run
    copy = assert_a_moved_stop_is_refused(out, tmp_path, capsys)
    # the head's typed-sum rates brought back to the base's level, every line as long as it was (the recorded
    # offsets still fall between lines): its first look would not have stopped the file as decided
    lines = (copy / "results.csv").read_text().splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.startswith('"new","arrays/typed-sum.js"'):
            fields = line.split(",")
            rate = fields[-2]
            fields[-2] = f"{float(rate) * 7:.12f}"[: len(rate)].ljust(len(rate), "0")
            lines[index] = ",".join(fields)
    (copy / "results.csv").write_text("".join(lines))
    assert cli.main(["report", str(copy), "--dry-run"]) == 2
    assert "do not follow from results.csv" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--runs", "10", "--min-runs", "3"], "--min-runs and --max-runs apply to --runs auto only"),
        (["--runs", "auto", "--min-runs", "9", "--max-runs", "4"], "need 2 <= min-runs <= max-runs <= 1000"),
        (["--runs", "auto", "--max-runs", "5000"], "key 'max-runs': must be between 2 and 1000"),  # the schema's
    ],
)
def test_bad_adaptive_options_are_one_line_and_exit_2(tmp_path, capsys, extra, message):
    status = cli.main(
        [
            "run",
            "all",
            "--benchmark-dir",
            str(SUITE),
            "--base-binary",
            str(NODE),
            "--head-binary",
            str(NODE),
            *extra,
            "--output",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
    assert cli.main(["run", "all", "--runs", "many", "--output", str(tmp_path / "out")]) == 2
    assert "must be a whole number of runs or auto, not 'many'" in capsys.readouterr().err


def _head_ten_times_slower(csv: bytes) -> bytes:
    """results.csv with every head ("new") rate divided by 10 by moving its decimal point, length kept."""
    lines = csv.split(b"\n")
    for index, line in enumerate(lines):
        fields = line.split(b",")
        if line.startswith(b'"new"') and len(fields) >= 5 and b"." in fields[-2]:
            whole, fraction = fields[-2].split(b".", 1)
            if len(whole) >= 2:
                fields[-2] = whole[:-1] + b"." + whole[-1:] + fraction
                lines[index] = b",".join(fields)
    return b"\n".join(lines)


def test_a_run_interrupted_after_a_look_resumes_from_it(adaptive_run, tmp_path, capsys):
    """The state an interrupt right after the first look leaves (run.json checkpointed there, results.csv up to
    it): --resume replays that look, keeps its stops, skips the stopped files and takes the next looks."""
    out, _, _ = adaptive_run
    record = _record(out)
    first = record["looks"][0]
    schedule = _schedule(record)
    done = max(job.index for job in schedule if job.iteration == first["runs"] - 1) + 1
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    (resumed / "results.csv").write_bytes((out / "results.csv").read_bytes()[: first["csv_bytes"]])
    record.update(
        looks=[first],
        stopped=[stop for stop in record["stopped"] if stop["look"] == 0],
        complete=False,
        interrupted=True,
        progress={"completed_jobs": done, "csv_bytes": first["csv_bytes"], "jobs": len(schedule)},
    )
    (resumed / "run.json").write_text(json.dumps(record))
    status = cli.main(["run", "--resume", "--output", str(resumed), "--no-progress", "--no-analyze"])
    assert status == 0, capsys.readouterr().err
    after = _record(resumed)
    assert after["complete"] is True and after["looks"][0] == first
    assert [stop for stop in after["stopped"] if stop["look"] == 0] == record["stopped"]
    samples = results.read_samples([resumed / "results.csv"])
    counts = Counter(zip(samples["filename"], samples["configuration"], samples["side"], strict=True))
    for (name, configuration, _side), count in counts.items():  # nothing ran for a comparison after it stopped
        assert count == _stops(after)[(name, configuration)]["after_runs"]
    # every comparison stopped by the last look (the resumed run measured anew after look 0: its own stops)
    assert set(_stops(after)) == set(_stops(_record(out)))
    assert cli.main(["report", str(resumed), "--dry-run"]) in (1, 6)  # replays without a contradiction
    # a results.csv changed before the look it recorded is refused on --resume and by report, in one line: the
    # head's rates made ten times slower (the decimal point moved, so the byte count stays) no longer have the
    # sha256 the look recorded of results.csv, whatever the measured data decided there
    (resumed / "results.csv").write_bytes(
        _head_ten_times_slower((out / "results.csv").read_bytes()[: first["csv_bytes"]])
    )
    record["progress"]["completed_jobs"] = done
    (resumed / "run.json").write_text(json.dumps(record))
    status = cli.main(["run", "--resume", "--output", str(resumed), "--no-progress", "--no-analyze"])
    assert status == 2
    err = capsys.readouterr().err.splitlines()
    assert "do not follow from results.csv" in err[-1] and not any("Traceback" in line for line in err)
    assert cli.main(["report", str(resumed), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "its first" in err and "changed after look 0" in err and err.count("\n") == 1
    # a design that does not read is refused before anything runs, naming the field
    record["design"]["alpha"] = "x"
    (resumed / "run.json").write_text(json.dumps(record))
    before = (resumed / "results.csv").read_bytes()
    assert cli.main(["run", "--resume", "--output", str(resumed), "--no-progress", "--no-analyze"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "run.json design: malformed design" in err[-1] and (resumed / "results.csv").read_bytes() == before


def test_an_older_record_with_whole_file_stops_is_read_as_such_and_not_resumed(tmp_path, capsys):
    """A record from before per-row stops (no "stops", "stopped" an object of files) is read as what it is."""
    out = tmp_path / "whole"
    # two looks are enough for the record's shape: --max-runs 6 (the last option wins) stops split.js sooner
    options = ["--max-runs", "6", "--jobs", "per-file", "--no-progress", "--no-analyze"]
    status = cli.main([*ARGS, *options, "--output", str(out)])
    assert status == 0, capsys.readouterr().err
    record = _record(out)
    assert record["jobs"] == "per-file" and "configurations" not in record
    assert all(stop["configuration"] is None for stop in record["stopped"])  # files run whole stop whole
    capsys.readouterr()
    assert cli.main(["report", str(out), "--dry-run"]) in (1, 6)
    today = capsys.readouterr().out
    # the same run as an older benchgate wrote it
    old = tmp_path / "old"
    shutil.copytree(out, old)
    for key in ("stops", "jobs"):
        record.pop(key)
    record["stopped"] = {
        stop["filename"]: {key: stop[key] for key in ("after_runs", "look", "reason")} for stop in record["stopped"]
    }
    (old / "run.json").write_text(json.dumps(record))
    status = cli.main(["report", str(old), "--dry-run"])
    assert status in (1, 6) and capsys.readouterr().out == today  # the same stops, decisions and comment
    record.update(complete=False, interrupted=True)
    (old / "run.json").write_text(json.dumps(record))
    assert cli.main(["run", "--resume", "--output", str(old), "--no-progress", "--no-analyze"]) == 2
    err = capsys.readouterr().err
    assert "recorded by an older benchgate" in err and "cannot be continued" in err and err.count("\n") == 1
