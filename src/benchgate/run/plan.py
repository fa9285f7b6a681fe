"""What one `benchgate run` will do, checked before the first benchmark process starts: the plan and run.json."""

import math
import os
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from benchgate import results
from benchgate import sandbox as sandbox_module
from benchgate.build import releases
from benchgate.build.buildsettings import BuildSettings
from benchgate.errors import BenchgateError, InputError, StoreCorrupt, StoreUnavailable
from benchgate.results.recordparts import Selection
from benchgate.run import adaptive, changedfiles, duet, protocol, say, suite, system, trust
from benchgate.run.process import HEAD, RunPlan
from benchgate.run.session import new_progress, now
from benchgate.stats import gate

BUILD_LOG_TAIL_LINES = 20
BUILD_LOG_TAIL_CHARS = 4000  # under runrecord's limit for one text field


@dataclass(frozen=True)
class RunOptions:
    """The options of one `benchgate run`, as a test would pass them; planning never changes them."""

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
    runs: int | str = 30  # or "auto": an adaptive run (benchgate.run.adaptive), min_runs to max_runs a side
    min_runs: int | None = None
    max_runs: int | None = None
    seed: int | None = None
    timeout: float | None = trust.DEFAULT_PROCESS_TIMEOUT
    cpuset: str | None = None
    shard: str | None = None
    changed_from: str | None = None
    changed_map: Path | None = None
    changed_default: tuple[str, ...] | None = None
    resume: bool = False
    analyze: bool = True
    output_format: str = "text"
    policy: gate.GatePolicy = field(default_factory=gate.GatePolicy)  # the gate's settings: an adaptive run's design
    progress: bool = True
    progress_interval: float = 30.0
    jobs: Literal["per-configuration", "per-file"] = "per-configuration"  # what one benchmark process runs
    repo: Path | None = None  # a Node git checkout: build base and head from refs (benchgate.build)
    base_ref: str | None = None
    head_ref: str | None = None
    base_branch: str = "main"
    build_cache: Path | None = None
    build_settings: BuildSettings | None = None  # how --repo builds (the command merges --config and options)
    trusted: bool = False  # with --repo: the head is trusted code (built and run without the sandbox)
    untrusted_head: bool = False  # given binaries, but the head (or its benchmark/) is a pull request's
    use_sandbox: bool = True  # False: --no-sandbox, untrusted code runs unconfined (recorded)
    pairing: str = "sequential"  # or "duet": base and head side by side on two CPU sets (benchgate.run.duet)
    slots: int = 1  # jobs (or duets) at once, on disjoint CPU sets
    history_store: str | None = None  # a configured history store: main's runs give each row's noise (read_prior)


# Main's history as prior knowledge: each selected row's noise before the run (run.json's ``prior``); a store that
# cannot be read costs a warning, never the run (docs/history.md, "As the gate's prior").


def shown_store(store_url: str) -> tuple[str, bool]:
    """The store's URL without password, and whether it may hold runs; InputError for a URL that is not a store's."""
    from benchgate.history.store import open_store

    try:
        store = open_store(store_url)
    except StoreUnavailable as error:  # a SQLite file in a missing directory: the reader says so, as a warning
        return error.where or store_url, True
    store.engine.dispose()
    return store.shown, store.sqlite_path is None or store.sqlite_path.is_file()


def read_prior(store_url: str, files, environment: dict, node_args) -> tuple[dict | None, str | None]:
    """run.json's ``prior`` for ``files`` (None: the store gave none) and a warning; ``environment``: the run's."""
    from benchgate.history.recording import runner_fingerprint
    from benchgate.history.store import main_spreads
    from benchgate.stats.resolution import PRIOR_RUNS, prior_variance

    runner = runner_fingerprint({key: value for key, value in environment.items() if key != "warnings"})
    flags = " ".join(node_args)
    shown, recorded = shown_store(store_url)
    try:  # an empty history (nothing recorded yet) is no warning: every row falls back to its base's samples
        spreads = main_spreads(store_url, files, runner=runner, node_flags=flags) if recorded else {}
    except (StoreUnavailable, StoreCorrupt) as error:  # history being down must not fail a run
        return None, f"no prior from main's history (the base's samples decide how coarsely rows are gated): {error}"
    keys = sorted(spreads)
    variances = prior_variance([spreads[key] for key in keys], PRIOR_RUNS)
    rows = [
        {
            "filename": key[0],
            "configuration": key[1],
            "variance": float(variance),
            "runs": sum(1 for spread in spreads[key][-PRIOR_RUNS:] if spread > 0 and math.isfinite(spread)),
        }
        for key, variance in zip(keys, variances.tolist(), strict=True)
        if variance == variance  # NaN: too few runs, the base's samples decide
    ]
    prior = {"store": shown, "runner": runner, "branch": "main", "node_flags": flags, "recent": PRIOR_RUNS}
    return {**prior, "rows": rows}, None


