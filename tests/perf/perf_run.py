"""Wall time of `benchgate run` against Node's own `node benchmark/compare.js`, side by side, same work.

Both drive the same benchmark files (benchgate's fixture and example files, placed
beside Node's real benchmark/common.js so both runners go through Node's harness)
with the same binaries, configurations and runs. Rounds alternate which runner
goes first; the ratio is benchgate / compare.js (target <= 1.10). The script also
checks that both CSVs hold the same (binary, filename, configuration) keys with
the same counts and the same header.

Node's benchmark/compare.js, _cli.js, _benchmark_progress.js, common.js and
_http-benchmarkers.js are not part of this repository: fetch them (e.g. with
the search tool's read_file on nodejs/node) into a directory and pass it:

    python tests/perf/perf_run.py --node-benchmark /tmp/node-benchmark-ref [--runs 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import csv
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NODE_FILES = ("compare.js", "_cli.js", "_benchmark_progress.js", "common.js", "_http-benchmarkers.js")
FIXTURES = REPO / "tests" / "fixtures" / "bench" / "benchmark"
EXAMPLES = REPO / "examples" / "suite" / "benchmark"


def workspace(node_benchmark: Path, root: Path) -> Path:
    bench = root / "benchmark"
    bench.mkdir(parents=True)
    for name in NODE_FILES:
        shutil.copy(node_benchmark / name, bench / name)
    shutil.copy(FIXTURES / "_trace.js", bench / "_trace.js")
    for category in ("calc", "text"):
        shutil.copytree(FIXTURES / category, bench / category)
    for category in ("json", "strings"):
        shutil.copytree(EXAMPLES / category, bench / category)
    return bench


def keys(text: str) -> Counter:
    rows = list(csv.reader(io.StringIO(text)))
    return Counter((row[0], row[1], row[2]) for row in rows[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-benchmark", type=Path, required=True, help="directory with Node's compare.js etc.")
    parser.add_argument("--node", default=shutil.which("node"), help="the node binary (both sides)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--categories", nargs="+", default=["calc", "text", "strings"])
    args = parser.parse_args()
    missing = [name for name in NODE_FILES if not (args.node_benchmark / name).is_file()]
    if missing:
        print(f"perf_run: {args.node_benchmark} lacks {', '.join(missing)}", file=sys.stderr)
        return 2
    ratios = []
    with tempfile.TemporaryDirectory(prefix="benchgate-perf-") as scratch:
        bench = workspace(args.node_benchmark, Path(scratch))
        for round_index in range(args.rounds):
            timings = {}
            outputs = {}
            order = ["compare.js", "benchgate"] if round_index % 2 == 0 else ["benchgate", "compare.js"]
            for runner in order:
                if runner == "compare.js":
                    command = [
                        args.node,
                        "benchmark/compare.js",
                        "--old",
                        args.node,
                        "--new",
                        args.node,
                        "--runs",
                        str(args.runs),
                        "--no-progress",
                        *args.categories,
                    ]
                else:
                    out = Path(scratch) / f"out{round_index}"
                    command = [
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
                        str(round_index),
                        "--output",
                        str(out),
                    ]
                started = time.perf_counter()
                completed = subprocess.run(command, cwd=bench.parent, capture_output=True, text=True)
                timings[runner] = time.perf_counter() - started
                if completed.returncode != 0:
                    print(f"{runner} failed ({completed.returncode}): {completed.stderr[-2000:]}", file=sys.stderr)
                    return 1
                outputs[runner] = completed.stdout if runner == "compare.js" else (out / "results.csv").read_text()
            compare_keys, our_keys = keys(outputs["compare.js"]), keys(outputs["benchgate"])
            if compare_keys != our_keys:
                print(
                    f"CSV keys differ:\n  compare.js only: {compare_keys - our_keys}\n"
                    f"  benchgate only: {our_keys - compare_keys}",
                    file=sys.stderr,
                )
                return 1
            if outputs["compare.js"].splitlines()[0] != outputs["benchgate"].splitlines()[0]:
                print("CSV headers differ", file=sys.stderr)
                return 1
            ratio = timings["benchgate"] / timings["compare.js"]
            ratios.append(ratio)
            print(
                f"round {round_index + 1}: compare.js {timings['compare.js']:.2f} s, "
                f"benchgate run {timings['benchgate']:.2f} s, ratio {ratio:.3f} "
                f"({sum(our_keys.values())} samples each, same keys)"
            )
    print(
        f"median ratio benchgate/compare.js over {args.rounds} rounds: {statistics.median(ratios):.3f} (target <= 1.10)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
