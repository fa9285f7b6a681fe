"""Time to verdict: ``--runs auto --pairing duet`` against ``--runs auto`` sequential against fixed 30 runs.

Runs ``benchgate run`` three ways on the same file, binaries and seed, side by side in one run
(the order of the three modes rotated over ``--repeats`` rounds, so drift of the machine hits all):

- ``auto-duet``: ``--runs auto --pairing duet`` (the paired sequential design, per-row stops);
- ``auto``: ``--runs auto`` (the unpaired sequential design, per-row stops);
- ``fixed``: ``--runs 30`` (``--fixed``), sequential.

on two scenarios: ``regression`` (by default release binaries, ``--base-version 20.0.0
--head-version 18.16.0``: buffer-tojson's len=256 and len=4096 rows regress by 80-88 %) and
``aa`` (the base release against itself). For each run it reports the wall time, the samples a side
(summed over the rows), the exit status and each row's decision, and per scenario the ratios
against fixed runs, checking that every mode reaches the same verdict (exit status). The issue's
target: auto + duet <= 0.4x fixed 30's wall time on the regression.

The benchmark directory is an argument: buffers/ is not in ../shared/node-benchmark, so build one in
/tmp with Node's harness files (common.js, _cli.js, _benchmark_progress.js, _http-benchmarkers.js,
compare.js) and benchmark/buffers/buffer-tojson.js from Node's sources (never in this repository):

    python tests/perf/perf_verdict.py /tmp/bench/benchmark                          # full (3 x 2 runs)
    python tests/perf/perf_verdict.py /tmp/bench/benchmark --fixed 10 --max-runs 10  # a quick look
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchgate import results
from benchgate.stats import analysis, gate

MODES = ("auto-duet", "auto", "fixed")


def _command(args, mode: str, scenario: str, output: Path) -> list[str]:
    category, name = args.file.split("/", 1)
    head = args.head_version if scenario == "regression" else args.base_version
    runs = ["--runs", str(args.fixed)] if mode == "fixed" else ["--runs", "auto", "--max-runs", str(args.max_runs)]
    return [
        sys.executable,
        "-m",
        "benchgate",
        "run",
        category,
        "--filter",
        Path(name).stem,
        "--benchmark-dir",
        str(args.benchmark_dir),
        "--base-version",
        args.base_version,
        "--head-version",
        head,
        "--release-source",
        args.release_source,
        *runs,
        "--seed",
        str(args.seed),
        "--no-progress",
        "--pairing",
        "duet" if mode == "auto-duet" else "sequential",
        "--output",
        str(output),
    ]


def _measure(args, mode: str, scenario: str, output: Path) -> dict:
    command = _command(args, mode, scenario, output)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1, 6):
        sys.exit(f"perf_verdict: {mode} {scenario} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    lines = (output / "results.csv").read_text().splitlines()[1:]
    samples = Counter(line.split(",")[0] for line in lines)
    # The gate's decision per row, from the files as `benchgate report` reads them (looks, pairs).
    found, run, shards = results.load([str(output)])
    gated = analysis.analyze(analysis.RunData(found, shards, run.pairs), gate.GatePolicy()).table
    decisions = dict(zip(gated["configuration"], gated["decision"], strict=True))
    per_row = Counter(zip(found["configuration"], found["side"].astype(str), strict=True))
    rows = {configuration: per_row[(configuration, "base")] for configuration in decisions}
    return {
        "wall": elapsed,
        "samples": max(samples.values(), default=0),
        "status": done.returncode,
        "decisions": decisions,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark_dir", type=Path, help="a benchmark/ directory holding --file and Node's harness")
    parser.add_argument("--file", default="buffers/buffer-tojson.js")
    parser.add_argument("--base-version", default="20.0.0")
    parser.add_argument("--head-version", default="18.16.0", help="the regression scenario's head")
    parser.add_argument("--release-source", default="npm")
    parser.add_argument("--fixed", type=int, default=30, help="runs of the fixed mode (default 30)")
    parser.add_argument("--max-runs", type=int, default=30, help="--runs auto's --max-runs (default 30)")
    parser.add_argument("--scenarios", default="regression,aa")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if not (args.benchmark_dir / args.file).is_file():
        parser.error(f"{args.benchmark_dir / args.file} does not exist")
    figures: dict[tuple[str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="perf-verdict-") as scratch:
        for round_index in range(args.repeats):
            for scenario in args.scenarios.split(","):
                order = MODES[round_index % 3 :] + MODES[: round_index % 3]
                for mode in order:
                    output = Path(scratch) / f"{scenario}-{mode}-{round_index}"
                    found = _measure(args, mode, scenario, output)
                    figures.setdefault((scenario, mode), []).append(found)
                    print(
                        f"# {scenario} {mode} round {round_index}: {found['wall']:.1f} s, {found['samples']} "
                        f"samples a side, exit {found['status']}, per row (decision, samples a side): "
                        f"{ {row: (found['decisions'][row], found['rows'][row]) for row in found['rows']} }",
                        file=sys.stderr,
                    )
    print(
        f"{args.file}: base {args.base_version}, regression head {args.head_version}; fixed {args.fixed} runs, "
        f"auto to {args.max_runs}; {args.repeats} round(s), medians"
    )
    print("| scenario | mode | wall s | samples a side | exit | wall vs fixed | samples vs fixed | same verdict |")
    print("|---|---|--:|--:|--:|--:|--:|:-:|")
    for scenario in args.scenarios.split(","):
        fixed = figures[(scenario, "fixed")]
        fixed_wall = sorted(item["wall"] for item in fixed)[len(fixed) // 2]
        fixed_samples = sorted(item["samples"] for item in fixed)[len(fixed) // 2]
        for mode in MODES:
            items = figures[(scenario, mode)]
            wall = sorted(item["wall"] for item in items)[len(items) // 2]
            samples = sorted(item["samples"] for item in items)[len(items) // 2]
            same = all(item["status"] == fixed[0]["status"] for item in items)
            print(
                f"| {scenario} | {mode} | {wall:.1f} | {samples} | {items[0]['status']} | "
                f"{wall / fixed_wall:.2f}x | {samples / max(fixed_samples, 1):.2f}x | "
                f"{'yes' if same else 'no'} |"
            )
    duet = figures.get(("regression", "auto-duet"))
    if duet:
        fixed = figures[("regression", "fixed")]
        ratio = sorted(d["wall"] for d in duet)[len(duet) // 2] / sorted(f["wall"] for f in fixed)[len(fixed) // 2]
        print(
            f"\ntarget auto + duet <= 0.4x fixed on the regression: {ratio:.2f}x "
            f"({'met' if ratio <= 0.4 else 'missed'})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
