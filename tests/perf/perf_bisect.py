"""Bisect against a linear scan on the fixture repository: probes, builds and wall time, side by side.

The fixture is tests/bisectrepo.py's Node-like repository (real git, configure, make, cc) of ``--commits``
commits whose seeded stub benchmark is 30 % slower from ``--planted`` on. Both strategies measure with the
same machinery (``benchgate.bisect.probes.Prober``: build through the binary cache, run with ``benchgate
run``'s runner) and class each probe with the same statistics (``benchgate.bisect.search``), each with a
fresh build cache:

- ``bisect``: ``benchgate bisect`` (``bisect.state.run`` with the search of ``bisect.search``);
- ``linear``: the ends, then every commit from the earlier end on until the first like the later end, as a
  person walking the history would.

    python tests/perf/perf_bisect.py [--commits 32] [--planted 13 21 29] [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bisectrepo import make_bisect_repo  # noqa: E402

from benchgate.bisect import probes, search, state  # noqa: E402


def _prober(work: Path, repo, candidates) -> probes.Prober:
    """A prober with a build cache of its own: every strategy starts cold."""
    selection = probes.Selection(categories=("bisect",))
    prober = probes.Prober(workdir=work, selection=selection, repo=repo.path, build_cache=work / "cache")
    prober.use_benchmarks_of(candidates[-1].key)
    return prober


def bisect(work: Path, repo, candidates, runs: int) -> tuple[int, int, float, int | None]:
    prober = _prober(work, repo, candidates)
    bisection = search.Bisection(candidates, search.Budget(runs=runs))
    started = time.monotonic()
    state.run(bisection, prober.measure, state_path=work / "state.json", setup={}, progress=None)
    found = search.culprits(bisection)
    builds = sum(probe.built for probe in bisection.probes.values())
    return len(bisection.probes), builds, time.monotonic() - started, found[0].last if found else None


def linear(work: Path, repo, candidates, runs: int) -> tuple[int, int, float, int | None]:
    prober = _prober(work, repo, candidates)
    started = time.monotonic()
    measured = {index: prober.measure(candidates[index], runs, 0) for index in (0, len(candidates) - 1)}
    step = search.find_step(measured[0].samples, measured[len(candidates) - 1].samples)
    culprit = None
    for index in range(1, len(candidates) - 1):
        measured[index] = prober.measure(candidates[index], runs, 0)
        ends = measured[0].samples, measured[len(candidates) - 1].samples
        if search.place(measured[index].samples, *ends, step).cls == search.LATER:
            culprit = index
            break
    culprit = len(candidates) - 1 if culprit is None else culprit
    builds = sum(outcome.built for outcome in measured.values())
    return len(measured), builds, time.monotonic() - started, culprit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=32)
    parser.add_argument("--planted", type=int, nargs="+", default=[13, 21, 29])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(f"{'planted':>7} {'strategy':<8} {'probes':>6} {'builds':>6} {'wall s':>8} {'found':>5}")
    with tempfile.TemporaryDirectory(prefix="perf-bisect-") as temporary:
        root = Path(temporary)
        for planted in args.planted:
            repo = make_bisect_repo(
                root / f"repo-{planted}",
                lambda index, planted=planted: ["1000:0.02" if index < planted else "700:0.02"],
                commits=args.commits,
            )
            candidates = probes.commit_candidates(repo.path, repo.commits["c0"], "main")
            os.environ["BISECT_PLAN"] = "0"
            for name, strategy in (("bisect", bisect), ("linear", linear)):
                work = root / f"{name}-{planted}"
                os.environ["BISECT_COUNTER"] = str(work / "counter")
                work.mkdir()
                count, builds, wall, found = strategy(work, repo, candidates, args.runs)
                print(f"{planted:>7} {name:<8} {count:>6} {builds:>6} {wall:>8.1f} {found!s:>5}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
