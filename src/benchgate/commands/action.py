"""`benchgate action STEP`: action.yml's steps, each reading only its environment (docs/action.md)."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchgate import config
from benchgate.build.buildsettings import BuildSettings
from benchgate.build.worktrees import git
from benchgate.config import flags, schema
from benchgate.config.settings import configured_history, resolve_store
from benchgate.errors import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, EXIT_OK, BenchgateError, InputError
from benchgate.github import actions_env, events
from benchgate.github.actions_env import env_name, given

STEPS = ("authorize", "run", "record", "report", "bisect")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("action", help="one step of action.yml, from the step's environment")
    parser.add_argument("step", choices=STEPS, help="the step: authorize, run, record, report or bisect")
    parser.set_defaults(handler=lambda args: STEP_HANDLERS[args.step](os.environ))


def input_values(environ: Mapping[str, str], settings: tuple[schema.Setting, ...]) -> dict[str, str]:
    """The inputs of these settings (those that have one) that the step's environment gives (empty: not given)."""
    values = {setting.key: environ.get(env_name(setting.input), "") for setting in settings if setting.input}
    return {key: value for key, value in values.items() if value.strip()}


def _fail(message: str, level: str = "error") -> int:
    """An ``::error`` (or ``::warning``) line in the step's log; EXIT_BAD_INPUT, a refused input's status."""
    print(f"::{level} title=benchgate::{actions_env.escape_data(message)}")
    return EXIT_BAD_INPUT


def _benchgate(argv: list[str]) -> int:
    """Run ``benchgate ARGV`` as its own process: the command line's exact behaviour and exit status."""
    return subprocess.run([sys.executable, "-m", "benchgate", *argv], check=False).returncode


def authorize_step(environ: Mapping[str, str]) -> int:
    """May this event start a run? authorize with the config, the inputs and the PR's labels."""
    from benchgate.commands.authorize import authorize, print_result

    benchmark_dir = Path(given(environ, "repo-path") or ".") / "benchmark"
    config_path = given(environ, "config") or config.DEFAULT_CONFIG_PATH
    options = input_values(environ, flags.for_command("authorize"))
    found = benchmark_dir if benchmark_dir.is_dir() else None
    return print_result(authorize(config_path=config_path, options=options, benchmark_dir=found))


def carried_settings(text: str, inputs: Mapping[str, str]) -> Any:
    """authorize's run-settings (JSON, with ``sources``) and this job's inputs; a label's value stays above inputs."""
    try:
        carried = json.loads(text) if text.strip() else {}
    except ValueError as error:
        raise InputError(f"input run-settings is not JSON ({error})") from None
    if not isinstance(carried, dict):
        raise InputError("input run-settings is not a JSON object")
    sources = carried.get("sources") if isinstance(carried.get("sources"), dict) else {}
    layers: dict[str, dict[str, Any]] = {"file": {}, "option": {}, "label": {}}
    for name, value in carried.items():
        setting = schema.INPUTS.get(name)
        if setting is None or not setting.run or not isinstance(value, str) or not value.strip():
            continue  # known run-settings only, as data: never evaluated
        layer = layers.get(sources.get(name), layers["option"])
        layer[setting.key] = schema.parse_setting(setting.key, value, where=f"input run-settings {name}")
    layers["option"].update(config.parse_options(inputs, where="input"))
    return config.resolve(file_values=layers["file"], option_values=layers["option"], label_values=layers["label"])


def _node_args(environ: Mapping[str, str], side: str) -> tuple[str, ...]:
    """The ``SIDE-node-args`` input split into flags; an unbalanced quote is an InputError naming the input."""
    from benchgate.commands.run import parse_node_args

    try:
        return parse_node_args(given(environ, f"{side}-node-args"))
    except argparse.ArgumentTypeError as error:
        raise InputError(str(error), where=f"input {side}-node-args") from None


