"""`benchgate run`: run a Node checkout's benchmarks with a base and a head binary, then analyse.

Everything is checked before the first benchmark process starts (binaries,
categories, filters, ``--set``, the output directory), so bad input costs one
line and exit status 2, not a half-written run.
"""

from __future__ import annotations

import argparse
import random
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benchgate import changes, gate, releases, results, suite, system
from benchgate.errors import EXIT_INTERRUPTED, EXIT_OK, InputError, RunError
from benchgate.progress import Progress
from benchgate.session import RunPlan, Session, SessionState, mark_gating, plan_from_record

FORMATS = ("text", "markdown")


@dataclass
class RunOptions:
    """The options of one `benchgate run`, as a test would pass them."""

    output: Path
    categories: tuple[str, ...] = ()
    benchmark_dir: Path | None = None
    base_binary: str | None = None
    head_binary: str | None = None
    base_version: str | None = None
    head_version: str | None = None
    release_source: str = "auto"
    dist_mirror: str = releases.DEFAULT_DIST_URL
    base_node_args: tuple[str, ...] = ()
    head_node_args: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    set_args: tuple[str, ...] = ()
    runs: int = 30
    seed: int | None = None
    timeout: float | None = None
    cpuset: str | None = None
    shard: str | None = None
    changed_from: str | None = None
    changed_map: Path | None = None
    changed_default: tuple[str, ...] | None = None
    resume: bool = False
    analyze: bool = True
    output_format: str = "text"
    threshold: str = "***"
    correction: str = "holm"
    min_effect: float = 0.0
    progress: bool = True
    progress_interval: float = 30.0
    repo: Path | None = None  # a Node git checkout: build base and head from refs (benchgate.build)
    base_ref: str | None = None
    head_ref: str | None = None
    base_branch: str = "main"
    build_cache: Path | None = None
    build_records: dict = field(default_factory=dict)  # side -> BuildResult.record(), filled by the builds


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _binary(options: RunOptions, side: str, node_args: tuple[str, ...]) -> releases.NodeBinary:
    path, version = getattr(options, f"{side}_binary"), getattr(options, f"{side}_version")
    if path and version:
        raise InputError(f"--{side}-binary and --{side}-version both given; choose one")
    if path:
        return releases.inspect_binary(path, side=side, node_args=node_args)
    if version:
        return releases.release_binary(
            version, side=side, node_args=node_args, source=options.release_source, mirror=options.dist_mirror
        )
    raise InputError(f"no {side} binary: give --{side}-binary PATH or --{side}-version X.Y.Z")


def _build_both(options: RunOptions) -> Path:
    """Build (or reuse) base and head from ``--repo``; the binaries and, by default, the head's benchmark/."""
    from benchgate import build

    given = [name for name in ("base_binary", "head_binary", "base_version", "head_version") if getattr(options, name)]
    if given:
        raise InputError(f"--repo builds both binaries; drop --{given[0].replace('_', '-')}")
    if not options.head_ref:
        raise InputError("--repo needs --head-ref (and --base-ref, or --base-branch for the merge base)")
    repo = options.repo.resolve()
    base_ref = options.base_ref or build.merge_base(repo, options.head_ref, options.base_branch)
    results_by_side = {}
    for side, ref, trusted in (("base", base_ref, True), ("head", options.head_ref, False)):
        # The head is the pull request's code: built untrusted (no credentials, read-only compiler cache).
        print(f"benchgate: building the {side} ({ref})", file=sys.stderr)
        results_by_side[side] = build.build_ref(repo, ref, side=side, cache_dir=options.build_cache, trusted=trusted)
    for side, result in results_by_side.items():
        setattr(options, f"{side}_binary", str(result.binary))
        options.build_records[side] = result.record()
    return (options.benchmark_dir or results_by_side["head"].worktree / "benchmark").resolve()


def _check_cpuset(cpuset: str | None) -> None:
    if cpuset is None:
        return
    try:
        cpus = system.parse_cpu_list(cpuset)
    except ValueError:
        cpus = []
    if not cpus:
        raise InputError(f"--cpuset {cpuset!r}: expected a CPU list such as 2-3 or 0,2")
    if shutil.which("taskset") is None:
        raise InputError("--cpuset needs taskset (util-linux), which is not installed")


