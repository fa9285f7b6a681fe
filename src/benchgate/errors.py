"""Errors that reach the user as one line, and the exit statuses they map to.

Every command returns one of these statuses, so scripts and the action can tell
a failed gate from bad input from an unreachable GitHub.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_GITHUB_UNREACHABLE = 3
EXIT_BUILD_FAILED = 4
EXIT_RUN_FAILED = 5
# The gate could not decide: a comparison's interval still allows a regression of the floor (10 % or
# min-effect). Never a pass; more runs (or a min-effect for a known-noisy benchmark) decide it.
EXIT_INCONCLUSIVE = 6
# The history store (benchgate history): unreachable or locked (try again later), corrupt or of a schema this
# benchgate does not read (needs a person), or too few stored runs for what was asked.
EXIT_STORE_UNAVAILABLE = 7
EXIT_STORE_CORRUPT = 8
EXIT_HISTORY_TOO_SHORT = 9
EXIT_INTERNAL_ERROR = 70  # a bug in benchgate (sysexits' EX_SOFTWARE), never a verdict
EXIT_INTERRUPTED = 130


class BenchgateError(Exception):
    """An error shown to the user as one line: what, where, why."""

    exit_status = EXIT_BAD_INPUT

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        # One line, always: multi-line causes (stderr tails) are folded.
        return " | ".join(part.strip() for part in text.splitlines() if part.strip())


class InputError(BenchgateError):
    """Bad input: a malformed file, option or configuration (exit 2)."""

    exit_status = EXIT_BAD_INPUT


class BuildError(BenchgateError):
    """A Node build that failed (exit 4)."""

    exit_status = EXIT_BUILD_FAILED


class RunError(BenchgateError):
    """A benchmark run that could not proceed (exit 5)."""

    exit_status = EXIT_RUN_FAILED


class GitHubUnavailable(BenchgateError):
    """GitHub could not be reached after retries (exit 3)."""

    exit_status = EXIT_GITHUB_UNREACHABLE


class StoreUnavailable(BenchgateError):
    """The history store cannot be reached or is locked by another writer (exit 7); nothing was written."""

    exit_status = EXIT_STORE_UNAVAILABLE


class StoreCorrupt(BenchgateError):
    """The history store is not a benchgate store, is damaged, or has a schema this version cannot read (exit 8)."""

    exit_status = EXIT_STORE_CORRUPT


class HistoryTooShort(BenchgateError):
    """No series has enough stored runs for what was asked, e.g. change points (exit 9)."""

    exit_status = EXIT_HISTORY_TOO_SHORT
