"""`benchgate run`: run a Node checkout's benchmarks with a base and a head binary (``run.local``), then analyse."""

import argparse
import shlex
import sys
from dataclasses import fields
from pathlib import Path

from benchgate import config, results
from benchgate.build import releases
from benchgate.build.buildsettings import BuildSettings
from benchgate.commands.build import add_build_options, add_sandbox_option, build_overrides
from benchgate.config import Settings, flags
from benchgate.config.settings import configured_history, resolve_store
from benchgate.errors import EXIT_GATE_FAILED, RunError
from benchgate.report.markup import FORMATS, failure_lines
from benchgate.run import system
from benchgate.run.local import run_benchmarks
from benchgate.run.plan import RunOptions
from benchgate.run.trust import DEFAULT_PROCESS_TIMEOUT


def parse_node_args(text: str) -> tuple[str, ...]:
    """Runtime flags split as a shell splits them; an unbalanced quote is an ``argparse.ArgumentTypeError``."""
    try:
        return tuple(shlex.split(text))
    except ValueError as error:  # an unbalanced quote: say so instead of argparse's "invalid value"
        raise argparse.ArgumentTypeError(f"cannot split {text!r} into flags: {str(error).lower()}") from None


def _category_list(text: str) -> tuple[str, ...] | None:
    return tuple(filter(None, text.split(","))) if text else None


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("run", help="run Node's benchmarks with a base and a head binary, then analyse")
    parser.add_argument("categories", nargs="*", metavar="CATEGORY", help="benchmark categories, or 'all'")
    parser.add_argument("--benchmark-dir", type=Path, help="the benchmark/ directory (default: ./benchmark)")
    parser.add_argument("--output", "-o", type=Path, required=True, help="directory for results.csv and run.json")
    for side in ("base", "head"):
        parser.add_argument(f"--{side}-binary", metavar="PATH", help=f"the {side} node executable")
        parser.add_argument(f"--{side}-version", metavar="X.Y.Z", help=f"an official release as the {side}")
        node_args = f"--{side}-node-args"
        parser.add_argument(node_args, type=parse_node_args, default=(), metavar="ARGS", help="runtime flags")
    add_release_options(parser)
    flags.add_flags(parser, "run")
    parser.add_argument("--changed-from", metavar="REF", help="pick categories from `git diff REF...HEAD`")
    parser.add_argument("--changed-map", type=Path, metavar="YAML", help="replace the shipped changed-files map")
    parser.add_argument("--changed-default", type=_category_list, metavar="CATS", help="for files the map misses")
    parser.add_argument("--repo", type=Path, help="a Node git checkout: build base and head from --base-ref/--head-ref")
    parser.add_argument("--base-ref", metavar="REF", help="with --repo: the base commit (default: the merge base)")
    parser.add_argument("--head-ref", metavar="REF", help="with --repo: the head commit (the pull request)")
    parser.add_argument("--base-branch", default="main", help="with --repo: branch for the merge base (default main)")
    parser.add_argument("--build-cache", type=Path, metavar="DIR", help="build cache (default: $BENCHGATE_CACHE)")
    parser.add_argument("--config", type=Path, metavar="FILE", help="with --repo: build as its build: section says")
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument("--trusted", action="store_true", help="with --repo: the head is your own code, no sandbox")
    trust.add_argument("--untrusted-head", action="store_true", help="given binaries: run them in the sandbox")
    add_sandbox_option(parser)
    add_build_options(parser.add_argument_group("how --repo builds (as `benchgate build`)"))
    parser.add_argument("--resume", action="store_true", help="continue the interrupted run in --output")
    parser.add_argument("--no-analyze", dest="analyze", action="store_false", help="do not print the analysis")
    parser.add_argument("--format", dest="output_format", default="text", choices=FORMATS)
    parser.add_argument("--jobs", default="per-configuration", choices=("per-configuration", "per-file"))
    parser.add_argument("--store", dest="history_store", metavar="URL", help="the history store giving the noise")
    parser.add_argument("--progress-interval", type=float, default=30.0, metavar="SECONDS")
    parser.set_defaults(handler=_handler)


