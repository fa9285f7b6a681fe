"""The schedule, and the benchmark processes that carry it out.

Schedule. compare.js runs every iteration of one file back to back, and base
always before head, so any drift in machine speed (heat, a neighbour's load)
lands on one file or one side. benchgate instead walks iterations in the outer
loop; in iteration ``i`` the files are rotated by ``i`` places (so no file is
always first or last), and for every file base and head both run, in an order
drawn from a random generator seeded with ``--seed``. The same seed, files and
runs give the same schedule, which ``--resume`` relies on.

Processes. Each job is ``[taskset -c CPUS] NODE [NODE_ARGS] benchmark/cat/file.js
[--set args]``, started like ``child_process.fork`` starts it: an IPC channel on
a socket pair named by ``NODE_CHANNEL_FD``, over which the file's own
``common.js`` sends ``{type: 'config'}`` and ``{type: 'report', name, conf,
rate, time}`` messages as JSON lines. Each job gets its own process group, so a
timeout or an interrupt ends the configuration children too.
"""

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.results import format_configuration

BASE, HEAD = "base", "head"
CSV_LABELS = {BASE: "old", HEAD: "new"}
STDERR_TAIL_BYTES = 4096
_POLL_SECONDS = 0.25


@dataclass(frozen=True)
class Job:
    """One benchmark process: one file, one side, one iteration."""

    index: int
    iteration: int
    filename: str
    side: str


def build_schedule(files: Sequence[str], runs: int, seed: int) -> list[Job]:
    """Interleaved, rotated, seeded schedule: see the module docstring."""
    generator = random.Random(seed)
    jobs: list[Job] = []
    count = len(files)
    for iteration in range(runs):
        offset = iteration % count if count else 0
        for filename in list(files[offset:]) + list(files[:offset]):
            sides = [BASE, HEAD] if generator.random() < 0.5 else [HEAD, BASE]
            for side in sides:
                jobs.append(Job(len(jobs), iteration, filename, side))
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


class _Tail:
    """The last bytes of a stream, enough to show why a process died."""

    def __init__(self, limit: int = STDERR_TAIL_BYTES) -> None:
        self.limit = limit
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * self.limit:
            del self.data[: -self.limit]

    def text(self) -> str:
        return bytes(self.data[-self.limit :]).decode("utf-8", errors="replace")


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
    ) -> ProcessResult:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        child_env = dict(env)
        child_env["NODE_CHANNEL_FD"] = str(child_end.fileno())
        child_env["NODE_CHANNEL_SERIALIZATION_MODE"] = "json"
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
        try:
            return self._communicate(process, parent_end, started, timeout, on_message)
        finally:
            self._process = None
            _kill_group(process)  # nothing of a finished job may linger (servers, stuck children)
            process.wait()
            parent_end.close()
            assert process.stdout is not None and process.stderr is not None
            process.stdout.close()
            process.stderr.close()

    def _communicate(self, process, channel, started, timeout, on_message) -> ProcessResult:
        stderr_tail = _Tail()
        pending = bytearray()
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
                        timed_out = True
                        _kill_group(process)
                        break
                events = selector.select(wait)
                if not events and process.poll() is not None:
                    # The process is gone but something it started still holds the pipes open.
                    break
                for key, _ in events:
                    chunk = channel.recv(65536) if key.data == "ipc" else os.read(key.fileobj.fileno(), 65536)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    if key.data == "stderr":
                        stderr_tail.add(chunk)
                    elif key.data == "ipc":
                        pending += chunk
                        while (newline := pending.find(b"\n")) >= 0:
                            line = bytes(pending[:newline])
                            del pending[: newline + 1]
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
            stderr_tail=stderr_tail.text(),
            duration=time.monotonic() - started,
            protocol_errors=errors,
        )


def job_argv(
    binary: Path, node_args: Sequence[str], file_path: Path, set_args: Sequence[str], cpuset: str | None
) -> list[str]:
    """The command line of one job, as compare.js would fork it (pinned with taskset when asked)."""
    command = [str(binary), *node_args, str(file_path), *set_args]
    return ["taskset", "-c", cpuset, *command] if cpuset else command


@dataclass
class RunPlan:
    """Everything one run needs, fixed before the first process starts."""

    benchmark_dir: Path
    files: tuple[str, ...]
    binaries: dict  # side -> releases.NodeBinary
    runs: int
    seed: int
    set_args: tuple[str, ...] = ()
    timeout: float | None = None
    cpuset: str | None = None
    max_failures: int = 3  # per file and side; later jobs of a side that keeps failing are skipped


@dataclass
class SessionState:
    """What run.json's "progress" keeps so ``--resume`` can continue: a prefix of the schedule is done."""

    completed_jobs: int = 0
    csv_bytes: int = 0
    failures: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)
    samples: int = 0


