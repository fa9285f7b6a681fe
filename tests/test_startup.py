"""What the runner pays before its first benchmark: no pandas, no scipy (they cost about a second)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

NODE_SUITE = Path(__file__).resolve().parent.parent / "examples" / "suite" / "benchmark"


def test_run_command_imports_no_pandas_or_scipy():
    code = (
        "import sys, benchgate.cli as cli; cli.build_parser(only='run'); "
        "print(sorted(m for m in ('pandas', 'scipy') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_analyze_and_report_load_jinja2_only_for_a_chart():
    code = "import sys, benchgate.commands.analyze, benchgate.commands.report; print('jinja2' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "False"


def test_no_analyze_run_that_measured_passes_without_statistics(tmp_path):
    node = shutil.which("node")
    out = tmp_path / "out"
    completed = subprocess.run(
        [sys.executable, "-m", "benchgate", "run", "strings", "--benchmark-dir", str(NODE_SUITE)]
        + ["--base-binary", node, "--head-binary", node, "--set", "n=200", "--runs", "2"]
        + ["--no-progress", "--no-analyze", "--output", str(out)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == ""
    assert "statistics skipped (--no-analyze)" in completed.stderr.splitlines()[-1]
    record = json.loads((out / "run.json").read_text())
    assert record["complete"] is True and record["samples"] > 0
