"""`benchgate history record|changes|show` through the real parser: a stored step found at its commit, an
A/A series without one, one real `benchgate run` recorded, store resolution, and one-line errors."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from benchgate import cli, results
from benchgate.config.settings import HistorySettings, resolve_store
from benchgate.errors import (
    EXIT_BAD_INPUT,
    EXIT_HISTORY_TOO_SHORT,
    EXIT_OK,
    EXIT_STORE_CORRUPT,
    EXIT_STORE_UNAVAILABLE,
)

ROOT = Path(__file__).resolve().parent.parent
ROWS = (("history/sum.js", "n=2000"), ("history/sum.js", "n=500"))
NODE = shutil.which("node")


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    status = cli.main(["history", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _commit(index: int) -> str:
    return f"{index + 1:02x}" * 20


def _write_runs(directory: Path, count: int, *, step_at: int | None, seed: int) -> list[Path]:
    """``count`` run directories of main, one per commit, as `benchgate run` writes them: 10 runs a side,
    log-normal noise of 2 % per sample and 1 % per run (the runner's day); from ``step_at`` on the head
    (the commit measured) is 12 % slower on ROWS[0] only."""
    rng = np.random.default_rng(seed)
    made = []
    for index in range(count):
        run = directory / f"run{index:02d}"
        day = rng.normal(0, 0.01)
        with results.ResultsWriter(run / "results.csv") as writer:
            for row, (filename, configuration) in enumerate(ROWS):
                slower = np.log(0.88) if step_at is not None and index >= step_at and row == 0 else 0.0
                for _ in range(10):
                    for side, shift in (("old", 0.0), ("new", slower)):
                        rate = float(np.exp(np.log(20000) + day + shift + rng.normal(0, 0.02)))
                        writer.append(side, filename, configuration, rate, 2000 / rate)
        results.write_run_record(
            run / "run.json",
            {
                "schema": 1,
                "tool": "benchgate",
                "binaries": {
                    "base": {"version": "v20.20.2", "sha": _commit(index - 1), "node_args": [], "source": "build"},
                    "head": {"version": "v20.20.2", "sha": _commit(index), "node_args": [], "source": "build"},
                },
                "selection": {"files": ["history/sum.js"]},
                "runs": 10,
                "started_at": f"2026-03-{index + 1:02d}T04:00:00Z",
                "complete": True,
                "environment": {"cpu_model": "Runner CPU", "cpu_count": 2, "governor": "performance", "warnings": []},
                "failures": [],
                "skipped": [],
                "sandbox": {"used": False, "untrusted_head": False, "reason": "the head is trusted"},
            },
        )
        made.append(run)
    return made


def test_a_step_in_20_runs_is_found_at_its_commit(capsys, tmp_path, store_url):
    for run in _write_runs(tmp_path / "step", 20, step_at=12, seed=4):
        status, out, err = _cli(capsys, "record", str(run), "--store", store_url)
        assert status == EXIT_OK and out.startswith("recorded: run "), err
    status, out, err = _cli(capsys, "changes", "--store", store_url, "--format", "json")
    assert status == EXIT_OK, err
    found = json.loads(out)
    assert len(found) == 1, found  # the stepped row; its neighbour (ROWS[1]) stayed
    (change,) = found
    assert (change["filename"], change["configuration"]) == ROWS[0]
    assert change["commit"] == _commit(12) and change["index"] == 12
    assert -15 < change["change"] < -9 and change["confidence"] > 0.99
    assert change["mean_after"] < change["mean_before"]
    status, text, _ = _cli(capsys, "changes", "--store", store_url, "--since", "2026-03-14")
    assert status == EXIT_OK and text.startswith("no change points") and "2 series looked at" in text
    status, table, _ = _cli(capsys, "show", "n=2000", "--store", store_url)
    assert status == EXIT_OK and table.count("\n") == 22 and table.count("◆ change") == 1
    marked = next(line for line in table.splitlines() if "◆" in line)
    assert _commit(12)[:12] in marked and "█|" in marked  # the bar points left: slower than the first run


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_an_aa_series_of_20_runs_has_no_change_point(capsys, tmp_path, seed):
    store = f"sqlite:///{tmp_path / 'aa.db'}"
    for run in _write_runs(tmp_path / "aa", 20, step_at=None, seed=seed):
        assert _cli(capsys, "record", str(run), "--store", store)[0] == EXIT_OK
    status, out, err = _cli(capsys, "changes", "--store", store, "--format", "json")
    assert status == EXIT_OK, err
    assert json.loads(out) == []


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_real_run_is_recorded_and_shown(capsys, tmp_path):
    """`benchgate run` with the installed node on a one-file suite, recorded through the CLI, then shown."""
    suite = tmp_path / "checkout" / "benchmark"
    (suite / "history").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "suite" / "benchmark" / "common.js", suite / "common.js")
    (suite / "history" / "sum.js").write_text(
        "'use strict';\nconst common = require('../common.js');\n"
        "const bench = common.createBenchmark(main, { n: [200] });\n"
        "function main({ n }) {\n  const values = new Float64Array(1000).fill(3);\n  let total = 0;\n"
        "  bench.start();\n  for (let r = 0; r < n; r++) for (let i = 0; i < values.length; i++) total += values[i];\n"
        "  bench.end(n);\n  if (total < 0) console.log(total);\n}\n"
    )
    out = tmp_path / "out"
    arguments = ["run", "history", "--benchmark-dir", str(suite), "--base-binary", NODE, "--head-binary", NODE]
    assert cli.main([*arguments, "--runs", "3", "--no-progress", "--no-analyze", "--output", str(out)]) == 0
    capsys.readouterr()
    store = f"sqlite:///{tmp_path / 'h.db'}"
    # A local binary names no commit: the caller says which one it was.
    status, _, err = _cli(capsys, "record", str(out), "--store", store)
    assert status == EXIT_BAD_INPUT and "give --commit" in err
    status, text, err = _cli(capsys, "record", str(out), "--store", store, "--commit", "a" * 40)
    assert status == EXIT_OK and "on main" in text and "1 rows, 6 samples" in text, err
    assert _cli(capsys, "record", str(out), "--store", store, "--commit", "a" * 40)[1].startswith("already recorded")
    status, table, _ = _cli(capsys, "show", "sum.js", "--store", store)
    assert status == EXIT_OK and "history/sum.js n=200" in table and "aaaaaaaaaaaa" in table and "v2" in table


def test_the_store_comes_from_the_option_then_the_environment_then_the_file(tmp_path, monkeypatch, capsys):
    configured = HistorySettings(store="sqlite:///from-file.db")
    monkeypatch.setenv("BENCHGATE_HISTORY", "x://env")
    assert resolve_store("sqlite:///option.db", configured) == "sqlite:///option.db"
    monkeypatch.setenv("BENCHGATE_HISTORY", "sqlite:///env.db")
    assert resolve_store(None, configured) == "sqlite:///env.db"
    monkeypatch.delenv("BENCHGATE_HISTORY")
    assert resolve_store(None, configured) == "sqlite:///from-file.db"
    assert resolve_store(None, HistorySettings()) == "sqlite:///benchgate-history.db"
    # Through the CLI: the file's store, and its keep.
    config = tmp_path / "benchgate.yml"
    config.write_text(f"history:\n  store: sqlite:///{tmp_path / 'kept.db'}\n  keep: 3\n")
    monkeypatch.delenv("BENCHGATE_HISTORY", raising=False)
    for run in _write_runs(tmp_path / "runs", 5, step_at=None, seed=1):
        assert _cli(capsys, "record", str(run), "--config", str(config))[0] == EXIT_OK
    with sqlite3.connect(tmp_path / "kept.db") as connection:
        assert [row[0] for row in connection.execute('SELECT "commit" FROM benchgate_runs ORDER BY date')] == [
            _commit(2),
            _commit(3),
            _commit(4),
        ]
    # The working directory's default when nothing is configured.
    monkeypatch.chdir(tmp_path)
    assert _cli(capsys, "record", str(tmp_path / "runs" / "run00"), "--config", "")[0] == EXIT_OK
    assert (tmp_path / "benchgate-history.db").is_file()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("history: sqlite:///x.db\n", "must be a mapping"),
        ("history:\n  stor: sqlite:///x.db\n", "unknown key 'stor'"),
        ("history:\n  store: postgresql://u:pw@host/db\n", "must not hold a password"),
        ("history:\n  keep: -1\n", "keep must be a whole number"),
        ("history:\n  site-url: ftp://x\n", "site-url must be an http"),
    ],
)
def test_a_bad_history_section_is_one_line(capsys, tmp_path, text, message):
    config = tmp_path / "benchgate.yml"
    config.write_text(text)
    status, _, err = _cli(capsys, "changes", "--config", str(config))
    assert status == EXIT_BAD_INPUT and message in err and err.count("\n") == 1, err


def test_bad_input_gives_one_line_and_its_exit_status(capsys, tmp_path):
    runs = _write_runs(tmp_path / "runs", 3, step_at=None, seed=2)
    store = f"sqlite:///{tmp_path / 'h.db'}"
    cases = []
    cases.append((_cli(capsys, "record", str(tmp_path / "nowhere"), "--store", store), EXIT_BAD_INPUT, "not a run"))
    (runs[0] / "run.json").write_text("{not json")
    cases.append((_cli(capsys, "record", str(runs[0]), "--store", store), EXIT_BAD_INPUT, "not valid JSON"))
    cases.append((_cli(capsys, "changes", "--store", store), EXIT_STORE_UNAVAILABLE, "nothing has been recorded"))
    for run in runs[1:]:
        assert _cli(capsys, "record", str(run), "--store", store)[0] == EXIT_OK
    cases.append((_cli(capsys, "changes", "--store", store), EXIT_HISTORY_TOO_SHORT, "the longest has 2 runs"))
    cases.append((_cli(capsys, "show", "nothing-like-it", "--store", store), EXIT_BAD_INPUT, "no stored series"))
    (tmp_path / "bad.db").write_bytes(b"\x00garbage" * 512)
    cases.append(
        (_cli(capsys, "show", "x", "--store", f"sqlite:///{tmp_path / 'bad.db'}"), EXIT_STORE_CORRUPT, "not a")
    )
    unreachable = "postgresql+psycopg://nobody@127.0.0.1:9/none"
    cases.append((_cli(capsys, "changes", "--store", unreachable), EXIT_STORE_UNAVAILABLE, "cannot reach"))
    for (status, out, err), expected, message in cases:
        assert status == expected and message in err, (status, err)
        assert err.startswith("benchgate: error: ") and err.count("\n") == 1 and out == "", err
    with sqlite3.connect(tmp_path / "h.db") as connection:
        assert connection.execute("SELECT COUNT(*) FROM benchgate_runs").fetchone() == (2,)


def test_the_cli_reference_names_every_history_option():
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = reference.split("## benchgate history", 1)[1].split("\n## ", 1)[0]
    parser = cli.build_parser(only="history")
    top = next(action for action in parser._actions if getattr(action, "choices", None))
    history = top.choices["history"]
    commands = next(action for action in history._actions if getattr(action, "choices", None)).choices
    assert set(commands) == {"record", "changes", "show", "site"}
    for name, sub in commands.items():
        assert f"benchgate history {name}" in section
        options = {option for action in sub._actions for option in action.option_strings if option.startswith("--")}
        missing = sorted(option for option in options - {"--help"} if f"`{option}" not in section)
        assert missing == [], f"docs/cli.md's history section does not document {missing} of {name}"


def test_the_site_of_the_store_links_each_commit(capsys, tmp_path):
    store = f"sqlite:///{tmp_path / 'h.db'}"
    for run in _write_runs(tmp_path, 20, step_at=12, seed=5):
        assert _cli(capsys, "record", str(run), "--store", store)[0] == EXIT_OK
    template = "https://github.com/nodejs/node/commit/{sha}"
    status, _, err = _cli(capsys, "site", str(tmp_path / "site"), "--store", store, "--commit-url", template)
    assert status == EXIT_OK, err
    pages = "".join(path.read_text() for path in (tmp_path / "site").rglob("*.html"))
    assert f'href="https://github.com/nodejs/node/commit/{_commit(12)}"' in pages  # the step's commit
    status, _, err = _cli(capsys, "site", str(tmp_path / "s2"), "--store", store, "--commit-url", "https://x/")
    assert status == EXIT_BAD_INPUT and "--commit-url" in err and "{sha}" in err


def test_a_commit_url_without_sha_is_refused_before_the_store_is_read(capsys, tmp_path, monkeypatch):
    from benchgate.history import store

    def no_read(*args, **kwargs):
        raise AssertionError("the store was read")

    monkeypatch.setattr(store, "series", no_read)
    status, _, err = _cli(
        capsys, "site", str(tmp_path / "site"), "--store", "sqlite:///x.db", "--commit-url", "https://x/"
    )
    assert status == EXIT_BAD_INPUT and "--commit-url" in err and "{sha}" in err
