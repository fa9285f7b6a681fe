"""Which benchmark categories a pull request touches, from GitHub's list of its changed files: the trusted jobs
never take it from the run directory, whose machine ran the PR's code ("nothing selected" would pass the gate)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from benchgate.config import Settings
from benchgate.run.changedfiles import ChangedCategories, load_mapping, map_changes, parse_mapping
from benchgate.run.suite import list_categories

_BENCHMARK_CATEGORY = re.compile(r"^benchmark/([^/]+)/")


def pull_request_categories(
    client: Any, pr: int, settings: Settings, benchmark_dir: Path | None = None
) -> ChangedCategories:
    """The categories pull request ``pr`` touches, by the configuration's changed-files map; ``benchmark_dir``: the
    base's ``benchmark/``, whose categories (and the PR's new ones) exist (None: every category a rule names)."""
    changed = client.changed_files(pr)
    mapping = (
        parse_mapping(settings.changed_files, "the configuration's changed-files")
        if settings.changed_files
        else load_mapping()
    )
    available = None
    if benchmark_dir is not None and benchmark_dir.is_dir():
        added = {match.group(1) for path in changed.paths if (match := _BENCHMARK_CATEGORY.match(path))}
        available = set(list_categories(benchmark_dir)) | added
    placed = map_changes(list(changed.paths), mapping, available)
    if not changed.complete:  # GitHub lists 3000 files at most: never "nothing to benchmark" from a cut list
        placed.categories = list(dict.fromkeys([*placed.categories, *placed.fallback, *mapping.default]))
    return placed


def default_benchmark_dir() -> Path | None:
    """The base checkout's ``benchmark/`` in the working directory, where the trusted jobs check it out."""
    candidate = Path("benchmark")
    return candidate.resolve() if candidate.is_dir() else None
