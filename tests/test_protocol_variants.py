"""`benchgate run` against every protocol variant our harness speaks and every fault real harnesses had.

The fixture harness (tests/fixtures/bench/benchmark/common.js) logs, for each report its coordinator
sends, the row compare.js would write for it (BENCHGATE_TEST_SENT); the CSV benchgate writes must hold
exactly those rows, byte for byte, with the binary label in front.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from benchgate import cli, results

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
NODE_TIME = re.compile(r"\d+\.\d{9}")


def _run(tmp_path, monkeypatch, capsys, *args, protocol=None, fault=None, analyze=False):
    """benchgate run on the fixture suite; (exit status, stderr, run.json, CSV rows, rows the harness sent)."""
    sent = tmp_path / "sent.jsonl"
    monkeypatch.setenv("BENCHGATE_TEST_SENT", str(sent))
    for name, value in (("BENCHGATE_HARNESS_PROTOCOL", protocol), ("BENCHGATE_HARNESS_FAULT", fault)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    argv = ["run", *args, "--benchmark-dir", str(BENCH), "--base-binary", NODE, "--head-binary", NODE]
    argv += ["--runs", "2", "--no-progress", "--output", str(out)] + ([] if analyze else ["--no-analyze"])
    # the faults are the coordinator's (it rewrites what it relays): one job per file, as compare.js runs it
    argv += ["--jobs", "per-file"]
    status = cli.main(argv)
    err = capsys.readouterr().err
    record = json.loads((out / "run.json").read_text())
    rows = (out / "results.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == results.CSV_HEADER
    sent_rows = [json.loads(line) for line in sent.read_text().splitlines()] if sent.exists() else []
    return status, err, record, rows[1:], sent_rows


def _rows(sent: list[dict], *, time: bool = True) -> Counter:
    """The rows compare.js would have written (without labels), or the same without their time."""
    return Counter(item["row"] if time else item["before_time"] for item in sent)


def _without_label(rows: list[str]) -> Counter:
    labels = Counter(row.split(",", 1)[0] for row in rows)
    assert set(labels) <= {'"old"', '"new"'} and labels['"old"'] == labels['"new"']
    return Counter(row.split(",", 1)[1] for row in rows)


@pytest.mark.parametrize("protocol", ["current", "legacy"])
def test_each_protocol_variant_is_written_byte_for_byte_as_compare_js_writes_it(
    tmp_path, monkeypatch, capsys, protocol
):
    status, err, record, rows, sent = _run(tmp_path, monkeypatch, capsys, "calc", "text", protocol=protocol)
    assert status == 0, err
    assert record["failures"] == [] and record["protocol_warnings"] == []
    assert len(rows) == len(sent) == 2 * 2 * (2 + 1 + 4)  # runs x sides x configurations of add, flags, quote
    assert _without_label(rows) == _rows(sent)
    times = [row.rsplit(",", 1)[1] for row in rows]
    if protocol == "current":
        assert {item["time_type"] for item in sent} == {"string"}
        assert all(NODE_TIME.fullmatch(time) for time in times)  # the string as sent: 9 fraction digits
    else:
        assert {item["time_type"] for item in sent} == {"number"}
        assert all(results.js_number(float(time)) == time for time in times)  # JavaScript's Number#toString
    samples = results.read_samples([tmp_path / "out" / "results.csv"])
    assert samples["time_ns"].notna().all() and (samples["time_ns"] > 0).all()


@pytest.mark.parametrize(
    ("fault", "shown"),
    [
        ("time-comma", "'5,.123456789'"),
        ("time-quote", "'a\"b\\n'"),  # null and a missing time: tests/test_protocol.py
    ],
)
def test_a_time_that_would_corrupt_the_csv_is_written_empty_and_warned_about(
    tmp_path, monkeypatch, capsys, fault, shown
):
    status, err, record, rows, sent = _run(tmp_path, monkeypatch, capsys, "calc", "--filter", "add", fault=fault)
    assert status == 0, err
    assert record["failures"] == []
    # Everything as compare.js would write it, except the time field: empty instead of the bad text.
    assert _without_label(rows) == _rows(sent, time=False) and len(rows) == 8
    warnings = record["protocol_warnings"]
    assert {(w["filename"], w["configuration"], w["message"]) for w in warnings} == {
        ("calc/add.js", configuration, f"time {shown} is not a finite number; written as an empty field")
        for configuration in ("n=2000 type='int'", "n=2000 type='float'")
    }
    assert sum(w["count"] for w in warnings) == 8
    assert "is not a finite number; written as an empty field" in err
    samples = results.read_samples([tmp_path / "out" / "results.csv"])
    assert samples["time"].isna().all() and len(samples) == 8
    # The analysis reads the file: an empty time costs nothing (statistics use the rate).
    assert cli.main(["analyze", str(tmp_path / "out" / "results.csv")]) in (0, 1)


def test_a_decimal_string_rate_is_written_verbatim(tmp_path, monkeypatch, capsys):
    """h2load's rate is text; compare.js writes it as it came, and so do we."""
    status, err, record, rows, sent = _run(
        tmp_path, monkeypatch, capsys, "calc", "--filter", "add", fault="rate-string"
    )
    assert status == 0, err
    assert record["failures"] == []
    assert _without_label(rows) == _rows(sent)
    assert all(re.fullmatch(r"\d+\.\d\d", row.split(",")[-2]) for row in rows)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("rate-zero", "invalid report: n=2000 type='int': rate 0 is not a finite positive number"),
        ("no-type", "sent 2 report(s) without type 'report': a harness from before Node v8"),
        ("stdout", "reported nothing over IPC but wrote to stdout"),
    ],
)
def test_reports_benchgate_cannot_use_are_failures_with_their_reason(tmp_path, monkeypatch, capsys, fault, reason):
    status, err, record, rows, _ = _run(tmp_path, monkeypatch, capsys, "calc", "--filter", "add", fault=fault)
    assert status == 5 and rows == []  # nothing measured: never a silent pass
    assert len(record["failures"]) == 4 and {f["side"] for f in record["failures"]} == {"base", "head"}
    assert all(f["reason"].startswith(reason) for f in record["failures"]), record["failures"]


