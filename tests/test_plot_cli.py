"""`--plot` on `benchgate analyze` and `benchgate report`: files written, the comment's link, the error paths.

What the charts draw is tests/test_plots.py; here: which files appear, that they are SVGs of a
sensible size, and that stdout and the comment are otherwise unchanged.
"""

from __future__ import annotations

import pytest
from plotting import EXAMPLE, svg_size, write_compare_csv
from rundirs import REGRESSION, write_run

from benchgate.cli import main
from benchgate.commands.report import report_results
from benchgate.report import plots

RUN_URL = "https://github.com/nodejs/node/actions/runs/4242"


@pytest.fixture
def no_actions(tmp_path, monkeypatch):
    """Outside Actions: no run URL, output and summary files in tmp_path."""
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    for name in ("GITHUB_ACTIONS", "GITHUB_EVENT_PATH", "GITHUB_TOKEN", "GITHUB_RUN_ID", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def in_a_run(no_actions, monkeypatch):
    """Inside a workflow run: the comment can link to its artifacts."""
    monkeypatch.setenv("GITHUB_REPOSITORY", "nodejs/node")
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.delenv("GITHUB_RUN_ATTEMPT", raising=False)


def test_analyze_plot_writes_both_charts_and_leaves_stdout_unchanged(tmp_path, capsys):
    for output_format in ("text", "json"):
        assert main(["analyze", str(EXAMPLE), "--format", output_format]) == 0
        plain = capsys.readouterr()
        target = tmp_path / output_format / "bench.svg"
        assert main(["analyze", str(EXAMPLE), "--format", output_format, "--plot", str(target)]) == 0
        charted = capsys.readouterr()
        assert charted.out == plain.out
        assert charted.err == f"benchgate: charts: {target}, {target.parent / 'bench-distributions.svg'}\n"
    forest = svg_size(tmp_path / "text" / "bench.svg")
    distributions = svg_size(tmp_path / "text" / "bench-distributions.svg")
    assert 800 <= forest[0] <= 1400 and 300 <= forest[1] <= 800  # 7 rows under 5 file headers
    assert distributions == forest  # the samples on the forest's rows


def test_analyze_plot_of_200_rows_draws_the_decided_ones_and_their_samples(tmp_path, capsys):
    csv = write_compare_csv(tmp_path / "200.csv")
    assert main(["analyze", str(csv), "--gate", "--plot", str(tmp_path / "big.svg")]) == 1  # it has regressions
    width, height = svg_size(tmp_path / "big.svg")
    # 3 regressions and 2 improvements under their 5 file headers, and a line on the 195 unchanged.
    assert width <= 1400 and (5 + 5) * plots.ROW <= height <= (5 + 5 + 12) * plots.ROW
    assert svg_size(tmp_path / "big-distributions.svg") == (width, height)  # the samples of the same rows
    assert (tmp_path / "big-distributions.svg").stat().st_size < 1_000_000


def test_plot_file_must_be_an_svg(tmp_path, capsys):
    assert main(["analyze", str(EXAMPLE), "--plot", str(tmp_path / "chart.png")]) == 2
    assert (
        capsys.readouterr().err
        == f"benchgate: error: --plot {tmp_path / 'chart.png'}: the chart file name must end in .svg\n"
    )
    assert not list(tmp_path.iterdir())


def test_report_plot_writes_beside_the_report_and_the_comment_links_the_artifacts(tmp_path, in_a_run, capsys):
    run_dir = write_run(tmp_path / "run", REGRESSION)
    artifact = tmp_path / "artifact"
    plain = report_results([str(run_dir)], config_path=tmp_path / "x.yml", dry_run=True)
    result = report_results(
        [str(run_dir)],
        config_path=tmp_path / "x.yml",
        dry_run=True,
        report_path=artifact / "report.md",
        plot_path=artifact / "benchmark.svg",
    )
    assert result.exit_status == plain.exit_status == 1
    assert sorted(path.name for path in artifact.iterdir()) == [
        "benchmark-distributions.svg",
        "benchmark.svg",
        "report.md",
    ]
    names = "`benchmark.svg` and `benchmark-distributions.svg`"
    line = f"Charts: {names} in the [workflow run's artifacts]({RUN_URL}#artifacts)."
    assert line in result.comment and line in (artifact / "report.md").read_text()
    # The charts line is the only difference.
    assert result.comment.replace(line + "\n\n", "") == plain.comment
    assert "Charts:" not in plain.comment


def test_report_without_a_run_url_writes_the_charts_but_links_nothing(tmp_path, no_actions, capsys):
    run_dir = write_run(tmp_path / "run", REGRESSION)
    result = report_results([str(run_dir)], config_path=tmp_path / "x.yml", dry_run=True, plot_path=tmp_path / "b.svg")
    assert (tmp_path / "b.svg").is_file() and (tmp_path / "b-distributions.svg").is_file()
    assert "Charts:" not in result.comment


def test_report_survives_a_chart_that_cannot_be_drawn(tmp_path, in_a_run, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("template exploded")

    monkeypatch.setattr(plots, "chart_files", broken)
    run_dir = write_run(tmp_path / "run", REGRESSION)
    result = report_results([str(run_dir)], config_path=tmp_path / "x.yml", dry_run=True, plot_path=tmp_path / "b.svg")
    assert result.exit_status == 1 and result.verdict == "fail"  # the gate's, not the chart's
    assert "Charts:" not in result.comment
    assert "benchgate: warning: no charts: RuntimeError: template exploded" in capsys.readouterr().err
