"""The gate: regression AND corrected p below the threshold AND |effect| >= minimum; verdict and exit statuses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchgate import results, stats
from benchgate.cli import main
from benchgate.stats import gate

FIXTURES = Path(__file__).parent / "fixtures" / "analyze"


def table(rows: list[tuple[str, float, float]]) -> pd.DataFrame:
    """A comparison table from (name, improvement %, raw p) rows, Holm over all of them."""
    p = np.array([row[2] for row in rows], dtype=float)
    frame = pd.DataFrame(
        {
            "filename": [row[0] for row in rows],
            "configuration": "n=1",
            "improvement": [row[1] for row in rows],
            "p_value": p,
            "p_adjusted": stats.holm_adjust(p),
            "confidence": stats.stars(p),
        }
    )
    return frame


def gating(rows, **policy) -> list[bool]:
    return gate.apply_gate(table(rows), gate.GatePolicy(**policy))["gating"].tolist()


def test_only_significant_regressions_gate():
    rows = [("slower.js", -5.0, 1e-6), ("faster.js", 5.0, 1e-6), ("noise.js", -5.0, 0.2), ("na.js", -5.0, np.nan)]
    assert gating(rows) == [True, False, False, False]


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [("***", [True, False, False, False]), ("**", [True, True, False, False]), ("*", [True, True, True, False])],
)
def test_threshold_levels_without_correction(threshold, expected):
    rows = [("a.js", -1.0, 0.0009), ("b.js", -1.0, 0.009), ("c.js", -1.0, 0.049), ("d.js", -1.0, 0.05)]
    assert gating(rows, threshold=threshold, correction="none") == expected


def test_threshold_off_never_gates():
    assert gating([("a.js", -50.0, 1e-30)], threshold="off") == [False]


def test_holm_spares_a_raw_star_among_many_comparisons():
    # 400 comparisons of noise plus one raw *** at p = 0.0005: Holm multiplies it by 401.
    rows = [("noise.js", -0.1, 0.5)] * 400 + [("lucky.js", -1.0, 0.0005)]
    assert gating(rows, correction="none")[-1] is True
    assert gating(rows, correction="holm")[-1] is False
    assert gating(rows + [("real.js", -9.0, 1e-9)], correction="holm")[-1] is True


def test_min_effect_is_a_floor_on_the_regression_size():
    rows = [("small.js", -1.99, 1e-9), ("edge.js", -2.0, 1e-9), ("big.js", -7.0, 1e-9)]
    assert gating(rows, min_effect=2.0) == [False, True, True]


def test_reason_says_why():
    gated = gate.apply_gate(table([("a.js", -12.345, 1e-6)]), gate.GatePolicy(min_effect=3))
    assert gated.loc[0, "gate_reason"] == "-12.35 % regression, Holm-adjusted p = 1e-06 < 0.001 (***), |effect| >= 3 %"
    plain = gate.apply_gate(table([("a.js", -1.0, 0.004)]), gate.GatePolicy(threshold="**", correction="none"))
    assert plain.loc[0, "gate_reason"] == "-1.00 % regression, p = 0.004 < 0.01 (**)"


def test_rules_by_glob_override_or_ignore():
    rows = [("buffers/a.js", -5.0, 0.004), ("http/b.js", -5.0, 0.004), ("http/c.js", -5.0, 1e-9)]
    rules = (gate.GateRule("buffers/*", threshold="**"), gate.GateRule("http/c.js", ignore=True))
    gated = gate.apply_gate(table(rows), gate.GatePolicy(correction="none", rules=rules))
    assert gated["gating"].tolist() == [True, False, False]
    assert gated["ignored"].tolist() == [False, False, True]


@pytest.mark.parametrize(
    "policy", [{"threshold": "****"}, {"correction": "bonferroni"}, {"min_effect": -1.0}, {"min_effect": float("nan")}]
)
def test_bad_policies_are_refused(policy):
    with pytest.raises(ValueError):
        gate.GatePolicy(**policy)


def test_verdict():
    assert gate.verdict(gate.apply_gate(table([("a.js", -5.0, 1e-9)]), gate.GatePolicy())) == "fail"
    assert gate.verdict(gate.apply_gate(table([("a.js", 5.0, 1e-9)]), gate.GatePolicy())) == "pass"


def test_constant_regression_where_compare_r_aborts_still_gates():
    comparisons = stats.compare_samples(results.read_samples([FIXTURES / "constant.csv"]))
    gated = gate.apply_gate(comparisons, gate.GatePolicy()).set_index("configuration")
    assert gated["gating"].to_dict() == {
        "equal": False,
        "faster": False,
        "normal": False,
        "normal-2": False,
        "slower": True,
    }


@pytest.mark.parametrize(
    ("arguments", "status"),
    [
        (["--gate"], 1),
        ([], 0),
        (["--gate", "--threshold", "off"], 0),
        (["--gate", "--min-effect", "50"], 0),
        (["--gate", "--min-effect", "10"], 1),
        (["--gate", "--threshold", "*", "--correction", "none"], 1),
        (["--gate", "--min-effect", "-3"], 2),
        (["--gate", "--threshold", "****"], 2),
        (["--gate", "--correction", "bonferroni"], 2),
        (["--gate", "--min-effect", "lots"], 2),
    ],
)
def test_exit_statuses(arguments, status, repo_root, capsys):
    try:
        returned = main(["analyze", str(repo_root / "examples" / "compare-sample.csv"), *arguments])
    except SystemExit as exit_:  # argparse refuses bad option values before the command runs
        returned = exit_.code
    assert returned == status
    err = capsys.readouterr().err
    assert (err == "") == (status != 2)
    assert "Traceback" not in err and err.count("\n") <= 1


def test_many_fixture_gates_exactly_its_planted_regressions():
    comparisons = stats.compare_samples(results.read_samples([FIXTURES / "many.csv"]))
    gated = gate.apply_gate(comparisons, gate.GatePolicy())
    failing = set(gated.loc[gated["gating"], "filename"] + " " + gated.loc[gated["gating"], "configuration"])
    assert failing == {"group0/bench-0.js n=1000000 variant=3", "group2/bench-2.js n=1000000 variant=11",
                       "group4/bench-4.js n=1000000 variant=7"}  # fmt: skip
    raw = gate.apply_gate(comparisons, gate.GatePolicy(threshold="*", correction="none"))
    assert raw["gating"].sum() > gated["gating"].sum()  # a raw-p gate also fails on noise / small effects


def test_on_pure_noise_holm_rarely_fails_a_400_row_report_while_raw_p_often_does():
    """The issue's arithmetic: 400 null comparisons at *** fail a raw-p gate in ~18 % of reports (1 - 0.9995^400)."""
    rng = np.random.default_rng(400)
    raw_failures = holm_failures = 0
    reports = 300
    for _ in range(reports):
        noise = table(
            [("noise.js", float(i), float(p)) for i, p in zip(rng.normal(size=400), rng.uniform(size=400), strict=True)]
        )
        raw_failures += gate.verdict(gate.apply_gate(noise, gate.GatePolicy(correction="none"))) == "fail"
        holm_failures += gate.verdict(gate.apply_gate(noise, gate.GatePolicy())) == "fail"
    assert 0.10 < raw_failures / reports < 0.27
    assert holm_failures <= 2  # expected 0.15 at most (0.05 % per report)
