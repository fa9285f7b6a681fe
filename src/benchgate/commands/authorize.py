"""`benchgate authorize`: may this event start a benchmark run, and of which exact commit (docs/security.md)?"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchgate import config
from benchgate.build.worktrees import FULL_SHA
from benchgate.config import flags, labels, schema
from benchgate.errors import EXIT_OK, InputError
from benchgate.github import actions_env, events
from benchgate.github.pullfiles import default_benchmark_dir, pull_request_categories


@dataclass(frozen=True)
class Authorization:
    """The decision, and what the benchmark job should run when approved."""

    approved: bool
    reason: str
    pr: int | None = None
    head_sha: str = ""
    base_sha: str = ""
    base_ref: str = ""
    actor: str = ""
    settings: Mapping[str, str] = field(default_factory=dict)
    nothing_to_benchmark: bool = False  # the PR's changed files map to no benchmark category


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("authorize", help="check who requested a run; pin the approved SHA")
    parser.add_argument("--config", default=config.DEFAULT_CONFIG_PATH, help="configuration file (base branch)")
    flags.add_flags(parser, "authorize")
    parser.add_argument("--repository", help="owner/name (default $GITHUB_REPOSITORY)")
    parser.add_argument("--api-url", help="GitHub API URL (default $GITHUB_API_URL)")
    parser.add_argument("--retries", type=int, default=5)
    parser.add_argument("--benchmark-dir", type=Path, help="the base checkout's benchmark/, for the changed files")
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    options = {name: getattr(args, name) for name in ("repository", "api_url", "retries", "benchmark_dir")}
    return print_result(authorize(config_path=args.config, options=flags.flag_values(args, "authorize"), **options))


def print_result(result: Authorization) -> int:
    """Say what authorize decided; the exit status (0: a refusal is an InputError, raised before)."""
    print(("approved: " if result.approved else "not started: ") + result.reason)
    if result.nothing_to_benchmark:
        print("nothing to benchmark: the changed files map to no benchmark category")
    return EXIT_OK


def _run_settings(settings: config.Settings) -> dict[str, Any]:
    """The run-settings for the benchmark job (texts, by input), and ``sources``: where each came from."""
    carried: dict[str, Any] = flags.run_settings(settings)
    names = {setting.input: setting.attr for setting in schema.SETTINGS if setting.run}
    carried["sources"] = {key: settings.source_of(names[key]) for key in carried if key in names}
    return carried


def _publish(result: Authorization) -> Authorization:
    actions_env.set_outputs(
        {
            "approved": "true" if result.approved else "false",
            "reason": result.reason,
            "pr": result.pr or "",
            "head-sha": result.head_sha,
            "base-sha": result.base_sha,
            "base-ref": result.base_ref,
            "run-settings": json.dumps(dict(result.settings), sort_keys=True),
            "nothing-to-benchmark": "true" if result.nothing_to_benchmark else "false",
            **{key: value for key, value in result.settings.items() if key != "sources"},
        }
    )
    return result


def _own_commit(how: str, settings: config.Settings, actor: str = "") -> Authorization:
    """Approve the repository's own commit ($GITHUB_SHA), with no pull request and so no labels."""
    sha = os.environ.get("GITHUB_SHA", "")
    return _publish(Authorization(True, how, None, sha, actor=actor, settings=_run_settings(settings)))


def _refuse(message: str) -> InputError:
    actions_env.error_annotation(message, title="benchgate authorize")
    return InputError(message, where="authorize")


