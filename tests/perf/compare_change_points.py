"""benchgate's change points (ruptures' PELT and a t-test), Apache Otava and MongoDB's
signal-processing-algorithms on the same simulated series of main.

Each series is 20 stored runs of one benchmark row: the per-run trimmed mean of a row whose run-to-run
noise is log-normal with sigma drawn log-uniform from 0.5 % to 5 % (what a stored run's mean varies by
on a shared runner), with a step of -STEP % at a random point between the 5th and the 16th run (none
for the A/A column), and 2 % of the runs slowed by 10-30 % (a noisy neighbour). Both libraries see the
same series (common random numbers):

- benchgate: ``benchgate.history.changepoints.split_indices`` (PELT with an L1 cost on the noise-scaled
  log values, then Student's t-test merging), ``--penalty`` and ``--pvalue`` to try other settings;
- Otava: ``otava.analysis.compute_change_points`` (Hunter's windowed e-divisive with a t-test merge
  step), ``max_pvalue`` 1e-4 as benchgate called it until it used its own (``--otava-pvalue 0.001``: its default);
- signal-processing-algorithms: ``energy_statistics.e_divisive`` (Matteson and James's e-divisive,
  permutation test), ``pvalue`` 0.05 and 100 permutations (its defaults).

Printed per library and step: the share of series with a change point within one run of the step
("found"), the share with a change point anywhere else ("false", for A/A every change point is false),
and the median time per series. A library that is not installed is left out. Otava's and spa's pins
conflict with each other and with benchgate's (spa: numpy < 2 and gevent; otava: numpy 2.2.0), so
install them without their pins, in benchgate's venv or one of its own:

    pip install -e . && pip install more-itertools structlog
    pip install --no-deps apache-otava signal-processing-algorithms
    python tests/perf/compare_change_points.py --series 200
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time

import numpy as np

NOISE = {"sigma": None, "outliers": 0.02}  # --sigma fixes the run-to-run noise; --outliers their share


def simulate(rng: np.random.Generator, step: float, length: int) -> tuple[np.ndarray, int | None]:
    sigma = NOISE["sigma"] or float(np.exp(rng.uniform(np.log(0.005), np.log(0.05))))
    logs = rng.normal(np.log(1000.0), sigma, length)
    where = None
    if step:
        where = int(rng.integers(5, length - 4))
        logs[where:] += np.log1p(-step / 100)
    outliers = rng.random(length) < NOISE["outliers"]
    logs[outliers] += np.log1p(-rng.uniform(0.1, 0.3, outliers.sum()))
    return np.exp(logs), where


OTAVA_PVALUE = [1e-4]
BENCHGATE_PVALUE = [3e-4]


def benchgate_indices(values: np.ndarray) -> list[int]:
    from benchgate.history.changepoints import split_indices

    return [index for index, _ in split_indices(list(values), max_pvalue=BENCHGATE_PVALUE[0])]


def otava_indices(values: np.ndarray) -> list[int]:
    from otava.analysis import compute_change_points

    found, _ = compute_change_points(list(values), window_len=50, max_pvalue=OTAVA_PVALUE[0])
    return [point.index for point in found]


def spa_indices(values: np.ndarray) -> list[int]:
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    return list(e_divisive(values, pvalue=0.05, permutations=100))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=200, help="series per step (default 200)")
    parser.add_argument("--length", type=int, default=20)
    parser.add_argument("--steps", default="0,2,5,10,20", help="steps in percent, 0 = A/A")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--otava-pvalue", type=float, default=OTAVA_PVALUE[0])
    parser.add_argument("--pvalue", type=float, default=BENCHGATE_PVALUE[0], help="benchgate's t-test")
    parser.add_argument("--penalty", type=float, help="benchgate's PELT penalty (default: its PENALTY)")
    parser.add_argument("--sigma", type=float, help="run-to-run noise in percent (default: 0.5-5, log-uniform)")
    parser.add_argument("--outliers", type=float, default=2.0, help="runs slowed by 10-30 %%, in percent")
    args = parser.parse_args()
    NOISE["sigma"] = args.sigma / 100 if args.sigma else None
    NOISE["outliers"] = args.outliers / 100
    OTAVA_PVALUE[0], BENCHGATE_PVALUE[0] = args.otava_pvalue, args.pvalue
    if args.penalty is not None:
        from benchgate.history import changepoints

        changepoints.PENALTY = args.penalty
    np.random.seed(args.seed)  # e_divisive's permutations use numpy's global generator
    libraries = {
        "benchgate": benchgate_indices,
        "otava": otava_indices,
        "signal-processing-algorithms": spa_indices,
    }
    modules = {"benchgate": "ruptures", "otava": "otava"}
    modules["signal-processing-algorithms"] = "signal_processing_algorithms"
    libraries = {name: detect for name, detect in libraries.items() if importlib.util.find_spec(modules[name])}
    print(f"{args.series} series of {args.length} runs per step; found = a change point within one run of the step")
    print(f"{'library':<30} {'step %':>7} {'found':>7} {'false':>7} {'ms/series':>10}")
    for step in (float(value) for value in args.steps.split(",")):
        rng = np.random.default_rng(args.seed)
        cases = [simulate(rng, step, args.length) for _ in range(args.series)]
        for name, detect in libraries.items():
            found = false = 0
            times = []
            for values, where in cases:
                started = time.perf_counter()
                indices = detect(values)
                times.append(time.perf_counter() - started)
                hit = where is not None and any(abs(index - where) <= 1 for index in indices)
                found += hit
                false += any(where is None or abs(index - where) > 1 for index in indices)
            print(
                f"{name:<30} {step:>7.0f} {found / len(cases):>7.1%} {false / len(cases):>7.1%} "
                f"{statistics.median(times) * 1000:>10.1f}"
            )


if __name__ == "__main__":
    main()
