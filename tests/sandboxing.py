"""Helpers for the sandbox tests: skip without a working bwrap, a fresh probe per test, a bwrap that fails.

``fresh_probe`` is an autouse fixture: a test module gets it by importing it
(``from sandboxing import fresh_probe  # noqa: F401``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchgate import sandbox


def _usable() -> bool:
    try:
        sandbox.probe()
    except sandbox.SandboxUnavailable:
        return False
    return True


needs_bwrap = pytest.mark.skipif(not _usable(), reason="bwrap cannot create a sandbox here")


@pytest.fixture(autouse=True)
def fresh_probe():
    """Each test probes again (the probe is cached per process and per bwrap path)."""
    sandbox._probe.cache_clear()
    yield
    sandbox._probe.cache_clear()


def fake_bwrap(tmp_path: Path, stderr: str) -> Path:
    """A bwrap that answers --version but cannot create namespaces, as with user namespaces disabled."""
    script = tmp_path / "bwrap"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi\necho \'{stderr}\' >&2\nexit 1\n'
    )
    script.chmod(0o755)
    return script
