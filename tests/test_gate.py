"""The gate: regression AND corrected p below the threshold AND |effect| >= minimum; verdict and exit statuses."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchgate import results, stats
from benchgate.cli import main
from benchgate.report import gatelines
from benchgate.report import tables as report
from benchgate.stats import analysis, gate

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
    for column in stats.COMPARISON_COLUMNS:  # compare.R's other columns, as a table of one sample a side
        if column not in frame:
            frame[column] = False if column in ("incomplete", "constant") else 1.0
    return frame[stats.COMPARISON_COLUMNS]


def gating(rows, **policy) -> list[bool]:
    return analysis.compare_r_table(table(rows), gate.GatePolicy(**policy))["gating"].tolist()


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
    gated = analysis.compare_r_table(table([("a.js", -12.345, 1e-6)]), gate.GatePolicy(min_effect=3))
    assert gated.loc[0, "gate_reason"] == "-12.35 % regression, Holm-adjusted p = 1e-06 < 0.001 (***), |effect| >= 3 %"
    plain = analysis.compare_r_table(table([("a.js", -1.0, 0.004)]), gate.GatePolicy(threshold="**", correction="none"))
    assert plain.loc[0, "gate_reason"] == "-1.00 % regression, p = 0.004 < 0.01 (**)"


def test_rules_by_glob_override_or_ignore():
    rows = [("buffers/a.js", -5.0, 0.004), ("http/b.js", -5.0, 0.004), ("http/c.js", -5.0, 1e-9)]
    rules = (gate.GateRule("buffers/*", threshold="**"), gate.GateRule("http/c.js", ignore=True))
    gated = analysis.compare_r_table(table(rows), gate.GatePolicy(correction="none", rules=rules))
    assert gated["gating"].tolist() == [True, False, False]
    assert gated["ignored"].tolist() == [False, False, True]


def test_compare_r_table_matches_the_rules_once(monkeypatch):
    calls = []
    monkeypatch.setattr(analysis, "row_rules", lambda *args: calls.append(args) or gate.row_rules(*args))
    analysis.compare_r_table(table([("buffers/a.js", -5.0, 0.004)]), gate.GatePolicy())
    assert len(calls) == 1  # decisions_table takes the rules compare_r_table matched


@pytest.mark.parametrize(
    "policy", [{"threshold": "****"}, {"correction": "bonferroni"}, {"min_effect": -1.0}, {"min_effect": float("nan")}]
)
def test_bad_policies_are_refused(policy):
    with pytest.raises(ValueError):
        gate.GatePolicy(**policy)


def test_verdict():
    assert analysis.verdict(analysis.compare_r_table(table([("a.js", -5.0, 1e-9)]), gate.GatePolicy())) == "fail"
    assert analysis.verdict(analysis.compare_r_table(table([("a.js", 5.0, 1e-9)]), gate.GatePolicy())) == "pass"


def test_constant_regression_where_compare_r_aborts_still_gates():
    comparisons = stats.compare_samples(results.read_samples([FIXTURES / "constant.csv"]))
    gated = analysis.compare_r_table(comparisons, gate.GatePolicy()).set_index("configuration")
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
    gated = analysis.compare_r_table(comparisons, gate.GatePolicy())
    failing = set(gated.loc[gated["gating"], "filename"] + " " + gated.loc[gated["gating"], "configuration"])
    assert failing == {
        "group0/bench-0.js n=1000000 variant=3",
        "group2/bench-2.js n=1000000 variant=11",
        "group4/bench-4.js n=1000000 variant=7",
    }
    raw = analysis.compare_r_table(comparisons, gate.GatePolicy(threshold="*", correction="none"))
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
        raw_failures += analysis.verdict(analysis.compare_r_table(noise, gate.GatePolicy(correction="none"))) == "fail"
        holm_failures += analysis.verdict(analysis.compare_r_table(noise, gate.GatePolicy())) == "fail"
    assert 0.10 < raw_failures / reports < 0.27
    assert holm_failures <= 2  # expected 0.15 at most (0.05 % per report)


# The gate every command applies: decisions from the samples (benchgate.stats.decisions).


def lognormal_rows(rng, rows: list[tuple[str, float, float, int]]) -> pd.DataFrame:
    """Samples for (filename, sigma, change, runs) rows, one configuration each, in compare.js's columns."""
    records = []
    for filename, sigma, change, runs in rows:
        for side, shift in (("base", 0.0), ("head", np.log1p(change))):
            for rate in np.exp(np.log(1e5) + shift + sigma * rng.standard_normal(runs)):
                records.append((side, filename, "n=1", float(rate), 0.1))
    samples = pd.DataFrame(records, columns=["side", "filename", "configuration", "rate", "time"])
    samples["side"] = pd.Categorical(samples["side"], categories=["base", "head"])
    return samples


