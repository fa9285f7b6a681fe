"""Duet against sequential on real Node files, node against itself, side by side in one run.

Runs ``benchgate run --pairing sequential`` and ``--pairing duet`` with the same binary on both
sides, the same files, ``--set`` values, runs and seed, alternating the order of the two modes
over ``--repeats`` rounds (so drift of the machine hits both). For each mode it reports

- the wall time of the run;
- the median width of the gate's interval at equal runs (in log units, ``log(1 + high) -
  log(1 + low)``: the ratio of the interval's ends), with the decisions the gate makes from the
  files (sequential: Yuen's test; duet: the paired test on the pairs);
- the median over rows of the standard deviation of the per-pair log ratio (sequential: the i-th
  base and head sample of a row, which ran one after the other; duet: the pairs).

and the ratios duet / sequential. Targets (issue 15): interval <= 0.85x as wide, wall time <= 0.7x.

    python tests/perf/perf_duet.py --node-benchmark /work/shared/node-benchmark/benchmark        # full
    python tests/perf/perf_duet.py --node-benchmark /work/shared/node-benchmark/benchmark --runs 4 --repeats 1
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchgate import results
from benchgate.stats import adaptivetable, analysis, gate

# Small, CPU-bound, single-threaded files, cut to a few seconds a process with --set.
DEFAULT_FILES = ("string_decoder/string-decoder-create.js", "es/spread-assign.js", "es/foreach-bench.js")
DEFAULT_SET = ("n=2000000", "count=10", "method=for-of", "method=spread", "encoding=utf8", "encoding=base64")


def _run(mode: str, args, output: Path) -> float:
    filters = [item for name in args.files for item in ("--filter", Path(name).name)]
    categories = sorted({name.split("/")[0] for name in args.files})
    command = [
        sys.executable,
        "-m",
        "benchgate",
        "run",
        *categories,
        "--benchmark-dir",
        args.node_benchmark,
        "--base-binary",
        args.binary,
        "--head-binary",
        args.binary,
        *filters,
        *(f"--set={value}" for value in args.set),
        "--runs",
        str(args.runs),
        "--seed",
        str(args.seed),
        "--pairing",
        mode,
        "--no-progress",
        "--no-analyze",
        "--output",
        str(output),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"perf_duet: {mode} run failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return elapsed


def _figures(output: Path) -> tuple[float, float, int]:
    """(median interval width in log units, median sd of the per-pair log ratio, rows) of one run directory."""
    samples, run, _ = results.load([str(output)])
    gated = analysis.analyze(analysis.RunData(samples, pairs=run.pairs), gate.GatePolicy()).table
    width = np.log1p(gated["ci_high"].to_numpy() / 100) - np.log1p(gated["ci_low"].to_numpy() / 100)
    keys = list(zip(gated["filename"], gated["configuration"], strict=True))
    if run.pairs is not None:
        base, head, _ = adaptivetable.pair_arrays(samples, keys, run.pairs)
    else:
        base, head = adaptivetable.sample_arrays(samples, keys)
        runs = min(base.shape[-1], head.shape[-1])
        base, head = base[..., :runs], head[..., :runs]
    spread = np.nanstd(np.log(head) - np.log(base), axis=-1, ddof=1)
    return float(np.nanmedian(width)), float(np.nanmedian(spread)), len(gated)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-benchmark", required=True, help="a Node checkout's benchmark/ directory")
    parser.add_argument("--binary", default=shutil.which("node") or "node", help="the node on both sides")
    parser.add_argument("--files", nargs="+", default=list(DEFAULT_FILES), help="files, as category/name.js")
    parser.add_argument("--set", nargs="*", default=list(DEFAULT_SET), help="--set values for every file")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2, help="rounds, the two modes' order alternating")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args(argv)
    totals: dict[str, list[tuple[float, float, float, int]]] = {"sequential": [], "duet": []}
    with tempfile.TemporaryDirectory(prefix="perf-duet-") as scratch:
        for round_index in range(args.repeats):
            order = ("sequential", "duet") if round_index % 2 == 0 else ("duet", "sequential")
            for mode in order:
                output = Path(scratch) / f"{mode}-{round_index}"
                wall = _run(mode, args, output)
                width, spread, rows = _figures(output)
                totals[mode].append((wall, width, spread, rows))
                print(
                    f"round {round_index + 1} {mode:<10} wall {wall:7.1f} s  median interval width {width:.4f}  "
                    f"median sd of log ratio {spread:.4f}  ({rows} rows, {args.runs} runs)"
                )
    medians = {mode: np.median(np.asarray([row[:3] for row in rows]), axis=0) for mode, rows in totals.items()}
    wall, width, spread = (medians["duet"][i] / medians["sequential"][i] for i in range(3))
    print(
        f"duet / sequential: interval width {width:.2f}x (target <= 0.85x), wall time {wall:.2f}x "
        f"(target <= 0.70x), sd of the per-pair log ratio {spread:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
