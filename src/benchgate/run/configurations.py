"""The configurations of each benchmark file, as its own ``common.js`` would run them: one job each.

Each side's common.js is asked for its queue once through ``data/expand-configurations.js``; a file whose
queue cannot be run child by child runs whole (docs/statistics.md, "Adaptive runs").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchgate.results.jsformat import format_configuration
from benchgate.results.recordparts import MAX_CONFIGURATIONS, ConfigurationRow, FileConfigurations
from benchgate.run.process import BASE, HEAD, BenchmarkProcess

if TYPE_CHECKING:
    from benchgate.sandbox import Confinement

PER_FILE, PER_CONFIGURATION = "per-file", "per-configuration"
PRELOAD = Path(__file__).resolve().parent.parent / "data" / "expand-configurations.js"
_MESSAGE = "benchgate-configuration"
MAX_ARGS = 64


@dataclass(frozen=True)
class SideExpansion:
    """What one side's common.js forked, or why the file must run whole there (``reason``)."""

    configurations: tuple[ConfigurationRow, ...] = ()
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
        configurations.append(ConfigurationRow(args=tuple(args), configuration=format_configuration(conf)))
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
) -> SideExpansion:
    """Ask one side's common.js which configuration children ``filename`` forks (see the module docstring)."""
    messages: list[dict] = []
    argv = [str(binary.path), *binary.node_args, "--require", str(PRELOAD), str(benchmark_dir / filename), *set_args]
    result = BenchmarkProcess().run(
        argv, cwd=benchmark_dir.parent, env=dict(env), timeout=timeout, on_message=messages.append, sandbox=sandbox
    )
    if result.timed_out or result.interrupted:
        return SideExpansion(reason="listing its configurations timed out" if result.timed_out else "interrupted")
    return read_forks(messages, result.exit_status)


def combine(base: SideExpansion, head: SideExpansion) -> FileConfigurations | str:
    """The file's configurations (as run.json holds them) when both sides list the same ones; else why it runs whole."""
    for side, found in ((BASE, base), (HEAD, head)):
        if found.reason is not None:
            return f"{found.reason} on the {side}"
    if base.configurations != head.configurations:
        return "the base's and the head's common.js list different configurations"
    return FileConfigurations(rows=base.configurations, flags={BASE: base.flags, HEAD: head.flags})


def expand_files(
    files: Sequence[str], expand: Callable[[str, str], SideExpansion], *, is_http: Callable[[str], bool]
) -> tuple[dict[str, FileConfigurations], dict[str, str]]:
    """Per file, its expansion; the files that run whole, and why. ``expand(filename, side)`` lists one side."""
    expansions: dict[str, FileConfigurations] = {}
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