def decided(samples: pd.DataFrame, **policy) -> pd.DataFrame:
    return analysis.analyze(analysis.RunData(samples), gate.GatePolicy(**policy)).table.set_index("filename")


def test_with_samples_the_gate_follows_the_decisions():
    rng = np.random.default_rng(10)
    samples = lognormal_rows(
        rng,
        [
            ("slower.js", 0.01, -0.2, 30),
            ("faster.js", 0.01, 0.2, 30),
            ("same.js", 0.01, 0.0, 30),
            ("noisy.js", 0.3, 0.0, 5),
        ],
    )
    gated = decided(samples)
    assert gated["decision"].to_dict() == {
        "slower.js": "regression",
        "faster.js": "improvement",
        "same.js": "unchanged",
        "noisy.js": "inconclusive",
    }
    assert gated["gating"].to_dict() == {"slower.js": True, "faster.js": False, "same.js": False, "noisy.js": False}
    assert gated["undecided"].to_dict() == {"slower.js": False, "faster.js": False, "same.js": False, "noisy.js": True}
    assert gated.loc["slower.js", "gate_reason"].startswith("-19.8 % [-20.6, -19.1]")
    assert " regression: yuen_log p = " in gated.loc["slower.js", "gate_reason"]
    assert analysis.verdict(gated.reset_index()) == "fail"
    assert analysis.verdict(decided(samples[samples["filename"] != "slower.js"]).reset_index()) == "inconclusive"


def test_thresholds_min_effect_and_rules_set_each_rows_level():
    rng = np.random.default_rng(11)
    # t of about 4.5: significant at * and ** (after Holm over 2 rows) but not at ***
    samples = lognormal_rows(rng, [("edge.js", 0.01, -0.012, 30), ("big.js", 0.01, -0.3, 30)])

    def gating(**policy) -> list[bool]:
        return decided(samples, **policy).loc[["edge.js", "big.js"], "gating"].tolist()

    assert gating() == [False, True]
    assert gating(threshold="*") == [True, True]
    assert gating(threshold="*", min_effect=5) == [False, True]
    ignored = decided(samples, threshold="*", rules=(gate.GateRule("big.js", ignore=True),))
    assert ignored["gating"].to_dict() == {"big.js": False, "edge.js": True} and ignored.loc["big.js", "ignored"]
    assert gating(threshold="*", rules=(gate.GateRule("edge.js", threshold="***"),)) == [False, True]
    strict = decided(samples, threshold="*", rules=(gate.GateRule("edge.js", threshold="***"),))
    assert strict.loc["edge.js", "ci_level"] < strict.loc["big.js", "ci_level"]


def test_threshold_off_shows_decisions_and_never_fails_or_is_inconclusive():
    rng = np.random.default_rng(12)
    samples = lognormal_rows(rng, [("slower.js", 0.01, -0.2, 30), ("noisy.js", 0.3, 0.0, 5)])
    gated = decided(samples, threshold="off")
    assert gated["decision"].to_dict() == {"noisy.js": "inconclusive", "slower.js": "regression"}
    assert not gated["gating"].any() and not gated["undecided"].any()
    assert analysis.verdict(gated.reset_index()) == "pass"
    off_rule = decided(samples, rules=(gate.GateRule("noisy.js", threshold="off"),))
    assert not off_rule["undecided"].any() and analysis.verdict(off_rule.reset_index()) == "fail"


