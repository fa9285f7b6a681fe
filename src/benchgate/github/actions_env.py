"""The GitHub Actions runner's files and conventions: outputs, job summary, annotations, event payload.
Outside Actions (the variables unset) every function here does nothing, so the same commands run locally."""

import contextlib
import json
import os
import secrets
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from benchgate.errors import InputError

STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub refuses a step summary over 1 MiB
MAX_EVENT_BYTES = 8 * 1024 * 1024


def set_outputs(values: Mapping[str, Any]) -> None:
    """Append outputs to ``$GITHUB_OUTPUT`` with a random heredoc delimiter (values may hold newlines)."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            text = "" if value is None else str(value)
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            handle.write(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")


def write_step_summary(markdown: str) -> None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` (under the 1 MiB limit)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    limit = max(STEP_SUMMARY_LIMIT - (Path(path).stat().st_size if Path(path).exists() else 0) - 1, 1024)
    data = markdown.encode("utf-8")
    if len(data) > limit:
        note = "\n\n… (the job summary is cut at GitHub's 1 MiB limit; the results artifact has everything)\n"
        markdown = data[: limit - len(note.encode("utf-8"))].decode("utf-8", errors="ignore") + note
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(markdown)


def escape_data(text: str) -> str:
    """``text`` escaped for a workflow command's message, so that it cannot end the line or start a command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


@contextlib.contextmanager
def commands_stopped(out: TextIO) -> Iterator[None]:
    """Inside Actions, turn workflow commands off while untrusted text (a PR's benchmark names) is printed: the
    runner ignores them until ``::TOKEN::``, a random token the text cannot guess. Annotations go outside."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        yield
        return
    token = f"benchgate-{secrets.token_hex(16)}"
    out.write(f"::stop-commands::{token}\n")
    out.flush()
    try:
        yield
    finally:
        out.write(f"\n::{token}::\n")
        out.flush()


def error_annotation(message: str, *, title: str | None = None) -> None:
    """Inside Actions, print an escaped ``::error::`` workflow command (a terminal has the error on stderr)."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    properties = f" title={escape_data(title).replace(':', '%3A').replace(',', '%2C')}" if title else ""
    print(f"::error{properties}::{escape_data(message)}")


def read_event() -> dict[str, Any]:
    """The webhook payload at ``$GITHUB_EVENT_PATH``; {} when there is none."""
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        size = Path(path).stat().st_size
        if size > MAX_EVENT_BYTES:
            raise InputError(f"event payload is too large ({size} bytes)", where=path)
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("event payload file not found", where=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"event payload is not valid JSON: {error}", where=path) from None
    if not isinstance(event, dict):
        raise InputError("event payload is not a JSON object", where=path)
    check_event(event, path)
    return event


# Fields benchgate reads from a payload, and the JSON type each must have when present (each parent: an object).
_EVENT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "action": str,
    "label.name": str,
    "pull_request.head.sha": str,
    "pull_request.number": int,
    "issue.number": int,
    "inputs.pr": (str, int),
    "inputs.sha": str,
}


def check_event(event: Mapping[str, Any], where: str = "event payload") -> None:
    """InputError (exit 2) when a field benchgate reads has the wrong JSON type (e.g. a string ``label``)."""
    for dotted, leaf in _EVENT_FIELDS.items():
        keys, node = dotted.split("."), event
        for depth, key in enumerate(keys):
            node = node.get(key)
            if node is None:
                break
            wanted = (leaf if isinstance(leaf, tuple) else (leaf,)) if depth == len(keys) - 1 else (dict,)
            if isinstance(node, bool) or not isinstance(node, wanted):
                names = " or ".join({dict: "an object", str: "a string", int: "a number"}[kind] for kind in wanted)
                field = ".".join(keys[: depth + 1])
                raise InputError(f"event field {field} must be {names}, not {type(node).__name__}", where=where)


def pull_request_number(event: Mapping[str, Any]) -> int | None:
    """The PR number of a pull_request(_target), issue_comment on a PR, or workflow_dispatch with a ``pr`` input."""
    for candidate in (
        (event.get("pull_request") or {}).get("number"),
        # An issue_comment event is about a PR when its issue has a pull_request key (even an empty one).
        (event.get("issue") or {}).get("number") if "pull_request" in (event.get("issue") or {}) else None,
        (event.get("inputs") or {}).get("pr"),
    ):
        text = str(candidate or "").strip()  # a number, or a string of one (a bool is neither: "True")
        if text.isdecimal() and int(text) > 0:
            return int(text)
    return None


def workflow_run_url() -> str | None:
    """Link to the current workflow run, from the variables the runner sets."""
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    repository, run_id = os.environ.get("GITHUB_REPOSITORY"), os.environ.get("GITHUB_RUN_ID")
    if not repository or not run_id:
        return None
    attempt = os.environ.get("GITHUB_RUN_ATTEMPT")
    return f"{server}/{repository}/actions/runs/{run_id}" + (f"/attempts/{attempt}" if attempt else "")


def env_name(name: str) -> str:
    """The variable a step's ``env:`` gives the action input ``name``: BENCHGATE_MIN_EFFECT for min-effect."""
    return "BENCHGATE_" + name.upper().replace("-", "_")


def given(environ: Mapping[str, str], name: str) -> str:
    """The action input ``name`` as the step's environment gives it, stripped ("" when not given)."""
    return environ.get(env_name(name), "").strip()