class Session:
    """Carries out a schedule: writes each sample as it arrives, records failures, stops cleanly on a signal."""

    def __init__(
        self,
        plan: RunPlan,
        writer,
        state: SessionState,
        *,
        on_checkpoint: Callable[[], None],
        progress=None,
        already_written: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        self.plan = plan
        self.writer = writer
        self.state = state
        self.on_checkpoint = on_checkpoint
        self.progress = progress
        self.process = BenchmarkProcess()
        self.interrupted = False
        self.schedule = build_schedule(plan.files, plan.runs, plan.seed)
        # Samples an interrupted job already wrote: not written twice when it runs again on --resume.
        self._already_written = list(already_written)
        # Configurations in the order common.js runs them, per file: names the one a crash interrupted.
        self._configuration_order: dict[str, list[str]] = {}
        self._env = dict(os.environ)

    def _handle_signal(self, signum, frame) -> None:
        self.interrupted = True
        self.process.stop()

    def run(self) -> None:
        """Run the jobs not done yet; returns when the schedule is done or a signal stopped it."""
        previous = {sig: signal.signal(sig, self._handle_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            if self.progress:
                self.progress.start(self.schedule, self.state.completed_jobs)
            for job in self.schedule[self.state.completed_jobs :]:
                if self.interrupted:
                    break
                self._run_job(job)
                if self.interrupted:
                    break
                self.state.completed_jobs = job.index + 1
                self.state.csv_bytes = self.writer.path.stat().st_size
                self._already_written = []
                self.on_checkpoint()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self.progress:
                self.progress.finish(interrupted=self.interrupted)

    def _failures_of(self, filename: str, side: str) -> int:
        return sum(1 for item in self.state.failures if item["filename"] == filename and item["side"] == side)

    def _name_failed_configurations(self, filename: str) -> None:
        """A failure seen before any complete run of its file gets its configuration once the order is known."""
        known = self._configuration_order.get(filename, [])
        for item in self.state.failures:
            done = item.get("configurations_done")
            if (
                item["filename"] == filename
                and item["configuration"] is None
                and done is not None
                and done < len(known)
            ):
                item["configuration"] = known[done]

    def _run_job(self, job: Job) -> None:
        if self.plan.max_failures and self._failures_of(job.filename, job.side) >= self.plan.max_failures:
            return  # skipped; the note was added when the limit was reached
        binary = self.plan.binaries[job.side]
        label = CSV_LABELS[job.side]
        reported: list[str] = []
        bad_reports: list[str] = []
        queue_length: list[int] = []

        def on_message(message: dict) -> None:
            kind = message.get("type")
            if kind == "config":
                if isinstance(message.get("queueLength"), int):
                    queue_length.append(message["queueLength"])
                return
            if kind != "report" or not isinstance(message.get("conf"), dict):
                return  # Node's own internal messages ({cmd: 'NODE_...'}) and anything else
            configuration = format_configuration(message["conf"])
            rate, elapsed = message.get("rate"), message.get("time")
            if not _positive_number(rate):
                bad_reports.append(f"{configuration}: rate {rate!r} is not a positive number")
                return
            reported.append(configuration)
            key = (label, job.filename, configuration)
            if key in self._already_written:
                self._already_written.remove(key)
            else:
                self.writer.append(
                    label,
                    job.filename,
                    configuration,
                    float(rate),
                    float(elapsed) if _number(elapsed) else float("nan"),
                )
                self.state.samples += 1
            if self.progress:
                self.progress.sample()

        if self.progress:
            self.progress.job_started(job)
        argv = job_argv(
            binary.path, binary.node_args, self.plan.benchmark_dir / job.filename, self.plan.set_args, self.plan.cpuset
        )
        result = self.process.run(
            argv, cwd=self.plan.benchmark_dir.parent, env=self._env, timeout=self.plan.timeout, on_message=on_message
        )
        self.state.durations[job.filename] = round(self.state.durations.get(job.filename, 0.0) + result.duration, 3)
        if result.interrupted:
            self.interrupted = True
            return
        if self.progress:
            self.progress.job_finished(job, result.duration)
        known = self._configuration_order.get(job.filename, [])
        if result.exit_status == 0 and len(reported) > len(known):
            self._configuration_order[job.filename] = list(reported)
        self._name_failed_configurations(job.filename)
        reason = _failure_reason(result, reported, queue_length, bad_reports, self.plan.timeout)
        if reason is None:
            return
        self.state.failures.append(
            {
                "filename": job.filename,
                "configuration": known[len(reported)] if len(reported) < len(known) else None,
                "side": job.side,
                "exit_status": result.exit_status,
                "stderr_tail": result.stderr_tail,
                "reason": reason,
                "iteration": job.iteration,
                "configurations_done": len(reported),
            }
        )
        if self.plan.max_failures and self._failures_of(job.filename, job.side) == self.plan.max_failures:
            self.state.skipped.append(
                {
                    "filename": job.filename,
                    "reason": f"{job.side} failed {self.plan.max_failures} times; its remaining runs were skipped",
                    "side": job.side,
                }
            )


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _positive_number(value) -> bool:
    return _number(value) and 0 < value < float("inf")


def _failure_reason(
    result: ProcessResult, reported: list[str], queue_length: list[int], bad_reports: list[str], timeout: float | None
) -> str | None:
    if result.timed_out:
        return f"timed out after {timeout:g} s"
    if result.exit_status:
        how = (
            f"killed by signal {-result.exit_status}"
            if result.exit_status < 0
            else f"exited with status {result.exit_status}"
        )
        return f"crashed ({how})"
    if bad_reports:
        return "invalid report: " + "; ".join(bad_reports)[:900]
    if not reported:
        return "exited without reporting any sample"
    if queue_length and len(reported) < queue_length[-1]:
        return f"reported {len(reported)} of {queue_length[-1]} configurations"
    return None


def mark_gating(failures: list[dict]) -> list[dict]:
    """A head failure is gating when the base never failed on the same file and configuration."""
    base_failed = {(item["filename"], item["configuration"]) for item in failures if item["side"] == BASE}
    base_failed_files = {item["filename"] for item in failures if item["side"] == BASE}
    for item in failures:
        item["gating"] = (
            item["side"] == HEAD
            and (item["filename"], item["configuration"]) not in base_failed
            and (item["configuration"] is not None or item["filename"] not in base_failed_files)
        )
    return failures
