"""`benchgate authorize`: may this event start a benchmark run, and of which exact commit (docs/security.md)?"""

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
from benchgate.config import flags, labels
from benchgate.errors import EXIT_OK, InputError
from benchgate.github import actions_env, approval, events


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


def _publish(result: Authorization) -> Authorization:
    """Write the outputs: each field but ``actor``, the run-settings as JSON and each of them by its input's name."""
    fields = {name.replace("_", "-"): value for name, value in vars(result).items() if name != "actor"}
    settings = fields.pop("settings")
    outputs = {name: str(value).lower() if isinstance(value, bool) else value for name, value in fields.items()}
    each = {key: value for key, value in settings.items() if key != "sources"}
    actions_env.set_outputs({**outputs, "run-settings": json.dumps(dict(settings), sort_keys=True), **each})
    return result


def _own_commit(how: str, settings: config.Settings, actor: str = "") -> Authorization:
    """Approve the repository's own commit ($GITHUB_SHA), with no pull request and so no labels."""
    sha = os.environ.get("GITHUB_SHA", "")
    return _publish(Authorization(True, how, None, sha, actor=actor, settings=flags.run_settings(settings)))


def authorize(
    *,
    config_path: str | None = config.DEFAULT_CONFIG_PATH,
    options: Mapping[str, Any] | None = None,
    repository: str | None = None,
    api_url: str | None = None,
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
        raise approval.refusal(f"event {event_name or '(none)'!r} cannot start a benchmark run")
    repository = repository or os.environ.get("GITHUB_REPOSITORY")
    if not repository:
        raise InputError("GITHUB_REPOSITORY is not set; give --repository", where="authorize")
    if client is None:
        from benchgate.github.client import GitHubClient

        client = GitHubClient(repository=repository, api_url=api_url, max_retries=retries)
    prefix = settings.label_prefix
    if event_name == "workflow_dispatch":
        request = approval.dispatch_request(client, event, actor or os.environ.get("GITHUB_ACTOR") or "")
    else:
        request = approval.label_request(client, event, prefix)
        if request is None:
            return _publish(Authorization(False, f"not a run request (the {prefix!r} label was not just added)"))
    if request.pull is None:
        return _own_commit(request.how, settings, request.requester)
    pr, pull = request.pr, request.pull
    decision = labels.decide_with_client(client, pr, pull.labels, settings, request.adders)
    resolved = config.resolve(base=settings, label_values=decision.values)
    notes: list[str] = []
    if not resolved.categories:
        # No categories configured or labelled: the ones the PR's changed files map to, from the API.
        placed = approval.pull_request_categories(client, pr, resolved, benchmark_dir)
        resolved = dataclasses.replace(resolved, categories=tuple(placed.categories))
        notes = placed.notes()
    # The changed files' paths are the PR author's text, label names anyone-with-triage's.
    with actions_env.commands_stopped(sys.stderr):
        for note in notes:
            print(f"benchgate: {note}", file=sys.stderr)
        for outcome in decision.outcomes:
            if outcome.status in (labels.IGNORED, labels.INVALID):
                print(f"label {outcome.label}: {outcome.status}: {outcome.reason}", file=sys.stderr)
    settings, sides = flags.run_settings(resolved), (pull.head_sha, pull.base_sha, pull.base_ref)
    return _publish(Authorization(True, request.how, pr, *sides, request.requester, settings, not resolved.categories))