def _binary(options: RunOptions, side: str, sandbox=None) -> releases.NodeBinary:
    path, version = getattr(options, f"{side}_binary"), getattr(options, f"{side}_version")
    node_args = tuple(getattr(options, f"{side}_node_args"))
    if path and version:
        raise InputError(f"--{side}-binary and --{side}-version both given; choose one")
    if path:
        return releases.inspect_binary(path, side=side, node_args=node_args, sandbox=sandbox)
    if version:
        return releases.release_binary(
            version, side=side, node_args=node_args, source=options.release_source, mirror=options.dist_mirror
        )
    raise InputError(f"no {side} binary: give --{side}-binary PATH or --{side}-version X.Y.Z")


def _build_both(options: RunOptions, sandbox: dict, design) -> tuple[RunOptions, Path, dict]:
    """Build (or reuse) both sides from ``--repo``: the options with their binaries, the benchmark/, the records."""
    from benchgate import build

    given = [name for name in ("base_binary", "head_binary", "base_version", "head_version") if getattr(options, name)]
    if given:
        raise InputError(f"--repo builds both binaries; drop --{given[0].replace('_', '-')}")
    if not options.head_ref:
        raise InputError("--repo needs --head-ref (and --base-ref, or --base-branch for the merge base)")
    repo = options.repo.resolve()
    how = {"settings": options.build_settings or BuildSettings(), "cache_dir": options.build_cache}
    how.update(use_sandbox=options.use_sandbox, hide=(options.output,))
    base_ref = options.base_ref or build.merge_base(repo, options.head_ref, options.base_branch)
    records, binaries = {}, {}
    for side, ref, trusted in (("base", base_ref, True), ("head", options.head_ref, options.trusted)):
        # The head is the pull request's code: built untrusted (in the sandbox, read-only compiler cache).
        say(f"building the {side} ({ref})")
        try:
            result = build.build_ref(repo, ref, side=side, trusted=trusted, **how)
        except build.SideBuildError as error:
            # The report job must still learn that (and which side) did not build: a record, no samples. When the
            # head fails to build, the record still names the base built before it.
            record = build_failure_record(options, error, records, sandbox, design)
            results.write_run_record(options.output / "run.json", record)
            with results.ResultsWriter(options.output / "results.csv"):
                pass
            say(f"build failure recorded in {options.output} (run.json, empty results.csv)")
            raise
        records[side] = result.record()
        binaries[f"{side}_binary"] = str(result.binary)
    benchmark_dir = (options.benchmark_dir or result.worktree / "benchmark").resolve()  # the head's: built last
    return replace(options, **binaries), benchmark_dir, records


def build_failure_record(options: RunOptions, error, built: dict, sandbox: dict, design) -> dict:
    """run.json of a ``--repo`` run whose ``error`` side did not build (``built``: the sides built before it)."""
    from benchgate import build

    tail = build.log_tail(error.log, lines=BUILD_LOG_TAIL_LINES) if error.log else error.message
    binaries = {
        side: {"ref": record.get("ref"), "sha": record.get("sha"), "source": "build"} for side, record in built.items()
    }
    binaries[error.side] = {"ref": error.ref, "sha": error.sha, "source": "build"}
    if "head" not in binaries and options.head_ref:
        # The base failed first: name the head anyway, so the report can match it to the approved commit.
        try:
            head_sha = build.resolve_commit(options.repo.resolve(), options.head_ref)
        except BenchgateError:
            head_sha = None
        binaries["head"] = {"ref": options.head_ref, "sha": head_sha, "source": "build"}
    selection = {"categories": list(options.categories), "shard": options.shard}
    if design is not None:
        selection["files"] = []  # nothing ran: an adaptive record names its (here no) files
    failure = {"side": error.side, "ref": error.ref, "sha": error.sha, "log_tail": tail[-BUILD_LOG_TAIL_CHARS:]}
    record = _record(options, design, binaries, selection, sandbox, environment={}, build=built)
    record.update(
        ended_at=record["started_at"], build_failure={**failure, "infrastructure": bool(error.infrastructure)}
    )
    return record


