"""`benchgate versions V1 V2 V3 ... [CATEGORY ...]`: Node releases compared pairwise, as a report."""

import argparse
import re
import sys
from dataclasses import replace
from pathlib import Path

from benchgate import results
from benchgate.build import releases
from benchgate.commands.analyze import write_charts
from benchgate.commands.run import add_release_options, parse_node_args, run_option_values
from benchgate.config import flags
from benchgate.errors import EXIT_OK, InputError
from benchgate.history.recording import release_series
from benchgate.history.site import write_site
from benchgate.report.markup import failure_lines
from benchgate.report.versionsreport import VersionStep, render_versions_markdown, render_versions_text
from benchgate.run.local import run_benchmarks
from benchgate.run.plan import RunOptions
from benchgate.stats.analysis import RunData, analyze

VERSION = re.compile(r"^v?\d+\.\d+\.\d+$")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("versions", help="compare consecutive Node releases pairwise, as a report")
    parser.add_argument("targets", nargs="+", metavar="VERSION_OR_CATEGORY", help="releases, then categories")
    parser.add_argument("--output", "-o", type=Path, required=True, help="directory for the steps and the report")
    parser.add_argument("--benchmark-dir", type=Path, help="the benchmark/ directory (default: ./benchmark)")
    flags.add_flags(parser, "versions")
    parser.add_argument("--node-args", type=parse_node_args, default=(), metavar="ARGS", help="for every release")
    add_release_options(parser)
    parser.add_argument("--store", metavar="URL", help="record each step into this history store")
    parser.add_argument("--no-plot", dest="plot", action="store_false", help="no forest plot per step")
    parser.set_defaults(handler=_handler)


def split_targets(targets: list[str]) -> tuple[list[str], tuple[str, ...]]:
    """The releases (leading X.Y.Z arguments, at least two, each newer than the last) and the categories."""
    count = next((i for i, target in enumerate(targets) if not VERSION.match(target)), len(targets))
    versions = [releases.normalize_version(target) for target in targets[:count]]
    categories = tuple(targets[count:])
    stray = [target for target in categories if VERSION.match(target)]
    if stray:
        raise InputError(f"versions: {stray[0]} comes after a category; give the releases first")
    if len(versions) < 2:
        raise InputError(f"versions: give at least two releases (X.Y.Z) before any category, got {len(versions)}")
    parsed = [tuple(int(part) for part in version.split(".")) for version in versions]
    for older, newer, a, b in zip(versions, versions[1:], parsed, parsed[1:], strict=False):
        if b <= a:
            raise InputError(f"versions: {newer} is not newer than {older}; give the releases oldest first")
    return versions, categories


# RunOptions' values given as options of the same names (node_args: each side's)
_RUN_OPTIONS = ("benchmark_dir", "node_args", "release_source", "dist_mirror", "seed", "timeout", "progress")


def _handler(args: argparse.Namespace) -> int:
    """Run each consecutive pair into ``OUTPUT/steps``, write the report; 0, or the unfinished step's status."""
    versions, categories = split_targets(args.targets)
    output, store = args.output, args.store
    run = {name: getattr(args, name) for name in _RUN_OPTIONS}
    run.update(run_option_values(flags.settings_from_flags(args, "versions"), "versions"))
    run["categories"] = categories or ("all",)
    if store:
        from benchgate.history.recording import RELEASES_BRANCH, record_run
        from benchgate.history.store import open_store

        open_store(store).engine.dispose()  # an unreachable or corrupt store: one line before hours of runs
    steps = []
    for base, head in zip(versions, versions[1:], strict=False):
        directory = f"steps/{base}..{head}"
        status = _run_step(output / directory, base, head, run)
        if status is not None:
            print(f"benchgate: versions: the step {base} → {head} did not finish; rerun to resume it", file=sys.stderr)
            return status
        if store:  # the step's head as a point of the release series: named by its version
            result = record_run(output / directory, store, commit=f"v{head}", branch=RELEASES_BRANCH)
            what = "recorded" if result.created else "already recorded"
            print(f"benchgate: versions: {what} {base}..{head} in {result.store} ({result.rows} rows)", file=sys.stderr)
        steps.append(_analysed(output, directory, base, head, run, args.plot))
    site = _release_site(output, steps)
    (output / "report.txt").write_text(render_versions_text(steps), encoding="utf-8")
    described = f"{run['runs']} runs a side" if run["runs"] != "auto" else "runs until decided (--runs auto)"
    markdown = render_versions_markdown(steps, runs=described, site=site)
    (output / "report.md").write_text(markdown, encoding="utf-8")
    sys.stdout.write(render_versions_text(steps))
    print(f"benchgate: versions: report in {output / 'report.md'}", file=sys.stderr)
    return EXIT_OK


