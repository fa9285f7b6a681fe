"""`benchgate analyze` end to end: files, stdin, shards, formats, exit statuses."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchgate import results
from benchgate.cli import main
from benchgate.stats.analysis import RunData, analyze
from benchgate.stats.gate import GatePolicy

FIXTURES = Path(__file__).parent / "fixtures" / "analyze"


def run(capsys, *arguments: str) -> tuple[int, str, str]:
    status = main(["analyze", *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_readme_first_command_prints_compare_r_table_and_fails_the_gate(repo_root, capsys):
    status, out, err = run(capsys, str(repo_root / "examples" / "compare-sample.csv"), "--gate")
    assert (status, err) == (1, "")
    header = ["confidence", "improvement", "accuracy", "(*)", "(**)", "(***)", "gate", "change", "[interval]"]
    assert out.splitlines()[0].split() == [*header, "decision", "gate"]
    assert "buffers/buffer-compare.js n=1000000 size=16            ***    -11.42 %" in out
    assert re.search(r"-11\.4 % \[-14\.3, -8\.5\] regression +FAIL", out.splitlines()[1])
    assert "gate: FAIL: 2 of 7 comparisons" in out


def test_console_script_runs_from_a_shell_with_stdin(repo_root):
    csv_text = (repo_root / "examples" / "compare-sample.csv").read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "benchgate", "analyze", "-", "--format", "json", "--gate"],
        input=csv_text,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stderr == b""
    assert json.loads(done.stdout)["verdict"] == "fail"


def test_bad_input_from_a_shell_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text('"binary","filename","configuration","rate","time"\n"old","a.js","",1,1\n"base","a.js","",1,1\n')
    done = subprocess.run([sys.executable, "-m", "benchgate", "analyze", str(bad)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"benchgate: error: {bad}: line 3: binary label 'base' is neither the base label 'old' nor the head label "
        "'new' (use --base-label/--head-label)\n"
    )


def test_shards_give_the_same_analysis_as_one_file(tmp_path, capsys):
    lines = (FIXTURES / "quoting.csv").read_text().splitlines(keepends=True)
    first, second = tmp_path / "shard-1.csv", tmp_path / "shard-2.csv"
    first.write_text("".join(lines[:90]))
    second.write_text(lines[0] + "".join(lines[90:]))
    whole = run(capsys, str(FIXTURES / "quoting.csv"), "--format", "json")
    sharded = run(capsys, str(first), str(second), "--format", "json")
    assert whole == sharded and whole[0] == 0


def test_stdin_mixed_with_files(monkeypatch, capsys):
    data = (FIXTURES / "quoting.csv").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status, out, _ = run(capsys, "-", str(FIXTURES / "unequal-n.csv"), "--format", "csv")
    assert status == 0 and len(out.splitlines()) == 1 + 8 + 6


def test_stdin_twice_is_refused(capsys):
    status, out, err = run(capsys, "-", "-")
    assert (status, out) == (2, "") and "stdin (-) given more than once" in err


@pytest.mark.parametrize("output_format", ["text", "markdown", "json", "csv"])
def test_every_format_renders_the_same_rows(output_format, capsys):
    status, out, _ = run(capsys, str(FIXTURES / "sorting.csv"), "--format", output_format)
    assert status == 0
    for name in ("a b.js n=1", "z.js é=1", "é.js n=1"):
        if output_format in ("json", "csv"):
            filename, configuration = name.split(" ", 1) if not name.startswith("a b") else ("a b.js", "n=1")
            assert filename in out and configuration in out
        else:
            assert name in out


def test_labels_options(tmp_path, capsys):
    path = tmp_path / "labels.csv"
    rows = [f'"{label}","a.js","n=1",{rate},0.1' for label, rate in [("main", 10), ("pr", 5), ("main", 11), ("pr", 6)]]
    path.write_text('"binary","filename","configuration","rate","time"\n' + "\n".join(rows) + "\n")
    status, out, _ = run(capsys, str(path), "--base-label", "main", "--head-label", "pr", "--format", "json")
    assert status == 0 and json.loads(out)["rows"][0]["improvement"] == pytest.approx(-47.619047619, rel=1e-9)
    status, _, err = run(capsys, str(path), "--base-label", "x", "--head-label", "x")
    assert status == 2 and "both 'x'" in err


def test_analyze_is_callable_on_the_samples():
    samples = results.read_samples([str(FIXTURES / "many.csv")])
    gated = analyze(RunData(samples), GatePolicy(threshold="**", min_effect=5.0)).table
    assert int(gated["gating"].sum()) == 3 and len(gated) == 120


def _csv(path: Path, rows: list[tuple[str, str, float]]) -> str:
    lines = [f'"{binary}","{filename}","n=1",{rate},0.1' for binary, filename, rate in rows]
    path.write_text('"binary","filename","configuration","rate","time"\n' + "\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("output_format", ["text", "json", "csv"])
def test_a_csv_with_only_base_rows_tested_nothing_and_fails_the_gate(tmp_path, capsys, output_format):
    path = _csv(tmp_path / "old-only.csv", [("old", "a.js", 10.0 + i) for i in range(5)])
    status, out, err = run(capsys, path, "--gate", "--format", output_format)
    reason = "no comparison could be tested: the head has no samples (1 comparisons)"
    assert status == 1
    assert err == f"benchgate: gate failed: {reason}\n"
    if output_format == "text":
        assert f"gate: FAIL: {reason}" in out and "gate: pass" not in out
    if output_format == "json":
        assert json.loads(out)["verdict"] == "fail"
    # Without --gate the analysis is printed and the status stays 0.
    assert run(capsys, path, "--format", output_format)[0] == 0


def test_one_run_per_side_tested_nothing(tmp_path, capsys):
    path = _csv(
        tmp_path / "one-run.csv", [("old", "a.js", 10.0), ("new", "a.js", 9.0), ("old", "b.js", 5), ("new", "b.js", 5)]
    )
    status, out, err = run(capsys, path, "--gate")
    assert status == 1 and "all 2 have fewer than 2 samples on a side" in err
    assert "gate: FAIL: no comparison could be tested" in out


def test_one_tested_comparison_is_enough_to_judge(tmp_path, capsys):
    rows = [("old", "a.js", 10.0), ("new", "a.js", 9.0)]  # incomplete
    rows += [(side, "b.js", rate) for side in ("old", "new") for rate in (5.0, 5.01, 4.99)]
    status, out, err = run(capsys, _csv(tmp_path / "mixed.csv", rows), "--gate")
    assert (status, err) == (0, "") and "gate: pass" in out


@pytest.mark.parametrize("value", ["inf", "nan", "1001", "-1"])
def test_min_effect_beyond_the_configs_range_is_refused(capsys, value):
    status, out, err = run(capsys, str(FIXTURES / "many.csv"), "--min-effect", value)
    assert (status, out) == (2, "")
    assert err.startswith("benchgate: error: option --min-effect: key 'min-effect': must be")
    assert "percent" in err and err.count("\n") == 1
