"""The bisection loop: ask the search what to measure, measure it (``MeasureFn``: real probes or a test's
stub), save the state, show progress."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from benchgate.bisect import state
from benchgate.bisect.classify import Samples
from benchgate.bisect.search import Bisection, Candidate, Done, next_action, probes_left


@dataclass(frozen=True)
class Measured:
    """One batch at one candidate: the rates per row, or why it could not be measured."""

    samples: Samples
    built: bool = False
    build_seconds: float = 0.0
    failed: str | None = None


# (candidate, runs, batch number) -> Measured
MeasureFn = Callable[[Candidate, int, int], Measured]


def progress_line(bisection: Bisection) -> str:
    """``bisect: 4 probes done, about 3 left, ETA 2m10s`` (the mean time of a probe so far, times those left)."""
    left, done, eta = probes_left(bisection), len(bisection.probes), "-"
    if left and (measured := [probe for probe in bisection.probes.values() if probe.runs]):
        seconds = sum(probe.measure_seconds + probe.build_seconds for probe in measured) / len(measured) * left
        minutes, seconds = divmod(int(seconds), 60)
        hours, minutes = divmod(minutes, 60)
        eta = f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"
    return f"bisect: {done} probe{'s' * (done != 1)} done, about {left} left, ETA {eta}"


def run(
    bisection: Bisection,
    measure: MeasureFn,
    *,
    state_path: Path,
    setup: dict,
    progress: TextIO | None = sys.stderr,
    clock: Callable[[], float] = time.monotonic,
) -> Done:
    """Measure until the search is done; the state is saved after every batch (and once at the start)."""
    state.save(state_path, bisection, setup)
    while True:
        action = next_action(bisection)
        if isinstance(action, Done):
            return action
        started = clock()
        probe = bisection.probe(action.index)
        outcome = measure(bisection.candidates[action.index], action.runs, probe.batches)
        seconds = clock() - started
        probe.batches += 1
        probe.runs += action.runs
        probe.built = probe.built or outcome.built
        probe.build_seconds += outcome.build_seconds
        probe.measure_seconds += max(seconds - outcome.build_seconds, 0.0)
        if outcome.failed is not None:
            probe.failed = outcome.failed
        for row, rates in outcome.samples.items():
            probe.samples.setdefault(row, []).extend(float(rate) for rate in rates)
        bisection.elapsed_seconds += seconds
        state.save(state_path, bisection, setup)
        if progress is not None:
            print(progress_line(bisection), file=progress, flush=True)