def _select(options: RunOptions, benchmark_dir: Path) -> tuple[Selection | None, dict | None]:
    """The selection, plus the --changed-from placement when categories come from a diff."""
    categories = tuple(options.categories)
    placement = None
    if options.changed_from:
        # the categories of benchmark_dir that the change from --changed-from to the checkout's HEAD touches
        mapping = changedfiles.load_mapping(options.changed_map)
        changed = changedfiles.changed_files(benchmark_dir.parent, options.changed_from)
        available = set(suite.list_categories(benchmark_dir))
        placed = changedfiles.map_changes(changed, mapping, available, options.changed_default)
        for note in placed.notes():
            say(note)
        placement = {"from": options.changed_from, **placed.record()}
        categories = tuple(dict.fromkeys(categories + tuple(placed.categories)))
        if not categories:
            return None, placement
    chosen = {"filters": options.filters, "excludes": options.excludes, "set_args": options.set_args}
    selection = suite.select(benchmark_dir, categories, shard=suite.parse_shard(options.shard), **chosen)
    return selection, placement


def _record(options: RunOptions, design, binaries: dict, selection: dict, sandbox: dict, **fields) -> dict:
    """run.json as a run (or a build failure, which ends there) starts it: nothing measured yet."""
    record = {
        "schema": 1,
        "tool": "benchgate",
        "binaries": binaries,
        "selection": selection,
        "seed": None,
        "runs": options.runs,
        "started_at": now(),
        "ended_at": None,
        "complete": False,  # a build failure measured nothing: a reader that ignores build_failure sees no pass
        "interrupted": False,
        "options": {"timeout": options.timeout, "cpuset": options.cpuset},
        **new_progress(),
        "sandbox": sandbox,
        **fields,
    }
    if design is not None:  # even with nothing run or built: report reads the design of --runs auto, the default
        record.update(adaptive.new_record_fields(design))
    return record


def prepare(options: RunOptions) -> tuple[RunPlan | None, dict]:
    """The plan (None: nothing selected) and run.json of a new or resumed run (a build failure is written)."""
    output = options.output
    record_path, csv_path = output / "run.json", output / "results.csv"
    if options.resume:
        record = results.load_run_record(record_path, resume=True)
        if record.complete:
            raise InputError("--resume: this run is already complete", where=str(output))
        return _resume(options, record)
    if csv_path.exists() or record_path.exists():
        raise InputError(
            "already holds a run (results.csv/run.json); use --resume or another --output", where=str(output)
        )
    if options.timeout is not None and options.timeout <= 0:
        raise InputError(f"--timeout {options.timeout}: must be positive")
    # the adaptive design of --runs auto from the run's gate policy (None for fixed runs)
    fields = ("threshold", "correction", "min_effect", "inconclusive_above", "unchanged_confidence", "max_resolution")
    settings = {name: getattr(options.policy, name) for name in fields}
    design = adaptive.design_for(options.runs, options.min_runs, options.max_runs, pairing=options.pairing, **settings)
    # --set CPUSET=... (the first) pins like --cpuset, and still reaches every file as in compare.js
    cpusets = [value.partition("=")[2] for value in options.set_args if value.startswith("CPUSET=")]
    if cpusets and options.cpuset not in (None, cpusets[0]):
        raise InputError(f"--cpuset {options.cpuset} and --set CPUSET={cpusets[0]} disagree")
    cpuset = cpusets[0] if cpusets else options.cpuset
    duet.check_cpuset(cpuset)
    cpuset, cpu_sets = duet.check_options(options.pairing, options.slots, cpuset)
    options = replace(options, cpuset=cpuset)
    suite.parse_set(options.set_args)
    suite.parse_shard(options.shard)
    if options.history_store:  # a malformed URL is refused now, not after the builds
        shown_store(options.history_store)
    if options.repo is None and options.build_settings is not None:
        raise InputError("--config and the build options only apply with --repo (which builds both sides)")
    untrusted = trust.untrusted_head(options)
    found = sandbox_module.probe() if untrusted and options.use_sandbox else None  # now, not after a four-hour build
    sandbox = trust.record(untrusted, found)
    if untrusted and found is None:
        say("warning: the untrusted head runs WITHOUT the sandbox (--no-sandbox)")
    built: dict = {}
    if options.repo is not None:
        options, benchmark_dir, built = _build_both(options, sandbox, design)
    else:
        benchmark_dir = (options.benchmark_dir or Path.cwd() / "benchmark").resolve()  # as compare.js is used
    selection, placement = _select(options, benchmark_dir)
    repo_paths = trust.repository_paths(options.repo) if found and options.repo else []  # the builds are done
    confine = {"output": output, "caches": (options.build_cache,), "repo_paths": repo_paths}
    head_alone = [options.head_binary] if options.head_binary else []  # the --version probe exposes it alone
    head_probe = trust.confinement(found, binaries=head_alone, benchmark_dir=None, **confine)
    binaries = {"base": _binary(options, "base"), "head": _binary(options, "head", head_probe if untrusted else None)}
    paths = [binary.path for binary in binaries.values()]
    confined = trust.confinement(found, binaries=paths, benchmark_dir=benchmark_dir, **confine) if untrusted else None
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**32)
    chosen = selection if selection is not None else Selection(benchmark_dir=str(benchmark_dir), files=())
    skipped = suite.http_skips(selection) if selection is not None else []
    environment = system.with_runner_facts(system.collect(cpuset=options.cpuset), options.cpuset, cpu_sets)
    sides = {side: binary.record() for side, binary in binaries.items()}
    selection_record = chosen.model_dump(mode="json", exclude={"changed"})
    record = _record(options, design, sides, selection_record, sandbox, seed=seed, environment=environment)
    record.update(skipped=skipped, pairing=results.pairing_record(options.pairing))
    record["schedule"] = "interleaved-rotated-v1"
    if options.pairing != duet.SEQUENTIAL or options.slots != 1:
        record["options"].update(pairing=options.pairing, slots=options.slots)
    for note in protocol.environment_notes(os.environ):
        protocol.add_warning(record["protocol_warnings"], note)
    if placement is not None:
        record["selection"]["changed"] = placement
    if built:
        record["build"] = built
        for side, build in built.items():
            record["binaries"][side].update({"ref": build.get("ref"), "sha": build.get("sha"), "source": "build"})
    if selection is None:
        return None, record
    skipped_files = {item["filename"] for item in skipped}
    files = [name for name in selection.files if name not in skipped_files]
    if options.history_store and files:  # a store that is down is a warning
        prior, warning = read_prior(options.history_store, files, environment, binaries["base"].node_args)
        if prior is not None:
            record["prior"] = prior
            say(f"main's history ({prior['store']}) gives the noise of {len(prior['rows'])} row(s)")
        if warning is not None:
            environment["warnings"].append(warning[:512])
    return _plan(results.parse_run_record(record, str(output / "run.json")), binaries, confined), record


