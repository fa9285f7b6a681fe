"""`benchgate run`: run a Node checkout's benchmarks with a base and a head binary, then analyse.

This module only parses the command line; ``benchgate.localrun.run_benchmarks`` does the
run (its options, and the checks made before anything runs, are in ``benchgate.runplan``).
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import fields
from pathlib import Path

from benchgate import releases
from benchgate.commands.build import add_build_options, build_overrides
from benchgate.localrun import run_benchmarks
from benchgate.runplan import FORMATS, RunOptions


def _node_args(text: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(text))
    except ValueError as error:  # an unbalanced quote: say so instead of argparse's "invalid value"
        raise argparse.ArgumentTypeError(f"cannot split {text!r} into flags: {str(error).lower()}") from None


def _category_list(text: str) -> tuple[str, ...] | None:
    return tuple(filter(None, text.split(","))) if text else None


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run Node's benchmark suite with a base and a head binary (like benchmark/compare.js), then analyse",
    )
    parser.add_argument("categories", nargs="*", metavar="CATEGORY", help="benchmark categories, or 'all'")
    parser.add_argument("--benchmark-dir", type=Path, help="the benchmark/ directory (default: ./benchmark)")
    parser.add_argument("--output", "-o", type=Path, required=True, help="directory for results.csv and run.json")
    for side in ("base", "head"):
        parser.add_argument(f"--{side}-binary", metavar="PATH", help=f"the {side} node executable")
        parser.add_argument(f"--{side}-version", metavar="X.Y.Z", help=f"an official release as the {side}")
        parser.add_argument(
            f"--{side}-node-args",
            type=_node_args,
            default=(),
            metavar="ARGS",
            help=f"runtime flags for the {side}, e.g. '--jitless'",
        )
    parser.add_argument(
        "--release-source",
        default="auto",
        choices=releases.SOURCES,
        help="where --*-version binaries come from (auto: dist site, then npm)",
    )
    parser.add_argument(
        "--dist-mirror", default=releases.DEFAULT_DIST_URL, metavar="URL", help="the dist site or a mirror of it"
    )
    parser.add_argument(
        "--filter",
        dest="filters",
        action="append",
        default=[],
        metavar="FILTER",
        help="only files whose name contains this",
    )
    parser.add_argument(
        "--exclude",
        dest="excludes",
        action="append",
        default=[],
        metavar="EXCLUDE",
        help="skip files whose name contains this",
    )
    parser.add_argument(
        "--set", dest="set_args", action="append", default=[], metavar="KEY=VALUE", help="set a benchmark variable"
    )
    parser.add_argument("--runs", type=int, default=30, help="samples per configuration and side (default 30)")
    parser.add_argument("--seed", type=int, help="seed of the schedule's random order (recorded)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="limit for each benchmark process")
    parser.add_argument("--cpuset", metavar="CPUS", help="pin benchmark processes with taskset, e.g. 2-3")
    parser.add_argument("--shard", metavar="I/N", help="run the I-th of N deterministic parts of the files")
    parser.add_argument("--changed-from", metavar="REF", help="pick categories from `git diff REF...HEAD`")
    parser.add_argument("--changed-map", type=Path, metavar="YAML", help="replace the shipped changed-files map")
    parser.add_argument(
        "--changed-default",
        type=_category_list,
        metavar="CATS",
        help="comma-separated categories for changed files the map cannot place",
    )
    parser.add_argument("--repo", type=Path, help="a Node git checkout: build base and head from --base-ref/--head-ref")
    parser.add_argument("--base-ref", metavar="REF", help="with --repo: the base commit (default: the merge base)")
    parser.add_argument("--head-ref", metavar="REF", help="with --repo: the head commit (the pull request)")
    parser.add_argument("--base-branch", default="main", help="with --repo: branch for the merge base (default main)")
    parser.add_argument("--build-cache", type=Path, metavar="DIR", help="build cache (default: $BENCHGATE_CACHE)")
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="with --repo: build as this benchgate configuration's build: section says (the base branch's copy); "
        "the build options below override it",
    )
    build_options = parser.add_argument_group("how --repo builds (as `benchgate build`)")
    add_build_options(build_options)
    parser.add_argument("--resume", action="store_true", help="continue the interrupted run in --output")
    parser.add_argument(
        "--no-analyze", dest="analyze", action="store_false", help="do not print the analysis at the end"
    )
    parser.add_argument(
        "--format", dest="output_format", default="text", choices=FORMATS, help="the printed analysis: text or markdown"
    )
    parser.add_argument("--threshold", default="***", help="gate threshold: *, **, *** or off")
    parser.add_argument("--correction", default="holm", help="multiple-comparison correction: holm or none")
    parser.add_argument("--min-effect", type=float, default=0.0, metavar="PCT")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress output")
    parser.add_argument(
        "--progress-interval",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="seconds between progress lines when stderr is not a terminal",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    # Each option's dest is the name of its RunOptions field; lists from action="append" become tuples.
    given = {name: tuple(value) if isinstance(value, list) else value for name, value in vars(args).items()}
    options = RunOptions(
        **{field.name: given[field.name] for field in fields(RunOptions) if field.name in given},
        build_overrides=build_overrides(args),
    )
    return run_benchmarks(options)
