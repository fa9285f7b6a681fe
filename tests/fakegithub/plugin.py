"""pytest fixtures for the fake GitHub; registered in tests/conftest.py with ``pytest_plugins``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakegithub.server import FakeGitHub
from fakegithub.validation import GitHubSpecValidator


@pytest.fixture(scope="session")
def github_spec_validator() -> GitHubSpecValidator:
    """GitHub's OpenAPI description for the operations benchgate uses, parsed once per session."""
    return GitHubSpecValidator()


@pytest.fixture
def fake_github(github_spec_validator: GitHubSpecValidator) -> Iterator[FakeGitHub]:
    """A fresh fake GitHub on 127.0.0.1 (random port) with no repositories.

    The test fails at teardown if any request it received, or any answer it
    gave, breaks GitHub's OpenAPI description; a test that provokes violations
    on purpose asserts them and then clears ``fake_github.violations``.
    """
    fake = FakeGitHub(validator=github_spec_validator).start()
    try:
        yield fake
    finally:
        fake.stop()
    if fake.violations:
        pytest.fail(
            "requests or answers that GitHub's OpenAPI description does not allow:\n"
            + "\n".join(f"  {violation}" for violation in fake.violations),
            pytrace=False,
        )