def _take_cpuset_from_set(options: RunOptions) -> None:
    """compare.js reads the CPU set from ``--set CPUSET=...``; accept that spelling of --cpuset too."""
    cpusets = [value for value in options.set_args if value.startswith("CPUSET=")]
    if not cpusets:
        return
    value = cpusets[-1].partition("=")[2]
    if options.cpuset not in (None, value):
        raise InputError(f"--cpuset {options.cpuset} and --set CPUSET={value} disagree")
    options.cpuset = value
    options.set_args = tuple(item for item in options.set_args if not item.startswith("CPUSET="))


def _select(options: RunOptions, benchmark_dir: Path) -> tuple[suite.Selection | None, dict | None]:
    """The selection, plus the --changed-from placement when categories come from a diff."""
    categories = tuple(options.categories)
    placement = None
    if options.changed_from:
        placed = changes.categories_for_change(
            benchmark_dir, options.changed_from, options.changed_map, options.changed_default
        )
        for note in placed.notes():
            print(f"benchgate: {note}", file=sys.stderr)
        placement = {"from": options.changed_from, **placed.record()}
        categories = tuple(dict.fromkeys(categories + tuple(placed.categories)))
        if not categories:
            return None, placement
    selection = suite.select(
        benchmark_dir,
        categories,
        filters=options.filters,
        excludes=options.excludes,
        set_args=suite.parse_set(options.set_args),
        shard=suite.parse_shard(options.shard),
    )
    return selection, placement


def _new_record(options: RunOptions, selection, binaries, seed, environment, skipped, placement) -> dict:
    record = {
        "schema": 1,
        "tool": "benchgate",
        "binaries": {side: binary.record() for side, binary in binaries.items()},
        "selection": selection.record(),
        "seed": seed,
        "runs": options.runs,
        "started_at": _now(),
        "ended_at": None,
        "complete": False,
        "interrupted": False,
        "schedule": "interleaved-rotated-v1",
        "options": {"timeout": options.timeout, "cpuset": options.cpuset},
        "durations": {},
        "samples": 0,
        "environment": environment,
        "failures": [],
        "skipped": skipped,
        "progress": {"completed_jobs": 0, "csv_bytes": 0, "jobs": 0},
    }
    if placement is not None:
        record["selection"]["changed"] = placement
    if options.build_records:
        record["build"] = options.build_records
        for side, build in options.build_records.items():
            record["binaries"][side].update({"ref": build.get("ref"), "sha": build.get("sha"), "source": "build"})
    return record


def _prepare(options: RunOptions) -> tuple[RunPlan | None, dict]:
    output = options.output
    record_path, csv_path = output / "run.json", output / "results.csv"
    if options.resume:
        record = results.read_run_record(record_path)
        if record.get("complete"):
            raise InputError("--resume: this run is already complete", where=str(output))
        return plan_from_record(record, output), record
    if csv_path.exists() or record_path.exists():
        raise InputError(
            "already holds a run (results.csv/run.json); use --resume or another --output", where=str(output)
        )
    if options.runs < 1:
        raise InputError(f"--runs {options.runs}: must be at least 1")
    if options.timeout is not None and options.timeout <= 0:
        raise InputError(f"--timeout {options.timeout}: must be positive")
    try:
        gate.GatePolicy(options.threshold, options.correction, options.min_effect)
    except ValueError as error:
        raise InputError(str(error)) from None
    if options.output_format not in FORMATS:
        raise InputError(f"--format {options.output_format!r}: expected one of {', '.join(FORMATS)}")
    _take_cpuset_from_set(options)
    _check_cpuset(options.cpuset)
    suite.parse_set(options.set_args)
    suite.parse_shard(options.shard)
    if options.repo is not None:
        benchmark_dir = _build_both(options)
    else:
        benchmark_dir = (options.benchmark_dir or suite.default_benchmark_dir()).resolve()
    selection, placement = _select(options, benchmark_dir)
    binaries = {
        "base": _binary(options, "base", tuple(options.base_node_args)),
        "head": _binary(options, "head", tuple(options.head_node_args)),
    }
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**32)
    environment = system.collect(cpuset=options.cpuset)
    if selection is None:
        empty = suite.Selection(benchmark_dir=benchmark_dir, categories=())
        record = _new_record(options, empty, binaries, seed, environment, [], placement)
        return None, record
    skipped = suite.http_skips(selection)
    record = _new_record(options, selection, binaries, seed, environment, skipped, placement)
    skipped_files = {item["filename"] for item in skipped}
    plan = RunPlan(
        benchmark_dir=selection.benchmark_dir,
        files=tuple(name for name in selection.files if name not in skipped_files),
        binaries=binaries,
        runs=options.runs,
        seed=seed,
        set_args=selection.set_args,
        timeout=options.timeout,
        cpuset=options.cpuset,
    )
    return plan, record


