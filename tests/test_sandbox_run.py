"""`benchgate run` with an untrusted head: sandboxed (HTTP benchmarks too), refused without a sandbox,
marked when --no-sandbox; trusted runs as before; run.json's ``sandbox`` checked as untrusted data.

The benchmark checkouts are built under tmp_path: the sandboxed processes see the checkout, not
where the tests live.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from nodelike import example_benchmark_files, make_node_like_repo, marker_lines
from sandboxing import fake_bwrap, fresh_probe, needs_bwrap  # noqa: F401 - fresh_probe is a fixture

from benchgate import cli, results
from benchgate.errors import InputError
from benchgate.results import runrecord

TESTS = Path(__file__).parent
FIXTURES = TESTS / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
BOTH_NODE = ("--base-binary", NODE, "--head-binary", NODE)
NO_BWRAP = "no-such-bwrap-here"


def make_checkout(root: Path) -> Path:
    """A Node-like checkout with benchmark/ (the example harness, calc, an HTTP benchmark) and tools/wrk."""
    bench = root / "checkout" / "benchmark"
    (bench / "calc").mkdir(parents=True)
    (bench / "net").mkdir()
    for name, text in example_benchmark_files().items():
        (root / "checkout" / name).write_text(text)
    shutil.copy(FIXTURES / "net" / "http-simple.js", bench / "net" / "http-simple.js")
    tools = root / "checkout" / "tools"
    tools.mkdir()
    shutil.copy(TESTS / "fixtures" / "loadgen" / "wrk", tools / "wrk")  # a stand-in speaking wrk's command line
    (tools / "wrk").chmod(0o755)
    return bench


def run(capsys, bench: Path | None, out: Path, *args: str) -> tuple[int, str]:
    location = ["--benchmark-dir", str(bench)] if bench is not None else []
    status = cli.main(["run", *location, "--no-progress", "--no-analyze", "--output", str(out), *args])
    return status, capsys.readouterr().err


@needs_bwrap
def test_an_http_benchmark_runs_in_the_sandbox(capsys, tmp_path, monkeypatch):
    bench = make_checkout(tmp_path)
    monkeypatch.setenv("PATH", f"{bench.parent / 'tools'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_fake")
    out = tmp_path / "out"
    status, err = run(capsys, bench, out, "net", "calc", *BOTH_NODE, "--untrusted-head", "--runs", "2")
    assert status == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["sandbox"]["used"] is True and record["sandbox"]["tool"] == "bwrap", record["sandbox"]
    assert record["failures"] == [] and record["skipped"] == []
    samples = results.read_samples([out / "results.csv"])
    http = samples[samples["filename"] == "net/http-simple.js"]
    # Server and load generator both inside the sandbox, on its own loopback: 2 runs a side, real rates.
    assert len(http) == 4 and (http["rate"] > 0).all()
    assert len(samples) == 4 + 2 * 2 * 2


def test_an_untrusted_run_without_bwrap_is_refused_before_anything_runs(capsys, tmp_path, monkeypatch):
    bench = make_checkout(tmp_path)
    monkeypatch.setenv("BENCHGATE_BWRAP", NO_BWRAP)
    status, err = run(capsys, bench, tmp_path / "out", "calc", *BOTH_NODE, "--untrusted-head")
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith("benchgate: error: cannot sandbox the untrusted head: bubblewrap is not installed")
    assert "apt-get install bubblewrap" in err and "--no-sandbox" in err
    assert not (tmp_path / "out").exists()

    monkeypatch.setenv("BENCHGATE_BWRAP", str(fake_bwrap(tmp_path, "bwrap: No permissions to create a new namespace")))
    status, err = run(capsys, bench, tmp_path / "out", "calc", *BOTH_NODE, "--untrusted-head")
    assert status == 2 and err.count("\n") == 1, err
    assert "could not create a sandbox (bwrap: No permissions to create a new namespace)" in err
    assert "enable unprivileged user namespaces" in err and "--no-sandbox" in err


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs a C toolchain")
def test_a_repo_run_without_bwrap_is_refused_before_building_anything(capsys, tmp_path, monkeypatch):
    repo = make_node_like_repo(tmp_path / "node")
    marker = tmp_path / "marker"
    monkeypatch.setenv("NODELIKE_BUILD_MARKER", str(marker))
    monkeypatch.setenv("BENCHGATE_BWRAP", NO_BWRAP)
    args = ("--repo", str(repo.path), "--head-ref", "feature", "--build-cache", str(tmp_path / "cache"))
    status, err = run(capsys, None, tmp_path / "out", *args)
    assert status == 2 and "bubblewrap is not installed" in err and err.count("\n") == 1, err
    assert marker_lines(marker) == []  # not even the (trusted) base was built
    assert not (tmp_path / "out").exists()


def test_no_sandbox_runs_and_the_record_and_comment_say_so(capsys, tmp_path, monkeypatch):
    bench = make_checkout(tmp_path)
    monkeypatch.setenv("BENCHGATE_BWRAP", NO_BWRAP)
    out = tmp_path / "out"
    status, err = run(capsys, bench, out, "calc", *BOTH_NODE, "--untrusted-head", "--no-sandbox", "--runs", "2")
    assert status == 0, err
    assert "the untrusted head runs WITHOUT the sandbox (--no-sandbox)" in err
    record = json.loads((out / "run.json").read_text())
    assert record["sandbox"] == {"used": False, "untrusted_head": True, "reason": "--no-sandbox"}
    assert runrecord.parse_run_record(record, "run.json").sandbox.unconfined_untrusted
    # the same binary on both sides never fails; whether two runs a side already rule out the ceiling's
    # regression (pass) or not (inconclusive, 6) depends on the measured noise, so either may come
    assert cli.main(["report", "--dry-run", "--config", str(tmp_path / "absent.yml"), str(out)]) in (0, 6)
    assert "The pull request's code ran without the sandbox** (`--no-sandbox`)" in capsys.readouterr().out


def test_given_binaries_are_trusted_and_run_as_before(capsys, tmp_path, monkeypatch):
    bench = make_checkout(tmp_path)
    monkeypatch.setenv("BENCHGATE_BWRAP", NO_BWRAP)  # not needed: nothing untrusted runs
    out = tmp_path / "out"
    status, err = run(capsys, bench, out, "calc", *BOTH_NODE, "--runs", "2")
    assert status == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["sandbox"] == {"used": False, "untrusted_head": False, "reason": "the head is trusted"}
    assert record["options"]["timeout"] == 1800  # every benchmark process has a time limit by default
    assert cli.main(["report", "--dry-run", "--config", str(tmp_path / "absent.yml"), str(out)]) in (0, 6)
    assert "without the sandbox" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--trusted", "--untrusted-head"), "not allowed with argument"),
        (("--trusted",), "--trusted only applies with --repo"),
    ],
)
def test_contradicting_trust_options_are_bad_input(capsys, tmp_path, args, says):
    try:
        status, err = run(capsys, make_checkout(tmp_path), tmp_path / "out", "calc", *BOTH_NODE, *args)
    except SystemExit as stopped:  # argparse's own check of exclusive options
        status, err = stopped.code, capsys.readouterr().err
    assert status == 2 and says in err, err
    assert not (tmp_path / "out").exists()


@needs_bwrap
def test_a_resumed_untrusted_run_is_sandboxed_again_or_refused(capsys, tmp_path, monkeypatch):
    bench = make_checkout(tmp_path)
    out = tmp_path / "out"
    assert run(capsys, bench, out, "calc", *BOTH_NODE, "--untrusted-head", "--runs", "2")[0] == 0
    # Make it an interrupted run: nothing of the schedule done yet.
    record = json.loads((out / "run.json").read_text())
    header = results.CSV_HEADER + "\n"
    (out / "results.csv").write_text(header)
    record.update(
        complete=False, samples=0, progress={**record["progress"], "completed_jobs": 0, "csv_bytes": len(header)}
    )
    results.write_run_record(out / "run.json", record)

    monkeypatch.setenv("BENCHGATE_BWRAP", NO_BWRAP)
    status, err = run(capsys, None, out, "--resume")
    assert status == 2 and "cannot sandbox the untrusted head" in err, err
    monkeypatch.delenv("BENCHGATE_BWRAP")
    status, err = run(capsys, None, out, "--resume")
    assert status == 0, err
    resumed = json.loads((out / "run.json").read_text())
    assert resumed["complete"] is True and resumed["samples"] == 8 and resumed["sandbox"]["used"] is True


@pytest.mark.parametrize(
    ("sandbox", "why"),
    [
        ("bwrap", "must be an object"),
        ({"used": "yes"}, "sandbox.used: must be true or false"),
        ({"used": True}, "sandbox.tool: must name the sandbox"),
        ({"used": False, "untrusted_head": "no"}, "sandbox.untrusted_head: must be true or false"),
        ({"used": False, "reason": "x" * 600}, "sandbox.reason: is 600 characters long"),
        ({"used": True, "tool": ["bwrap"]}, "sandbox.tool: must be a string"),
    ],
)
def test_the_records_sandbox_is_checked_as_untrusted_data(sandbox, why):
    with pytest.raises(InputError, match=why):
        runrecord.parse_run_record({"schema": 1, "sandbox": sandbox}, "run.json")


def test_one_unsandboxed_shard_marks_the_merged_run():
    from benchgate.results import rundirs

    confined = runrecord.SandboxUse(used=True, untrusted_head=True, tool="bwrap", version="0.8.0")
    unconfined = runrecord.SandboxUse(used=False, untrusted_head=True, reason="--no-sandbox")
    shards = [runrecord.RunSummary(has_record=True, sandbox=use) for use in (confined, unconfined, confined)]
    assert rundirs.merge(shards).sandbox == unconfined
    assert rundirs.merge(shards[:1]).sandbox == confined


@needs_bwrap
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a duet needs two CPUs")
def test_an_untrusted_duet_runs_sandboxed_and_an_http_benchmark_alone(capsys, tmp_path, monkeypatch):
    bench = make_checkout(tmp_path)
    monkeypatch.setenv("PATH", f"{bench.parent / 'tools'}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "out"
    status, err = run(
        capsys, bench, out, "net", "calc", *BOTH_NODE, "--untrusted-head", "--runs", "2", "--pairing", "duet"
    )
    assert status == 0, err
    record = json.loads((out / "run.json").read_text())
    assert record["sandbox"]["used"] is True and record["failures"] == []
    samples = results.read_samples([out / "results.csv"])
    http = int((samples["filename"] == "net/http-simple.js").sum())
    # The HTTP benchmark (a server and a load generator) ran alone, one side after the other: in no pair.
    assert http == 4 and record["pairing"]["unpaired_samples"] == http
    assert record["pairing"]["pairs"] * 2 == len(samples) - http > 0
    pairs = (out / "pairs.csv").read_text()
    assert "net/http-simple.js" not in pairs and "calc/" in pairs
