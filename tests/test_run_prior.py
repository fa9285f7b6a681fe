"""Main's history as prior knowledge (issue 21): `benchgate run --store` reads each row's noise before it starts.

A seeded stub benchmark in Node's format reports rates whose noise the test chooses per row and side (the head
is told apart by a node flag); each row's k-th sample on a side is the same in every run (a counter per row and
side), so the runs are deterministic. Main's history is four earlier runs recorded by `benchgate history record`
into a SQLite store on this machine's runner fingerprint (and one on another runner, which must not count):

- ``steady``: quiet in history and here;
- ``loud``: noisy in history (8 %), its base quiet here, its head as noisy as history says;
- ``headnoisy``: quiet in history and on the base, its head made very noisy (30 %);
- ``fresh``: never seen on main, noisy here (8 %) on both sides.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from synthetic import SEEDED_GENERATOR_JS

from benchgate import cli, results
from benchgate.errors import InputError
from benchgate.history.recording import runner_fingerprint
from benchgate.results.runrecord import parse_run_record
from benchgate.run import plan, system
from benchgate.stats import analysis
from benchgate.stats.gate import GatePolicy
from benchgate.stats.resolution import PRIOR_RUNS

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
FILE = "prior/rows.js"
HEAD_FLAG = "--stack-trace-limit=7"  # only the head runs with it: the stub's way to tell the sides apart
HISTORY_SIGMA = {"steady": 0.01, "loud": 0.08, "headnoisy": 0.01}
MAX_RUNS = 12

STUB = r"""'use strict';
const fs = require('fs');
const path = require('path');
const common = require('../common.js');
const bench = common.createBenchmark(main, { row: ['steady', 'loud', 'headnoisy', 'fresh'], n: [1] });
// The noise of each row's log rate, per side (the head runs with HEAD_FLAG).
const NOISE = {
  steady: [0.01, 0.01], loud: [0.01, 0.08], headnoisy: [0.01, 0.30], fresh: [0.08, 0.08],
};

// generator() is mulberry32 (tests/synthetic.py): the k-th sample of a row and side is the same in every run.
SEEDED_GENERATOR

function main({ row, n }) {
  const head = process.execArgv.includes('HEAD_FLAG') ? 1 : 0;
  const counter = path.join(process.env.PRIOR_COUNTERS, `${row}-${head}`);
  fs.appendFileSync(counter, 'x');
  const code = row.length * 131 + row.charCodeAt(0) * 7 + head * 1009;
  const random = generator(fs.statSync(counter).size * 7919 + code);
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  bench.start();
  bench.report(1e6 * Math.exp(NOISE[row][head] * z), 1000000n);
}
""".replace("HEAD_FLAG", HEAD_FLAG).replace("SEEDED_GENERATOR\n", SEEDED_GENERATOR_JS)


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "checkout" / "benchmark"
    (suite / "prior").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "examples" / "suite" / "benchmark" / "common.js", suite / "common.js")
    (suite / FILE).write_text(STUB)
    return suite


def _configuration(row: str) -> str:
    return f"n=1 row='{row}'"  # as common.js prints a string value


def _facts(cpu_model: str | None = None) -> dict:
    """This machine's runner facts, as `benchgate run` records them (another CPU model: another runner)."""
    facts = system.collect(cpuset=None)
    found = {name: facts.get(name) for name in ("cpu_model", "cpu_count", "governor")}
    return {**found, "cpu_model": cpu_model} if cpu_model else found


