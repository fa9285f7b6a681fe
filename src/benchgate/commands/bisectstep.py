"""`benchgate action bisect`: action.yml's bisect mode, the nightly loop over the store's new change points.

Each change point since ``bisect-since`` spanning more than one commit, and not yet reported, is bisected
(``benchgate bisect --change ID``) and its report copied to the site; docs/bisect.md says when it runs.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchgate import config
from benchgate.errors import EXIT_OK, BenchgateError, InputError
from benchgate.github import actions_env, events
from benchgate.github.actions_env import given

DEFAULT_SINCE_DAYS = 2


def since_date(text: str, now: datetime) -> str:
    """``bisect-since`` as a UTC ISO-8601 time: a date or time as given, or N whole days before ``now``."""
    from benchgate.history.runentry import iso_date

    text = text.strip() or str(DEFAULT_SINCE_DAYS)
    if re.fullmatch(r"[0-9]{1,4}", text):
        return (now - timedelta(days=int(text))).strftime("%Y-%m-%dT%H:%M:%SZ")
    return iso_date(text, "input bisect-since")


def commits_between(repo: Path, before: str, after: str) -> int | None:
    """How many commits ``before..after`` holds in ``repo``; None when git cannot tell (a commit not fetched)."""
    completed = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--count", f"{before}..{after}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return int(completed.stdout) if completed.returncode == 0 and completed.stdout.strip().isdigit() else None


def change_points_since(store: str, config_path: str, since: str) -> list:
    """The change points of every stored series dated ``since`` or later (none while every series is short)."""
    from benchgate.config.historysettings import configured_history, resolve_store
    from benchgate.history.changepoints import find_changes
    from benchgate.history.reading import series

    found = find_changes(series(resolve_store(store or None, configured_history(config_path))))
    if found.looked_at == 0:
        print("::notice title=benchgate::no stored series is long enough for change points yet: nothing to bisect")
    return [point for point in found.points if point.date >= since]


def run_bisect(argv: list[str]) -> int:
    """``benchgate bisect ARGV``, the command's own handler in this process; a one-line error is its status."""
    from benchgate.commands import bisect

    parser = argparse.ArgumentParser(prog="benchgate")
    bisect.register(parser.add_subparsers())
    args = parser.parse_args(["bisect", *argv])
    try:
        return int(args.handler(args))
    except BenchgateError as error:
        print(f"benchgate: error: {error.one_line()}", file=sys.stderr)
        return error.exit_status


def _warn(message: str) -> None:
    print(f"::warning title=benchgate::{actions_env.escape_data(message)}")


def bisect_step(environ: Mapping[str, str], *, now: datetime | None = None) -> int:
    """Bisect each new change point spanning more than one commit; ``reports=N`` to ``$GITHUB_OUTPUT``."""
    event_name = environ.get("GITHUB_EVENT_NAME", "")
    default_branch = events.event_default_branch(environ.get("GITHUB_EVENT_PATH", ""))
    refusal = events.mode_refusal("bisect", event_name, environ.get("GITHUB_REF", ""), default_branch)
    if refusal is not None:
        print(f"::error title=benchgate::{actions_env.escape_data(refusal)}")
        return InputError.exit_status
    try:
        return _bisect_new_changes(environ, now or datetime.now(UTC))
    except BenchgateError as error:
        print(f"::error title=benchgate::{actions_env.escape_data(error.one_line())}")
        return error.exit_status


def _bisect_new_changes(environ: Mapping[str, str], now: datetime) -> int:
    repo = Path(given(environ, "repo-path") or ".")
    if not (repo / ".git").exists():
        raise InputError("not a git checkout: bisect mode builds its commits", where=f"input repo-path {repo}")
    store, config_path = given(environ, "history-store"), given(environ, "config") or config.DEFAULT_CONFIG_PATH
    output = Path(given(environ, "bisect-output") or Path(environ.get("RUNNER_TEMP") or ".") / "benchgate-bisect")
    site = Path(given(environ, "history-site")) if given(environ, "history-site") else None
    reports = 0
    for point in change_points_since(store, config_path, since_date(given(environ, "bisect-since"), now)):
        report_dir, site_report = output / point.id, site / "bisect" / f"{point.id}.md" if site else None
        if (report_dir / "bisect.json").exists() or (site_report is not None and site_report.exists()):
            continue  # already bisected
        span = commits_between(repo, point.before_commit, point.commit) if point.before_commit else None
        if span is None:
            _warn(f"{point.id}: its commits {point.before_commit[:12]}..{point.commit[:12]} are not in {repo}")
            continue
        if span <= 1:
            continue  # the change point names its commit already
        argv = ["--change", point.id, f"--repo={repo}", "--no-progress", f"--output={report_dir}"]
        argv += [f"--store={store}"] if store else []
        argv += ["--no-sandbox"] if given(environ, "no-sandbox") == "true" else []
        argv += ["--resume"] if (report_dir / "bisect-state.json").exists() else []
        status = run_bisect(argv)
        if status != EXIT_OK:
            _warn(f"bisect of {point.id} ended with status {status}")
        if (report_dir / "bisect.md").exists():
            reports += 1
            if site_report is not None:
                site_report.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(report_dir / "bisect.md", site_report)
    actions_env.set_outputs({"reports": reports})
    if site is not None:
        from benchgate.commands.history import site as write_site
        from benchgate.config.historysettings import configured_history, resolve_store

        configured = configured_history(config_path)
        return write_site(site, resolve_store(store or None, configured), configured)
    return EXIT_OK
