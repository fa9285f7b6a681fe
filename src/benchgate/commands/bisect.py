"""`benchgate bisect`: the first commit or release at which a benchmark's rows become like the later end."""

import argparse
import json
import re
import sys
from pathlib import Path

from benchgate.bisect import probes, render, search, state
from benchgate.build import releases
from benchgate.commands.build import add_sandbox_option
from benchgate.commands.run import run_option_values
from benchgate.config import Settings, flags
from benchgate.errors import EXIT_BUILD_FAILED, EXIT_INCONCLUSIVE, EXIT_OK, InputError

DEFAULT_LINK = "https://github.com/nodejs/node/commit"
MARKER = "<!-- benchgate bisect -->"
# The budget's flags by the search.Budget field each sets; their defaults are Budget's.
_BUDGET_FLAGS = {
    "runs": ("--batch-runs", "runs of a probe's first batch and of each more"),
    "max_runs": ("--probe-runs", "runs of one undecided probe at most"),
    "max_probes": ("--max-probes", "candidates measured at most, ends included"),
    "max_hours": ("--max-hours", "wall time spent measuring at most"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bisect", help="find the commit or release at which benchmark rows changed")
    parser.add_argument("categories", nargs="*", metavar="CATEGORY", help="benchmark categories, as for run")
    parser.add_argument("--output", "-o", type=Path, required=True, help="directory for the state and the probes")
    ends = parser.add_argument_group("what is bisected (one of)")
    ends.add_argument("--from", dest="from_ref", metavar="REF", help="the earlier commit (with --to and --repo)")
    ends.add_argument("--to", dest="to_ref", metavar="REF", help="the later commit; its first-parent history is walked")
    ends.add_argument("--repo", type=Path, help="the Node checkout the commits are built from")
    ends.add_argument("--from-version", metavar="X.Y.Z", help="the earlier official release")
    ends.add_argument("--to-version", metavar="X.Y.Z", help="the later official release")
    ends.add_argument("--releases", metavar="LIST", help="comma-separated releases to choose from (default: all)")
    ends.add_argument("--change", metavar="ID", help="a change point of `history changes --format json`")
    ends.add_argument("--store", metavar="URL", help="with --change: the history store (default $BENCHGATE_HISTORY)")
    parser.add_argument("--release-source", default="auto", choices=releases.SOURCES)
    parser.add_argument("--benchmark-dir", type=Path, help="the benchmark/ directory (default: the later end's)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="per benchmark process")
    flags.add_flags(parser, "bisect")  # --filter, --exclude, --set, --cpuset, --min-effect: as for run
    parser.add_argument("--build-cache", type=Path, metavar="DIR", help="build cache (default: $BENCHGATE_CACHE)")
    parser.add_argument("--trusted-branch", default="main", help="commits on it build trusted (default main)")
    add_sandbox_option(parser)
    budget = parser.add_argument_group("budget")
    for name, (flag, what) in _BUDGET_FLAGS.items():
        default = getattr(search.Budget(), name)
        metavar = "H" if isinstance(default, float) else "N"  # as docs/cli.md shows them
        budget.add_argument(
            flag, dest=name, type=type(default), default=default, metavar=metavar, help=f"{what} ({default:g})"
        )
    parser.add_argument("--seed", type=int, default=0, help="seed of each batch's schedule")
    parser.add_argument("--resume", action="store_true", help="continue the bisection in --output")
    parser.add_argument("--format", dest="output_format", default="text", choices=("text", "markdown", "json"))
    parser.add_argument("--link", default=DEFAULT_LINK, metavar="URL", help="commit links: URL/SHA")
    parser.add_argument("--post", metavar="WHERE", help="post the report: issue:N, pr:N or new (an issue)")
    parser.add_argument("--post-only", action="store_true", help="with --post: post the report in --output")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress lines")
    parser.set_defaults(handler=_handler)


def _setup_and_candidates(
    args: argparse.Namespace, settings: Settings
) -> tuple[dict, list[search.Candidate], probes.Prober]:
    """What is bisected (the state's identity), its candidates, and the prober that measures them."""
    # --filter, --exclude, --set and --cpuset by the names run gives them, as Selection does
    chosen = run_option_values(settings, "bisect")
    del chosen["policy"]
    benchmark_dir = args.benchmark_dir.resolve() if args.benchmark_dir else None
    selection = probes.Selection(benchmark_dir, tuple(args.categories), timeout=args.timeout, **chosen)
    if args.change:
        args.from_ref, args.to_ref = probes.change_ends(args.change, args.store, selection)
        if not args.repo:
            raise InputError("--change needs --repo PATH: the checkout its commits are built from")
    by_commit = args.from_ref or args.to_ref or args.repo
    by_release = args.from_version or args.to_version
    if bool(by_commit) == bool(by_release):
        raise InputError("give --from REF --to REF --repo PATH, or --from-version X --to-version Y, or --change ID")
    names = ("release_source", "use_sandbox", "seed", "build_cache", "trusted_branch")
    given = {name: getattr(args, name) for name in names}
    prober = probes.Prober(workdir=args.output.resolve(), selection=selection, **given)
    if by_commit:
        if not (args.from_ref and args.to_ref and args.repo):
            raise InputError("a commit bisection needs --from REF, --to REF and --repo PATH")
        prober.repo = args.repo.resolve()
        candidates, source = probes.commit_candidates(prober.repo, args.from_ref, args.to_ref, args.link), "build"
    else:
        if not (args.from_version and args.to_version):
            raise InputError("a release bisection needs --from-version and --to-version")
        listed = [item.strip() for item in args.releases.split(",")] if args.releases else None
        candidates = probes.release_candidates(args.from_version, args.to_version, listed)
        source = f"release:{args.release_source}"
    setup = {"from": candidates[0].key, "to": candidates[-1].key, "source": source, "selection": selection.record()}
    if selection.benchmark_dir is not None:
        setup["benchmark_dir"] = str(selection.benchmark_dir)
    return setup, candidates, prober


def _handler(args: argparse.Namespace) -> int:
    budget = {name: getattr(args, name) for name in _BUDGET_FLAGS}
    for name, value in budget.items():
        if value <= 0:
            raise InputError(f"{_BUDGET_FLAGS[name][0]} must be positive, not {value:g}")
    if args.post and not re.fullmatch(r"(issue|pr):[1-9][0-9]*|new", args.post):
        raise InputError(f"--post {args.post!r}: expected issue:N, pr:N or new")
    if args.post_only:
        return _post_finished(args)
    if args.max_probes < 2:
        raise InputError("--max-probes must be at least 2: the two ends are probes")
    settings = flags.settings_from_flags(args, "bisect")
    setup, candidates, prober = _setup_and_candidates(args, settings)
    budget = search.Budget(**{**budget, "max_runs": max(args.max_runs, args.runs)}, min_effect=settings.min_effect)
    state_path = args.output / "bisect-state.json"
    if args.resume:
        bisection = state.load(state_path, setup)
        bisection.budget = budget  # a resumed bisection may be given more budget
        if [candidate.key for candidate in bisection.candidates] != [candidate.key for candidate in candidates]:
            raise state.BisectStateError("refused: its candidates are not this history's", where=str(state_path))
    else:
        if state_path.exists():
            raise InputError(f"{state_path} exists: continue it with --resume, or choose another --output")
        bisection = search.Bisection(candidates, budget)
    if prober.repo is not None and prober.selection.benchmark_dir is None:
        prober.use_benchmarks_of(candidates[-1].key)
    progress = sys.stderr if args.progress else None
    done = state.run(bisection, prober.measure, state_path=state_path, setup=setup, progress=progress)
    data = render.report_data(bisection, done, setup)
    texts = {"json": json.dumps(data, indent=2) + "\n", "markdown": render.render(data, markdown=True)}
    (args.output / "bisect.json").write_text(texts["json"])
    (args.output / "bisect.md").write_text(texts["markdown"])
    sys.stdout.write(texts.get(args.output_format) or render.render(data, markdown=False))
    if args.post:
        _post(args.post, texts["markdown"], data)
    if done.reason == "end-failed":
        return EXIT_BUILD_FAILED
    return EXIT_OK if data["culprits"] and done.reason == "found" else EXIT_INCONCLUSIVE


def _post_finished(args: argparse.Namespace) -> int:
    """Post the report a bisection left in --output: data only, nothing of the repository runs."""
    if not args.post:
        raise InputError("--post-only needs --post issue:N, pr:N or new")
    try:
        markdown = (args.output / "bisect.md").read_text(encoding="utf-8")
        data = json.loads((args.output / "bisect.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"no finished bisect report to post: {error}", where=str(args.output)) from None
    if not isinstance(data, dict) or not isinstance(data.get("culprits"), list):
        raise InputError("bisect.json is not a bisect report", where=str(args.output))
    _post(args.post, markdown, data)
    return EXIT_OK


def _post(where: str, markdown: str, data: dict) -> None:
    from benchgate.github.client import GitHubClient

    client = GitHubClient()
    body = f"{MARKER}\n{markdown}"
    if where == "new":
        culprit = data["culprits"][0]["label"] if data["culprits"] else "no culprit"
        url = client.open_issue(f"benchgate bisect: {culprit}"[:200], body)
    else:
        url = client.upsert_comment(int(where.partition(":")[2]), body, MARKER)
    print(f"benchgate: bisect report posted: {url}", file=sys.stderr)
