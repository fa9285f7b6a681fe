"""Runner overhead of one job per configuration: `benchgate run --jobs per-configuration` and `--jobs per-file`
against Node's `node benchmark/compare.js`, side by side in one run, same samples.

compare.js starts, per file and run, a coordinator that forks one child per configuration.
``--jobs per-file`` does the same; ``--jobs per-configuration`` lists each file's configurations
once per side (one extra node start per file and side, for the whole run) and then starts
each configuration child itself, without the coordinator. The ratios are benchgate / compare.js
for the same files, binaries, --set values and runs (target <= 1.10); the order of the three
runners rotates from round to round. Every round checks both CSVs against compare.js's
(``perf_run.check_columns``: same keys and counts, times verbatim in Node's form, rate x time).

    python tests/perf/perf_jobs.py --node-benchmark /work/shared/node-benchmark/benchmark \\
        [--runs 10] [--rounds 3] [--categories calc text strings path --set n=10000]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perf_run import NODE_FILES, check_columns, keys, workspace

RUNNERS = ("compare.js", "per-file", "per-configuration")


def _command(runner: str, args, bench: Path, out: Path, seed: int) -> list[str]:
    sets = [item for value in args.set for item in ("--set", value)]
    if runner == "compare.js":
        return [
            args.node,
            "benchmark/compare.js",
            "--old",
            args.node,
            "--new",
            args.node,
            "--runs",
            str(args.runs),
            "--no-progress",
            *sets,
            *args.categories,
        ]
    return [
        sys.executable,
        "-m",
        "benchgate",
        "run",
        *args.categories,
        "--benchmark-dir",
        str(bench),
        "--base-binary",
        args.node,
        "--head-binary",
        args.node,
        "--runs",
        str(args.runs),
        "--no-progress",
        "--no-analyze",
        "--seed",
        str(seed),
        "--jobs",
        runner,
        "--output",
        str(out),
        *sets,
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-benchmark", type=Path, required=True, help="directory with Node's compare.js etc.")
    parser.add_argument("--node", default=shutil.which("node"), help="the node binary (both sides)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--categories", nargs="+", default=["calc", "text", "strings"])
    parser.add_argument("--set", action="append", default=[], help="passed to every runner (repeatable)")
    parser.add_argument("--time-factor", type=float, default=5.0, help="largest ratio of median times accepted")
    args = parser.parse_args()
    missing = [name for name in NODE_FILES if not (args.node_benchmark / name).is_file()]
    if missing:
        print(f"perf_jobs: {args.node_benchmark} lacks {', '.join(missing)}", file=sys.stderr)
        return 2
    ratios: dict[str, list[float]] = {"per-file": [], "per-configuration": []}
    with tempfile.TemporaryDirectory(prefix="benchgate-perf-jobs-") as scratch:
        bench = workspace(args.node_benchmark, Path(scratch), args.categories)
        for round_index in range(args.rounds):
            order = RUNNERS[round_index % 3 :] + RUNNERS[: round_index % 3]
            timings, outputs = {}, {}
            for runner in order:
                out = Path(scratch) / f"out-{runner}-{round_index}"
                started = time.perf_counter()
                completed = subprocess.run(
                    _command(runner, args, bench, out, round_index), cwd=bench.parent, capture_output=True, text=True
                )
                timings[runner] = time.perf_counter() - started
                if completed.returncode != 0:
                    print(f"{runner} failed ({completed.returncode}): {completed.stderr[-2000:]}", file=sys.stderr)
                    return 1
                outputs[runner] = completed.stdout if runner == "compare.js" else (out / "results.csv").read_text()
            for runner in ratios:
                problems = check_columns(outputs["compare.js"], outputs[runner], args.time_factor)
                if problems:
                    print(f"{runner}: CSV columns differ:\n  " + "\n  ".join(problems[:20]), file=sys.stderr)
                    return 1
                ratios[runner].append(timings[runner] / timings["compare.js"])
            samples = sum(keys(outputs["compare.js"]).values())
            print(
                f"round {round_index + 1} ({samples} samples each): compare.js {timings['compare.js']:.2f} s, "
                f"--jobs per-file {timings['per-file']:.2f} s ({ratios['per-file'][-1]:.3f}), --jobs per-configuration "
                f"{timings['per-configuration']:.2f} s ({ratios['per-configuration'][-1]:.3f})"
            )
    for runner, values in ratios.items():
        print(
            f"median ratio --jobs {runner} / compare.js over {args.rounds} rounds: {statistics.median(values):.3f} "
            "(target <= 1.10)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
