"""One analysis: every command that analyses calls ``stats.analysis.analyze``, and nothing else assembles it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from rundirs import REGRESSION, write_run

from benchgate import results
from benchgate.cli import main
from benchgate.commands import analyze as analyze_command
from benchgate.commands import report as report_command
from benchgate.report.markup import FORMATS
from benchgate.report.tables import CSV_COLUMNS
from benchgate.stats import analysis
from benchgate.stats.gate import GatePolicy

SRC = Path(__file__).resolve().parents[1] / "src" / "benchgate"
MANY = Path(__file__).parent / "fixtures" / "analyze" / "many.csv"
# What assembles an analysis: only stats/analysis.py may call these (their own modules define them).
ASSEMBLY = {"decide_samples", "decide_shards", "decisions_table", "compare_r_table"}
ANALYSING_COMMANDS = ("analyze", "run", "report", "versions")


def calls(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            names.add(node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", ""))
    return names


def test_only_stats_analysis_assembles_the_analysis():
    for path in SRC.rglob("*.py"):
        if path != SRC / "stats" / "analysis.py":
            found = calls(path) & (ASSEMBLY | {"compare_samples"})
            assert not found, f"{path} assembles an analysis itself ({found}); call stats.analysis.analyze"


@pytest.mark.parametrize("command", ANALYSING_COMMANDS)
def test_every_analysing_command_calls_analyze(command):
    assert "analyze" in calls(SRC / "commands" / f"{command}.py")


@pytest.fixture
def spy(monkeypatch):
    seen = []

    def recording(run_data, policy):
        seen.append(policy)
        return analysis.analyze(run_data, policy)

    for module in (analyze_command, report_command):
        monkeypatch.setattr(module, "analyze", recording)
    return seen


def test_analyze_and_report_print_what_analyze_returned(spy, capsys, tmp_path):
    assert main(["analyze", str(MANY), "--format", "json", "--threshold", "**"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = analysis.analyze(analysis.RunData(results.read_samples([MANY])), GatePolicy("**"))
    assert spy == [GatePolicy("**")] and printed["verdict"] == expected.verdict == "fail"
    report_command.report_results([str(MANY)], config_path=tmp_path / "absent.yml", dry_run=True)
    assert len(spy) == 2 and spy[1].threshold == "***"


def test_every_rule_fills_every_column():
    samples = results.read_samples([MANY])
    for policy in (GatePolicy(), GatePolicy(rule="compare-r")):
        table = analysis.analyze(analysis.RunData(samples), policy).table
        assert tuple(table.columns) == analysis.ANALYSIS_COLUMNS and len(table) == 120
        decided = table[~table["incomplete"]]
        assert decided[["decision", "change", "ci_low", "ci_high", "ci_level", "gate_p"]].notna().all().all()
    assert set(table["gate_test"]) == {analysis.COMPARE_R_TEST} and not table["undecided"].any()
    with pytest.raises(ValueError, match="rule must be one of gate, compare-r"):
        GatePolicy(rule="t-test")


@pytest.mark.parametrize("output_format", FORMATS)
def test_run_and_report_print_every_format_of_the_same_analysis(output_format, tmp_path, capsys):
    from benchgate.commands.run import print_analysis
    from benchgate.config import Settings
    from benchgate.run.plan import RunOptions

    run_dir = write_run(tmp_path / "run", REGRESSION, record={"samples": 60})
    status = print_analysis(run_dir, RunOptions(output=run_dir, output_format=output_format), Settings())
    printed = capsys.readouterr().out
    assert status == 1  # buffer-compare's 20 % regression fails the gate
    if output_format == "json":
        assert json.loads(printed)["verdict"] == "fail" and len(json.loads(printed)["rows"]) == 3
    if output_format == "csv":
        assert printed.startswith(",".join(CSV_COLUMNS)) and printed.count("\n") == 4
    report_command.report_results([str(run_dir)], config_path=tmp_path / "absent.yml", dry_run=True)
    assert capsys.readouterr().out.startswith("<!-- benchgate:comment -->")  # --dry-run prints the comment
