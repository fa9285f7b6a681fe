"""`benchgate analyze FILE... [-]`: compare.R's statistics and the gate over compare.js CSVs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from benchgate import gate, report, results, stats
from benchgate.errors import EXIT_GATE_FAILED, EXIT_OK, InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("analyze", help="analyse compare.js CSV files like compare.R, and gate")
    parser.add_argument("files", nargs="+", metavar="FILE", help="compare.js CSV files; - reads stdin")
    parser.add_argument("--base-label", default="old")
    parser.add_argument("--head-label", default="new")
    parser.add_argument("--threshold", default="***", choices=list(gate.THRESHOLDS))
    parser.add_argument("--correction", default="holm", choices=list(gate.CORRECTIONS))
    parser.add_argument("--min-effect", type=float, default=0.0, metavar="PCT")
    parser.add_argument("--gate", action="store_true", help="exit 1 when a row fails the gate")
    parser.set_defaults(handler=_handler)


def analyze(
    files: Sequence[str],
    *,
    base_label: str = "old",
    head_label: str = "new",
    policy: gate.GatePolicy | None = None,
):
    """Read the CSVs, compute the comparison table and apply the gate; returns the gated DataFrame."""
    policy = policy or gate.GatePolicy()
    samples = results.read_samples(files, base_label=base_label, head_label=head_label)
    return gate.apply_gate(stats.compare_samples(samples), policy)


def _handler(args: argparse.Namespace) -> int:
    try:
        policy = gate.GatePolicy(args.threshold, args.correction, args.min_effect)
    except ValueError as error:
        raise InputError(str(error)) from None
    gated = analyze(args.files, base_label=args.base_label, head_label=args.head_label, policy=policy)
    sys.stdout.write(report.render_text(gated, policy))
    if args.gate and gate.verdict(gated) == "fail":
        return EXIT_GATE_FAILED
    return EXIT_OK