def test_inconclusive_above_is_the_floor_an_interval_must_rule_out():
    """Strict (noisy: strict, no coarser gating), so that the floor alone decides."""
    rng = np.random.default_rng(13)
    samples = lognormal_rows(rng, [("a.js", 0.04, 0.0, 10)])
    # At 99.95 % the one-sided bound is the low end of the one-row report's two-sided 99.9 % interval: the old rule.
    row = decided(samples, unchanged_confidence=99.95, max_resolution=None).loc["a.js"]
    assert row["decision"] == "inconclusive" and row["ci_low"] < -10 and row["runs_needed"] > 10
    wide = decided(samples, inconclusive_above=-row["ci_low"] + 1, unchanged_confidence=99.95, max_resolution=None).loc[
        "a.js"
    ]
    assert wide["decision"] == "unchanged"
    assert (
        decided(samples, inconclusive_above=-row["ci_low"] - 0.01, unchanged_confidence=99.95, max_resolution=None).loc[
            "a.js", "decision"
        ]
        == "inconclusive"
    )
    # At the default 95 % the bound is tighter than that interval: the same row rules out 10 %, and shows it.
    default = decided(samples).loc["a.js"]
    assert default["decision"] == "unchanged" and default["ci_low"] == row["ci_low"]
    with pytest.raises(ValueError):
        gate.GatePolicy(inconclusive_above=0)
    with pytest.raises(ValueError, match="unchanged-confidence"):
        gate.GatePolicy(unchanged_confidence=40)


