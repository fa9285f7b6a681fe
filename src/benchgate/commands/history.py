"""`benchgate history record|changes|show|site`: the store of trusted runs of main and what it shows.

Each subcommand is a function tests call with keyword arguments (the store: ``resolve_store``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchgate import config
from benchgate.config.historysettings import ENVIRONMENT, configured_history, history_settings, resolve_store
from benchgate.errors import EXIT_OK, HistoryTooShort, InputError

FORMATS = ("text", "json")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("history", help="record trusted runs of main, find change points, show series")
    parser.set_defaults(handler=_handler)
    commands = parser.add_subparsers(dest="history_command", required=True, parser_class=type(parser))

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--store", default=None, metavar="URL", help="sqlite:///FILE or postgresql+psycopg://...")
        sub.add_argument("--config", default=config.DEFAULT_CONFIG_PATH, help="repository configuration file")

    record_parser = commands.add_parser("record", help="store a run directory of `benchgate run`")
    record_parser.add_argument("run_dir", metavar="RUN_DIR", type=Path)
    common(record_parser)
    record_parser.add_argument("--commit", default=None, metavar="SHA", help="default: run.json's head commit")
    record_parser.add_argument("--date", default=None, metavar="ISO-8601", help="default: run.json's start time")
    record_parser.add_argument("--branch", default=None, metavar="NAME", help="default: the head's ref, or main")

    changes_parser = commands.add_parser("changes", help="change points of every stored series")
    common(changes_parser)
    changes_parser.add_argument("--format", choices=FORMATS, default="text")
    changes_parser.add_argument("--since", default=None, metavar="ISO-8601", help="change points from this date on")
    changes_parser.add_argument("--branch", default=None, metavar="NAME", help="one branch's series (default: all)")

    show_parser = commands.add_parser("show", help="the series whose name contains FILTER, as tables with bars")
    show_parser.add_argument("filter", metavar="FILTER", help="a substring of 'filename configuration'")
    common(show_parser)
    show_parser.add_argument("--branch", default=None, metavar="NAME", help="one branch's series (default: all)")

    site_parser = commands.add_parser("site", help="a static site of every series (index.html, per-benchmark pages)")
    site_parser.add_argument("out_dir", metavar="OUT_DIR", type=Path)
    common(site_parser)
    site_parser.add_argument(
        "--commit-url",
        default=None,
        metavar="TEMPLATE",
        help="link each commit, e.g. https://github.com/nodejs/node/commit/{sha}",
    )


def _handler(args: argparse.Namespace) -> int:
    # Each subcommand's options are named as its function's keywords; --config is config_path.
    given = {name: value for name, value in vars(args).items() if name not in ("command", "history_command", "handler")}
    given["config_path"] = given.pop("config")
    return {"record": record, "changes": changes, "show": show, "site": site}[args.history_command](**given)


def record(
    *,
    run_dir: Path,
    store: str | None = None,
    config_path: str | Path | None = config.DEFAULT_CONFIG_PATH,
    commit: str | None = None,
    date: str | None = None,
    branch: str | None = None,
) -> int:
    """Record ``run_dir`` into the store; prints one line saying what was done."""
    from benchgate.history.recording import record_run

    configured = configured_history(config_path)
    url = resolve_store(store, configured)
    result = record_run(Path(run_dir), url, commit=commit, date=date, branch=branch, keep=configured.keep)
    print(result.describe())
    return EXIT_OK


def changes(
    *,
    store: str | None = None,
    config_path: str | Path | None = config.DEFAULT_CONFIG_PATH,
    format: str = "text",
    since: str | None = None,
    branch: str | None = None,
) -> int:
    """Print the change points of every series (text, or JSON: a list of objects)."""
    from benchgate.history.changepoints import MIN_POINTS, find_changes
    from benchgate.history.reading import series
    from benchgate.history.runentry import iso_date
    from benchgate.report.historytext import changes_json, render_changes_text

    if format not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, not {format!r}")
    since_date = iso_date(since, "--since") if since else None
    all_series = series(resolve_store(store, configured_history(config_path)), branch=branch)
    found = find_changes(all_series)
    if found.looked_at == 0:
        longest = max((len(one.points) for one in all_series), default=0)
        raise HistoryTooShort(
            f"no series has the {MIN_POINTS} stored runs change points need "
            f"({len(all_series)} series, the longest has {longest} runs)"
        )
    points = [point for point in found.points if since_date is None or point.date >= since_date]
    if format == "json":
        print(changes_json(points))
    else:
        print(render_changes_text(points, looked_at=found.looked_at, too_short=len(found.too_short)))
    return EXIT_OK


def show(
    *,
    filter: str,
    store: str | None = None,
    config_path: str | Path | None = config.DEFAULT_CONFIG_PATH,
    branch: str | None = None,
) -> int:
    """Print each series whose name contains ``filter`` as a table, its change points marked."""
    from benchgate.history.changepoints import MIN_POINTS, change_points
    from benchgate.history.reading import series
    from benchgate.report.historytext import render_series

    found = series(resolve_store(store, configured_history(config_path)), filter, branch=branch)
    if not found:
        raise InputError(f"no stored series matches {filter!r}")
    tables = []
    for one in found:
        marks = change_points(one) if len(one.points) >= MIN_POINTS else []
        tables.append(render_series(one, marks))
    print("\n\n".join(tables))
    return EXIT_OK


def site(
    *,
    out_dir: Path,
    store: str | None = None,
    config_path: str | Path | None = config.DEFAULT_CONFIG_PATH,
    commit_url: str | None = None,
) -> int:
    """Write the static site of every series into ``out_dir``; ``commit_url`` links commits (``{sha}``)."""
    from benchgate.history.changepoints import find_changes
    from benchgate.history.reading import series
    from benchgate.history.site import write_site

    configured = configured_history(config_path)
    all_series = series(resolve_store(store, configured))
    if commit_url is not None and "{sha}" not in commit_url:
        raise InputError(f"must contain {{sha}} where the commit goes, not {commit_url[:80]!r}", where="--commit-url")
    points = find_changes(all_series).points
    written = write_site(Path(out_dir), all_series, points, site_url=configured.site_url or None, commit_url=commit_url)
    print(f"wrote {len(written)} files to {out_dir}", file=sys.stderr)
    return EXIT_OK


def comment_context(settings: Any, gated: Any, *, environment: Mapping[str, str] | None = None) -> str:
    """The PR comment's history section for the regressed and undecided rows of ``gated``; '' without a store.

    Only a configured store counts ($BENCHGATE_HISTORY or the configuration's ``history.store``); one
    that cannot be read is said on stderr and the comment goes out without the section.
    """
    from benchgate.errors import BenchgateError

    configured = history_settings(settings.history)
    environment = os.environ if environment is None else environment
    if not (environment.get(ENVIRONMENT) or configured.store) or gated is None or len(gated) == 0:
        return ""
    wanted = gated["gating"].astype(bool) | gated["undecided"].astype(bool)
    rows = list(dict.fromkeys(zip(gated["filename"][wanted], gated["configuration"][wanted], strict=True)))
    if not rows:
        return ""
    from benchgate.history.changepoints import MIN_POINTS, change_points
    from benchgate.history.context import row_history
    from benchgate.history.reading import series
    from benchgate.report.historytext import render_history_context

    try:
        stored = series(resolve_store(None, configured, environment), branch="main")
    except BenchgateError as error:
        print(f"benchgate: warning: no history context in the comment: {error.one_line()}", file=sys.stderr)
        return ""
    names = {f"{filename} {configuration}" for filename, configuration in rows}
    relevant = [one for one in stored if one.key.label() in names]
    changes = [change for one in relevant if len(one.points) >= MIN_POINTS for change in change_points(one)]
    histories = [row_history(relevant, changes, filename, configuration) for filename, configuration in rows]
    return render_history_context(histories, site_url=configured.site_url or None)
