"""`benchgate analyze FILE... [-]`: compare.R's statistics and the gate over compare.js CSVs."""

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from benchgate import results
from benchgate.config import flags
from benchgate.errors import EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, EXIT_OK, InputError
from benchgate.report.markup import FORMATS
from benchgate.report.tables import render
from benchgate.stats import gate
from benchgate.stats.analysis import Analysis, RunData, Verdict, analyze


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze",
        help="analyse compare.js CSV files like compare.R, and gate",
        description="Welch's t-test per configuration, as Node's benchmark/compare.R, and the gate's decision.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="compare.js CSV files (shards of one run); - is stdin")
    parser.add_argument("--base-label", default="old", metavar="LABEL", help="binary label of the base (default old)")
    parser.add_argument("--head-label", default="new", metavar="LABEL", help="binary label of the head (default new)")
    flags.add_flags(parser, "analyze")
    parser.add_argument("--rule", default="gate", choices=list(gate.RULES), help="gate (default) or compare.R's")
    parser.add_argument("--gate", action="store_true", help="exit 1 when the gate fails, 6 when inconclusive")
    parser.add_argument("--format", default="text", choices=FORMATS, help="output format (default text)")
    parser.add_argument("--no-bars", action="store_true", help="text format: leave out the bar chart")
    parser.add_argument("--plot", type=Path, metavar="FILE.svg", help="also draw the charts")
    parser.set_defaults(handler=_handler)


def write_charts(path: Path, analysis: Analysis) -> list[Path]:
    """Draw both charts (``report.plots.chart_files``), write them and name them on stderr; returns the paths."""
    from benchgate.report import plots  # Jinja2 and the history site's model: loaded only for a chart

    files = plots.chart_files(path, analysis.table, analysis.samples, analysis.policy)
    for file, data in files.items():
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
    print(f"benchgate: charts: {', '.join(str(file) for file in files)}", file=sys.stderr)
    return list(files)


def _handler(args: argparse.Namespace) -> int:
    policy = replace(flags.settings_from_flags(args, "analyze").policy(), rule=args.rule)
    if args.files.count("-") > 1:
        raise InputError("stdin (-) given more than once")
    if args.plot is not None:  # before reading stdin: a bad name is said at once
        from benchgate.report import plots  # as in write_charts

        plots.chart_paths(args.plot)
    samples = results.read_samples(args.files, base_label=args.base_label, head_label=args.head_label)
    analysis = analyze(RunData(samples), policy)
    sys.stdout.write(render(analysis, args.format, bars=not args.no_bars))
    sys.stdout.flush()
    if args.plot is not None:
        write_charts(args.plot, analysis)
    if not args.gate:
        return EXIT_OK
    if analysis.verdict == Verdict.FAIL and analysis.untested is not None:  # the text format says it; json, csv not
        print(f"benchgate: gate failed: {analysis.untested}", file=sys.stderr)
    return {Verdict.FAIL: EXIT_GATE_FAILED, Verdict.INCONCLUSIVE: EXIT_INCONCLUSIVE}.get(analysis.verdict, EXIT_OK)