def test_the_issues_four_run_tojson_regression_never_passes(capsys):
    """Node 20.0.0 vs 18.16.0, buffer-tojson len=4096, 4 runs a side: compare.R gives ** (its *** gate passes it)."""
    fixture = FIXTURES / "issue-tojson-n4.csv"
    samples = results.read_samples([fixture])
    comparisons = stats.compare_samples(samples)
    row = comparisons.set_index("configuration").loc["len=4096 n=10000"]
    assert row["confidence"] == "**" and row["improvement"] < -85
    assert not analysis.compare_r_table(comparisons, gate.GatePolicy())["gating"].any()  # compare.R's p: a pass
    assert main(["analyze", str(fixture), "--gate", "--no-bars"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"-91\.2 % \[-97\.7, -65\.8\] regression +FAIL", out) and "gate: FAIL: 1 of 4" in out


def noise_csv(path: Path, lines: list[str], rng, *, rows: int, sigma: float, runs: int) -> Path:
    """``lines`` (a compare.js CSV) with ``rows`` A/A comparisons of log-normal noise appended, written to ``path``."""
    lines = list(lines)
    for index in range(rows):
        for side in ("old", "new"):
            for rate in np.exp(np.log(1e5) + sigma * rng.standard_normal(runs)):
                lines.append(f'"{side}","noise/file{index // 10}.js","n={index}",{rate:.6f},0.1')
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_issues_row_among_400_is_inconclusive_not_a_pass(tmp_path, capsys):
    """The same 4-run row in a report of 400 comparisons: too few runs to reject at 0.001 / 400, and too few
    to rule out a 10 % regression almost anywhere: inconclusive, exit 6, the row named with the runs it needs."""
    lines = (FIXTURES / "issue-tojson-n4.csv").read_text().splitlines()
    path = noise_csv(tmp_path / "issue-400.csv", lines, np.random.default_rng(14), rows=396, sigma=0.15, runs=4)
    assert main(["analyze", str(path), "--gate", "--no-bars"]) == 6
    out = capsys.readouterr().out
    undecided = int(re.search(r"gate: INCONCLUSIVE: (\d+) of 400 comparisons undecided", out).group(1))
    # 4 runs at 15 % noise cannot reach 10 %: the rows are gated at the ceiling, 25 %, and most rule that out; the
    # ones that do not hold the verdict (so does the tojson row). Strict, most 4-run rows are undecided.
    assert out.count("  UNDECIDED ") == 20 and 30 < undecided < 200 and "gated coarser than their target" in out
    assert "COARSE noise/file" in out and "unchanged (≤ 25 %)" in out
    run_data = analysis.RunData(results.read_samples([path]))
    strict = analysis.analyze(run_data, gate.GatePolicy(max_resolution=None)).table
    assert 300 < int(strict["undecided"].sum()) < 400
    status = main(["analyze", str(path), "--gate", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    tojson = next(row for row in document["rows"] if row["configuration"] == "len=4096 n=10000")
    assert status == 6 and document["verdict"] == "inconclusive"
    assert tojson["decision"] == "inconclusive" and tojson["change"] < -85 and tojson["runs_needed"] > 4


def test_an_undecided_row_names_its_own_rules_min_effect():
    rng = np.random.default_rng(13)
    samples = lognormal_rows(rng, [("a.js", 0.04, 0.0, 10), ("b.js", 0.04, 0.0, 10)])
    policy = gate.GatePolicy(
        rules=(gate.GateRule("b.js", min_effect=3),), unchanged_confidence=99.95, max_resolution=None
    )
    gated = analysis.analyze(analysis.RunData(samples), policy).table
    assert gated["undecided"].tolist() == [True, True]
    floors = {row.name.split()[0]: row.floor for row in gatelines.listed_rows(gated, 10.0)["undecided"]}
    assert floors == {"a.js": 10.0, "b.js": 3.0}  # the policy's floor for a.js, b.js's rule for b.js


def test_a_row_too_noisy_to_gate_is_named_and_the_noise_budget_decides_what_it_does():
    """40 % noise: even 60 runs a side could not rule out 10 % (its noisy_mde is above it). By default it keeps the
    verdict inconclusive under noisy: strict; beyond a budget of noisy: {max-sigma: 20%} (or a rule's) it no longer
    holds it. By default it is gated at the ceiling, 25 %, which 30 runs at its noise rule out: it passes, named."""
    rng = np.random.default_rng(21)
    rows = [(f"quiet{index}.js", 0.01, 0.0, 30) for index in range(5)] + [("loud.js", 0.4, -0.05, 30)]
    samples = lognormal_rows(rng, rows)
    gated = decided(samples, max_resolution=None)
    loud = gated.loc["loud.js"]
    assert loud["decision"] == "inconclusive" and loud["noisy"] and loud["undecided"]
    assert 30 < loud["sigma"] < 50 and loud["noisy_mde"] > 10
    assert not gated.drop(index="loud.js")["noisy"].any()
    assert analysis.verdict(gated.reset_index()) == "inconclusive"
    # What the report says: the row apart from the undecided ones, with the rule that would settle it.
    policy = gate.GatePolicy(max_resolution=None)
    (item,) = gatelines.listed_rows(gated.reset_index(), 10.0)["noisy"]
    assert item.sentence.startswith(f"too noisy to gate at 10 %: σ {loud['sigma']:.1f} %")
    assert item.sentence.endswith("it keeps the verdict inconclusive")  # it holds the verdict
    assert f"min-effect: {math.ceil(loud['noisy_mde'])}%" in item.rule
    assert gatelines.listed_rows(gated.reset_index(), 10.0)["undecided"] == []
    text = "\n".join(report.gate_summary(gated.reset_index(), policy))
    assert "gate: INCONCLUSIVE: 1 of 6 comparisons undecided" in text and "  NOISY loud.js n=1: too noisy" in text
    for budget in ({"noisy_max_sigma": 20.0}, {"rules": (gate.GateRule("loud*", max_sigma=20.0),)}):
        spared = decided(samples, max_resolution=None, **budget)
        assert spared.loc["loud.js", "noisy"] and not spared.loc["loud.js", "undecided"]
        assert analysis.verdict(spared.reset_index()) == "pass"
        assert "beyond the noise budget" in gatelines.listed_rows(spared.reset_index(), 10.0)["noisy"][0].sentence
    # A budget above the row's noise spares nothing: it still holds the verdict.
    assert analysis.verdict(decided(samples, max_resolution=None, noisy_max_sigma=60.0).reset_index()) == "inconclusive"
    default = decided(samples).loc["loud.js"]
    assert default["decision"] == "unchanged" and default["coarse"] and default["gated_at"] == 25
    # A regression is never spared: the budget concerns undecided rows only.
    failing = decided(lognormal_rows(rng, [("loud.js", 0.4, -0.9, 30)]), noisy_max_sigma=1.0)
    assert failing.loc["loud.js", "decision"] == "regression" and analysis.verdict(failing.reset_index()) == "fail"


def test_analyze_takes_the_unchanged_confidence(tmp_path, capsys):
    """30 runs at 7 % noise, 40 rows: a pass at 95 %, with the rows whose noise cannot reach 10 % by 30 runs gated
    coarser; at 99.999 % every row needs a coarser gate (all named), and the run still passes."""
    header = ['"binary","filename","configuration","rate","time"']
    path = noise_csv(tmp_path / "aa.csv", header, np.random.default_rng(22), rows=40, sigma=0.07, runs=30)
    assert main(["analyze", str(path), "--gate", "--no-bars"]) == 0

    def coarse() -> int:
        return int(re.search(r"; (\d+) gated coarser than their target", capsys.readouterr().out).group(1))

    at_95 = coarse()
    assert main(["analyze", str(path), "--gate", "--no-bars", "--unchanged-confidence", "99.999"]) == 0
    assert at_95 < coarse() == 40
    assert main(["analyze", str(path), "--unchanged-confidence", "100"]) == 2
    assert "key 'unchanged-confidence': must be a confidence from 50 to 99.999 percent" in capsys.readouterr().err