def _resume(options: RunOptions, record: results.RunRecord) -> tuple[RunPlan, dict]:
    """The plan and record of an interrupted run (binaries unchanged); an untrusted head is confined again."""
    output = options.output
    if record.adaptive_run:  # its design rebuilds the looks: refused now, before anything runs or is cut back
        from benchgate.stats.sequential import Design

        Design.from_json(record.design, where=f"{output / 'run.json'} design")
    draft = {"samples": 0, "protocol_warnings": [], **record.to_json()}  # a record from before they were kept
    previous = draft.get("sandbox")
    untrusted = bool(previous and previous.get("untrusted_head") is True) or options.untrusted_head
    found = sandbox_module.probe() if untrusted and options.use_sandbox else None
    confined = None
    if untrusted:
        binaries = [binary.path for binary in (record.binaries.base, record.binaries.head) if binary.path is not None]
        caches = [
            Path(item["worktree"]).parent.parent  # <cache>/worktrees/<sha>-<key>
            for item in (record.build or {}).values()
            if isinstance(item, dict) and isinstance(item.get("worktree"), str) and os.path.isabs(item["worktree"])
        ]
        directory = record.selection.benchmark_dir
        confined = trust.confinement(
            found,
            binaries=binaries,
            benchmark_dir=Path(directory) if directory is not None else None,
            output=output,
            caches=(*caches, options.build_cache),
            repo_paths=trust.repository_paths(options.repo) if found and options.repo else [],
        )
        draft["sandbox"] = trust.record(True, found, previous)
    binaries = {}
    for side in ("base", "head"):
        stored = getattr(record.binaries, side)
        binary = releases.inspect_binary(
            stored.path, side=side, node_args=stored.node_args, sandbox=confined if side == HEAD else None
        )
        if binary.sha256 != stored.sha256:
            raise InputError(
                f"--resume: the {side} binary {stored.path} changed since the run started", where=str(output)
            )
        binaries[side] = binary
    selection = record.selection
    if not Path(selection.benchmark_dir).is_dir():
        raise InputError(f"--resume: the benchmark directory {selection.benchmark_dir} is gone", where=str(output))
    return _plan(record, binaries, confined), draft


def _plan(record: results.RunRecord, binaries: dict, sandbox) -> RunPlan:
    """The plan that run.json (a new run's, or one being resumed) describes, with its checked binaries."""
    selection = record.selection
    skipped_files = {item.filename for item in record.skipped if item.side is None}
    return RunPlan(
        benchmark_dir=Path(selection.benchmark_dir),
        files=tuple(name for name in selection.files if name not in skipped_files),
        binaries=binaries,
        runs=int(record.design["looks"][-1]) if record.adaptive_run else int(record.runs),
        seed=record.seed,
        set_args=selection.set,
        timeout=record.options.timeout,
        cpuset=record.options.cpuset,
        sandbox=sandbox,
        configurations=dict(record.configurations),
        pairing=record.options.pairing or "sequential",
        slots=record.options.slots or 1,
    )
