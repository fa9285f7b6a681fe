"""Running one build step: output to the log (and optionally a terminal), the whole process tree killed on
interrupt, SIGTERM or timeout, so an abandoned build leaves nothing running in its worktree."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO


class _Terminated(KeyboardInterrupt):
    """SIGTERM during a build: unwind like Ctrl-C so the build's process group is killed."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_step(
    argv: list[str], cwd: Path, env: dict[str, str], log: BinaryIO, echo: TextIO | None, timeout: float | None
) -> int | None:
    """Run one build step with output to ``log`` (and ``echo``); returns its status, None on timeout."""
    timed_out = threading.Event()
    with _sigterm_unwinds():
        # Own session: on interrupt or timeout the whole tree (make and its compilers) is killed, not just make.
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

        def kill() -> None:
            timed_out.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill) if timeout else None
        try:
            if timer:
                timer.start()
            assert process.stdout is not None
            for line in process.stdout:
                log.write(line)
                if echo is not None:
                    echo.write(line.decode(errors="replace"))
            status = process.wait()
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        finally:
            if timer:
                timer.cancel()
    return None if timed_out.is_set() else status
