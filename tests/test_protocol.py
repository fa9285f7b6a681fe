"""Node's benchmark protocol, message by message, as benchgate.run.protocol reads it (no node needed)."""

from __future__ import annotations

import pytest

from benchgate.run import protocol

CONF = {"n": 10, "type": "int"}


def report(**fields) -> dict:
    return {"type": "report", "name": "cat/a.js", "conf": CONF, "rate": 1234.5, "time": "0.003866894", **fields}


@pytest.mark.parametrize(
    ("rate", "time"),
    [
        (1234.5, "0.003866894"),  # current harness: time a string of decimal seconds
        (1234.5, 0.003866894),  # legacy harness (Node v8 to v16.0): time a number
        ("12345.67", "5.000123456"),  # h2load: the rate is a string
        (1.7976931348623157e308, "0.000000000"),  # NODEJS_BENCHMARK_ZERO_ALLOWED with an unmeasurable time
    ],
)
def test_a_report_becomes_a_sample_with_the_values_as_sent(rate, time):
    messages = protocol.JobMessages()
    sample = messages.read(report(rate=rate, time=time))
    assert sample == protocol.Sample("n=10 type='int'", rate, time, warning=None)
    assert messages.reported == ["n=10 type='int'"]
    assert messages.failure_reason(0, "") is None


@pytest.mark.parametrize("rate", [0, -5, None, "abc", "NaN", "0.0", "1,5", True, float("inf")])
def test_a_rate_that_is_not_a_positive_number_makes_the_report_invalid(rate):
    messages = protocol.JobMessages()
    assert messages.read(report(rate=rate)) is None
    reason = messages.failure_reason(0, "")
    assert reason.startswith("invalid report: n=10 type='int': rate ") and "not a finite positive number" in reason


@pytest.mark.parametrize(
    ("time", "shown"),
    [("5,.123456789", "'5,.123456789'"), (None, "None"), ('1"2', "'1\"2'"), ("1\n2", "'1\\n2'"), ("NaN", "'NaN'")],
)
def test_a_time_that_cannot_be_written_keeps_the_sample_and_warns(time, shown):
    """Node v16.1/v16.2 HTTP benchmarks sent "5,.123456789": compare.js's CSV broke; ours gets an empty time."""
    messages = protocol.JobMessages()
    sample = messages.read(report(time=time))
    assert sample is not None and sample.time is None and sample.rate == 1234.5
    assert sample.configuration == "n=10 type='int'"
    assert sample.warning == f"time {shown} is not a finite number; written as an empty field"
    assert messages.failure_reason(0, "") is None


def test_a_report_without_time_warns_that_it_is_missing():
    messages = protocol.JobMessages()
    message = report()
    del message["time"]
    sample = messages.read(message)
    assert sample.time is None and sample.warning.startswith("time missing")


def test_config_messages_set_the_expected_count():
    messages = protocol.JobMessages()
    messages.read({"type": "config", "name": "cat/a.js", "queueLength": 3})
    messages.read({"type": "config", "name": "cat/a.js", "queueLength": True})  # not a count
    messages.read(report())
    assert messages.queue_lengths == [3]
    assert messages.failure_reason(0, "") == "reported 1 of 3 configurations"


def test_other_messages_are_ignored_like_compare_js_ignores_them():
    messages = protocol.JobMessages()
    assert messages.read({"cmd": "NODE_HANDLE_ACK"}) is None
    assert messages.read({"type": "progress"}) is None
    assert messages.read(report(conf=None)) is None  # compare.js would crash on it; here an invalid report
    assert messages.failure_reason(0, "").startswith("invalid report: a report without a conf object")


def test_an_empty_queue_is_success_with_no_rows():
    """combinationFilter or --set excluded everything: exit 0, not one message, no output."""
    messages = protocol.JobMessages()
    assert messages.had_nothing_to_run(0, "")
    assert messages.failure_reason(0, "") is None
    assert not messages.had_nothing_to_run(1, "")
    zero = protocol.JobMessages()
    zero.read({"type": "config", "name": "cat/a.js", "queueLength": 0})
    assert zero.had_nothing_to_run(0, "") and zero.failure_reason(0, "") is None


