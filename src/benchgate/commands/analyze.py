"""`benchgate analyze FILE... [-]`: compare.R's statistics and the gate over compare.js CSVs.

Exit status: 0 (without ``--gate``, whatever the verdict), 2 bad input; with ``--gate``,
1 when a row fails the gate (or nothing could be tested) and 6 when nothing fails but a row
is inconclusive (its interval still allows a regression of ``--inconclusive-above`` or the
min-effect: never a pass).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from benchgate import report, results, stats
from benchgate.config import flags
from benchgate.errors import EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, EXIT_OK, InputError
from benchgate.report import plots
from benchgate.stats import gate

FORMATS = ("text", "markdown", "json", "csv")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="analyse compare.js CSV files like compare.R, and gate",
        description="Welch's t-test per benchmark configuration, as Node's benchmark/compare.R, "
        "and the gate's decision per configuration (Yuen's trimmed test on log rates, Holm-corrected): "
        "regression, improvement, unchanged or inconclusive.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="compare.js CSV files (shards of one run); - is stdin")
    parser.add_argument("--base-label", default="old", metavar="LABEL", help="binary label of the base (default old)")
    parser.add_argument("--head-label", default="new", metavar="LABEL", help="binary label of the head (default new)")
    flags.add_flags(parser, "analyze")
    parser.add_argument(
        "--gate",
        action="store_true",
        help="exit 1 when a row fails the gate or no comparison could be tested, 6 when a row is inconclusive "
        "(0 otherwise)",
    )
    parser.add_argument("--format", default="text", choices=FORMATS, help="output format (default text)")
    parser.add_argument("--no-bars", action="store_true", help="text format: leave out the bar chart")
    parser.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="also draw the charts (needs benchgate[plot]): FILE.png, a forest plot of the changes with their "
        "confidence intervals, and FILE-distributions.png, the samples of base and head per comparison",
    )
    parser.set_defaults(handler=_handler)


def analyze(
    files: Sequence[str],
    *,
    base_label: str = "old",
    head_label: str = "new",
    policy: gate.GatePolicy | None = None,
) -> pd.DataFrame:
    """Read the CSVs, compute the comparison table and the gate's decisions; returns the gated DataFrame."""
    policy = policy or gate.GatePolicy()
    samples = results.read_samples(files, base_label=base_label, head_label=head_label)
    return gate.apply_gate(stats.compare_samples(samples), policy, samples)


def render(gated: pd.DataFrame, policy: gate.GatePolicy, output_format: str = "text", *, bars: bool = True) -> str:
    """The analysis in one of FORMATS."""
    if output_format == "text":
        return report.render_text(gated, policy, bars=bars)
    if output_format == "markdown":
        return report.render_markdown(gated, policy)
    if output_format == "json":
        return report.render_json(gated, policy)
    if output_format == "csv":
        return report.render_csv(gated, policy)
    raise InputError(f"unknown format {output_format!r}; expected one of {', '.join(FORMATS)}")


def write_charts(path: Path, gated: pd.DataFrame, samples: pd.DataFrame, policy: gate.GatePolicy) -> list[Path]:
    """Draw both charts (``report.plots.chart_files``), write them and name them on stderr; returns the paths.

    matplotlib is imported here, so only a ``--plot`` loads it.
    """
    files = plots.chart_files(path, gated, samples, policy)
    for file, data in files.items():
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
    print(f"benchgate: charts: {', '.join(str(file) for file in files)}", file=sys.stderr)
    return list(files)


def _handler(args: argparse.Namespace) -> int:
    policy = flags.settings_from_flags(args, "analyze").policy()
    if args.files.count("-") > 1:
        raise InputError("stdin (-) given more than once")
    if args.plot is not None:  # before reading stdin: a missing extra is said at once
        plots.require_matplotlib()
        plots.chart_paths(args.plot)
    samples = results.read_samples(args.files, base_label=args.base_label, head_label=args.head_label)
    gated = gate.apply_gate(stats.compare_samples(samples), policy, samples)
    sys.stdout.write(render(gated, policy, args.format, bars=not args.no_bars))
    sys.stdout.flush()
    if args.plot is not None:
        write_charts(args.plot, gated, samples, policy)
    verdict = gate.verdict(gated)
    if args.gate and verdict == "fail":
        untested = gate.untested_reason(gated)
        if untested is not None:  # the text format says it too; json and csv would not
            print(f"benchgate: gate failed: {untested}", file=sys.stderr)
        return EXIT_GATE_FAILED
    if args.gate and verdict == "inconclusive":
        return EXIT_INCONCLUSIVE
    return EXIT_OK
