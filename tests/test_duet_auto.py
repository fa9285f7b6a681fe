"""`benchgate run --runs auto --pairing duet`: looks decided on the pairs, per-row stops, report and --resume replay.

The example suite as in test_adaptive_run.py: arrays/typed-sum.js is ~85 % slower with V8's optimizing
compiler off on the head, strings/split.js unchanged. Every job is one configuration, and each pair is
the base and head job of one configuration and iteration, started together on the two CPUs.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from test_adaptive_run import ARGS as ADAPTIVE_ARGS
from test_adaptive_run import NODE, _record, _stops, assert_a_moved_stop_is_refused, assert_failing_interval_in

from benchgate import cli, results
from benchgate.run.process import build_schedule
from benchgate.stats import paired

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a duet needs two CPUs"),
]
ARGS = [*ADAPTIVE_ARGS, "--pairing", "duet"]


@pytest.fixture(scope="module")
def duet_run(tmp_path_factory) -> tuple[Path, int, str]:
    """One adaptive duet run, shared by the tests that read it: (output, exit status, stdout)."""
    out = tmp_path_factory.mktemp("duet-auto") / "out"
    command = [sys.executable, "-m", "benchgate", *ARGS, "--no-progress", "--output", str(out)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert completed.returncode in (1, 6), completed.stderr  # the typed-sum regression: never a pass
    return out, completed.returncode, completed.stdout


def _pairs(out: Path) -> list[dict]:
    with (out / "pairs.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_looks_are_decided_on_the_pairs_and_each_comparison_stops_on_its_own(duet_run):
    out, _, _ = duet_run
    record = _record(out)
    assert record["design"]["test"] == paired.PAIRED_TEST and record["design"]["looks"] == [5, 6, 7, 8, 9]
    assert record["pairing"]["mode"] == "duet" and record["pairing"]["unpaired_samples"] == 0
    assert record["jobs"] == "per-configuration" and record["stops"] == 2 and record["complete"] is True
    samples = results.read_samples([out / "results.csv"])
    rows = set(zip(samples["filename"], samples["configuration"], strict=True))
    assert set(_stops(record)) == rows
    # each comparison stops on its own: some before max-runs (the paired test has n - 1 df, so on a busy machine a
    # regression may take up to max-runs pairs to reject at the gate's level; it is a regression either way)
    assert any(stop["after_runs"] < 9 for stop in record["stopped"]), record["stopped"]
    # every sample is in a pair, and each comparison has exactly the pairs of the runs it stopped after
    pairs = Counter((row["filename"], row["configuration"]) for row in _pairs(out))
    assert record["pairing"]["pairs"] == sum(pairs.values()) == len(samples) // 2
    for key, count in pairs.items():
        assert count == _stops(record)[key]["after_runs"], (key, record["stopped"])
    # a pair is one configuration's two jobs of one iteration: its lines are next to each other in results.csv
    assert all(abs(int(row["base_line"]) - int(row["head_line"])) == 1 for row in _pairs(out))


def test_the_report_replays_the_run_to_the_same_decisions(duet_run, capsys):
    out, status, stdout = duet_run
    assert cli.main(["report", str(out), "--dry-run"]) == status
    comment = capsys.readouterr().out
    assert "(adaptive, from 5 to 9) runs per side" in comment and "**duet**" in comment
    assert f"gate test `{paired.PAIRED_TEST}`" in comment
    typed = [key[1] for key in _stops(_record(out)) if key[0] == "arrays/typed-sum.js"]
    for configuration in typed:  # both typed-sum rows regress
        assert any(configuration in line and "FAIL" in line for line in stdout.splitlines()), (configuration, stdout)
    assert_failing_interval_in(stdout, comment)


def test_a_changed_stop_or_pair_is_refused(duet_run, tmp_path, capsys):
    out, _, _ = duet_run
    copy = assert_a_moved_stop_is_refused(out, tmp_path, capsys)
    # a pair pointing at a sample of another row is refused before any replay
    lines = (copy / "pairs.csv").read_text().splitlines()
    first = next(csv.reader([lines[1]]))
    second = next(fields for fields in csv.reader(lines[2:]) if fields[1] != first[1])
    first[4] = second[4]
    lines[1] = ",".join(f'"{field}"' for field in first)
    (copy / "pairs.csv").write_text("\n".join(lines) + "\n")
    assert cli.main(["report", str(copy), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "pairs.csv" in err and err.count("\n") == 1


def test_a_duet_interrupted_after_a_look_resumes_from_it(duet_run, tmp_path, capsys):
    """The state an interrupt right after the first look leaves: --resume replays that look on its pairs,
    keeps its stops, skips the stopped comparisons and takes the next looks."""
    out, _, _ = duet_run
    record = _record(out)
    first = record["looks"][0]
    units = {
        name: [(tuple(row["args"]), row["configuration"]) for row in found["rows"]]
        for name, found in record["configurations"].items()
    }
    schedule = build_schedule(record["selection"]["files"], 9, record["seed"], units)
    done = max(job.index for job in schedule if job.iteration == first["runs"] - 1) + 1
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    head = (out / "results.csv").read_bytes()[: first["csv_bytes"]]
    (resumed / "results.csv").write_bytes(head)
    last_line = head.count(b"\n")  # the header is line 1
    rows = (out / "pairs.csv").read_text().splitlines()
    kept = [row for row in rows[1:] if max(map(int, next(csv.reader([row]))[3:5])) <= last_line]
    (resumed / "pairs.csv").write_text("\n".join([rows[0], *kept]) + "\n")
    record.update(
        looks=[first],
        stopped=[stop for stop in record["stopped"] if stop["look"] == 0],
        complete=False,
        interrupted=True,
        progress={"completed_jobs": done, "csv_bytes": first["csv_bytes"], "jobs": len(schedule)},
        samples=last_line - 1,
        pairing={**record["pairing"], "pairs": len(kept), "unpaired_samples": last_line - 1 - 2 * len(kept)},
    )
    (resumed / "run.json").write_text(json.dumps(record))
    status = cli.main(["run", "--resume", "--output", str(resumed), "--no-progress", "--no-analyze"])
    assert status == 0, capsys.readouterr().err
    after = _record(resumed)
    assert after["complete"] is True and after["looks"][0] == first
    assert [stop for stop in after["stopped"] if stop["look"] == 0] == record["stopped"]
    pairs = Counter((row["filename"], row["configuration"]) for row in _pairs(resumed))
    for key, count in pairs.items():  # nothing ran for a comparison after it stopped
        assert count == _stops(after)[key]["after_runs"]
    assert cli.main(["report", str(resumed), "--dry-run"]) in (1, 6)  # replays without a contradiction


def test_a_design_that_does_not_read_is_refused_before_the_files_are_cut_back(duet_run, tmp_path, capsys):
    """--resume refuses a malformed design before anything runs: a duet's results.csv and pairs.csv, which a
    resume cuts back to the checkpoint, are left as they are."""
    out, _, _ = duet_run
    record = _record(out)
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    for name in ("results.csv", "pairs.csv"):  # whole: both go beyond the checkpoint below
        (resumed / name).write_bytes((out / name).read_bytes())
    checkpoint = {"csv_bytes": record["looks"][0]["csv_bytes"], "completed_jobs": 1}
    record.update(complete=False, progress={**record["progress"], **checkpoint})
    record["pairing"]["pairs"] = 1
    record["design"]["alpha"] = "x"
    (resumed / "run.json").write_text(json.dumps(record))
    assert cli.main(["run", "--resume", "--output", str(resumed), "--no-progress", "--no-analyze"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "run.json design: malformed design" in err[-1]
    for name in ("results.csv", "pairs.csv"):
        assert (resumed / name).read_bytes() == (out / name).read_bytes()
