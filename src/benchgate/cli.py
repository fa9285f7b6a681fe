"""Command-line entry point: parses arguments and hands each subcommand to its module."""

import argparse
import importlib
import os
import sys
import traceback

from benchgate import __version__
from benchgate.errors import EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED, BenchgateError

COMMANDS = ("analyze", "run", "build", "report", "authorize", "history", "versions", "bisect", "action")


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit with the bad-input status (2) on one line."""

    def error(self, message: str) -> None:  # pragma: no cover - exercised via main()
        self.exit(2, f"benchgate: error: {self.prog}: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or with ``only`` just that subcommand's (so a command loads only its own module)."""
    parser = _Parser(prog="benchgate", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"benchgate {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in (only,) if only in COMMANDS else COMMANDS:
        importlib.import_module(f"benchgate.commands.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(only=argv[0] if argv else None).parse_args(argv)
    try:
        return int(args.handler(args))
    except BenchgateError as error:
        print(f"benchgate: error: {error.one_line()}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("benchgate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except OSError as error:
        # A path the user gave that cannot be read or written: their input, not our bug.
        where = f"{error.filename}: " if error.filename else ""
        print(f"benchgate: error: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:  # noqa: BLE001 - the last line of defence against tracebacks
        if os.environ.get("BENCHGATE_DEBUG"):
            traceback.print_exc()
        detail = " ".join(str(error).split())
        print(
            f"benchgate: internal error: {type(error).__name__}: {detail} "
            "(a bug in benchgate; set BENCHGATE_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL_ERROR
