"""The schedule, and benchmark processes driven through Node's protocol (real node, the fixture suite)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchgate import results
from benchgate.build import releases
from benchgate.run.process import BASE, HEAD, BenchmarkProcess, RunPlan, build_schedule, job_argv
from benchgate.run.session import Recorder, Session, new_progress

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 6), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_schedule_runs_every_file_and_side_once_per_iteration(file_count, runs, seed):
    files = [f"cat/file{i}.js" for i in range(file_count)]
    jobs = build_schedule(files, runs, seed)
    assert [job.index for job in jobs] == list(range(2 * file_count * runs))
    for iteration in range(runs):
        chunk = jobs[iteration * 2 * file_count : (iteration + 1) * 2 * file_count]
        assert {job.iteration for job in chunk} == {iteration}
        assert Counter((job.filename, job.side) for job in chunk) == Counter(
            (name, side) for name in files for side in (BASE, HEAD)
        )
        # base and head of a file run back to back: drift between them is as small as it gets
        for first, second in zip(chunk[::2], chunk[1::2], strict=True):
            assert first.filename == second.filename and {first.side, second.side} == {BASE, HEAD}
        # files rotate: iteration i starts with file i (mod count)
        assert chunk[0].filename == files[iteration % file_count]
    assert build_schedule(files, runs, seed) == jobs


def test_schedule_order_is_seeded_and_not_always_base_first():
    files = ["a/x.js", "a/y.js", "b/z.js"]
    first_sides = [job.side for job in build_schedule(files, 30, 7)[::2]]
    assert 20 < first_sides.count(BASE) < 70  # both orders, roughly balanced
    assert build_schedule(files, 30, 7) != build_schedule(files, 30, 8)


def _collect(argv, timeout=None):
    messages = []
    result = BenchmarkProcess().run(
        argv, cwd=BENCH.parent, env={"PATH": "/usr/bin:/bin"}, timeout=timeout, on_message=messages.append
    )
    return result, messages


def test_a_benchmark_file_reports_every_configuration_over_ipc():
    result, messages = _collect(job_argv(Path(NODE), (), BENCH / "calc" / "add.js", (), None))
    assert result.exit_status == 0 and not result.timed_out
    assert messages[0] == {"type": "config", "name": "calc/add.js", "queueLength": 2}
    reports = [m for m in messages if m["type"] == "report"]
    assert [m["conf"] for m in reports] == [{"n": 2000, "type": "int"}, {"n": 2000, "type": "float"}]
    # The current protocol (Node v16.1.0+): time is a string of decimal seconds with 9 fraction digits.
    assert all(m["rate"] > 0 and re.fullmatch(r"\d+\.\d{9}", m["time"]) and float(m["time"]) > 0 for m in reports)


def test_the_legacy_protocol_sends_time_as_a_number():
    messages = []
    BenchmarkProcess().run(
        job_argv(Path(NODE), (), BENCH / "calc" / "add.js", (), None),
        cwd=BENCH.parent,
        env={"PATH": "/usr/bin:/bin", "BENCHGATE_HARNESS_PROTOCOL": "legacy"},
        timeout=None,
        on_message=messages.append,
    )
    reports = [m for m in messages if m["type"] == "report"]
    assert len(reports) == 2 and all(isinstance(m["time"], float) and m["time"] > 0 for m in reports)


def test_set_arguments_select_configurations():
    _, messages = _collect(job_argv(Path(NODE), (), BENCH / "calc" / "add.js", ("type=float", "n=10"), None))
    assert [m["conf"] for m in messages if m["type"] == "report"] == [{"n": 10, "type": "float"}]


def test_csv_lines_are_byte_identical_to_compare_js_formatting():
    """Format the same IPC reports with our writer and with Node itself (util.inspect, template literal)."""
    _, messages = _collect(job_argv(Path(NODE), (), BENCH / "text" / "quote.js", (), None))
    reports = [m for m in messages if m["type"] == "report"]
    ours = "".join(
        results.format_sample_line(
            "new", "text/quote.js", results.format_configuration(m["conf"]), m["rate"], m["time"]
        )
        for m in reports
    )
    # compare.js's rule: ` key=inspect(value)` joined, leading space dropped, " doubled, numbers as JS prints them.
    oracle = r"""
      const { inspect } = require('util');
      const reports = JSON.parse(require('fs').readFileSync(0, 'utf8'));
      let out = '';
      for (const data of reports) {
        let conf = '';
        for (const key of Object.keys(data.conf)) conf += ` ${key}=${inspect(data.conf[key])}`;
        conf = conf.slice(1).replace(/"/g, '""');
        out += `"new","text/quote.js","${conf}",${data.rate},${data.time}\n`;
      }
      process.stdout.write(out);
    """
    expected = subprocess.run(
        [NODE, "-e", oracle], input=json.dumps(reports), capture_output=True, text=True, check=True
    ).stdout
    assert ours == expected
    assert '"new","text/quote.js","n=50 word=\'say ""hi""\'",' in ours
    assert 'word=""it\'s""' in ours and 'word=`both \' and ""`' in ours


def _plan(files, runs=2, head_args=(), timeout=None, seed=3, set_args=()):
    node = releases.inspect_binary(NODE, side="base")
    head = releases.inspect_binary(NODE, side="head", node_args=tuple(head_args))
    return RunPlan(
        benchmark_dir=BENCH,
        files=tuple(files),
        binaries={BASE: node, HEAD: head},
        runs=runs,
        seed=seed,
        timeout=timeout,
        set_args=tuple(set_args),
    )


def _session(tmp_path, plan, **kwargs):
    writer = results.ResultsWriter(tmp_path / "results.csv")
    state = new_progress()
    with writer:
        session = Session(plan, Recorder(writer, state), **kwargs)
        session.run()
    return session, state


def test_flags_node_args_set_and_cwd_reach_the_configuration_children(tmp_path, monkeypatch):
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("BENCHGATE_TEST_TRACE", str(trace))
    plan = _plan(["calc/flags.js", "calc/add.js"], runs=1, head_args=["--max-old-space-size=300"], set_args=["n=64"])
    _, state = _session(tmp_path, plan)
    assert state["failures"] == []
    seen = [json.loads(line) for line in trace.read_text().splitlines()]
    flags_runs = [entry for entry in seen if entry["name"] == "calc/flags.js"]
    assert len(flags_runs) == 2  # base and head; flags.js itself throws when its flag is missing
    assert all("--stack-trace-limit=7" in entry["execArgv"] for entry in flags_runs)
    assert sorted("--max-old-space-size=300" in entry["execArgv"] for entry in seen) == [False] * 3 + [True] * 3
    assert {entry["config"]["n"] for entry in seen} == {64}
    assert {entry["cwd"] for entry in seen} == {str(BENCH.parent)}
    frame = results.read_samples([tmp_path / "results.csv"])
    assert Counter(zip(frame["side"], frame["filename"], strict=True)) == {
        ("base", "calc/flags.js"): 1,
        ("head", "calc/flags.js"): 1,
        ("base", "calc/add.js"): 2,
        ("head", "calc/add.js"): 2,
    }


def test_a_crash_is_recorded_with_its_configuration_and_the_run_goes_on(tmp_path):
    plan = _plan(["fault/crash.js", "calc/add.js"], runs=2, head_args=["--expose-gc"])
    _, state = _session(tmp_path, plan)
    assert [(f["side"], f["filename"], f["configuration"], f["exit_status"]) for f in state["failures"]] == [
        ("head", "fault/crash.js", "n=10 size=2", 3)
    ] * 2
    assert "the head breaks here" in state["failures"][0]["stderr_tail"]
    assert state["failures"][0]["reason"] == "crashed (exited with status 3)"
    frame = results.read_samples([tmp_path / "results.csv"])
    counts = Counter(zip(frame["side"], frame["filename"], frame["configuration"], strict=True))
    assert counts[("base", "fault/crash.js", "n=10 size=3")] == 2
    assert counts[("head", "fault/crash.js", "n=10 size=1")] == 2  # measured before the crash: kept
    assert counts[("head", "calc/add.js", "n=2000 type='int'")] == 2


def test_a_hung_process_times_out_with_its_children(tmp_path):
    plan = _plan(["fault/hang.js"], runs=1, head_args=["--expose-gc"], timeout=1.5)
    session, state = _session(tmp_path, plan)
    assert [(f["side"], f["reason"]) for f in state["failures"]] == [("head", "timed out after 1.5 s")]
    assert state["durations"]["fault/hang.js"] < 10


def test_repeated_failures_stop_that_side_of_the_file(tmp_path):
    plan = replace(_plan(["fault/crash.js"], runs=5, head_args=["--expose-gc"]), max_failures=2)
    _, state = _session(tmp_path, plan)
    assert len(state["failures"]) == 2
    assert state["skipped"] == [
        {"filename": "fault/crash.js", "side": "head", "reason": "head failed 2 times; its remaining runs were skipped"}
    ]


def test_numbers_and_configuration_values_print_exactly_as_node_prints_them():
    """js_number (rate, time) and js_inspect (configuration values) against Node itself, on many values."""
    import random

    generator = random.Random(20)
    numbers = [generator.random() * 10 ** generator.uniform(-12, 25) for _ in range(3000)]
    numbers += [float(generator.randrange(1, 10**22)) for _ in range(500)]
    numbers += [1e21, 1e-7, 1.5e-7, 2.0**53, 2.0**53 + 2, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, 100.0]
    pieces = ["a", " ", "\n", "\t", "'", '"', "`", "${", "\\", "\x00", "\x7f", "\x9f", "é", "😀", "\ud800"]
    strings = ["".join(generator.choice(pieces) for _ in range(generator.choice([0, 3, 20, 130]))) for _ in range(800)]
    strings = [text for text in strings if "\ud800\udc00" not in text]
    script = (
        "const { inspect } = require('util');"
        "const { numbers, strings } = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify({ numbers: numbers.map((x) => `${x}`), "
        "strings: strings.map((x) => inspect(x)), ints: [0, -0, 7, 1e21].map((x) => inspect(x)) }));"
    )
    completed = subprocess.run(
        [NODE, "-e", script],
        input=json.dumps({"numbers": numbers, "strings": strings}),
        capture_output=True,
        text=True,
        check=True,
    )
    expected = json.loads(completed.stdout)
    assert [results.js_number(value) for value in numbers] == expected["numbers"]
    assert [results.js_inspect(text) for text in strings] == expected["strings"]
    assert [results.js_inspect(value) for value in (0, -0.0, 7, 1e21)] == expected["ints"]
