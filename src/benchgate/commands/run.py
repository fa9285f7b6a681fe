"""`benchgate run` (being built; see the open issue)."""

from __future__ import annotations

import argparse

from benchgate.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("run", help="not available yet")
    parser.set_defaults(handler=_handler)


def _handler(args: argparse.Namespace) -> int:
    raise InputError("'benchgate run' is not available in this version yet")
