"""The history store against SQLite and PostgreSQL alike: record, read back, no-op repeats, refusals,
schema versions, concurrent recorders and a recorder killed mid-transaction."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import rundirs
from sqlalchemy import create_engine, func, select, text

from benchgate.errors import InputError, StoreCorrupt, StoreUnavailable
from benchgate.history import store
from benchgate.history.recording import record_run
from benchgate.history.store import series

TESTS = Path(__file__).resolve().parent


def _counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table.name: connection.execute(select(func.count()).select_from(table)).scalar_one()
                for table in (store.runs, store.rows, store.samples)
            }
    finally:
        engine.dispose()


def _run(tmp_path: Path, name: str, effect: float = 1.0, *, seed: int = 1, record: dict | None = None) -> Path:
    effects = {key: effect for key in rundirs.REGRESSION}
    return rundirs.write_run(tmp_path / name, effects, seed=seed, record=record, head_sha=f"{seed:x}".rjust(40, "a"))


def test_a_run_is_stored_with_its_summary_and_read_back_as_series(store_url, tmp_path):
    run = _run(tmp_path, "one", seed=3)
    result = record_run(run, store_url)
    assert result.created and result.rows == 3 and result.samples == 60 and result.branch == "main"
    assert result.commit == "3".rjust(40, "a") and result.date == "2026-01-01T00:00:00Z"
    found = series(store_url)
    assert [s.key.filename for s in found] == sorted(f for f, _ in rundirs.REGRESSION)
    point = found[0].points[0]
    assert found[0].key.node_flags == "--jitless" and found[0].key.branch == "main" and len(found[0].key.runner) == 12
    # The head's samples: rundirs draws them from normal(1000, 5).
    assert point.samples == 10 and 990 < point.mean_rate < 1010 and 990 < point.trimmed_mean < 1010
    assert 0.001 < point.log_spread < 0.02 and point.parent == rundirs.BASE_SHA and point.node_version == "v20.11.0"
    assert _counts(store_url) == {"benchgate_runs": 1, "benchgate_rows": 6, "benchgate_samples": 60}
    engine = create_engine(store_url)
    with engine.connect() as connection:
        stored = connection.execute(select(store.runs)).one()
    engine.dispose()
    assert json.loads(stored.settings)["runs"] == 10 and json.loads(stored.runner_facts)["cpu_model"] == "Test CPU"
    assert stored.head_flags == "--jitless" and stored.base_flags == ""


def test_recording_the_same_run_twice_is_a_no_op(store_url, tmp_path):
    run = _run(tmp_path, "one")
    first = record_run(run, store_url)
    again = record_run(run, store_url, commit="b" * 40)
    assert first.created and not again.created and again.run_id == first.run_id
    assert _counts(store_url)["benchgate_runs"] == 1


def test_series_filter_and_branch(store_url, tmp_path):
    record_run(_run(tmp_path, "a", seed=1), store_url, date="2026-01-01")
    record_run(_run(tmp_path, "b", seed=2), store_url, date="2026-01-03T10:00:00+02:00")
    record_run(_run(tmp_path, "c", seed=3), store_url, date="2026-01-02", branch="v20.x")
    tojson = series(store_url, "tojson")
    assert [s.key.branch for s in tojson] == ["main", "v20.x"]
    assert [p.date for p in tojson[0].points] == ["2026-01-01T00:00:00Z", "2026-01-03T08:00:00Z"]
    assert [len(s.points) for s in series(store_url, branch="main")] == [2, 2, 2]  # not v20.x's run
    assert series(store_url, "100%_") == []  # LIKE's wildcards are text here


def test_main_spreads_are_this_runner_and_flags_only_as_series_filtered_by_them(store_url, tmp_path):
    from benchgate.history.recording import runner_fingerprint

    plain = {"path": "/tmp/node-head", "version": "v20.11.0", "sha": "c" * 40, "node_args": []}
    base = {"path": "/tmp/node-base", "version": "v20.11.0", "sha": rundirs.BASE_SHA, "node_args": []}
    elsewhere = {"environment": {"cpu_model": "Another CPU", "cores": 2}}
    record_run(_run(tmp_path, "a", seed=1), store_url, date="2026-01-01")
    record_run(_run(tmp_path, "b", seed=2, record=elsewhere), store_url, date="2026-01-02")
    record_run(_run(tmp_path, "c", seed=3, record={"binaries": {"base": base, "head": plain}}), store_url)
    record_run(_run(tmp_path, "d", seed=4), store_url, date="2026-01-04", branch="v20.x")
    record_run(_run(tmp_path, "e", seed=5), store_url, date="2026-01-05")
    runner = runner_fingerprint({"cpu_model": "Test CPU", "cores": 2})
    files = ["buffers/buffer-tojson.js", "url/url-parse.js"]
    mine = [one for one in series(store_url, branch="main", files=files) if one.key.runner == runner]
    mine = [one for one in mine if one.key.node_flags == "--jitless"]
    assert series(store_url, branch="main", files=files, runner=runner, node_flags="--jitless") == mine
    spreads = store.main_spreads(store_url, files, runner=runner, node_flags="--jitless")
    assert spreads == {(s.key.filename, s.key.configuration): [p.log_spread for p in s.points] for s in mine}
    assert sorted(spreads) == sorted(key for key in rundirs.REGRESSION if key[0] in files)
    assert all(len(found) == 2 for found in spreads.values())  # runs a and e: not b's runner, c's flags, d's branch


def test_a_pull_requests_head_is_refused_unless_the_branch_is_named(store_url, tmp_path):
    untrusted = {"sandbox": {"used": True, "untrusted_head": True, "tool": "bwrap"}}
    run = _run(tmp_path, "pr", record=untrusted)
    with pytest.raises(InputError, match="pull request's code"):
        record_run(run, store_url)
    assert record_run(run, store_url, branch="feature").branch == "feature"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"complete": False}, "incomplete"),
        ({"schema": 2}, "schema: must be 1"),
        ({"binaries": {"head": {"version": "v20.11.0"}}}, "names no head commit"),
        ({"started_at": None, "ended_at": None}, "no date"),
    ],
)
def test_runs_that_must_not_be_stored_are_refused_before_the_store_is_touched(tmp_path, change, message):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with pytest.raises(InputError, match=message):
        record_run(_run(tmp_path, "bad", record=change), url)
    assert not (tmp_path / "h.db").exists()


@pytest.mark.parametrize("source", ["release:npm", "release:dist", "npm"])
def test_a_release_run_is_a_release_series(store_url, tmp_path, source):
    # benchgate run records an official binary's source as "release:npm" (build.releases.release_binary)
    binaries = {
        "base": {"version": "v18.16.0", "source": source, "node_args": []},
        "head": {"version": "v20.0.0", "source": source, "node_args": []},
    }
    result = record_run(_run(tmp_path, "rel", record={"binaries": binaries}), store_url)
    assert (result.commit, result.branch) == ("v20.0.0", "releases")
    # The head's release is a point after the base's: the oldest release is only ever measured as a base.
    base, head = series(store_url, "tojson")[0].points
    assert (base.commit, base.parent, base.node_version) == ("v18.16.0", None, "v18.16.0")
    assert (head.commit, head.parent, head.node_version) == ("v20.0.0", "v18.16.0", "v20.0.0")
    assert base.run_id == head.run_id and base.mean_rate != head.mean_rate  # one run, its two sides
    # The next step's base is already a point: each release once.
    binaries = {"base": {**binaries["head"]}, "head": {**binaries["head"], "version": "v22.0.0"}}
    record_run(_run(tmp_path, "next", seed=2, record={"binaries": binaries}), store_url)
    assert [point.commit for point in series(store_url, "tojson")[0].points] == ["v18.16.0", "v20.0.0", "v22.0.0"]


def test_bad_dates_and_commits_are_one_line_errors(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with pytest.raises(InputError, match="--date: not an ISO-8601 date"):
        record_run(_run(tmp_path, "a"), url, date="yesterday")
    with pytest.raises(InputError, match="--commit: not a commit SHA"):
        record_run(_run(tmp_path, "b"), url, commit="main; drop table")


def test_a_newer_or_unupgradable_schema_is_refused_and_left_alone(store_url, tmp_path):
    record_run(_run(tmp_path, "a"), store_url)
    engine = create_engine(store_url)
    for version, message in (("2", "newer benchgate"), ("0", "older than this benchgate can upgrade")):
        with engine.begin() as connection:
            connection.execute(store.meta.update().values(value=version))
        with pytest.raises(StoreCorrupt, match=message):
            series(store_url)
        with pytest.raises(StoreCorrupt, match=message):
            record_run(_run(tmp_path, "b", seed=9), store_url)
    engine.dispose()
    assert _counts(store_url)["benchgate_runs"] == 1


def test_an_upgrade_step_runs_in_the_recording_transaction(store_url, tmp_path, monkeypatch):
    record_run(_run(tmp_path, "a"), store_url)
    engine = create_engine(store_url)
    with engine.begin() as connection:
        connection.execute(store.meta.update().values(value="0"))
    engine.dispose()
    steps = []
    monkeypatch.setitem(store.UPGRADES, 0, lambda connection: steps.append(connection.execute(text("SELECT 1"))))
    with pytest.raises(StoreCorrupt, match="needs an upgrade"):
        series(store_url)  # a reader never writes
    assert record_run(_run(tmp_path, "b", seed=9), store_url).created and len(steps) == 1
    assert len(series(store_url)[0].points) == 2


def test_a_file_that_is_not_a_store(tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(StoreCorrupt, match="damaged or not a database"):
        record_run(_run(tmp_path, "a"), f"sqlite:///{garbage}")
    assert garbage.read_bytes() == b"this is not SQLite" * 100
    other = tmp_path / "other.db"
    engine = create_engine(f"sqlite:///{other}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE invoices (id INTEGER)"))
    engine.dispose()
    with pytest.raises(StoreCorrupt, match="not a benchgate history store .*invoices"):
        record_run(_run(tmp_path, "b"), f"sqlite:///{other}")


def test_a_missing_store_unknown_scheme_and_unreachable_server(tmp_path):
    with pytest.raises(StoreUnavailable, match="nothing has been recorded yet"):
        series(f"sqlite:///{tmp_path / 'none.db'}")
    assert not (tmp_path / "none.db").exists()
    with pytest.raises(InputError, match="must be sqlite"):
        record_run(_run(tmp_path, "a"), "mysql://localhost/x")
    closed = "postgresql+psycopg://benchgate:s3cret@127.0.0.1:9/history"
    with pytest.raises(StoreUnavailable, match="cannot reach the store") as raised:
        record_run(_run(tmp_path, "b"), closed)
    assert "s3cret" not in str(raised.value) and "***" in str(raised.value)


def test_a_locked_sqlite_store_waits_then_gives_up_in_one_line(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    record_run(_run(tmp_path, "a"), url)
    import sqlite3

    holder = sqlite3.connect(tmp_path / "h.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreUnavailable, match="locked by another writer"):
            record_run(_run(tmp_path, "b", seed=2), url, lock_timeout=0.3)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert record_run(tmp_path / "b", url).created  # nothing half-written by the failed try
    assert _counts(url)["benchgate_runs"] == 2


_RECORDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from benchgate.history import recording
    from benchgate.history.recording import record_run

    if sys.argv[3] == "pause":
        original = recording._insert_samples
        def paused(connection, run_id, rows):
            original(connection, run_id, rows[: len(rows) // 2])  # half the samples written, uncommitted
            print("inside", flush=True)
            time.sleep(600)
        recording._insert_samples = paused
    elif sys.argv[3] == "wait":
        while not Path(sys.argv[4]).exists():
            time.sleep(0.01)
    print(record_run(Path(sys.argv[1]), sys.argv[2]).created, flush=True)
    """
)


