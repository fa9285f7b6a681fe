"""The configurations of each benchmark file, as its own ``common.js`` would run them: one job each.

Under compare.js a benchmark file runs as a coordinator: its ``common.js`` builds the queue
of configurations (the file's options, ``--set`` values, its ``combinationFilter``, its
groups) and forks itself once per configuration with ``child_process.fork(file, ['key=value',
...], {env: {..., NODE_RUN_BENCHMARK_FN: ''}, execArgv: flags + process.execArgv})``; the
child, seeing ``NODE_RUN_BENCHMARK_FN``, runs only its first (here: its only) configuration
and reports it. ``benchgate run --jobs per-configuration`` (the default) asks each side's
``common.js`` for its queue once, by running the file with ``--require
data/expand-configurations.js``: that preload replaces ``fork`` with a stand-in that says over
the IPC channel what it was asked to start, with the queue entry ``common.js`` built for it,
and closes at once. Each job then starts exactly that child: one configuration, one side,
one iteration, one process (compare.js starts a coordinator per file and run as well).

A file runs whole (one job per file, side and iteration, as compare.js does) when its harness
cannot run single configurations; this is detected, not assumed from a version:

- it forked nothing (an empty queue, or a harness that does not fork per configuration);
- a fork is not the file itself with ``NODE_RUN_BENCHMARK_FN`` in its environment, or its
  queue entry is unknown (a ``createBenchmark`` that could not be seen, several benchmarks in
  one file), or there are fewer forks than queue entries;
- the expansion failed (the whole-file job then fails as compare.js would, with its error);
- HTTP benchmarks (``bench.http``): the child adds the load generator it used to its
  configuration, so its row is known only after it ran;
- the two sides' queues differ (their ``common.js`` or node disagree).

Every generation of Node's common.js seen (2016 to today: ``this.queue``, ``createBenchmark``
exported, ``NODE_RUN_BENCHMARK_FN`` marking the child) forks this way, so no version is assumed;
the harness this project's example suite ships is listed the same way. A child whose report names
another configuration than its listing (a harness whose children parse their arguments differently)
is written as reported and recorded as a protocol warning; its comparison then cannot stop on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchgate.results.jsformat import format_configuration
from benchgate.results.recordfields import MAX_CONFIGURATIONS
from benchgate.run.process import BASE, HEAD, BenchmarkProcess

if TYPE_CHECKING:
    from benchgate.results.runrecord import RunRecord
    from benchgate.sandbox import Confinement

PER_FILE, PER_CONFIGURATION = "per-file", "per-configuration"
PRELOAD = Path(__file__).resolve().parent.parent / "data" / "expand-configurations.js"
_MESSAGE = "benchgate-configuration"
MAX_ARGS = 64


@dataclass(frozen=True)
class Configuration:
    """One configuration child: its command-line arguments and compare.js's configuration column for it."""

    args: tuple[str, ...]
    row: str


@dataclass(frozen=True)
class Expansion:
    """A file's configurations (the same on both sides) and the flags each side's common.js adds to its children."""

    configurations: tuple[Configuration, ...]
    flags: Mapping[str, tuple[str, ...]]

    def record(self) -> dict:
        """The expansion as run.json's ``configurations`` holds it per file."""
        return {
            "rows": [{"args": list(item.args), "configuration": item.row} for item in self.configurations],
            "flags": {side: list(self.flags[side]) for side in (BASE, HEAD)},
        }


@dataclass(frozen=True)
class SideExpansion:
    """What one side's common.js forked, or why the file must run whole there (``reason``)."""

    configurations: tuple[Configuration, ...] = ()
    flags: tuple[str, ...] = ()
    reason: str | None = None


def read_forks(messages: Sequence[dict], exit_status: int | None) -> SideExpansion:
    """The configurations that the preload's messages describe; a reason instead when they cannot be run one by one."""
    if exit_status != 0:
        return SideExpansion(reason=f"its configurations could not be listed (exit status {exit_status})")
    forks = [message for message in messages if message.get("type") == _MESSAGE]
    if not forks:
        return SideExpansion(reason="common.js forked no configuration child (an empty queue, or an older harness)")
    configurations, flags = [], None
    for message in forks:
        args, own_flags, conf = message.get("args"), message.get("flags"), message.get("conf")
        if not (message.get("module") is True and message.get("runFn") is True and isinstance(conf, dict)):
            return SideExpansion(reason="its harness does not fork the file itself as a configuration child")
        if not _strings(args) or not _strings(own_flags) or len(args) > MAX_ARGS:
            return SideExpansion(reason="a configuration child's arguments are not a list of strings")
        if flags is not None and tuple(own_flags) != flags:
            return SideExpansion(reason="common.js gives its configuration children different flags")
        flags = tuple(own_flags)
        configurations.append(Configuration(tuple(args), format_configuration(conf)))
    if forks[0].get("queueLength") != len(forks) or len(forks) > MAX_CONFIGURATIONS:
        return SideExpansion(reason=f"common.js forked {len(forks)} of {forks[0].get('queueLength')} configurations")
    return SideExpansion(tuple(configurations), flags or ())


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def expand_side(
    binary,
    benchmark_dir: Path,
    filename: str,
    set_args: Sequence[str],
    *,
    env: Mapping[str, str],
    timeout: float | None,
    sandbox: Confinement | None = None,
    process: BenchmarkProcess | None = None,
) -> SideExpansion:
    """Ask one side's common.js which configuration children ``filename`` forks (see the module docstring)."""
    messages: list[dict] = []
    argv = [str(binary.path), *binary.node_args, "--require", str(PRELOAD), str(benchmark_dir / filename), *set_args]
    result = (process or BenchmarkProcess()).run(
        argv, cwd=benchmark_dir.parent, env=dict(env), timeout=timeout, on_message=messages.append, sandbox=sandbox
    )
    if result.timed_out or result.interrupted:
        return SideExpansion(reason="listing its configurations timed out" if result.timed_out else "interrupted")
    return read_forks(messages, result.exit_status)


def combine(base: SideExpansion, head: SideExpansion) -> Expansion | str:
    """One expansion when both sides list the same configurations; else why the file runs whole."""
    for side, found in ((BASE, base), (HEAD, head)):
        if found.reason is not None:
            return f"{found.reason} on the {side}"
    if base.configurations != head.configurations:
        return "the base's and the head's common.js list different configurations"
    return Expansion(base.configurations, {BASE: base.flags, HEAD: head.flags})


def expand_files(
    files: Sequence[str],
    expand: Callable[[str, str], SideExpansion],
    *,
    is_http: Callable[[str], bool],
) -> tuple[dict[str, Expansion], dict[str, str]]:
    """Per file, its expansion; the files that run whole, and why. ``expand(filename, side)`` lists one side."""
    expansions: dict[str, Expansion] = {}
    whole: dict[str, str] = {}
    for filename in files:
        if is_http(filename):
            whole[filename] = "an HTTP benchmark: its row names the load generator, known only once it ran"
            continue
        combined = combine(expand(filename, BASE), expand(filename, HEAD))
        if isinstance(combined, str):
            whole[filename] = combined
        else:
            expansions[filename] = combined
    return expansions, whole


def from_record(record: RunRecord) -> dict[str, Expansion]:
    """run.json's ``configurations`` (checked by the run record's model), for ``--resume``."""
    return {
        filename: Expansion(
            tuple(Configuration(row.args, row.configuration) for row in found.rows),
            {side: tuple(found.flags[side]) for side in (BASE, HEAD)},
        )
        for filename, found in record.configurations.items()
    }
