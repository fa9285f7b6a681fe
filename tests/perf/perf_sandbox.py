"""What the sandbox costs: the same processes with and without it, side by side, interleaved; ratios, not times.

(a) Start-up: ``node -e 0`` bare and in the sandbox of an untrusted run (the same bwrap command
    line, mounts and environment benchgate uses), alternating in random order, many times; the
    median of the differences of each pair. Target: at most 50 ms per process.
(b) Wall time on Node's real benchmark files: each file runs as a benchmark process (benchgate's
    own ``BenchmarkProcess``, with its IPC channel) with and without the sandbox, the two in random
    order, file after file, round after round; the ratio of the sandboxed to the bare wall time of
    all processes of all rounds, and the geometric mean of the per-pair ratios with its 95 %
    confidence interval: on a shared machine one process's wall time varies by tens of percent, so
    only many pairs resolve a few percent (the interval says how far to trust the figure).
    Target: at most 1.03.

Node's benchmark files are test data, not part of this repository: pass their directory::

    python tests/perf/perf_sandbox.py --node-benchmark /work/shared/node-benchmark/benchmark \\
        [--categories path events os] [--max-files 12] [--rounds 3] [--startup-pairs 60]

Both sides use the installed node (``--node``) and the same environment, the sandbox's allowlist,
so that only bwrap's namespaces and mounts differ (the allowlist alone can make node start faster:
a NODE_EXTRA_CA_CERTS in the runner's environment costs every node process its certificates' load).
Each process of (b) must report the same number of samples in both conditions, so a benchmark
broken by the sandbox cannot pass as fast. A file that fails without the sandbox too is skipped.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchgate import sandbox
from benchgate.run import suite, trust
from benchgate.run.process import BenchmarkProcess, job_argv


def same_environment() -> dict[str, str]:
    """What a sandboxed benchmark process gets; the bare one gets it too."""
    home = sandbox.private_home(os.environ)
    return sandbox.confined_env(os.environ, home=home, extra=trust.BENCHMARK_ENV)


def startup(node: str, confined: sandbox.Confinement, pairs: int, rng: random.Random) -> list[float]:
    """Per pair, sandboxed minus bare wall time (seconds) of ``node -e 0``."""
    differences = []
    bare_argv, bare_env = [node, "-e", "0"], same_environment()
    boxed_argv, boxed_env = confined.wrap(bare_argv, cwd=Path("/"), env=os.environ)
    for _ in range(pairs):
        timings = {}
        for kind in rng.sample(["bare", "sandbox"], 2):
            argv, env = (bare_argv, bare_env) if kind == "bare" else (boxed_argv, boxed_env)
            started = time.perf_counter()
            subprocess.run(argv, env=env, check=True, stdin=subprocess.DEVNULL)
            timings[kind] = time.perf_counter() - started
        differences.append(timings["sandbox"] - timings["bare"])
    return differences


def run_file(node: str, bench: Path, filename: str, confined: sandbox.Confinement | None) -> tuple[float, int] | str:
    """Wall time of one benchmark process and the number of samples it reported; why it failed otherwise."""
    reports = []
    started = time.perf_counter()
    result = BenchmarkProcess().run(
        job_argv(Path(node), (), bench / filename, (), None),
        cwd=bench.parent,
        env=same_environment(),
        timeout=600,
        on_message=lambda message: reports.append(message) if message.get("type") == "report" else None,
        sandbox=confined,
    )
    elapsed = time.perf_counter() - started
    if result.exit_status != 0:
        return " ".join(result.stderr_tail.split())[-300:]
    return elapsed, len(reports)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-benchmark", type=Path, required=True, help="Node's benchmark/ directory")
    parser.add_argument("--node", default=shutil.which("node"), help="the node binary (both conditions)")
    parser.add_argument("--categories", nargs="+", default=["path", "events", "os"])
    parser.add_argument("--max-files", type=int, default=12, help="the first N files of the selection")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--startup-pairs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bench = args.node_benchmark.resolve()
    if not (bench / "common.js").is_file():
        print(f"perf_sandbox: {bench} is not a Node benchmark directory (no common.js)", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    found = sandbox.probe()
    with tempfile.TemporaryDirectory(prefix="benchgate-perf-sandbox-") as scratch:
        # The sandbox of an untrusted run: its binaries and checkout readable, its output and caches hidden.
        confined = trust.confinement(found, binaries=[args.node], benchmark_dir=bench, output=Path(scratch), caches=())
        print(f"sandbox: bwrap {found.version}; node {args.node}; {os.cpu_count()} CPUs", flush=True)
        differences = startup(args.node, confined, args.startup_pairs, rng)
        median_ms = statistics.median(differences) * 1000
        print(
            f"(a) start-up: sandboxed minus bare `node -e 0`, median of {len(differences)} pairs: {median_ms:.1f} ms "
            f"(quartiles {statistics.quantiles(differences, n=4)[0] * 1000:.1f} .. "
            f"{statistics.quantiles(differences, n=4)[2] * 1000:.1f} ms; target <= 50 ms)",
            flush=True,
        )
        files = list(suite.select(bench, tuple(args.categories)).files[: args.max_files])
        ratios, grand = [], {"bare": 0.0, "sandbox": 0.0}
        for round_index in range(args.rounds):
            totals = {"bare": 0.0, "sandbox": 0.0}
            for filename in rng.sample(files, len(files)):
                outcome = {
                    kind: run_file(args.node, bench, filename, confined if kind == "sandbox" else None)
                    for kind in rng.sample(["bare", "sandbox"], 2)
                }
                if isinstance(outcome["bare"], str):  # does not run with this node at all: not the sandbox's doing
                    print(f"    skipped {filename}: fails without the sandbox too ({outcome['bare'][-120:]})")
                    files.remove(filename)
                    continue
                if isinstance(outcome["sandbox"], str) or outcome["sandbox"][1] != outcome["bare"][1]:
                    print(f"perf_sandbox: {filename} differs in the sandbox: {outcome}", file=sys.stderr)
                    return 1
                for kind, (elapsed, _) in outcome.items():
                    totals[kind] += elapsed
                    grand[kind] += elapsed
                ratios.append(outcome["sandbox"][0] / outcome["bare"][0])
            print(
                f"    round {round_index + 1}: {len(files)} files, bare {totals['bare']:.1f} s, "
                f"sandboxed {totals['sandbox']:.1f} s, ratio {totals['sandbox'] / totals['bare']:.4f}",
                flush=True,
            )
        ratio = grand["sandbox"] / grand["bare"]
        logs = [math.log(item) for item in ratios]
        center, spread = statistics.mean(logs), 1.96 * statistics.stdev(logs) / math.sqrt(len(logs))
        low, paired, high = (math.exp(value) for value in (center - spread, center, center + spread))
        print(
            f"(b) wall time on Node's benchmark files ({', '.join(args.categories)}; {len(files)} files, "
            f"{args.rounds} rounds, {grand['bare'] / len(ratios):.2f} s a process): sandboxed / bare = {ratio:.4f} "
            f"over all ({(ratio - 1) * 100:+.2f} %); per pair {paired:.4f} ({(paired - 1) * 100:+.2f} %, 95 % "
            f"interval {(low - 1) * 100:+.2f} .. {(high - 1) * 100:+.2f} %, {len(ratios)} pairs); target <= +3 %"
        )
    return 0 if median_ms <= 50 and ratio <= 1.03 else 1


if __name__ == "__main__":
    sys.exit(main())
