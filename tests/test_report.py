"""Rendering: compare.R's text table, bars, markdown, the JSON shape and CSV."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from benchgate import results, stats
from benchgate.report import tables as report
from benchgate.stats import analysis, gate

FIXTURES = Path(__file__).parent / "fixtures" / "analyze"
ROW_KEYS = {
    "filename",
    "configuration",
    "n_base",
    "n_head",
    "mean_base",
    "mean_head",
    "improvement",
    "p_value",
    "p_adjusted",
    "df",
    "confidence",
    "accuracy",
    "gating",
    "decision",
    "change",
    "ci_low",
    "ci_high",
    "ci_level",
    "gate_p",
    "mde",
    "sigma",
    "noisy_mde",
    "runs_needed",
    "noisy",
    "resolution",
    "gated_at",
    "coarse",
}


def gated_fixture(name: str, **policy) -> tuple[pd.DataFrame, gate.GatePolicy]:
    """The table ``benchgate analyze`` renders: compare.R's columns and the gate's decisions from the samples."""
    chosen = gate.GatePolicy(**policy)
    samples = results.read_samples([FIXTURES / f"{name}.csv"])
    return analysis.analyze(analysis.RunData(samples), chosen).table, chosen


def test_number_formats_are_compare_rs():
    assert report.format_improvement(-11.4153) == "-11.42 %"
    assert report.format_improvement(-0.001) == "-0.00 %"  # C's printf, as R's sprintf
    assert report.format_improvement(math.nan) == "NaN %"
    assert report.format_accuracy(1.4054) == "±1.41%"
    assert report.format_accuracy(2.4354) == "±2.44%"
    assert report.format_accuracy(math.nan) == "NA"


def test_text_has_table_note_bars_and_gate_lines():
    gated, policy = gated_fixture("many")
    text = report.render_text(gated, policy)
    table, note, chart, gate_lines = text.rstrip("\n").split("\n\n")
    assert table.splitlines()[0].split()[-3:] == ["[interval]", "decision", "gate"] and len(table.splitlines()) == 121
    assert "there are 120 comparisons" in note and "6.00 false positives" in note
    assert len(chart.splitlines()) == 121 and chart.splitlines()[0].strip().startswith("-")
    lines = gate_lines.splitlines()
    assert lines[0] == "gate: FAIL: 3 of 120 comparisons regress at *** after Holm correction"
    assert lines[1] == "  decisions (yuen_log): 3 regression, 2 improvement, 115 unchanged"
    assert all(line.startswith("  FAIL group") and "regression: yuen_log p = " in line for line in lines[2:5])
    assert lines[5] == "resolution (the smallest regression the evidence rules out, per file, largest first):"
    assert len(lines) == 6 + 6 and all(" could not have been seen with 30 runs" in line for line in lines[6:])


def test_text_names_undecided_rows_with_the_runs_they_need():
    # 5 runs a side: at the default 95 % every row rules out 10 %; at 99.99 % twelve cannot.
    assert report.gate_summary(*gated_fixture("sorting"))[0].startswith("gate: pass: no regression at ***")
    gated, policy = gated_fixture("sorting", unchanged_confidence=99.99, max_resolution=None)
    lines = report.gate_summary(gated, policy)
    assert lines[0] == "gate: INCONCLUSIVE: 12 of 15 comparisons undecided at *** after Holm correction, none regresses"
    undecided = [line for line in lines if line.startswith("  UNDECIDED ")]
    assert len(undecided) == 12 and all("could not rule out a 10 % regression; about " in line for line in undecided)
    assert report.render_markdown(gated, policy).startswith("**benchgate** ❓ INCONCLUSIVE: 12 of 15")
    wider = report.gate_summary(*gated_fixture("sorting", inconclusive_above=60.0, unchanged_confidence=99.99))
    assert wider[0].startswith("gate: pass: no regression at ***")
    # By default the rows that 5 runs cannot bring to 10 % are gated at what they reach, counted and named.
    coarse = report.gate_summary(*gated_fixture("sorting", unchanged_confidence=99.99))
    count = int(re.search(r"; (\d+) gated coarser than their target, at most 25 %", coarse[0]).group(1))
    assert count == sum(line.startswith("  COARSE ") for line in coarse) > 0
    assert count + int(re.search(r"(\d+) of 15 comparisons undecided", coarse[0]).group(1)) <= 15


def test_text_lists_incomplete_and_constant_rows():
    gated, policy = gated_fixture("small-n")
    text = report.render_text(gated, policy)
    incomplete = [line for line in text.splitlines() if line.startswith("incomplete (")]
    assert incomplete == [
        "incomplete (fewer than 2 samples on a side, not tested): 4: small/n.js n_new=1, small/n.js n_old=1, "
        "small/n.js only-new, small/n.js only-old"
    ]
    gated, policy = gated_fixture("constant")
    text = report.render_text(gated, policy)
    assert "constant rates on both sides" in text and "'data are essentially constant'" in text
    assert "  FAIL constant/rates.js slower: -10.0 % [-10.0, -10.0] regression: yuen_log p = 0 <" in text


def test_a_failed_run_reads_fail_not_pass_whatever_the_statistics_found():
    gated, policy = gated_fixture("many", threshold="off")
    assert report.gate_summary(gated, policy)[0].startswith("gate: off")
    gated, policy = gated_fixture("sorting", min_effect=50.0)
    assert not gated["gating"].any()
    assert report.gate_summary(gated, policy)[0].startswith("gate: pass: no regression at ***")
    problems = ("2 benchmark process(es) failed on the head where the base succeeded", "the run did not complete")
    text = report.render_text(gated, policy, problems=problems)
    gate_lines = text.rstrip("\n").split("\n\n")[-1].splitlines()
    assert gate_lines[0] == f"gate: FAIL: {problems[0]}; {problems[1]}"
    assert gate_lines[1].startswith("  statistics: no regression at *** after Holm correction, minimum effect 50 % (")
    assert "pass" not in text
    gated, policy = gated_fixture("many")
    lines = report.gate_summary(gated, policy, problems[:1])
    assert lines[:2] == [
        f"gate: FAIL: {problems[0]}",
        "  statistics: FAIL: 3 of 120 comparisons regress at *** after Holm correction",
    ]
    assert all(line.startswith("  FAIL group") for line in lines[3:6])


def test_control_characters_in_names_stay_on_one_line():
    assert report.row_name("a.js", "x=1\ny=2\t") == "a.js x=1\\ny=2\\t"


def test_bars_scale_symmetric_to_the_largest_change():
    chart = report.render_bars(
        [report.Bar("up", 50.0, "***"), report.Bar("down", -25.0, "*"), report.Bar("none", math.nan, "NA")],
        half_width=10,
    )
    axis, up, down, none = chart.splitlines()
    assert axis == "     -50.0%    0%   +50.0%"
    assert up == "up   " + " " * 10 + "|" + "█" * 10 + "   +50.00% ***"
    assert down == "down " + "░" * 5 + "█" * 5 + "|" + " " * 10 + "   -25.00% *"
    assert none == "none " + " " * 10 + "|" + " " * 10 + "        NA NA"
    assert axis[up.index("|") :].startswith("0%") and up.index("|") == down.index("|") == 15
    assert len(axis) == up.index("|") + 11  # "+50.0%" ends over the bar's last cell


def test_bar_scale_rounds_up_and_never_divides_by_zero():
    assert report.scale_for([158.99, -167.65]) == 167.7
    assert report.scale_for([0.0, math.nan]) == 0.1
    assert report.render_bar(0.0, 0.1, 3) == "   |░░░"


def test_markdown_table_puts_regressions_first_and_escapes_names():
    frame = pd.DataFrame(
        {
            "filename": ["a.js", "b.js", "c.js", "d.js", "e.js"],
            "configuration": ["x=1", "pipe=a|b", "tick=`x`", "@team <b>", "ok"],
            "improvement": [12.0, -3.0, -20.0, -1.0, 0.5],
            "p_value": [1e-9, 1e-9, 1e-9, 0.02, 0.6],
        }
    )
    frame["p_adjusted"] = stats.holm_adjust(frame["p_value"].to_numpy())
    frame["confidence"] = stats.stars(frame["p_value"].to_numpy())
    for k in (1, 2, 3):
        frame[f"accuracy_{k}"] = 1.0 * k
    for column in stats.COMPARISON_COLUMNS:  # the columns this test does not choose
        if column not in frame:
            frame[column] = False if column in ("incomplete", "constant") else 2.0
    gated = analysis.compare_r_table(frame, gate.GatePolicy())
    table = report.render_markdown_table(gated).splitlines()
    assert table[0].startswith("| benchmark | confidence | improvement | accuracy (\\*)")
    names = [line.split(" | ")[0][2:] for line in table[2:]]
    # gating rows worst first, then other starred regressions, then the rest in compare.R order
    assert names == ["`c.js tick='x'`", "`b.js pipe=a\\|b`", "`d.js @team <b>`", "`a.js x=1`", "`e.js ok`"]
    assert [line.replace("\\|", "").count("|") for line in table] == [8] * len(table)  # pipes in names are escaped
    assert table[2].endswith("| ❌ fails |") and table[4].endswith("|  |")


def test_markdown_document_has_verdict_table_reasons_bars_and_note():
    gated, policy = gated_fixture("many")
    text = report.render_markdown(gated, policy)
    assert text.startswith("**benchgate** ❌ FAIL: 3 of 120 comparisons regress at \\*\\*\\* after Holm correction")
    assert report.render_markdown_table(gated) in text
    assert text.count("regression: yuen\\_log p = ") == 3 and "```text" in text  # the reasons, escaped
    assert "| -6.4 % [-9.8, -3.0] | regression | ❌ fails |" in text
    # the rows and the note as the PR comment shows them
    assert "#### Significant changes (11 of 120)" in text and "<details><summary>All 120 comparisons</summary>" in text
    assert "> Be aware that when doing many comparisons" in text and "0.12 at 0.1% (\\*\\*\\*)." in text


def test_json_has_exactly_the_issue_shape():
    gated, policy = gated_fixture("small-n", threshold="**", min_effect=1.5, unchanged_confidence=99.9)
    document = json.loads(report.render_json(gated, policy))
    assert list(document) == [
        "comparisons",
        "threshold",
        "correction",
        "min_effect",
        "verdict",
        "gate_test",
        "inconclusive_above",
        "unchanged_confidence",
        "noisy_max_sigma",
        "mde_power",
        "rows",
    ]
    assert (document["gate_test"], document["inconclusive_above"], document["mde_power"]) == ("yuen_log", 10.0, 0.8)
    assert (document["unchanged_confidence"], document["noisy_max_sigma"]) == (99.9, None)
    assert document["comparisons"] == len(document["rows"]) == 7
    assert (document["threshold"], document["correction"], document["min_effect"]) == ("**", "holm", 1.5)
    assert document["verdict"] == "fail"
    for row in document["rows"]:
        assert set(row) == ROW_KEYS and set(row["accuracy"]) == {"*", "**", "***"}
        assert row["confidence"] in {"", "*", "**", "***", "NA"}
        assert isinstance(row["n_base"], int) and isinstance(row["gating"], bool)
    by_name = {row["configuration"]: row for row in document["rows"]}
    assert by_name["only-old"]["improvement"] is None and by_name["only-old"]["mean_head"] is None
    assert by_name["n_old=1"]["p_value"] is None and by_name["n_old=1"]["accuracy"]["***"] is None
    assert by_name["n_old=1"]["confidence"] == "NA" and isinstance(by_name["n_old=1"]["improvement"], float)
    assert by_name["normal"]["gating"] is True and by_name["normal"]["improvement"] < -1.5
    assert by_name["normal"]["decision"] == "regression" and by_name["normal"]["ci_high"] < 0
    assert by_name["normal"]["ci_low"] < by_name["normal"]["change"] < by_name["normal"]["ci_high"]
    assert by_name["normal"]["gate_p"] < by_name["normal"]["ci_level"] <= 0.01 and by_name["normal"]["mde"] > 0
    assert by_name["only-old"]["decision"] == "incomplete" and by_name["only-old"]["ci_low"] is None
    undecided = by_name["n=2 each"]
    assert undecided["decision"] == "inconclusive" and isinstance(undecided["runs_needed"], int)
    assert by_name["normal"]["runs_needed"] is None


def test_json_p_adjusted_is_the_gates_p():
    gated, _ = gated_fixture("many")
    holm = json.loads(report.render_json(gated, gate.GatePolicy()))["rows"]
    none = json.loads(report.render_json(gated, gate.GatePolicy(correction="none")))["rows"]
    assert [row["p_adjusted"] for row in holm] == pytest.approx(gated["p_adjusted"].tolist(), rel=0)
    assert [row["p_adjusted"] for row in none] == [row["p_value"] for row in none]


def test_json_is_strict_even_for_constant_rows():
    gated, policy = gated_fixture("constant")
    text = report.render_json(gated, policy)
    assert "NaN" not in text and "Infinity" not in text
    rows = {row["configuration"]: row for row in json.loads(text)["rows"]}
    assert rows["slower"]["p_value"] == 0.0 and rows["slower"]["df"] is None and rows["slower"]["gating"]


def test_csv_round_trips_the_json_rows():
    gated, policy = gated_fixture("quoting")
    parsed = list(csv.DictReader(io.StringIO(report.render_csv(gated, policy))))
    document = json.loads(report.render_json(gated, policy))
    assert list(parsed[0]) == report.CSV_COLUMNS
    for line, row in zip(parsed, document["rows"], strict=True):
        assert line["configuration"] == row["configuration"]
        assert float(line["p_value"]) == row["p_value"] and float(line["accuracy_***"]) == row["accuracy"]["***"]
        assert line["gating"] == ("true" if row["gating"] else "false")
