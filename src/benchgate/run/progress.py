"""Progress of a run with an ETA: a plain line every so often on stderr, the same on a terminal and in CI logs."""

import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TextIO


def format_seconds(seconds: float) -> str:
    """``H:MM:SS`` (or ``M:SS`` under an hour)."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Receives job events from the runner and shows them on ``stream``."""

    def __init__(
        self, stream: TextIO | None = None, *, interval: float = 30.0, clock=time.monotonic, stopping=None
    ) -> None:
        self.stream = stream or sys.stderr
        # An adaptive run's (benchgate.run.adaptive.Adaptive): which files still run, and for how many runs.
        self.stopping = stopping
        self.interval = interval
        self.clock = clock
        self.schedule: Sequence = ()
        self.done = 0
        self.samples = 0
        self.current = ""
        self._durations: dict[tuple[str, str], list[float]] = defaultdict(list)
        self._started = 0.0
        self._last_line = float("-inf")
        self.skipped = 0

    def start(self, schedule: Sequence, completed: int = 0) -> None:
        self.schedule = schedule
        self.done = completed
        self._started = self.clock()
        self._show(force=True)

    def job_started(self, job) -> None:
        self.current = f"{job.filename} ({job.side}, run {job.iteration + 1})"
        self._show()

    def sample(self) -> None:
        self.samples += 1
        self._show()

    def job_finished(self, job, duration: float) -> None:
        self._durations[(job.filename, job.side)].append(duration)
        self.done = job.index + 1
        self._show()

    def job_skipped(self, job) -> None:
        """An adaptive run skipped a job: its comparison (or its file, run whole) had stopped."""
        self.done = job.index + 1
        self.skipped += 1

    def eta(self, *, worst: bool = False) -> float | None:
        """Seconds left by each job's (file, side) mean so far, None before any ended (``worst``: all to max-runs)."""
        all_durations = [value for values in self._durations.values() for value in values]
        if not all_durations:
            return None
        fallback = sum(all_durations) / len(all_durations)
        left = 0.0
        for job in self.schedule[self.done :]:
            if self.stopping is not None and job.iteration >= self.stopping.expected_runs(job, worst=worst):
                continue  # an adaptive run's job not expected to run (or, ``worst``, not run at all)
            known = self._durations.get((job.filename, job.side))
            left += sum(known) / len(known) if known else fallback
        return left

    def line(self) -> str:
        total = len(self.schedule)
        fraction = self.done / total if total else 1.0
        eta = self.eta()
        eta_text = format_seconds(eta) if eta is not None else "--:--"
        elapsed = format_seconds(self.clock() - self._started)
        files = ""
        if self.stopping is not None:
            worst = self.eta(worst=True)
            eta_text += f" (at most {format_seconds(worst)})" if worst is not None else ""
            running, scheduled = len(self.stopping.running_files()), len(self.stopping.scheduled_files)
            files = f" | {running}/{scheduled} files running"
        return (
            f"{self.done}/{total} jobs {fraction:4.0%} | {self.samples} samples{files} | "
            f"elapsed {elapsed} | ETA {eta_text} | {self.current}"
        )

    def _show(self, force: bool = False) -> None:
        now = self.clock()
        if force or now - self._last_line >= self.interval:
            self._last_line = now
            self.stream.write(f"benchgate: {self.line()}\n")
            self.stream.flush()

    def finish(self, interrupted: bool = False) -> None:
        state = "interrupted" if interrupted else "done"
        skipped = f" ({self.skipped} skipped: their comparisons or files had stopped)" if self.skipped else ""
        self.stream.write(
            f"benchgate: {state}: {self.done}/{len(self.schedule)} jobs{skipped}, {self.samples} samples "
            f"in {format_seconds(self.clock() - self._started)}\n"
        )
        self.stream.flush()
