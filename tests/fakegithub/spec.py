"""GitHub's official OpenAPI description, cut down to the operations benchgate uses.

The full description (npm ``@octokit/openapi``, ``generated/api.github.com.json``)
is 13 MB; building an openapi-core validator over it takes far longer than the
tests themselves. So the operations below are extracted once, together with
every component they reference (transitively), into a compact spec cached next
to the npm package. The compact spec is a faithful subset: the same schemas,
parameters and examples, byte for byte, just fewer of them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

SPEC_PACKAGE = "@octokit/openapi"
SPEC_FILE = "generated/api.github.com.json"

# (method, path template) of every REST operation benchgate's client may call.
# Adding a call to src/benchgate/github/client.py means adding its operation here, or
# the fake answers 404 and records a violation.
OPERATIONS: tuple[tuple[str, str], ...] = (
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/files"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/events"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("post", "/repos/{owner}/{repo}/issues"),
    ("get", "/user"),
)

# Where validation pretends the API lives; requests are rebased onto it after
# the fake strips its own host and any GitHub Enterprise prefix (/api/v3).
SERVER_URL = "https://api.github.com"


@functools.cache  # resolved once per process, even if a test later points HOME elsewhere
def full_spec_path() -> Path:
    """Path of the full description, fetched (once) with ``npm pack`` via the tests' cache."""
    explicit = os.environ.get("BENCHGATE_GITHUB_OPENAPI")
    if explicit:
        return Path(explicit)
    # tests/conftest.py owns the npm cache; load it by path, as the name "conftest" is
    # ambiguous (pytester and other roots have their own).
    location = Path(__file__).resolve().parent.parent / "conftest.py"
    module_spec = importlib.util.spec_from_file_location("benchgate_tests_conftest", location)
    assert module_spec is not None and module_spec.loader is not None
    conftest = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(conftest)
    return conftest.npm_package(SPEC_PACKAGE) / SPEC_FILE


def _collect_refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref)
        for value in node.values():
            _collect_refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _collect_refs(value, found)


def _lookup(spec: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#/"):
        raise ValueError(f"external $ref not supported: {ref}")
    node: Any = spec
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def extract(full: dict[str, Any], operations: tuple[tuple[str, str], ...] = OPERATIONS) -> dict[str, Any]:
    """Return a self-contained spec holding only ``operations`` and what they reference."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path in operations:
        item = full["paths"][path]
        kept = paths.setdefault(path, {key: value for key, value in item.items() if key == "parameters"})
        kept[method] = item[method]
    components: dict[str, dict[str, Any]] = {}
    pending: set[str] = set()
    _collect_refs(paths, pending)
    done: set[str] = set()
    while pending:
        ref = pending.pop()
        if ref in done:
            continue
        done.add(ref)
        section, name = ref.split("/", 3)[2:]  # "#/components/<section>/<name>"
        target = _lookup(full, ref)
        components.setdefault(section, {})[name] = target
        _collect_refs(target, pending)
    return {
        "openapi": full["openapi"],
        "info": full["info"],
        "servers": [{"url": SERVER_URL}],
        "paths": paths,
        "components": components,
    }


def compact_spec() -> dict[str, Any]:
    """The compact spec, extracted on first use and cached on disk beside the full one."""
    source = full_spec_path()
    key = hashlib.sha256(f"{source.stat().st_size}:{source.stat().st_mtime_ns}:{OPERATIONS}".encode()).hexdigest()
    cached = source.parent / f"benchgate-compact-{key[:16]}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    compact = extract(json.loads(source.read_text()))
    temporary = cached.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(compact))
    temporary.replace(cached)  # atomic: parallel sessions never read half a file
    return compact
