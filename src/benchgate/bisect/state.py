"""The bisection loop and its state, saved atomically with a SHA-256 digest after every batch: a state cut short,
edited or of another bisection is refused in one line (exit 10), never half-trusted (docs/bisect.md)."""

import hashlib
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from benchgate.bisect.search import Bisection, Budget, Candidate, Done, Probe, Samples, next_action, probes_left
from benchgate.errors import BenchgateError
from benchgate.results import write_atomically
from benchgate.run.progress import format_seconds

SCHEMA = 1
KIND = "benchgate-bisect"
MAX_CANDIDATES = 100_000
EXIT_BISECT_STATE = 10


class BisectStateError(BenchgateError):
    """A bisect state file that is truncated, forged, damaged or of another bisection (exit 10)."""

    exit_status = EXIT_BISECT_STATE


def _digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def save(path: Path, bisection: Bisection, setup: dict) -> None:
    """Write the state atomically: a whole new file, fsynced, renamed over the old one."""
    body = {
        "schema": SCHEMA,
        "kind": KIND,
        "setup": setup,
        "budget": asdict(bisection.budget),
        "candidates": [asdict(candidate) for candidate in bisection.candidates],
        "elapsed_seconds": bisection.elapsed_seconds,
        "probes": [asdict(probe) for probe in bisection.probes.values()],  # in the order measured
    }
    write_atomically(path, json.dumps({**body, "digest": _digest(body)}, indent=1, sort_keys=True) + "\n")


def _check(condition: bool, what: str, where: str) -> None:
    if not condition:
        raise BisectStateError(f"refused: {what}", where=where)


def _probe(data: dict, candidates: int, where: str) -> Probe:
    _check(isinstance(data, dict), "a probe is not an object", where)
    expected = {"index", "samples", "runs", "batches", "built", "build_seconds", "measure_seconds", "failed"}
    _check(set(data) == expected, f"a probe has the fields {sorted(data)}", where)
    index = data["index"]
    _check(isinstance(index, int) and 0 <= index < candidates, f"probe index {index!r} is out of range", where)
    runs, batches = data["runs"], data["batches"]
    _check(isinstance(runs, int) and isinstance(batches, int) and 0 <= batches <= runs, f"probe {index}: runs", where)
    _check(data["failed"] is None or isinstance(data["failed"], str), f"probe {index}: failed", where)
    samples = data["samples"]
    _check(isinstance(samples, dict), f"probe {index}: samples is not an object", where)
    for row, rates in samples.items():
        counted = isinstance(rates, list) and len(rates) <= 2 * runs
        _check(counted, f"probe {index}, {row!r}: more samples than runs", where)
        positive = all(isinstance(rate, int | float) and math.isfinite(rate) and rate > 0 for rate in rates)
        _check(positive, f"probe {index}, {row!r}: a rate that is not a positive number", where)
    return Probe(**data)


def load(path: Path, setup: dict) -> Bisection:
    """The bisection a state file holds; BisectStateError for anything not written by ``save`` for ``setup``."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BisectStateError("no bisect state to resume (run without --resume first)", where=where) from None
    except UnicodeDecodeError:
        raise BisectStateError("refused: not text (damaged)", where=where) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise BisectStateError(f"refused: truncated or not JSON (line {error.lineno})", where=where) from None
    _check(isinstance(data, dict) and data.get("kind") == KIND, "not a benchgate bisect state", where)
    _check(data.get("schema") == SCHEMA, f"schema {data.get('schema')!r}, this benchgate reads {SCHEMA}", where)
    digest = data.pop("digest", None)
    _check(digest == _digest(data), "its digest does not match its contents (edited or damaged)", where)
    _check(data.get("setup") == setup, "it is the state of another bisection (other ends, selection or source)", where)
    try:
        budget = Budget(**data["budget"])
        candidates = [Candidate(**candidate) for candidate in data["candidates"]]
    except (TypeError, KeyError):
        raise BisectStateError("refused: malformed budget or candidates", where=where) from None
    _check(2 <= len(candidates) <= MAX_CANDIDATES, f"{len(candidates)} candidates", where)
    probes = [_probe(item, len(candidates), where) for item in data.get("probes", [])]
    _check(len({probe.index for probe in probes}) == len(probes), "a candidate is probed twice", where)
    elapsed = data.get("elapsed_seconds")
    _check(isinstance(elapsed, int | float) and elapsed >= 0, "elapsed_seconds", where)
    return Bisection(candidates, budget, {probe.index: probe for probe in probes}, float(elapsed))


@dataclass(frozen=True)
class Measured:
    """One batch at one candidate: the rates per row, or why it could not be measured."""

    samples: Samples
    built: bool = False
    build_seconds: float = 0.0
    failed: str | None = None


# (candidate, runs, batch number) -> Measured
MeasureFn = Callable[[Candidate, int, int], Measured]


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
    save(state_path, bisection, setup)
    while True:
        action = next_action(bisection)
        if isinstance(action, Done):
            return action
        started = clock()
        probe = bisection.probes.setdefault(action.index, Probe(action.index))
        outcome = measure(bisection.candidates[action.index], action.runs, probe.batches)
        seconds = clock() - started
        probe.batches += 1
        probe.runs += action.runs
        probe.built = probe.built or outcome.built
        probe.build_seconds += outcome.build_seconds
        probe.measure_seconds += max(seconds - outcome.build_seconds, 0.0)
        probe.failed = outcome.failed or probe.failed
        for row, rates in outcome.samples.items():
            probe.samples.setdefault(row, []).extend(float(rate) for rate in rates)
        bisection.elapsed_seconds += seconds
        save(state_path, bisection, setup)
        if progress is not None:
            # The ETA: the mean time of a probe so far, times the probes left.
            left, done, eta = probes_left(bisection), len(bisection.probes), "-"
            if left and (measured := [probe for probe in bisection.probes.values() if probe.runs]):
                seconds = sum(probe.measure_seconds + probe.build_seconds for probe in measured) / len(measured) * left
                eta = format_seconds(seconds)
            line = f"bisect: {done} probe{'s' * (done != 1)} done, about {left} left, ETA {eta}"
            print(line, file=progress, flush=True)