def test_silence_with_output_on_stdout_is_a_failure_that_shows_it():
    """Node's main for 11 days of July 2022 printed reports on stdout instead of sending them."""
    messages = protocol.JobMessages()
    assert not messages.had_nothing_to_run(0, "cat/a.js n=10: 1,234.5\n")
    assert messages.failure_reason(0, "cat/a.js n=10: 1,234.5\n") == (
        "reported nothing over IPC but wrote to stdout (a harness that prints its reports?): 'cat/a.js n=10: 1,234.5'"
    )


def test_reports_without_type_name_the_unsupported_harness():
    messages = protocol.JobMessages()
    messages.read({"name": "cat/a.js", "conf": CONF, "rate": 5, "time": 1})
    assert not messages.had_nothing_to_run(0, "")
    assert "without type 'report': a harness from before Node v8" in messages.failure_reason(0, "")


def test_config_without_reports_is_a_failure():
    messages = protocol.JobMessages()
    messages.read({"type": "config", "name": "cat/a.js", "queueLength": 2})
    assert messages.failure_reason(0, "") == "exited without reporting any sample"


def test_environment_run_fn_is_removed_and_harness_variables_noted():
    environ = {"PATH": "/bin", "NODE_RUN_BENCHMARK_FN": "", "NODE_BENCHMARK_FLAGS": "--no-opt"}
    assert protocol.benchmark_environment(environ) == {"PATH": "/bin", "NODE_BENCHMARK_FLAGS": "--no-opt"}
    notes = protocol.environment_notes(environ)
    assert len(notes) == 2
    assert notes[0].startswith("NODE_RUN_BENCHMARK_FN is set in the environment; removed")
    assert notes[1] == (
        "NODE_BENCHMARK_FLAGS='--no-opt' is set: common.js adds these flags to every configuration child of both sides"
    )
    assert protocol.environment_notes({"PATH": "/bin"}) == []


def test_warnings_are_counted_not_repeated_and_capped():
    warnings: list[dict] = []
    for _ in range(3):
        protocol.add_warning(warnings, "time 'x' bad", filename="a.js", side="head", configuration="n=1")
    assert warnings == [
        {"filename": "a.js", "side": "head", "configuration": "n=1", "message": "time 'x' bad", "count": 3}
    ]
    assert protocol.describe_warning(warnings[0]) == "a.js n=1 (head): time 'x' bad [3 times]"
    for index in range(protocol.MAX_WARNINGS + 10):
        protocol.add_warning(warnings, f"message {index}")
    assert len(warnings) == protocol.MAX_WARNINGS
    assert protocol.describe_warning(warnings[1]) == "message 0"


def test_set_keys_that_no_configuration_holds(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(
        '"binary","filename","configuration","rate","time"\n'
        '"old","a.js","n=10 type=\'in=t\'",1,1\n'
        '"new","b.js","size=2",1,1\n'
    )
    set_args = ["n=10", "size=2", "typo=3", "CPUSET=0", "benchmarker=wrk", "n=20"]
    assert protocol.unused_set_keys(set_args, path) == ["typo", "benchmarker"]
    assert protocol.unused_set_keys([], path) == []
    assert protocol.unused_set_keys(["x=1"], tmp_path / "missing.csv") == []


def test_set_keys_stop_reading_once_every_key_is_seen(tmp_path):
    # once every key is seen the rest of results.csv is not read: here it would not even decode
    path = tmp_path / "results.csv"
    text = '"binary","filename","configuration","rate","time"\n' + '"old","a.js","n=10",1,1\n' * 10_000
    path.write_bytes(text.encode() + b'"new","a.js","\xff",1,1\n')
    assert protocol.unused_set_keys(["n=1"], path) == []