def test_without_a_config_message_every_report_still_counts(tmp_path, monkeypatch, capsys):
    status, err, record, rows, sent = _run(tmp_path, monkeypatch, capsys, "calc", "--filter", "add", fault="no-config")
    assert status == 0, err
    assert record["failures"] == [] and _without_label(rows) == _rows(sent)


def test_a_configuration_child_killed_by_a_signal_leaves_the_file_incomplete(tmp_path, monkeypatch, capsys):
    """Node's coordinator goes on after a child dies by a signal and exits 0: fewer reports than announced."""
    status, err, record, rows, sent = _run(
        tmp_path, monkeypatch, capsys, "calc", "--filter", "add", fault="child-signal:type=float"
    )
    assert status == 0, err  # --no-analyze: only a head failure where the base succeeded fails the run itself
    # No run of the file was complete, so which configuration is missing is unknown (None).
    assert sorted((f["side"], f["configuration"], f["reason"], f["exit_status"]) for f in record["failures"]) == [
        (side, None, "reported 1 of 2 configurations", 0) for side in ("base", "base", "head", "head")
    ]
    assert _without_label(rows) == _rows(sent) and all("type='int'" in row for row in rows)


def test_an_empty_queue_is_a_skip_not_a_failure(tmp_path, monkeypatch, capsys):
    """--set n=5000 leaves harness/filtered.js no configuration: it exits 0 having sent nothing."""
    status, err, record, rows, sent = _run(
        tmp_path, monkeypatch, capsys, "harness", "calc", "--filter", "filtered", "--filter", "add", "--set", "n=5000"
    )
    assert status == 0, err
    assert record["failures"] == []
    assert sorted((item["filename"], item["side"]) for item in record["skipped"]) == [
        ("harness/filtered.js", "base"),
        ("harness/filtered.js", "head"),
    ]
    assert all("no configuration to run" in item["reason"] for item in record["skipped"])
    assert {row.split(",")[1] for row in rows} == {'"calc/add.js"'} and _without_label(rows) == _rows(sent)


def test_only_empty_queues_measure_nothing_and_say_why(tmp_path, monkeypatch, capsys):
    status, err, record, rows, _ = _run(
        tmp_path, monkeypatch, capsys, "harness", "--filter", "filtered", "--set", "n=5000"
    )
    assert status == 5 and rows == [] and record["failures"] == []
    assert "no benchmark produced a sample (0 failure(s), 2 skip(s), listed in run.json)" in err


def test_combination_filter_keeps_what_it_allows(tmp_path, monkeypatch, capsys):
    status, err, _, rows, _ = _run(tmp_path, monkeypatch, capsys, "harness", "--filter", "filtered")
    assert status == 0, err
    assert {row.split(",")[2] for row in rows} == {"\"n=10 type='int'\"", "\"n=20 type='int'\""}


def test_flags_come_from_the_flags_option_and_node_benchmark_flags_never_from_comments(tmp_path, monkeypatch, capsys):
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("BENCHGATE_TEST_TRACE", str(trace))
    monkeypatch.setenv("NODE_BENCHMARK_FLAGS", "--stack-trace-limit=9")
    status, err, record, _, _ = _run(tmp_path, monkeypatch, capsys, "harness", "--filter", "flags-comment")
    assert status == 0, err
    seen = [json.loads(line) for line in trace.read_text().splitlines()]
    assert len(seen) == 4 and all(entry["execArgv"] == ["--stack-trace-limit=9"] for entry in seen)
    assert [w["message"] for w in record["protocol_warnings"]] == [
        "NODE_BENCHMARK_FLAGS='--stack-trace-limit=9' is set: common.js adds these flags to every configuration "
        "child of both sides"
    ]


def test_node_run_benchmark_fn_in_the_environment_is_removed(tmp_path, monkeypatch, capsys):
    """With it, common.js would run only the first configuration in-process; compare.js passes it on."""
    monkeypatch.setenv("NODE_RUN_BENCHMARK_FN", "")
    status, err, record, rows, _ = _run(tmp_path, monkeypatch, capsys, "calc", "--filter", "add")
    assert status == 0, err
    assert len(rows) == 8  # both configurations, both sides, both runs
    assert record["protocol_warnings"][0]["message"].startswith("NODE_RUN_BENCHMARK_FN is set in the environment")


def test_a_set_key_no_file_declares_is_warned_about(tmp_path, monkeypatch, capsys):
    status, err, record, rows, _ = _run(tmp_path, monkeypatch, capsys, "calc", "--filter", "add", "--set", "nn=5")
    assert status == 0, err
    assert len(rows) == 8  # passed on as an extra option: the full matrix ran
    assert [w["message"][:40] for w in record["protocol_warnings"]] == ["--set nn=...: no benchmark that reported"]
    assert "--set nn=...: no benchmark that reported has a configuration 'nn'" in err
