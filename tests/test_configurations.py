"""One job per configuration (benchgate.run.configurations): the listing by the file's own common.js, the
schedule, the session that starts each configuration child, and the record --resume reads back.

The fixture suite's harness forks as Node's does (a coordinator forking one child per configuration,
NODE_RUN_BENCHMARK_FN in the child's environment, the file's flags before the parent's execArgv);
tests/test_conformance.py checks the listing against Node's real common.js and compare.js.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchgate import results
from benchgate.build import releases
from benchgate.errors import InputError
from benchgate.results.recordparts import ConfigurationRow
from benchgate.run import configurations
from benchgate.run.process import BASE, HEAD, RunPlan, build_schedule
from benchgate.run.session import Recorder, Session, new_progress

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def _plan(files, runs=2, head_args=(), seed=3, set_args=(), expand=True, whole=None):
    """The plan of a run of ``files``, with each file's configurations listed (``whole``: gets the files that run
    whole, and why)."""
    base = releases.inspect_binary(NODE, side="base")
    head = releases.inspect_binary(NODE, side="head", node_args=tuple(head_args))
    plan = RunPlan(
        benchmark_dir=BENCH,
        files=tuple(files),
        binaries={BASE: base, HEAD: head},
        runs=runs,
        seed=seed,
        set_args=tuple(set_args),
    )
    if expand:

        def side(filename, which):
            return configurations.expand_side(
                plan.binaries[which], BENCH, filename, plan.set_args, env={"PATH": "/usr/bin:/bin"}, timeout=60
            )

        expanded, whole_files = configurations.expand_files(
            plan.files, side, is_http=lambda name: name.startswith("net/")
        )
        plan = replace(plan, configurations=expanded)
        (whole if whole is not None else {}).update(whole_files)
    return plan


def _session(tmp_path, plan, name="results.csv"):
    writer = results.ResultsWriter(tmp_path / name)
    state = new_progress()
    with writer:
        session = Session(plan, Recorder(writer, state))
        session.run()
    return session, state


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=5), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_a_schedule_runs_every_configuration_and_side_once_per_iteration(sizes, runs, seed):
    files = [f"cat/file{i}.js" for i in range(len(sizes))]
    units = {
        name: [((f"n={k}",), f"n={k}") for k in range(size)] for name, size in zip(files, sizes, strict=True) if size
    }
    jobs = build_schedule(files, runs, seed, units)
    per_iteration = sum(2 * (size or 1) for size in sizes)
    assert [job.index for job in jobs] == list(range(per_iteration * runs))
    for iteration in range(runs):
        chunk = jobs[iteration * per_iteration : (iteration + 1) * per_iteration]
        assert {job.iteration for job in chunk} == {iteration}
        expected = [
            (name, row, side) for name in files for _, row in units.get(name, [(None, None)]) for side in (BASE, HEAD)
        ]
        assert Counter((job.filename, job.row, job.side) for job in chunk) == Counter(expected)
        # base and head of one configuration run back to back; files still rotate
        for first, second in zip(chunk[::2], chunk[1::2], strict=True):
            assert (first.filename, first.configuration) == (second.filename, second.configuration)
            assert {first.side, second.side} == {BASE, HEAD}
        assert chunk[0].filename == files[iteration % len(files)]
    assert build_schedule(files, runs, seed, units) == jobs
    # files without configurations are scheduled exactly as before one job per configuration existed
    assert build_schedule(files, runs, seed, {}) == build_schedule(files, runs, seed)


@pytest.mark.parametrize(
    ("messages", "status", "reason"),
    [
        ([], 0, "forked no configuration child"),
        ([], 1, "could not be listed (exit status 1)"),
        (
            [
                {
                    "type": "benchgate-configuration",
                    "module": True,
                    "runFn": False,
                    "conf": {"n": 1},
                    "args": ["n=1"],
                    "flags": [],
                    "queueLength": 1,
                }
            ],
            0,
            "does not fork the file itself",
        ),
        (
            [
                {
                    "type": "benchgate-configuration",
                    "module": True,
                    "runFn": True,
                    "conf": None,
                    "args": ["n=1"],
                    "flags": [],
                    "queueLength": 1,
                }
            ],
            0,
            "does not fork the file itself",
        ),
        (
            [
                {
                    "type": "benchgate-configuration",
                    "module": True,
                    "runFn": True,
                    "conf": {"n": 1},
                    "args": ["n=1"],
                    "flags": [],
                    "queueLength": 2,
                }
            ],
            0,
            "forked 1 of 2 configurations",
        ),
        (
            [
                {
                    "type": "benchgate-configuration",
                    "module": True,
                    "runFn": True,
                    "conf": {"n": k},
                    "args": [f"n={k}"],
                    "flags": [f"--flag{k}"],
                    "queueLength": 2,
                }
                for k in (1, 2)
            ],
            0,
            "different flags",
        ),
        (
            [
                {
                    "type": "benchgate-configuration",
                    "module": True,
                    "runFn": True,
                    "conf": {"n": 1},
                    "args": [1],
                    "flags": [],
                    "queueLength": 1,
                }
            ],
            0,
            "not a list of strings",
        ),
    ],
)
def test_a_harness_that_cannot_run_single_configurations_runs_the_file_whole(messages, status, reason):
    found = configurations.read_forks(messages, status)
    assert found.configurations == () and reason in found.reason


def test_sides_that_list_different_configurations_run_the_file_whole():
    one = configurations.SideExpansion((ConfigurationRow(args=("n=1",), configuration="n=1"),))
    two = configurations.SideExpansion((ConfigurationRow(args=("n=2",), configuration="n=2"),))
    assert configurations.combine(one, two) == "the base's and the head's common.js list different configurations"
    assert "on the head" in configurations.combine(one, configurations.SideExpansion(reason="x"))
    assert configurations.combine(one, one).rows == one.configurations


@needs_node
def test_the_listing_is_what_the_coordinator_runs_and_the_jobs_write_the_same_rows(tmp_path, monkeypatch):
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("BENCHGATE_TEST_TRACE", str(trace))
    files = ["calc/add.js", "calc/flags.js", "text/quote.js", "net/http-simple.js"]
    whole = {}
    plan = _plan(files, runs=2, head_args=["--max-old-space-size=300"], set_args=["n=64"], whole=whole)
    assert list(whole) == ["net/http-simple.js"] and "an HTTP benchmark" in whole["net/http-simple.js"]
    plan = replace(plan, files=tuple(files[:3]))  # no load generator here: the listing is what is tested for it
    add = plan.configurations["calc/add.js"]
    assert [(item.args, item.configuration) for item in add.rows] == [
        (("n=64", "type=int"), "n=64 type='int'"),
        (("n=64", "type=float"), "n=64 type='float'"),
    ]
    assert plan.configurations["calc/flags.js"].flags == {
        BASE: ("--stack-trace-limit=7",),
        HEAD: ("--stack-trace-limit=7",),
    }
    _, state = _session(tmp_path, plan)
    assert state["failures"] == [], state["failures"]
    seen = [json.loads(line) for line in trace.read_text().splitlines()]
    flags = [entry for entry in seen if entry["name"] == "calc/flags.js"]
    assert len(flags) == 4 and all("--stack-trace-limit=7" in entry["execArgv"] for entry in flags)
    # the file's flags first, then the side's node flags, as child_process.fork's execArgv has them
    head = [entry["execArgv"] for entry in flags if "--max-old-space-size=300" in entry["execArgv"]]
    assert head == [["--stack-trace-limit=7", "--max-old-space-size=300"]] * 2
    # the same rows and counts as the files run whole (compare.js's way)
    whole = _plan(files[:3], runs=2, head_args=["--max-old-space-size=300"], set_args=["n=64"], expand=False)
    _session(tmp_path, whole, "whole.csv")
    mine = results.read_samples([tmp_path / "results.csv"])
    theirs = results.read_samples([tmp_path / "whole.csv"])

    def count(frame):
        return Counter(zip(frame["side"], frame["filename"], frame["configuration"], strict=True))

    assert count(mine) == count(theirs) and set(count(mine).values()) == {2}


@needs_node
def test_a_crashing_configuration_fails_alone_and_the_others_keep_running(tmp_path):
    plan = replace(_plan(["fault/crash.js"], runs=4, head_args=["--expose-gc"]), max_failures=2)
    _, state = _session(tmp_path, plan)
    assert [(f["side"], f["configuration"], f["exit_status"]) for f in state["failures"]] == [
        ("head", "n=10 size=2", 3)
    ] * 2
    reason = "head failed 2 times on n=10 size=2; its remaining runs were skipped"
    assert state["skipped"] == [{"filename": "fault/crash.js", "side": "head", "reason": reason}]
    frame = results.read_samples([tmp_path / "results.csv"])
    counts = Counter(zip(frame["side"], frame["configuration"], strict=True))
    # run whole, the head's file would stop at its crash and be skipped; one job per configuration, only it is
    assert counts == {
        ("base", "n=10 size=1"): 4,
        ("base", "n=10 size=2"): 4,
        ("base", "n=10 size=3"): 4,
        ("head", "n=10 size=1"): 4,
        ("head", "n=10 size=3"): 4,
    }


@pytest.mark.parametrize(
    ("configurations_field", "message"),
    [
        ([], "configurations: must be an object"),
        (
            {"other.js": {"rows": [{"args": ["n=1"], "configuration": "n=1"}], "flags": {"base": [], "head": []}}},
            "configurations\\['other.js'\\]: must name a selected file",
        ),
        (
            {"a.js": {"rows": [{"args": [1], "configuration": "n=1"}], "flags": {"base": [], "head": []}}},
            "rows\\[0\\].args\\[0\\]: must be a string, not a whole number",
        ),
        ({"a.js": {"rows": [], "flags": {"base": [], "head": []}}}, "must be a selected file's rows"),
        (
            {"a.js": {"rows": [{"args": ["n=1"], "configuration": "n=1"}], "flags": {"base": []}}},
            "must be a selected file's rows",
        ),
    ],
)
def test_a_forged_configurations_record_is_refused_on_resume(tmp_path, configurations_field, message):
    path = tmp_path / "run.json"

    def load(configurations_record):
        record = json.loads((Path(__file__).parent / "fixtures" / "run-records" / "fixed" / "run.json").read_text())
        record["selection"]["files"] = ["a.js"]
        path.write_text(json.dumps({**record, "complete": False, "configurations": configurations_record}))
        return results.load_run_record(path, resume=True)

    with pytest.raises(InputError, match=message):
        load(configurations_field)
    good = {"a.js": {"rows": [{"args": ["n=1"], "configuration": "n=1"}], "flags": {"base": ["--x"], "head": []}}}
    assert load(good).configurations["a.js"].model_dump(mode="json") == good["a.js"]
