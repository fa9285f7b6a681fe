"""The schedule (interleaved, rotated, seeded: docs/statistics.md) and the benchmark processes that carry it out,
started like ``child_process.fork`` (IPC over ``NODE_CHANNEL_FD``), each in its own process group (or sandbox)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import selectors
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchgate.sandbox import Confinement

BASE, HEAD = "base", "head"
CSV_LABELS = {BASE: "old", HEAD: "new"}
STDERR_TAIL_BYTES = 4096
_POLL_SECONDS = 0.25


@dataclass(frozen=True)
class Job:
    """One benchmark process: a file (or one ``configuration``, compare.js's ``row``), one side, one iteration."""

    index: int
    iteration: int
    filename: str
    side: str
    configuration: tuple[str, ...] | None = None
    row: str | None = None


def _rotated(items: Sequence, by: int) -> list:
    """``items`` from the ``by``-th (modulo their count) on, then those before it."""
    shift = by % len(items) if items else 0
    return [*items[shift:], *items[:shift]]


def build_schedule(
    files: Sequence[str],
    runs: int,
    seed: int,
    configurations: Mapping[str, Sequence[tuple[tuple[str, ...], str]]] | None = None,
) -> list[Job]:
    """The interleaved, rotated, seeded schedule; ``configurations``: (arguments, row) pairs per file."""
    generator = random.Random(seed)
    jobs: list[Job] = []
    for iteration in range(runs):
        for filename in _rotated(files, iteration):
            units = (configurations or {}).get(filename) or [(None, None)]
            for arguments, row in _rotated(units, iteration):
                sides = [BASE, HEAD] if generator.random() < 0.5 else [HEAD, BASE]
                for side in sides:
                    jobs.append(Job(len(jobs), iteration, filename, side, arguments, row))
    return jobs


@dataclass
class ProcessResult:
    """How one benchmark process ended."""

    exit_status: int | None
    timed_out: bool
    interrupted: bool
    stderr_tail: str
    duration: float
    protocol_errors: list[str] = field(default_factory=list)
    stdout_tail: str = ""  # compare.js lets it through to its own stdout; here it only explains a silent process


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class BenchmarkProcess:
    """Runs one benchmark file like ``child_process.fork`` and hands every IPC message to ``on_message``."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self.stop_requested = False

    def stop(self) -> None:
        """Called from a signal handler: end the current process group at once."""
        self.stop_requested = True
        if self._process is not None:
            _kill_group(self._process)

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float | None,
        on_message: Callable[[dict], None],
        sandbox: Confinement | None = None,
    ) -> ProcessResult:
        """Run ``argv`` (confined by ``sandbox``) to its end or ``timeout``; each IPC message to ``on_message``."""
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        channel = {"NODE_CHANNEL_FD": str(child_end.fileno()), "NODE_CHANNEL_SERIALIZATION_MODE": "json"}
        if sandbox is None:
            child_env = {**env, **channel}
        else:
            argv, child_env = sandbox.wrap(argv, cwd=cwd, env=env, extra_env=channel)
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=child_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(child_end.fileno(),),
                start_new_session=True,
            )
        finally:
            child_end.close()
        self._process = process
        with process, parent_end:  # then its pipes and the channel closed, the process waited for
            try:
                return self._communicate(process, parent_end, started, timeout, on_message)
            finally:
                self._process = None
                _kill_group(process)  # nothing of a finished job may linger (servers, stuck children)

    def _communicate(self, process, channel, started, timeout, on_message) -> ProcessResult:
        tails = {"stderr": b"", "stdout": b""}  # the last bytes of each, enough to show why a process died
        pending = b""  # the IPC channel's last line, until its newline arrives
        errors: list[str] = []
        selector = selectors.DefaultSelector()
        selector.register(channel, selectors.EVENT_READ, "ipc")
        selector.register(process.stdout, selectors.EVENT_READ, "stdout")
        selector.register(process.stderr, selectors.EVENT_READ, "stderr")
        deadline = started + timeout if timeout else None
        timed_out = False
        try:
            while selector.get_map():
                if self.stop_requested:
                    break
                wait = _POLL_SECONDS
                if deadline is not None:
                    wait = min(wait, deadline - time.monotonic())
                    if wait <= 0:
                        timed_out = True  # the process group is killed below
                        break
                events = selector.select(wait)
                if not events and process.poll() is not None:
                    # The process is gone but something it started still holds the pipes open.
                    break
                for key, _ in events:
                    chunk = channel.recv(65536) if key.data == "ipc" else os.read(key.fileobj.fileno(), 65536)
                    if not chunk:
                        selector.unregister(key.fileobj)
                    elif key.data in tails:
                        tails[key.data] = (tails[key.data] + chunk)[-STDERR_TAIL_BYTES:]
                    else:
                        *lines, pending = (pending + chunk).split(b"\n")
                        for line in lines:
                            try:
                                message = json.loads(line)
                            except ValueError:
                                errors.append(f"unreadable IPC message: {line[:120]!r}")
                                continue
                            if isinstance(message, dict):
                                on_message(message)
        finally:
            selector.close()
        interrupted = self.stop_requested
        if timed_out or interrupted:
            _kill_group(process)
        exit_status = process.wait()
        return ProcessResult(
            exit_status=exit_status,
            timed_out=timed_out,
            interrupted=interrupted,
            stderr_tail=tails["stderr"].decode("utf-8", errors="replace"),
            duration=time.monotonic() - started,
            protocol_errors=errors,
            stdout_tail=tails["stdout"].decode("utf-8", errors="replace"),
        )


def job_argv(
    binary: Path,
    node_args: Sequence[str],
    file_path: Path,
    set_args: Sequence[str],
    cpuset: str | None,
    flags: Sequence[str] = (),
) -> list[str]:
    """A job's command line as compare.js (or common.js, for a configuration child with ``flags``) forks it."""
    command = [str(binary), *flags, *node_args, str(file_path), *set_args]
    return ["taskset", "-c", cpuset, *command] if cpuset else command


@dataclass(frozen=True)
class RunPlan:
    """Everything one run needs, fixed before the first process starts (``benchgate.run.plan.prepare``)."""

    benchmark_dir: Path
    files: tuple[str, ...]
    binaries: dict  # side -> releases.NodeBinary
    runs: int
    seed: int
    set_args: tuple[str, ...] = ()
    timeout: float | None = None
    cpuset: str | None = None
    max_failures: int = 3  # per file (or configuration) and side; later jobs of one that keeps failing are skipped
    sandbox: Confinement | None = None  # an untrusted head: every job, on both sides, starts in the sandbox
    # Files whose jobs run one configuration each (run.json's FileConfigurations); the others run whole.
    configurations: dict = field(default_factory=dict)
    pairing: str = "sequential"  # or "duet": base and head side by side (benchgate.run.duet)
    slots: int = 1  # units run at once on disjoint CPU sets (benchgate.run.session.Session)

    def schedule(self) -> list[Job]:
        """The jobs in the order they run (``build_schedule``): the same again on --resume."""
        units = {
            name: [(row.args, row.configuration) for row in found.rows] for name, found in self.configurations.items()
        }
        return build_schedule(self.files, self.runs, self.seed, units)