def authorize(
    *,
    config_path: str | None = config.DEFAULT_CONFIG_PATH,
    options: Mapping[str, Any] | None = None,
    repository: str | None = None,
    api_url: str | None = None,
    token: str | None = None,
    event_name: str | None = None,
    event: Mapping[str, Any] | None = None,
    actor: str | None = None,
    retries: int = 5,
    client: Any = None,
    benchmark_dir: Path | None = None,
) -> Authorization:
    """Decide whether the current Actions event may start a run; write the outputs; InputError when refused."""
    settings = config.load_settings(config_path, options or {})
    event_name = event_name or os.environ.get("GITHUB_EVENT_NAME", "")
    event = event if event is not None else actions_env.read_event()
    actions_env.check_event(event)  # read_event checks too; an event given directly is checked here
    if event_name in events.OWN_COMMIT_EVENTS:
        return _own_commit(f"{event_name} of the repository's own commit", settings)
    if event_name not in events.PULL_REQUEST_EVENTS:
        raise _refuse(f"event {event_name or '(none)'!r} cannot start a benchmark run")
    repository = repository or os.environ.get("GITHUB_REPOSITORY")
    if not repository:
        raise InputError("GITHUB_REPOSITORY is not set; give --repository", where="authorize")
    if client is None:
        from benchgate.github.client import from_environment

        client = from_environment(repository=repository, token=token, api_url=api_url, max_retries=retries)
    prefix = settings.label_prefix
    if event_name == "workflow_dispatch":
        requester = actor or os.environ.get("GITHUB_ACTOR") or ""
        pr = actions_env.pull_request_number(event)
        if not requester or not client.can_write(requester):
            raise _refuse(f"@{requester or '?'} started the workflow but lacks write, maintain or admin permission")
        if pr is None:
            return _own_commit(f"started by @{requester}, who has write access", settings, requester)
        wanted = str((event.get("inputs") or {}).get("sha") or "").strip()
        if not FULL_SHA.fullmatch(wanted):
            raise _refuse(
                f"workflow_dispatch of PR #{pr} needs the sha input: the full 40-digit head commit you approve"
                + (f", not {wanted[:50]!r}" if wanted else "")
            )
        pull = client.pull_request(pr)
        if pull.head_sha != wanted:
            raise _refuse(f"PR #{pr} moved: its head is {pull.head_sha[:12]}, not the approved {wanted[:12]}")
        approved_sha, how = pull.head_sha, f"started by @{requester}, who has write access"
    else:
        label = ((event.get("label") or {}).get("name")) or ""
        if event.get("action") != "labeled" or label != prefix:
            return _publish(Authorization(False, f"not a run request (the {prefix!r} label was not just added)"))
        pr = actions_env.pull_request_number(event)
        if pr is None:
            raise _refuse("the event payload names no pull request")
        approved_sha = str(((event.get("pull_request") or {}).get("head") or {}).get("sha") or "")
        requester = labels.label_adders(client.label_events(pr)).get(label, "")
        if not requester:
            raise _refuse(f"the issue events of #{pr} do not show who added {label!r}")
        sender = str((event.get("sender") or {}).get("login") or "")
        if sender != requester:
            # The event must be the label's last addition: a replayed or forged payload is not.
            raise _refuse(
                f"the event's sender @{sender or '?'} is not @{requester}, who added {label!r} last "
                "according to the issue events"
            )
        if not client.can_write(requester):
            raise _refuse(f"@{requester} added {label!r} but lacks write, maintain or admin permission")
        pull = client.pull_request(pr)
        if label not in pull.labels:
            raise _refuse(f"the {label!r} label was removed from #{pr} since")
        if not approved_sha or pull.head_sha != approved_sha:
            raise _refuse(
                f"PR #{pr} moved since @{requester} added {label!r}: approved {approved_sha[:12] or '?'}, "
                f"now {pull.head_sha[:12]}; remove and add the label again to approve the new commits"
            )
        how = f"@{requester}, who has write access, added {label!r}"
    decision = labels.decide_with_client(client, pr, pull.labels, settings)
    resolved = config.with_labels(settings, decision.values)
    notes: list[str] = []
    if not resolved.categories:
        # No categories configured or labelled: the ones the PR's changed files map to, from the API.
        placed = pull_request_categories(client, pr, resolved, benchmark_dir or default_benchmark_dir())
        resolved = dataclasses.replace(resolved, categories=tuple(placed.categories))
        notes = placed.notes()
    nothing = not resolved.categories
    # The changed files' paths are the PR author's text, label names anyone-with-triage's.
    with actions_env.commands_stopped(sys.stderr):
        for note in notes:
            print(f"benchgate: {note}", file=sys.stderr)
        for outcome in decision.outcomes:
            if outcome.status in (labels.IGNORED, labels.INVALID):
                print(f"label {outcome.label}: {outcome.status}: {outcome.reason}", file=sys.stderr)
    settings = _run_settings(resolved)
    decided = Authorization(True, how, pr, approved_sha, pull.base_sha, pull.base_ref, requester, settings, nothing)
    return _publish(decided)