def _history_run(directory: Path, index: int, rng, *, facts: dict, sigma: dict, flags: tuple = ()) -> Path:
    """A run of main (commit ``index``), 10 samples a side per row, as `benchgate run` writes one."""
    with results.ResultsWriter(directory / "results.csv") as writer:
        for row, noise in sigma.items():
            for _ in range(10):
                for side in ("old", "new"):
                    rate = float(np.exp(np.log(1e6) + rng.normal(0, noise)))
                    writer.append(side, FILE, _configuration(row), rate, 1 / rate)
    sha = f"{index + 1:02x}" * 20
    results.write_run_record(
        directory / "run.json",
        {
            "schema": 1,
            "tool": "benchgate",
            "binaries": {
                "base": {"version": "v22.0.0", "sha": f"{index:02x}" * 20, "node_args": [], "source": "build"},
                "head": {"version": "v22.0.0", "sha": sha, "node_args": list(flags), "source": "build"},
            },
            "selection": {"files": [FILE]},
            "runs": 10,
            "started_at": f"2026-11-{index + 1:02d}T04:00:00Z",
            "complete": True,
            "environment": {**facts, "warnings": []},
            "failures": [],
            "skipped": [],
            "sandbox": {"used": False, "untrusted_head": False, "reason": "the head is trusted"},
        },
    )
    return directory


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    """Main's history: 4 runs on this runner, and one very noisy run on another runner (which must not count)."""
    directory = tmp_path_factory.mktemp("history")
    url = f"sqlite:///{directory / 'history.db'}"
    rng = np.random.default_rng(21)
    runs = [_history_run(directory / f"run{i}", i, rng, facts=_facts(), sigma=HISTORY_SIGMA) for i in range(4)]
    noisy = {row: 0.3 for row in HISTORY_SIGMA}
    runs.append(_history_run(directory / "elsewhere", 9, rng, facts=_facts("Another CPU"), sigma=noisy))
    for run in runs:
        assert cli.main(["history", "record", str(run), "--store", url, "--config", ""]) == 0
    return url


def _run(tmp_path: Path, name: str, *extra: str) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path / name
    counters = tmp_path / f"{name}-counters"
    counters.mkdir()
    argv = [sys.executable, "-m", "benchgate", "run", "all", "--benchmark-dir", str(_suite(tmp_path))]
    argv += ["--base-binary", NODE, "--head-binary", NODE, f"--head-node-args={HEAD_FLAG}", "--seed", "5"]
    argv += ["--no-progress", "--output", str(out), *extra]
    env = {key: value for key, value in os.environ.items() if key != "BENCHGATE_HISTORY"}
    env["PRIOR_COUNTERS"] = str(counters)
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    return out, completed


@pytest.fixture(scope="module")
def adaptive_run(tmp_path_factory, store) -> tuple[Path, subprocess.CompletedProcess]:
    tmp_path = tmp_path_factory.mktemp("adaptive")
    return _run(tmp_path, "out", "--runs", "auto", "--min-runs", "5", "--max-runs", str(MAX_RUNS), "--store", store)


def _rows(table) -> dict:
    return {name.split("row=")[1].strip("'"): row for name, row in table.set_index("configuration").iterrows()}


@needs_node
def test_the_prior_is_main_history_on_this_runner_and_recorded(adaptive_run, store):
    out, completed = adaptive_run
    assert completed.returncode in (0, 6), completed.stderr  # headnoisy may stay undecided, nothing fails
    assert "main's history" in completed.stderr and "gives the noise of 3 row(s)" in completed.stderr
    record = json.loads((out / "run.json").read_text())
    found = record["prior"]
    assert found["store"] == store and found["recent"] == PRIOR_RUNS and found["branch"] == "main"
    assert found["runner"] == runner_fingerprint(_facts()) and found["node_flags"] == ""
    by_row = {row["configuration"].split("row=")[1].strip("'"): row for row in found["rows"]}
    assert set(by_row) == {"steady", "loud", "headnoisy"}  # fresh: never seen on main
    for row, sigma in HISTORY_SIGMA.items():  # the other runner's noisy run is not among them
        assert by_row[row]["runs"] == 4
        assert 0.6 < np.sqrt(by_row[row]["variance"]) / sigma < 1.4


