"""Speed of `benchgate analyze` against Node's `Rscript benchmark/compare.R`, side by side on the same files.

usage: python tests/perf/perf_analyze.py [--compare-r /tmp/node/benchmark/compare.R] [--repeat 3]

1. An 80,000-row compare.js CSV (400 configurations x 2 binaries x 100 runs): wall time of
   `benchgate analyze FILE` and of `Rscript compare.R < FILE` (best of --repeat), their ratio,
   and a check that both print the same table and note (compare.R run with LC_COLLATE=C, benchgate's order;
   the gate is off there so no gate column is added).
2. A 1,000,000-row CSV (500 configurations x 2 x 1,000 runs): wall time of `benchgate analyze`,
   CLI start-up included; the target is under 10 s on a 2-core machine.

compare.R needs its _cli.R beside it and R with r-cran-plyr and r-cran-ggplot2; keep Node's files
outside this repository (e.g. /tmp). Without --compare-r only benchgate is timed.
Not collected by pytest (no test_ prefix): run it by hand; it prints, it does not assert.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_csv(path: Path, configurations: int, runs: int, seed: int = 7) -> int:
    """A compare.js CSV with quoted configurations and a few real regressions; returns its row count."""
    rng = np.random.default_rng(seed)
    index = np.arange(configurations)
    base = 1e6 * (1 + index % 7)
    effect = np.where(index % 97 == 0, 0.9, 1.0)
    prefixes = []
    for i in index:
        filename = f"category{i % 25}/bench-{i // 25}.js"
        configuration = f'n={10 ** (i % 5 + 2)} type=""v,{i}"" size={i}'
        prefixes.append((f'"old","{filename}","{configuration}",', f'"new","{filename}","{configuration}",'))
    noise = np.exp(rng.normal(0, 0.03, (runs, configurations, 2)))
    rates = noise * np.stack([base, base * effect], axis=-1)
    times = rng.uniform(0.05, 0.3, (runs, configurations, 2))
    lines = ['"binary","filename","configuration","rate","time"']
    # compare.js runs every configuration with both binaries, run after run.
    for run in range(runs):
        for i in range(configurations):
            for side in (0, 1):
                lines.append(f"{prefixes[i][side]}{rates[run, i, side]:.6f},{times[run, i, side]:.9f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines) - 1


def benchgate_command() -> list[str]:
    script = shutil.which("benchgate")
    return [script] if script else [sys.executable, "-m", "benchgate"]


def timed(command: list[str], stdin_path: Path | None, env: dict[str, str] | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as stdin:
        done = subprocess.run(command, stdin=stdin, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-r", type=Path, help="path of Node's benchmark/compare.R (with _cli.R beside it)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-million", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="benchgate-perf-") as directory:
        small = Path(directory) / "80k.csv"
        rows = write_csv(small, configurations=400, runs=100)
        ours_command = [*benchgate_command(), "analyze", str(small), "--no-bars", "--threshold", "off"]
        env = {k: v for k, v in os.environ.items() if k != "LC_ALL"}
        env.update(LANG="C.UTF-8", LC_CTYPE="C.UTF-8", LC_COLLATE="C")
        our_times, their_times, our_text, their_text = [], [], "", ""
        for _ in range(args.repeat):  # alternate, so background load hits both alike
            elapsed, our_text = timed(ours_command, None)
            our_times.append(elapsed)
            if args.compare_r:
                elapsed, their_text = timed(["Rscript", str(args.compare_r)], small, env)
                their_times.append(elapsed)
        ours = min(our_times)
        print(f"{rows} rows (400 configurations x 2 x 100): benchgate analyze {ours:.2f} s (best of {args.repeat})")
        if args.compare_r:
            theirs = min(their_times)
            print(f"{rows} rows: Rscript compare.R {theirs:.2f} s (best of {args.repeat})")
            print(f"ratio benchgate / compare.R = {ours / theirs:.3f} (compare.R takes {theirs / ours:.1f}x as long)")
            print(f"same table and note as compare.R: {'yes' if our_text.startswith(their_text) else 'NO'}")
        if not args.skip_million:
            big = Path(directory) / "1m.csv"
            rows = write_csv(big, configurations=500, runs=1000)
            elapsed, _ = timed([*benchgate_command(), "analyze", str(big), "--format", "json"], None)
            verdict = "under" if elapsed < 10 else "OVER"
            print(f"{rows} rows (500 configurations x 2 x 1000): benchgate analyze {elapsed:.2f} s ({verdict} 10 s)")
            if args.compare_r:
                theirs, _ = timed(["Rscript", str(args.compare_r)], big, env)
                print(f"{rows} rows: Rscript compare.R {theirs:.2f} s (ratio {elapsed / theirs:.3f})")


if __name__ == "__main__":
    main()
