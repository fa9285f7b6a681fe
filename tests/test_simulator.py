"""tests/perf/simulate_gate.py's quick mode: the whole pipeline of the simulator runs, and adaptive runs stop early."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "perf"))

import node_noise  # noqa: E402
import simulate_gate  # noqa: E402


def test_quick_table_has_every_mode_and_auto_saves_samples_on_quiet_suites(capsys):
    assert simulate_gate.main(["--quick", "--tests", "yuen_log,welch_log", "--no-issue", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    rows = {
        tuple(cell.strip() for cell in line.split("|")[1:3]): line.split("|")
        for line in out.splitlines()
        if line.startswith("| yuen_log") or line.startswith("| welch_log")
    }
    assert set(rows) == {(test, mode) for test in ("yuen_log", "welch_log") for mode in ("fixed-10", "fixed-30")} | {
        ("yuen_log", "auto"),
        ("yuen_log", "auto-per-row"),
    }
    header = next(line for line in out.splitlines() if line.startswith("| test"))
    quiet = [cell.strip() for cell in header.split("|")].index("quiet A/A")
    auto_quiet = float(rows[("yuen_log", "auto")][quiet].strip().rstrip(" %"))
    assert float(rows[("yuen_log", "fixed-30")][quiet].strip().rstrip(" %")) == 100
    assert 20 < auto_quiet < 60  # quiet files settle after 11-15 of up to 60 runs
    # per-row stops: a row no longer waits for the slowest row of its file, on the same samples
    mixed = [cell.strip() for cell in header.split("|")].index("mixed")
    per_row, per_file = (
        float(rows[("yuen_log", mode)][mixed].strip().rstrip(" %")) for mode in ("auto-per-row", "auto")
    )
    assert per_row < per_file
    assert "# auto design: looks 5,6,7,8,9,10,11,12,13,14,15,19,23,29,37,46,60" in out


def test_node_noise_suites_compare_the_old_rule_with_the_new(capsys):
    """The suites at Node's published noise: the shipped quantiles convert to sigma, and at 30 runs the old
    rule leaves far more A/A rows undecided than the one-sided 95 % bound."""
    probabilities, sigmas = node_noise.sigma_quantiles()
    assert probabilities[0] == 0 and probabilities[-1] == 1
    assert np.interp(0.5, probabilities, sigmas) == pytest.approx(0.018, rel=1e-3)  # median sigma 1.8 %
    assert np.interp(0.9, probabilities, sigmas) == pytest.approx(0.083, rel=1e-3)
    drawn = node_noise.draw_sigmas(np.random.default_rng(1), (200_000,))
    assert np.mean(drawn > 0.03) == pytest.approx(0.27, abs=0.01) and np.mean(drawn > 0.05) == pytest.approx(
        0.19, abs=0.01
    )
    argv = ["--node-only", "--node-reports", "10", "--fixed", "30", "--no-auto", "--unchanged-confidence", "old,95"]
    assert simulate_gate.main([*argv, "--no-issue", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[2].strip(): line.split("|") for line in out.splitlines() if line.startswith("| fixed-30")}
    header = [cell.strip() for cell in next(line for line in out.splitlines() if line.startswith("| mode")).split("|")]
    undecided_rows = header.index("A/A rows inconclusive")
    old, new = (float(rows[key][undecided_rows].strip().rstrip(" %")) for key in ("old rule", "95 %"))
    assert old > 5 and new < old / 5


def test_node_suites_put_issue_21s_gate_beside_the_strict_one(capsys):
    """At Node's noise the rows that cannot reach 10 % by 30 runs are gated at what they reach: far more A/A reports
    pass than under noisy: strict, on the same samples; the table has both rules and the projection check."""
    argv = ["--node-only", "--node-reports", "10", "--fixed", "30", "--no-auto", "--no-issue", "--seed", "5"]
    assert simulate_gate.main(argv) == 0
    out = capsys.readouterr().out
    header = [cell.strip() for cell in next(line for line in out.splitlines() if line.startswith("| mode")).split("|")]
    rows = {line.split("|")[3].strip(): line.split("|") for line in out.splitlines() if line.startswith("| fixed-30")}
    assert set(rows) == {"<= 25 %", "strict"}
    passed = header.index("A/A pass (>=95 %)")
    new, old = (float(rows[key][passed].split("%")[0]) for key in ("<= 25 %", "strict"))
    assert new >= 80 and old <= 40
    coarse = header.index("A/A rows passed coarse")
    assert float(rows["<= 25 %"][coarse].strip().rstrip(" %")) > 5 and rows["strict"][coarse].strip() == "0 %"
    assert "projection after 5 runs:" in out and "are decided" in out
