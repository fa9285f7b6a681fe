"""The PR comment: golden files for every variant, size limit, and escaping of untrusted text.

Regenerate the goldens after an intended change with
``BENCHGATE_REGENERATE_GOLDEN=1 pytest tests/test_comment.py`` and review the diff.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from commentcases import build_failure_run, by_actor, context, many_rows, run_summary, variants

from benchgate.report import comment, gatelines
from benchgate.results.runrecord import SandboxUse

GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("BENCHGATE_REGENERATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / f"comment-{name}.md"
    if REGENERATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with BENCHGATE_REGENERATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(variants()))
def test_comment_variants_match_goldens(name):
    check_golden(name, comment.render_comment(variants()[name]))


def test_truncated_variant_matches_golden():
    body = comment.render_comment(context(many_rows(120)), limit=9000)
    assert len(body) <= 9000
    check_golden("truncated", body)


def test_pass_and_fail_say_so_first():
    cases = variants()
    first = {name: comment.render_comment(ctx).splitlines()[1] for name, ctx in cases.items()}
    assert first["pass"].startswith("### ✅") and first["failed-benchmarks"].startswith("### ❌")
    assert first["fail"] == "### ❌ benchgate: 1 regression fails the gate"
    assert first["accepted"].startswith("### ⚠️")
    assert first["inconclusive"] == "### ❓ benchgate: inconclusive: 1 comparison undecided, none regresses"
    assert all(body.startswith(comment.MARKER) for body in map(comment.render_comment, cases.values()))


def test_only_an_unsandboxed_untrusted_head_is_warned_about():
    warning = "The pull request's code ran without the sandbox"
    assert warning in comment.render_comment(variants()["unsandboxed"])
    assert not any(warning in comment.render_comment(ctx) for name, ctx in variants().items() if name != "unsandboxed")
    for use in (
        SandboxUse(used=True, untrusted_head=True, tool="bwrap", version="0.8.0"),
        SandboxUse(used=False, untrusted_head=False, reason="the head is trusted"),  # given binaries, --trusted
    ):
        assert warning not in comment.render_comment(context(run=run_summary(sandbox=use)))
    unsandboxed = run_summary(sandbox=SandboxUse(used=False, untrusted_head=True, reason="--no-sandbox"))
    broken = replace(build_failure_run("head"), sandbox=unsandboxed.sandbox)
    assert warning in comment.render_comment(context([], run=broken))  # the head's build ran unconfined too


def test_fail_lists_regressions_first_and_why():
    body = comment.render_comment(variants()["fail"])
    table = body.split("#### Significant changes")[1].split("<details>")[0]
    assert table.index("buffer-compare.js n=1000000 size=16386") < table.index("buffer-tojson.js")
    assert "regression: yuen\\_log p = 1e-07" in body and "❌ fails" in table
    assert table.index("streams/creation.js") < table.index("buffer-tojson.js")  # undecided next, then the rest
    assert "|█" in body and "+482.81% \\*\\*\\*" not in body and "+482.81% ***" in body


def test_ignored_label_says_why():
    body = comment.render_comment(variants()["ignored-label"])
    assert "🚫 ignored" in body and "@\u2060drive-by" in body and "lacks write" in body
    assert "⚠️ invalid" in body and "must be a whole number" in body
    # The ignored threshold=off did not loosen anything: the regression still fails.
    assert body.splitlines()[1].startswith("### ❌")


def outside_code(body: str) -> str:
    """The markdown that GitHub interprets: fenced blocks and code spans removed."""
    body = re.sub(r"^ *```text\n.*?^ *```$", "", body, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", body)


def test_untrusted_text_cannot_inject_markup():
    body = comment.render_comment(variants()["failed-benchmarks"])
    interpreted = outside_code(body)
    assert "<script>" not in interpreted and "@nodejs" not in interpreted
    assert "``` injected" not in body
    # No mention of a team can ping anyone: it sits inside a code block.
    stderr_block = body.split("<details><summary>stderr</summary>")[1].split("</details>")[0]
    assert "@nodejs/tsc" in stderr_block and stderr_block.count("```") == 2


def test_comment_under_github_limit_keeps_verdict_and_gating_rows():
    ctx = context(many_rows(6000))
    full = comment.render_comment(ctx, limit=None)
    assert len(full) > comment.GITHUB_COMMENT_LIMIT
    body = comment.render_comment(ctx)
    assert len(body) <= comment.GITHUB_COMMENT_LIMIT
    assert body.startswith(comment.MARKER) and "regressions fail the gate" in body
    for index in range(0, 6000, 97):
        assert f"file{index}.js n={index} " in body
    assert "shortened to fit GitHub's limit" in body and "job summary" in body


def test_pipe_in_configuration_does_not_break_the_table():
    body = comment.render_comment(variants()["pass"])
    row = next(line for line in body.splitlines() if line.startswith("| `url/url-parse.js"))
    assert "a\\|b" in row and row.count(" | ") == 8


def outside_code_spans(markdown: str) -> str:
    """The markdown with every code span and code block removed: what GitHub would render as text."""
    without_blocks = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", without_blocks)


def test_label_text_renders_only_inside_code_spans():
    # A label's text is anyone-with-triage's input: a URL would render as a link, #1 as an issue reference.
    hostile = {
        "benchmark:threshold=https://evil.example/x": "drive-by",
        "benchmark:#1": "drive-by",
        "benchmark:filter=@nodejs/tsc": "drive-by",
        "benchmark:min-effect=3%": "drive-by",
        "benchmark:min-effect=[x](https://evil.example)": "drive-by",
    }
    body = comment.render_comment(context(decision=by_actor(hostile, set())))
    labels_section = body.split("#### Labels")[1].split("<sub>")[0]
    assert labels_section.count("⚠️ invalid") == 4
    visible = outside_code_spans(labels_section)
    for fragment in ("evil.example", "#1", "@nodejs", "https"):
        assert fragment not in visible, fragment


def test_rows_too_noisy_to_gate_are_listed_apart_with_the_rule_that_settles_them():
    columns = {"undecided": True, "noisy": True, "coarse": False, "decision": "inconclusive", "min_effect": 0.0}
    row = {"filename": "http/*@x.js", "configuration": "`a`", "sigma": 14.23, "noisy_mde": 18.31, **columns}
    gated = pd.DataFrame([row]).assign(ci_low=math.nan, ci_high=math.nan, gated_at=math.nan)
    (item,) = gatelines.listed_rows(gated, 10.0)["noisy"]
    lines = gatelines.listed_lines("noisy", [item])
    assert lines[1] == "Too noisy to gate (1), apart from the undecided rows:"
    assert lines[3] == (
        "- 🔊 `http/*@x.js 'a'`: too noisy to gate at 10 %: σ 14.2 %; the smallest regression it could rule out by "
        "max-runs is 18.3 %; it keeps the verdict inconclusive; settled by "
        "`{match: 'http/*@x.js', min-effect: 19%} in rules, or noisy: {max-sigma: 14.1%}`"
    )
    assert gatelines.listed_lines("noisy", []) == []


def test_a_row_gated_coarser_is_counted_in_the_heading_and_named_with_its_sigma_and_resolution():
    from dataclasses import replace as replaced

    ctx = variants()["pass"]
    gated = ctx.gated.copy()
    row = gated.index[gated["filename"] == "url/url-parse.js"][0]
    gated.loc[row, ["gated_at", "sigma", "resolution", "coarse"]] = [18.0, 12.3, 1.4, True]
    body = comment.render_comment(replaced(ctx, gated=gated))
    assert body.splitlines()[1].endswith("(1 comparison gated coarser than their target)")
    assert "Gated coarser than their target (1), their noise could not reach it:" in body
    assert "σ 12.3 % cannot reach 10 % in the planned runs: gated at 18.0 %, it rules out a regression of 1.4 %" in body
    assert "| unchanged (≤ 18 %) |" in body