@needs_node
def test_history_decides_which_rows_are_coarse_never_the_head(adaptive_run):
    out, _ = adaptive_run
    run_data, _ = analysis.RunData.load([str(out)])
    table = _rows(analysis.analyze(run_data, GatePolicy()).table)
    # History says loud is noisy: coarse although its base looked quiet in this run.
    assert table["loud"]["coarse"] and table["loud"]["gated_at"] > 10
    # History says headnoisy is quiet: a head made very noisy does not make it coarse; nor steady.
    assert not table["headnoisy"]["coarse"] and table["headnoisy"]["gated_at"] == 10
    assert not table["steady"]["coarse"] and table["steady"]["decision"] == "unchanged"
    # The row known noisy is coarse from the first look: it stops early, its question answered.
    stops = {
        stop["configuration"].split("row=")[1].strip("'"): stop
        for stop in json.loads((out / "run.json").read_text())["stopped"]
    }
    assert stops["loud"]["reason"] == "decided" and stops["loud"]["look"] == 0 and stops["loud"]["after_runs"] == 5
    assert table["loud"]["decision"] == "unchanged"
    # The σ the reports show (and a noise budget reads) is the one that gated: history's where known.
    for row in ("steady", "loud", "headnoisy"):
        assert table[row]["sigma"] == pytest.approx(100 * np.sqrt(run_data.prior[(FILE, _configuration(row))]))
    assert table["fresh"]["sigma"] > 4  # the base's own, 8 % noise