def run_step(environ: Mapping[str, str]) -> int:
    """Build and benchmark (no token): the merged run-settings passed straight on to ``benchgate run``."""
    from benchgate.commands import run

    run_settings = tuple(setting for setting in schema.SETTINGS if setting.run)
    try:
        settings = carried_settings(given(environ, "run-settings"), input_values(environ, run_settings))
        node_args = {f"{side}_node_args": _node_args(environ, side) for side in ("base", "head")}
    except InputError as error:
        return _fail(error.one_line())
    temp, results = Path(environ.get("RUNNER_TEMP") or "."), given(environ, "results")
    repo = given(environ, "repo-path") or "."
    base_ref, head_ref = given(environ, "base-ref"), given(environ, "head-ref")
    binaries = given(environ, "base-binary") or given(environ, "head-binary")
    benchmark_dir = given(environ, "benchmark-dir")
    values: dict[str, Any] = {"output": Path(results), "use_sandbox": given(environ, "no-sandbox") != "true"}
    values["benchmark_dir"] = Path(benchmark_dir) if benchmark_dir else None
    if binaries:
        values.update({f"{side}_binary": given(environ, f"{side}-binary") for side in ("base", "head")})
        values["benchmark_dir"] = Path(benchmark_dir or Path(repo) / "benchmark")
        # the benchmark files are the PR's checkout: both sides sandboxed
        values["untrusted_head"] = environ.get("GITHUB_EVENT_NAME", "") in events.PULL_REQUEST_EVENTS
    elif not head_ref:
        return _fail("no head-ref (and no approved head SHA): nothing to benchmark")
    else:
        values.update(repo=Path(repo), head_ref=head_ref, base_ref=base_ref or None)
        # the base branch's build settings, checked by benchgate like the config file
        values["build_settings"] = BuildSettings.from_mapping(dict(settings.build)) if settings.build else None
    categories = settings.categories
    if not categories and not binaries and base_ref:
        values["changed_from"] = base_ref  # no categories configured: the ones the changed files map to
        if settings.changed_files:
            (temp / "benchgate-changed-map.json").write_text(settings.changed_files + "\n")
            values["changed_map"] = temp / "benchgate-changed-map.json"
    elif not categories:
        categories = ("all",)
    actions_env.set_outputs({"results-dir": results})
    status = run.run_and_analyze({**values, **node_args, "categories": tuple(categories)}, settings)
    # 1 (fail) and 6 (inconclusive) are the run's own reading of the gate: the report step decides, with
    # config and trusted labels. A failed build (4) still wrote run.json with build_failure: the report posts it.
    return EXIT_OK if status in (EXIT_GATE_FAILED, EXIT_INCONCLUSIVE) else status


def record_step(environ: Mapping[str, str]) -> int:
    """Record the run into the history store (mode all on a push: the repository's own commits)."""
    argv = ["history", "record", given(environ, "results"), f"--config={given(environ, 'config')}"]
    # Given binaries measured no commit of their own: the pushed commit (input commit) is the one measured.
    named = {"branch": "branch", "commit": "commit", "store": "history-store"}  # flag: input
    argv += [f"--{flag}={given(environ, name)}" for flag, name in named.items() if given(environ, name)]
    return _benchgate(argv)


def report_step(environ: Mapping[str, str]) -> int:
    """Analyse, comment and check: report with the config, the inputs and the PR's labels."""
    temp = Path(environ.get("RUNNER_TEMP") or ".") / "benchgate-report"
    argv = ["report", f"--config={given(environ, 'config')}", f"--report-path={temp / 'report.md'}"]
    argv += [f"--plot={temp / 'benchmark.svg'}"] if given(environ, "plot") == "true" else []
    benchmark_dir = Path(given(environ, "repo-path") or ".") / "benchmark"
    argv += [f"--benchmark-dir={benchmark_dir}"] if benchmark_dir.is_dir() else []
    # report checks --head-sha against the head commit the results record. A run of given binaries
    # (mode all) measured no commit, so only a build of the approved commit is checked against it.
    approved = "" if given(environ, "given-binaries") else given(environ, "approved-sha")
    head_sha = given(environ, "head-sha") or approved
    options = {**input_values(environ, flags.for_command("report")), "pr": given(environ, "pr"), "head-sha": head_sha}
    argv += [f"--{name}={value}" for name, value in options.items() if value]
    results = [item.strip() for item in given(environ, "results").split(",") if item.strip()]
    if given(environ, "nothing") == "true":
        # The benchmark job did not run: no results to read (report checks the claim against the API).
        argv.append("--nothing-to-benchmark")
        results = []
    return _benchgate([*argv, "--", *results])