def run_benchmarks(options: RunOptions) -> int:
    """Run (or resume) the benchmarks into ``options.output``; print the analysis; return the exit status."""
    plan, record = _prepare(options)
    output = options.output
    output.mkdir(parents=True, exist_ok=True)
    record_path, csv_path = output / "run.json", output / "results.csv"
    if plan is None:
        record.update(complete=True, ended_at=_now())
        results.write_run_record(record_path, record)
        print("benchgate: no benchmark category selected by the change; nothing ran")
        return EXIT_OK
    for item in record["skipped"]:
        print(f"benchgate: skipped {item['filename']}: {item['reason']}", file=sys.stderr)
    for warning in record["environment"].get("warnings", []):
        print(f"benchgate: warning: {warning}", file=sys.stderr)
    progress_info = record["progress"]
    state = SessionState(
        completed_jobs=progress_info["completed_jobs"],
        csv_bytes=progress_info["csv_bytes"],
        failures=list(record["failures"]),
        skipped=list(record["skipped"]),
        durations=dict(record["durations"]),
        samples=int(record.get("samples", 0)),
    )
    already_written = []
    if options.resume and csv_path.exists():
        already_written = results.sample_keys_after(csv_path, state.csv_bytes)
    writer = results.ResultsWriter(csv_path)

    def checkpoint(final: bool = False) -> None:
        record.update(
            durations=state.durations,
            failures=mark_gating(state.failures),
            skipped=state.skipped,
            samples=state.samples,
            progress={
                "completed_jobs": state.completed_jobs,
                "csv_bytes": state.csv_bytes,
                "jobs": len(session.schedule),
            },
        )
        if final:
            record["ended_at"] = _now()
        results.write_run_record(record_path, record)

    with writer:
        session = Session(
            plan,
            writer,
            state,
            on_checkpoint=checkpoint,
            progress=Progress(live=None, interval=options.progress_interval) if options.progress else None,
            already_written=already_written,
        )
        checkpoint()
        session.run()
    record["complete"] = state.completed_jobs >= len(session.schedule)
    record["interrupted"] = session.interrupted
    checkpoint(final=True)
    print(f"benchgate: results in {output} (results.csv, run.json)", file=sys.stderr)
    if session.interrupted:
        print(
            f"benchgate: interrupted; {state.samples} sample(s) are in {csv_path}; continue with "
            f"`benchgate run --resume --output {shlex.quote(str(output))}`",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if not options.analyze:
        return EXIT_OK
    return print_analysis(output, options)


def print_analysis(output: Path, options: RunOptions) -> int:
    """compare.R's table, the environment and every failure; the exit status of the gate's verdict.

    The verdict is the report's (benchgate.outcome): a head failure where the base succeeded,
    or an incomplete run, fails it just as a significant regression does.
    """
    from benchgate import comment, outcome, report, runrecord, stats
    from benchgate.config import Settings

    settings = Settings(
        threshold=options.threshold, correction=options.correction, min_effect=options.min_effect, runs=options.runs
    )
    record = results.read_run_record(output / "run.json")
    if record.get("samples", 0) == 0:
        summary = runrecord.validate_record(record, str(output / "run.json"))
        for failure in summary.failures:
            print(f"failed: {failure.filename} {failure.configuration} on the {failure.side}: {failure.reason}")
        if outcome.head_only_failures(summary):
            print("gate: FAIL: the head failed where the base succeeded, and no sample was measured")
            return outcome.EXIT_GATE_FAILED
        raise RunError("no benchmark produced a sample; see the failures above", where=str(output))
    samples, summary = runrecord.load([str(output)])
    gated = gate.apply_gate(stats.compare_samples(samples), settings.policy())
    decision = outcome.decide(gated, summary, settings)
    if options.output_format == "markdown":
        context = comment.CommentContext(gated=gated, settings=settings, outcome=decision, run=summary)
        sys.stdout.write(comment.render_comment(context, limit=None))
        return decision.exit_status
    lines = [report.render_text(gated, settings.policy()), system.render(record["environment"])]
    # The same failure in several runs is one line with a count.
    grouped: dict[tuple, int] = {}
    for failure in record["failures"]:
        key = (
            failure["side"],
            failure["filename"],
            failure["configuration"] or "",
            failure["reason"],
            bool(failure.get("gating")),
        )
        grouped[key] = grouped.get(key, 0) + 1
    for (side, filename, configuration, reason, gating), count in grouped.items():
        runs = f" in {count} runs" if count > 1 else ""
        lines.append(
            f"failed on the {side}{runs}: {f'{filename} {configuration}'.strip()}: {reason}"
            + (" (gating: the base succeeded)" if gating else "")
        )
    for item in record["skipped"]:
        lines.append(f"skipped: {item['filename']}: {item['reason']}")
    problems = "; ".join(decision.problems)
    lines.append(f"verdict: {decision.verdict.upper()}" + (f" ({problems})" if problems else ""))
    sys.stdout.write("\n".join(lines) + "\n")
    return decision.exit_status


def _node_args(text: str | None) -> tuple[str, ...]:
    return tuple(shlex.split(text)) if text else ()


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
            f"--{side}-node-args", metavar="ARGS", help=f"runtime flags for the {side}, e.g. '--jitless'"
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
    parser.add_argument("--filter", action="append", default=[], help="only files whose name contains this")
    parser.add_argument("--exclude", action="append", default=[], help="skip files whose name contains this")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="set a benchmark variable")
    parser.add_argument("--runs", type=int, default=30, help="samples per configuration and side (default 30)")
    parser.add_argument("--seed", type=int, help="seed of the schedule's random order (recorded)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="limit for each benchmark process")
    parser.add_argument("--cpuset", metavar="CPUS", help="pin benchmark processes with taskset, e.g. 2-3")
    parser.add_argument("--shard", metavar="I/N", help="run the I-th of N deterministic parts of the files")
    parser.add_argument("--changed-from", metavar="REF", help="pick categories from `git diff REF...HEAD`")
    parser.add_argument("--changed-map", type=Path, metavar="YAML", help="replace the shipped changed-files map")
    parser.add_argument(
        "--changed-default", metavar="CATS", help="comma-separated categories for changed files the map cannot place"
    )
    parser.add_argument("--repo", type=Path, help="a Node git checkout: build base and head from --base-ref/--head-ref")
    parser.add_argument("--base-ref", metavar="REF", help="with --repo: the base commit (default: the merge base)")
    parser.add_argument("--head-ref", metavar="REF", help="with --repo: the head commit (the pull request)")
    parser.add_argument("--base-branch", default="main", help="with --repo: branch for the merge base (default main)")
    parser.add_argument("--build-cache", type=Path, metavar="DIR", help="build cache (default: $BENCHGATE_CACHE)")
    parser.add_argument("--resume", action="store_true", help="continue the interrupted run in --output")
    parser.add_argument("--no-analyze", action="store_true", help="do not print the analysis at the end")
    parser.add_argument("--format", default="text", choices=FORMATS, help="the printed analysis: text or markdown")
    parser.add_argument("--threshold", default="***", help="gate threshold: *, **, *** or off")
    parser.add_argument("--correction", default="holm", help="multiple-comparison correction: holm or none")
    parser.add_argument("--min-effect", type=float, default=0.0, metavar="PCT")
    parser.add_argument("--no-progress", action="store_true", help="no progress output")
    parser.add_argument(
        "--progress-interval",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="seconds between progress lines when stderr is not a terminal",
    )
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    options = RunOptions(
        output=args.output,
        categories=tuple(args.categories),
        benchmark_dir=args.benchmark_dir,
        base_binary=args.base_binary,
        head_binary=args.head_binary,
        base_version=args.base_version,
        head_version=args.head_version,
        release_source=args.release_source,
        dist_mirror=args.dist_mirror,
        base_node_args=_node_args(args.base_node_args),
        head_node_args=_node_args(args.head_node_args),
        filters=tuple(args.filter),
        excludes=tuple(args.exclude),
        set_args=tuple(args.set),
        runs=args.runs,
        seed=args.seed,
        timeout=args.timeout,
        cpuset=args.cpuset,
        shard=args.shard,
        changed_from=args.changed_from,
        changed_map=args.changed_map,
        changed_default=tuple(filter(None, args.changed_default.split(","))) if args.changed_default else None,
        resume=args.resume,
        analyze=not args.no_analyze,
        output_format=args.format,
        threshold=args.threshold,
        correction=args.correction,
        min_effect=args.min_effect,
        progress=not args.no_progress,
        progress_interval=args.progress_interval,
        repo=args.repo,
        base_ref=args.base_ref,
        head_ref=args.head_ref,
        base_branch=args.base_branch,
        build_cache=args.build_cache,
    )
    return run_benchmarks(options)
