"""`benchgate build --repo PATH REF`: build (or reuse) the Node binary of a git ref; prints its path last."""

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from benchgate.build.builder import SIDES, build_ref
from benchgate.build.buildsettings import DEFAULT_BUILD_COMMAND, DEFAULT_BUILD_TIMEOUT, BuildSettings
from benchgate.build.cache import CacheLimit
from benchgate.errors import EXIT_OK, InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build",
        help="build the Node binary of a git ref in a worktree, reusing the binary cache",
        description="Build REF in its own git worktree under the cache directory and print the binary's path last. "
        "Values starting with '-' need '=', e.g. --configure-flags=--debug.",
    )
    parser.add_argument("ref", metavar="REF", help="commit, branch or tag to build")
    parser.add_argument("--repo", type=Path, default=Path("."), help="the Node git repository (default: .)")
    parser.add_argument("--side", choices=SIDES, default="base", help="which side this binary is (default: base)")
    add_build_options(parser)
    parser.add_argument("--cache-dir", type=Path, help="default: $BENCHGATE_CACHE or ~/.cache/benchgate")
    parser.add_argument("--cache-max-entries", type=int, default=CacheLimit().max_entries, metavar="N")
    parser.add_argument("--cache-max-size", metavar="SIZE", help="e.g. 20G (default 20GiB)")
    timeout = f"for the whole build (default {DEFAULT_BUILD_TIMEOUT / 3600:g} h)"
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help=timeout)
    trust = parser.add_mutually_exclusive_group()
    untrusted = "PR code: built in the sandbox, ccache read-only (default for --side head)"
    trust.add_argument(
        "--untrusted", "--read-only-ccache", dest="trusted", action="store_false", default=None, help=untrusted
    )
    trust.add_argument("--trusted", dest="trusted", action="store_true", help="let a head build write ccache")
    add_sandbox_option(parser)
    parser.add_argument("--verbose", "-v", action="store_true", help="echo build output to stderr")
    parser.add_argument("--record", type=Path, metavar="FILE", help="write the build record as JSON")
    parser.set_defaults(handler=_handler)


def add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    """``--no-sandbox``, shared by `benchgate build`, `run` and `bisect`."""
    no_sandbox = "run untrusted code without the bwrap sandbox (recorded in run.json and the comment)"
    parser.add_argument("--no-sandbox", dest="use_sandbox", action="store_false", help=no_sandbox)


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """How a binary is built; shared by `benchgate build` and `run --repo`. None: the ``build:`` section's."""
    parser.add_argument("--configure-flags", metavar="FLAGS", help="flags for ./configure (one string)")
    parser.add_argument("--configure-flag", action="append", default=[], metavar="FLAG", help="one flag (repeatable)")
    parser.add_argument("--configure-command", metavar="CMD", help="configure step (default ./configure; '' skips)")
    parser.add_argument("--build-command", metavar="CMD", help=f"run with sh -c (default: {DEFAULT_BUILD_COMMAND})")
    parser.add_argument("--binary-path", metavar="PATH", help="built binary, relative (default: out/Release/node)")
    parser.add_argument("--ninja", action=argparse.BooleanOptionalAction, help="default: if installed")
    parser.add_argument("--ccache", action=argparse.BooleanOptionalAction, help="default: if installed")


def build_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The build settings given by ``add_build_options``' options, spelt as in the ``build:`` config section."""
    try:
        flags = [*shlex.split(args.configure_flags or ""), *args.configure_flag]
    except ValueError as error:
        raise InputError(f"--configure-flags: {error}") from None
    keys = ("configure-command", "build-command", "binary-path", "ninja", "ccache")
    given = {key: value for key in keys if (value := getattr(args, key.replace("-", "_"))) is not None}
    return {"configure-flags": flags, **given} if flags else given


def _check_record_path(path: Path) -> None:
    """--record must be writable: refused before an hours-long build, not after it."""
    if path.is_dir():
        raise InputError(f"--record {path}: is a directory; give a file name")
    parent = path.parent
    if not parent.is_dir():
        raise InputError(f"--record {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"--record {path}: not writable")


def _handler(args: argparse.Namespace) -> int:
    values = {**build_overrides(args), "cache-max-entries": args.cache_max_entries}
    limits = {"cache-max-size": args.cache_max_size, "timeout": args.timeout}
    values.update({key: value for key, value in limits.items() if value not in (None, "")})
    settings = BuildSettings.from_mapping(values)
    if args.record is not None:
        _check_record_path(args.record)
    trusted = args.side == "base" if args.trusted is None else args.trusted
    if not trusted and not args.use_sandbox:
        warning = f"building the untrusted {args.side} WITHOUT the sandbox (--no-sandbox)"
        print(f"benchgate: warning: {warning}", file=sys.stderr)
    result = build_ref(
        args.repo,
        args.ref,
        side=args.side,
        settings=settings,
        cache_dir=args.cache_dir,
        trusted=trusted,
        echo=sys.stderr if args.verbose else None,
        use_sandbox=args.use_sandbox,
    )
    if args.record:
        args.record.write_text(json.dumps(result.record(), indent=2) + "\n")
    how = "cached" if result.cached else "built"
    stats = f"; {result.ccache.summary()}" if result.ccache and not result.cached else ""
    print(f"{result.side} {result.ref} {result.sha[:12]} {how} in {result.duration:.2f}s; log {result.log}{stats}")
    print(result.binary)
    return EXIT_OK