def _recorder(run: Path, url: str, mode: str, start: Path | None = None) -> subprocess.Popen:
    environment = {**os.environ, "PYTHONPATH": str(TESTS)}
    arguments = [sys.executable, "-c", _RECORDER, str(run), url, mode, str(start or "")]
    return subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)


def test_two_concurrent_recorders_lose_nothing(store_url, tmp_path):
    go = tmp_path / "go"
    runs = [_run(tmp_path, f"shard{i}", seed=i + 1) for i in range(2)]
    # Both start from an empty store: the schema's creation races too.
    recorders = [_recorder(run, store_url, "wait", go) for run in runs]
    recorders.append(_recorder(runs[0], store_url, "wait", go))  # and the same run twice at once
    time.sleep(1.5)  # all three imported and waiting
    go.write_text("go")
    outcomes = [recorder.communicate(timeout=120) for recorder in recorders]
    assert [recorder.returncode for recorder in recorders] == [0, 0, 0], outcomes
    assert sorted(out.strip() for out, _ in outcomes) == ["False", "True", "True"]
    assert _counts(store_url) == {"benchgate_runs": 2, "benchgate_rows": 12, "benchgate_samples": 120}


def test_a_recorder_killed_mid_transaction_leaves_no_partial_run(store_url, tmp_path):
    record_run(_run(tmp_path, "before"), store_url)
    run = _run(tmp_path, "victim", seed=5)
    victim = _recorder(run, store_url, "pause")
    assert victim.stdout is not None and victim.stdout.readline().strip() == "inside"
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=30)
    # The server notices the dropped connection; SQLite's journal rolls back at the next open.
    deadline = time.monotonic() + 30
    while _counts(store_url)["benchgate_runs"] != 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _counts(store_url) == {"benchgate_runs": 1, "benchgate_rows": 6, "benchgate_samples": 60}
    assert record_run(run, store_url).created  # the same run records whole
    assert _counts(store_url) == {"benchgate_runs": 2, "benchgate_rows": 12, "benchgate_samples": 120}


def test_readers_do_not_queue_behind_a_writer_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'h.db'}"
    record_run(_run(tmp_path, "a"), url)
    import sqlite3

    writer = sqlite3.connect(tmp_path / "h.db", isolation_level=None, timeout=0.1)
    writer.execute("BEGIN IMMEDIATE")  # a recorder mid-transaction holds the write lock
    try:
        assert len(series(url)) == 3  # a reader's transaction is DEFERRED: it reads the committed state
        with pytest.raises(StoreUnavailable, match="locked"):
            record_run(_run(tmp_path, "b", seed=2), url, lock_timeout=0.2)  # a second writer waits, then gives up
    finally:
        writer.execute("ROLLBACK")
        writer.close()