def since_date(text: str, now: datetime) -> str:
    """``bisect-since`` as a UTC ISO-8601 time: a date or time as given, or N whole days before ``now``."""
    from benchgate.history.recording import iso_date

    text = text.strip() or "2"  # days
    if re.fullmatch(r"[0-9]{1,4}", text):
        return (now - timedelta(days=int(text))).strftime("%Y-%m-%dT%H:%M:%SZ")
    return iso_date(text, "input bisect-since")


def commits_between(repo: Path, before: str, after: str) -> int | None:
    """How many commits ``before..after`` holds in ``repo``; None when git cannot tell (a commit not fetched)."""
    completed = git(repo, "rev-list", "--count", f"{before}..{after}", check=False)
    return int(completed.stdout) if completed.returncode == 0 and completed.stdout.strip().isdigit() else None


def change_points_since(url: str, since: str) -> list:
    """The change points of every series stored at ``url`` dated ``since`` or later (none while every one is short)."""
    from benchgate.history.changepoints import MIN_POINTS, find_changes
    from benchgate.history.store import series

    all_series = series(url)
    if all(len(one.points) < MIN_POINTS for one in all_series):
        print("::notice title=benchgate::no stored series is long enough for change points yet: nothing to bisect")
    return [point for point in find_changes(all_series) if point.date >= since]


def bisect_step(environ: Mapping[str, str], *, now: datetime | None = None) -> int:
    """Bisect each new change point spanning more than one commit; ``reports=N`` to ``$GITHUB_OUTPUT``."""
    refusal = events.mode_refusal_of("bisect", environ)
    if refusal is not None:
        return _fail(refusal)
    try:
        return _bisect_new_changes(environ, now or datetime.now(UTC))
    except BenchgateError as error:
        _fail(error.one_line())
        return error.exit_status


def _bisect_new_changes(environ: Mapping[str, str], now: datetime) -> int:
    repo = Path(given(environ, "repo-path") or ".")
    if not (repo / ".git").exists():
        raise InputError("not a git checkout: bisect mode builds its commits", where=f"input repo-path {repo}")
    store, config_path = given(environ, "history-store"), given(environ, "config") or config.DEFAULT_CONFIG_PATH
    output = Path(given(environ, "bisect-output") or Path(environ.get("RUNNER_TEMP") or ".") / "benchgate-bisect")
    site = Path(given(environ, "history-site")) if given(environ, "history-site") else None
    configured = configured_history(config_path)
    url = resolve_store(store or None, configured)
    reports = 0
    for point in change_points_since(url, since_date(given(environ, "bisect-since"), now)):
        report_dir, site_report = output / point.id, site / "bisect" / f"{point.id}.md" if site else None
        if (report_dir / "bisect.json").exists() or (site_report is not None and site_report.exists()):
            continue  # already bisected
        span = commits_between(repo, point.before_commit, point.commit) if point.before_commit else None
        if span is None:
            _fail(
                f"{point.id}: its commits {point.before_commit[:12]}..{point.commit[:12]} are not in {repo}", "warning"
            )
            continue
        if span <= 1:
            continue  # the change point names its commit already
        argv = ["bisect", "--change", point.id, f"--repo={repo}", "--no-progress", f"--output={report_dir}"]
        argv += [f"--store={store}"] if store else []
        argv += ["--no-sandbox"] if given(environ, "no-sandbox") == "true" else []
        argv += ["--resume"] if (report_dir / "bisect-state.json").exists() else []
        status = _benchgate(argv)
        if status != EXIT_OK:
            _fail(f"bisect of {point.id} ended with status {status}", "warning")
        if (report_dir / "bisect.md").exists():
            reports += 1
            if site_report is not None:
                site_report.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(report_dir / "bisect.md", site_report)
    actions_env.set_outputs({"reports": reports})
    if site is not None:
        from benchgate.commands.history import site as write_site

        return write_site(site, url, configured.site_url or None)
    return EXIT_OK


STEP_HANDLERS = dict(zip(STEPS, (authorize_step, run_step, record_step, report_step, bisect_step), strict=True))
