"""`benchgate history record|changes|show|site`: the store of trusted runs of main and what it shows."""

import argparse
import sys
from pathlib import Path
from typing import Any

from benchgate import config
from benchgate.config.settings import configured_history, resolve_store
from benchgate.errors import EXIT_OK, BenchgateError, HistoryTooShort, InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("history", help="record trusted runs of main, find change points, show series")
    parser.set_defaults(handler=_handler)
    commands = parser.add_subparsers(dest="history_command", required=True, parser_class=type(parser))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", metavar="URL", help="sqlite:///FILE or postgresql+psycopg://...")
    common.add_argument("--config", default=config.DEFAULT_CONFIG_PATH, help="repository configuration file")
    branch = argparse.ArgumentParser(add_help=False)
    branch.add_argument("--branch", metavar="NAME", help="one branch's series (default: all)")

    record_parser = commands.add_parser("record", parents=[common], help="store a run directory of `benchgate run`")
    record_parser.add_argument("run_dir", metavar="RUN_DIR", type=Path)
    record_parser.add_argument("--commit", metavar="SHA", help="default: run.json's head commit")
    record_parser.add_argument("--date", metavar="ISO-8601", help="default: run.json's start time")
    record_parser.add_argument("--branch", metavar="NAME", help="default: the head's ref, or main")
    changes_parser = commands.add_parser("changes", parents=[common, branch], help="change points of every series")
    changes_parser.add_argument("--format", choices=("text", "json"), default="text")
    changes_parser.add_argument("--since", metavar="ISO-8601", help="change points from this date on")
    show_parser = commands.add_parser("show", parents=[common, branch], help="the series whose name contains FILTER")
    show_parser.add_argument("filter", metavar="FILTER", help="a substring of 'filename configuration'")
    site_parser = commands.add_parser("site", parents=[common], help="a static site of every series")
    site_parser.add_argument("out_dir", metavar="OUT_DIR", type=Path)
    site_parser.add_argument("--commit-url", metavar="TEMPLATE", help="commit links, e.g. https://.../commit/{sha}")


def _handler(args: argparse.Namespace) -> int:
    configured = configured_history(args.config)
    url = resolve_store(args.store, configured)
    if args.history_command == "site":
        return site(args.out_dir, url, configured.site_url or None, args.commit_url)
    if args.history_command == "record":
        from benchgate.history.recording import record_run

        given = {"commit": args.commit, "date": args.date, "branch": args.branch}
        print(record_run(args.run_dir, url, keep=configured.keep, **given).describe())
        return EXIT_OK
    from benchgate.history.changepoints import MIN_POINTS, change_points, find_changes
    from benchgate.history.recording import iso_date
    from benchgate.history.store import series
    from benchgate.report.historytext import changes_json, render_changes_text, render_series

    if args.history_command == "show":
        found = series(url, args.filter, branch=args.branch)
        if not found:
            raise InputError(f"no stored series matches {args.filter!r}")
        print("\n\n".join(render_series(one, change_points(one)) for one in found))
        return EXIT_OK
    since = iso_date(args.since, "--since") if args.since else None
    all_series = series(url, branch=args.branch)
    looked_at = sum(len(one.points) >= MIN_POINTS for one in all_series)
    if looked_at == 0:
        longest = max((len(one.points) for one in all_series), default=0)
        raise HistoryTooShort(
            f"no series has the {MIN_POINTS} stored runs change points need "
            f"({len(all_series)} series, the longest has {longest} runs)"
        )
    points = [point for point in find_changes(all_series) if since is None or point.date >= since]
    if args.format == "json":
        print(changes_json(points))
    else:
        print(render_changes_text(points, looked_at=looked_at, too_short=len(all_series) - looked_at))
    return EXIT_OK


def site(out_dir: Path, url: str, site_url: str | None = None, commit_url: str | None = None) -> int:
    """Write the static site of every series into ``out_dir``; ``commit_url`` links commits (``{sha}``)."""
    from benchgate.history.changepoints import find_changes
    from benchgate.history.site import check_commit_url, write_site
    from benchgate.history.store import series

    check_commit_url(commit_url)  # a bad template is refused before the whole store is read
    all_series = series(url)
    written = write_site(Path(out_dir), all_series, find_changes(all_series), site_url=site_url, commit_url=commit_url)
    print(f"wrote {len(written)} files to {out_dir}", file=sys.stderr)
    return EXIT_OK


def comment_context(settings: Any, gated: Any) -> str:
    """The PR comment's history section of ``gated``'s regressed and undecided rows; '' without a configured store."""
    store = resolve_store(None, settings.history, default=None)
    if store is None or gated is None or len(gated) == 0:
        return ""
    wanted = gated["gating"].astype(bool) | gated["undecided"].astype(bool)
    rows = list(dict.fromkeys(zip(gated["filename"][wanted], gated["configuration"][wanted], strict=True)))
    if not rows:
        return ""
    from benchgate.history.changepoints import change_points
    from benchgate.history.model import row_history
    from benchgate.history.store import series
    from benchgate.report.historytext import render_history_context

    try:
        stored = series(store, branch="main", files=[filename for filename, _ in rows])  # SQL: these files only
    except BenchgateError as error:
        print(f"benchgate: warning: no history context in the comment: {error.one_line()}", file=sys.stderr)
        return ""
    relevant = [one for one in stored if (one.key.filename, one.key.configuration) in rows]
    changes = [change for one in relevant for change in change_points(one)]
    histories = [row_history(relevant, changes, filename, configuration) for filename, configuration in rows]
    return render_history_context(histories, site_url=settings.history.site_url or None)
