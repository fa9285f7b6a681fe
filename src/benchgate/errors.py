"""Errors that reach the user as one line, and the exit statuses (docs/cli.md) they map to."""

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_GITHUB_UNREACHABLE = 3
EXIT_BUILD_FAILED = 4
EXIT_RUN_FAILED = 5
EXIT_INCONCLUSIVE = 6  # an interval still allows a regression of the floor: never a pass; more runs decide it
# The history store: unreachable or locked (try again later), corrupt or unreadable (needs a person), too short.
EXIT_STORE_UNAVAILABLE = 7
EXIT_STORE_CORRUPT = 8
EXIT_HISTORY_TOO_SHORT = 9
EXIT_INTERNAL_ERROR = 70  # a bug in benchgate (sysexits' EX_SOFTWARE), never a verdict
EXIT_INTERRUPTED = 130


class BenchgateError(Exception):
    """An error shown to the user as one line: what, where, why."""

    exit_status = EXIT_BAD_INPUT

    def __init_subclass__(cls, exit_status: int | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.exit_status = cls.exit_status if exit_status is None else exit_status

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        # One line, always: multi-line causes (stderr tails) are folded.
        return " | ".join(part.strip() for part in text.splitlines() if part.strip())


class InputError(BenchgateError, exit_status=EXIT_BAD_INPUT):
    """Bad input: a malformed file, option or configuration (exit 2)."""


class BuildError(BenchgateError, exit_status=EXIT_BUILD_FAILED):
    """A Node build that failed (exit 4)."""


class RunError(BenchgateError, exit_status=EXIT_RUN_FAILED):
    """A benchmark run that could not proceed (exit 5)."""


class GitHubUnavailable(BenchgateError, exit_status=EXIT_GITHUB_UNREACHABLE):
    """GitHub could not be reached after retries (exit 3)."""


class StoreUnavailable(BenchgateError, exit_status=EXIT_STORE_UNAVAILABLE):
    """The history store cannot be reached or is locked by another writer (exit 7); nothing was written."""


class StoreCorrupt(BenchgateError, exit_status=EXIT_STORE_CORRUPT):
    """The history store is not a benchgate store, is damaged, or has a schema this version cannot read (exit 8)."""


class HistoryTooShort(BenchgateError, exit_status=EXIT_HISTORY_TOO_SHORT):
    """No series has enough stored runs for what was asked, e.g. change points (exit 9)."""
