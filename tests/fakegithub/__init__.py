"""A fake GitHub REST API for tests: stateful, on loopback, validating every request against GitHub's OpenAPI.

In pytest, use the ``fake_github`` fixture (registered by ``tests/conftest.py``
through ``fakegithub.plugin``); outside pytest, ``python -m fakegithub`` runs it
as a process (see ``fakegithub.__main__``).
"""

from fakegithub.server import FakeGitHub, Fault, RecordedRequest
from fakegithub.state import PullRequest, State
from fakegithub.validation import GitHubSpecValidator, Violation

__all__ = ["FakeGitHub", "Fault", "GitHubSpecValidator", "PullRequest", "RecordedRequest", "State", "Violation"]