def _release_site(output: Path, steps: list) -> str | None:
    """The releases as series on the history's static site (``OUTPUT/site``); its index, or None."""
    try:
        series, changes = release_series([(step.head, output / step.directory, step.gated) for step in steps])
    except InputError as error:  # a step with nothing to show (every benchmark failed): no site, still a report
        print(f"benchgate: versions: no trend site: {error.one_line()}", file=sys.stderr)
        return None
    write_site(output / "site", series, changes)
    return "site/index.html"


def _run_step(directory: Path, base: str, head: str, run: dict) -> int | None:
    """One step with the run command's own function: reused when complete, resumed when interrupted."""
    record_path = directory / "run.json"
    resume = False
    if record_path.is_file():
        record = results.load_run_record(record_path)
        _check_same_request(record, run, directory)
        if record.complete:  # as run --resume reads it
            print(f"benchgate: versions: {base} → {head}: reusing the complete run in {directory}", file=sys.stderr)
            return None
        resume = True
    print(f"benchgate: versions: {base} → {head}", file=sys.stderr)
    others = dict(run)
    node_args = others.pop("node_args")
    sides = dict(base_version=base, head_version=head, base_node_args=node_args, head_node_args=node_args)
    status = run_benchmarks(RunOptions(output=directory, resume=resume, analyze=False, **sides, **others))
    return None if status == EXIT_OK and record_path.is_file() else status


def _check_same_request(record: results.RunRecord, run: dict, directory: Path) -> None:
    """A step's directory is reused only for the same request: other runs, files or --set would mix two reports."""
    lists = {"categories": "categories", "filter": "filters", "exclude": "excludes", "set": "set_args"}
    wanted = {"runs": run["runs"], **{key: tuple(run[name]) for key, name in lists.items()}}
    if wanted["categories"] == ("all",):
        del wanted["categories"]  # the run records the categories 'all' stood for
    if run.get("benchmark_dir") is not None:
        wanted["benchmark_dir"] = str(Path(run["benchmark_dir"]).resolve())
    for name, value in wanted.items():
        found = record.runs if name == "runs" else getattr(record.selection, name)
        if found != value:
            raise InputError(
                f"{directory} holds a run with {name} {found!r}, not {value!r}: "
                "give another --output, or remove that step to measure it again"
            )


def _analysed(output: Path, directory: str, base: str, head: str, run: dict, plot: bool):
    """The step analysed as `benchgate run` analyses its run (the gate's decisions), and its forest plot."""
    # A report of releases gates nothing: no row is drawn as failing a gate.
    policy = replace(run["policy"], threshold="off")
    run_data, summary = RunData.load([str(output / directory)])
    analysis = analyze(run_data, policy)
    chart = f"charts/{base}..{head}.svg" if plot and len(analysis.table) else None
    if chart is not None:
        write_charts(output / chart, analysis)
    # by file
    failures = failure_lines([failure.model_copy(update={"configuration": None}) for failure in summary.failures])
    return VersionStep(base, head, analysis.table, directory, chart, failures=failures)