@needs_node
def test_report_reproduces_the_run_and_a_changed_prior_is_refused(adaptive_run, tmp_path, capsys):
    out, completed = adaptive_run
    assert cli.main(["report", str(out), "--dry-run"]) == completed.returncode
    comment = capsys.readouterr().out
    run_data, _ = analysis.RunData.load([str(out)])
    loud = _rows(analysis.analyze(run_data, GatePolicy()).table)["loud"]
    line = next(line for line in comment.splitlines() if line.startswith("- 🔍") and "row='loud'" in line)
    assert f"σ {loud['sigma']:.1f} % (main's history)" in line and f"gated at {loud['gated_at']:.1f} %" in line
    fresh = next(line for line in comment.splitlines() if line.startswith("- 🔍") and "row='fresh'" in line)
    assert "main's history" not in fresh
    # The prior decided the stops: a record whose prior says loud is quiet does not replay to them.
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    record = json.loads((copy / "run.json").read_text())
    for row in record["prior"]["rows"]:
        if row["configuration"] == _configuration("loud"):
            row["variance"] = 1e-6
    (copy / "run.json").write_text(json.dumps(record))
    assert cli.main(["report", str(copy), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "the recorded stops do not follow from results.csv" in err and "row='loud'" in err


@needs_node
def test_a_row_never_seen_falls_back_to_the_base_and_fixed_runs_use_the_prior(tmp_path, store):
    out, completed = _run(tmp_path, "fixed", "--runs", "6", "--store", store)
    assert completed.returncode in (0, 6), completed.stderr
    run_data, _ = analysis.RunData.load([str(out)])
    assert set(run_data.prior) == {(FILE, _configuration(row)) for row in HISTORY_SIGMA}
    with_prior = _rows(analysis.analyze(run_data, GatePolicy()).table)
    without = _rows(analysis.analyze(analysis.RunData(run_data.samples), GatePolicy()).table)
    # fresh has no history: gated exactly as without a store, by its base's samples
    for column in ("gated_at", "coarse", "decision", "resolution"):
        assert with_prior["fresh"][column] == without["fresh"][column], column
    assert with_prior["loud"]["coarse"] and not without["loud"]["coarse"]


@needs_node
def test_a_store_that_is_down_warns_and_the_run_goes_on(tmp_path):
    down = "postgresql+psycopg://nobody@127.0.0.1:9/none"
    out, completed = _run(tmp_path, "down", "--runs", "2", "--store", down)
    assert completed.returncode in (0, 6), completed.stderr
    warnings = [line for line in completed.stderr.splitlines() if "no prior from main's history" in line]
    assert len(warnings) == 1 and warnings[0].startswith("benchgate: warning: ") and "cannot reach" in warnings[0]
    record = json.loads((out / "run.json").read_text())
    assert "prior" not in record and any("no prior" in text for text in record["environment"]["warnings"])


@needs_node
def test_a_malformed_store_url_is_refused_before_anything_runs(tmp_path, capsys):
    status = cli.main(["run", "all", "--store", "not a url", "--output", str(tmp_path / "o"), "--runs", "2"])
    err = capsys.readouterr().err
    assert status == 2 and "not a database URL" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def _record(url: str, run: Path, *extra: str) -> None:
    assert cli.main(["history", "record", str(run), "--store", url, "--config", "", *extra]) == 0


def test_the_prior_counts_main_on_this_runner_with_the_base_flags_and_enough_runs(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    rng = np.random.default_rng(3)
    quiet, noisy = {"steady": 0.01}, {"steady": 0.2}
    for index in range(3):  # main, no flags: the prior
        _record(url, _history_run(tmp_path / f"main{index}", index, rng, facts=_facts(), sigma=quiet))
    for index in range(3, 6):  # another branch, then main with other flags: neither counts for a plain base
        _record(url, _history_run(tmp_path / f"b{index}", index, rng, facts=_facts(), sigma=noisy), "--branch", "dev")
    for index in range(6, 8):  # only two runs with --jitless: too few for a prior of their own
        run = _history_run(tmp_path / f"j{index}", index, rng, facts=_facts(), sigma=noisy, flags=("--jitless",))
        _record(url, run)
    environment = {**_facts(), "warnings": ["unrelated"]}
    found, warning = plan.read_prior(url, [FILE, "other/file.js"], environment, ())
    assert warning is None and [row["runs"] for row in found["rows"]] == [3]
    assert found["rows"][0]["configuration"] == _configuration("steady")
    assert 0.5 < np.sqrt(found["rows"][0]["variance"]) / 0.01 < 1.5
    jitless, _ = plan.read_prior(url, [FILE], environment, ("--jitless",))
    assert jitless["rows"] == [] and jitless["node_flags"] == "--jitless"
    elsewhere, _ = plan.read_prior(url, [FILE], _facts("Another CPU"), ())
    assert elsewhere["rows"] == [] and elsewhere["runner"] != found["runner"]
    # nothing recorded yet (no SQLite file): an empty prior, no warning, and no file created
    empty, warning = plan.read_prior(f"sqlite:///{tmp_path / 'none.db'}", [FILE], environment, ())
    assert warning is None and empty["rows"] == [] and not (tmp_path / "none.db").exists()
    corrupt = tmp_path / "bad.db"
    corrupt.write_bytes(b"\x00garbage" * 512)
    missing, warning = plan.read_prior(f"sqlite:///{corrupt}", [FILE], environment, ())
    assert missing is None and "no prior from main's history" in warning and "not a" in warning
    capsys.readouterr()


def test_run_json_prior_is_typed_and_older_records_still_read():
    base = {"schema": 1, "selection": {"files": [FILE]}}
    row = {"filename": FILE, "configuration": "n=1", "variance": 0.0004, "runs": 4}
    entry = {"store": "sqlite:///h.db", "runner": "abc", "recent": PRIOR_RUNS, "rows": [row]}
    record = parse_run_record({**base, "prior": entry}, "run.json")
    assert record.summary().prior == {(FILE, "n=1"): 0.0004}
    assert parse_run_record(base, "run.json").prior is None and parse_run_record(base, "run.json").summary().prior == {}
    for bad, where in (({**row, "variance": -1.0}, "variance"), ({**row, "variance": "x"}, "variance")):
        with pytest.raises(InputError, match=where) as caught:
            parse_run_record({**base, "prior": {**entry, "rows": [bad]}}, "run.json")
        assert "prior.rows[0]" in str(caught.value)


def test_the_run_store_is_the_option_then_the_environment_then_the_config(tmp_path, monkeypatch):
    from benchgate.config.settings import configured_history, resolve_store

    def history_store(option, config_path):  # `benchgate run`'s: --store, $BENCHGATE_HISTORY, --config
        return resolve_store(option, configured_history(config_path), default=None)

    config = tmp_path / "benchgate.yml"
    config.write_text("history:\n  store: sqlite:///from-file.db\n")
    monkeypatch.delenv("BENCHGATE_HISTORY", raising=False)
    assert history_store(None, None) is None  # nothing configured: no prior (the default file does not count)
    assert history_store(None, config) == "sqlite:///from-file.db"
    monkeypatch.setenv("BENCHGATE_HISTORY", "sqlite:///env.db")
    assert history_store(None, config) == "sqlite:///env.db"
    assert history_store("sqlite:///option.db", config) == "sqlite:///option.db"