def add_release_options(parser: argparse.ArgumentParser) -> None:
    """Where official releases come from, the schedule's seed, the process limit, progress; run and versions."""
    parser.add_argument("--release-source", default="auto", choices=releases.SOURCES)
    parser.add_argument("--dist-mirror", default=releases.DEFAULT_DIST_URL, metavar="URL", help="the dist site")
    parser.add_argument("--seed", type=int, help="seed of the schedule's random order (recorded)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_PROCESS_TIMEOUT, metavar="SECONDS")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress output")


def _handler(args: argparse.Namespace) -> int:
    # Each other option's dest is the name of its RunOptions field; lists from action="append" become tuples.
    given = {name: tuple(value) if isinstance(value, list) else value for name, value in vars(args).items()}
    given["build_settings"] = build_settings(args.config, build_overrides(args))
    return run_and_analyze(given, flags.settings_from_flags(args, "run"))


def run_and_analyze(given: dict, settings: Settings) -> int:
    """Run with RunOptions' values ``given`` and the resolved ``settings`` (the action's run step passes its
    merged settings straight on, with their sources), then print the analysis; the exit status."""
    given = {**given, **run_option_values(settings, "run")}
    # No store configured: None, no prior (the default file does not count).
    configured = configured_history(given.get("config"))
    given["history_store"] = resolve_store(given.get("history_store"), configured, default=None)
    options = RunOptions(**{field.name: given[field.name] for field in fields(RunOptions) if field.name in given})
    status = run_benchmarks(options)
    return print_analysis(options.output, options, settings) if status is None else status


# RunOptions' names of the settings it calls otherwise
_RUN_OPTION_NAMES = {"filter": "filters", "exclude": "excludes", "set": "set_args"}


def run_option_values(settings: Settings, command: str) -> dict:
    """RunOptions' values of ``command``'s setting flags ("" is None); the gate's settings as one ``policy``."""
    values: dict = {"policy": settings.policy()}
    for setting in flags.for_command(command):
        if "analyze" in setting.commands:
            continue
        value = getattr(settings, setting.attr)
        if setting.key == "max-runs" and settings.source_of("max_runs") == "default":
            value = None  # the run's own maximum for auto (60), not the labels' cap
        values[_RUN_OPTION_NAMES.get(setting.attr, setting.attr)] = None if value == "" else value
    return values


def build_settings(config_path: Path | None, overrides: dict) -> BuildSettings | None:
    """How ``--repo`` builds: the ``build:`` section of ``--config``, then the build options; None: neither."""
    if config_path is None and not overrides:
        return None
    given = config.load_settings(config_path, {}, config_required=True).build if config_path is not None else ()
    return BuildSettings.from_mapping({**dict(given), **overrides})


def print_analysis(output: Path, options: RunOptions, settings: Settings) -> int:
    """compare.R's table, the environment and every failure; the verdict's exit status (a RunError: no sample)."""
    from benchgate.report import comment, tables
    from benchgate.stats import outcome
    from benchgate.stats.analysis import RunData, analyze

    record = results.load_run_record(output / "run.json")
    notes = [*failure_lines(record.failures), *(f"skipped: {item.filename}: {item.reason}" for item in record.skipped)]
    if record.samples == 0:
        summary = record.summary()
        for line in notes:
            print(line)
        if outcome.head_only_failures(summary):
            print("gate: FAIL: the head failed where the base succeeded, and no sample was measured")
            return EXIT_GATE_FAILED
        counts = f"{len(summary.failures)} failure(s), {len(summary.skipped)} skip(s)"
        raise RunError(f"no benchmark produced a sample ({counts}, listed above)", where=str(output))
    run_data, summary = RunData.load([str(output)])
    analysis = analyze(run_data, settings.policy())
    decision = outcome.decide(analysis.table, summary, accept_regression=settings.accept_regression)
    if options.output_format != "text":
        context = comment.CommentContext(gated=analysis.table, settings=settings, outcome=decision, run=summary)
        # a run's markdown is its whole report, the comment
        markdown = comment.render_comment(context, limit=None) if options.output_format == "markdown" else None
        sys.stdout.write(markdown or tables.render(analysis, options.output_format, problems=decision.problems))
        return decision.exit_status
    lines = [
        tables.render(analysis, "text", problems=decision.problems),
        system.render(record.environment),
        *notes,
    ]
    problems = "; ".join(decision.problems)
    lines.append(f"verdict: {decision.verdict.upper()}" + (f" ({problems})" if problems else ""))
    sys.stdout.write("\n".join(lines) + "\n")
    return decision.exit_status
