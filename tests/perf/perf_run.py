"""Wall time of `benchgate run` against Node's own `node benchmark/compare.js`, side by side, same work.

Both drive the same benchmark files (benchgate's fixture and example files, and
any category of Node's own directory named in --categories, all beside Node's real
benchmark/common.js so both runners go through Node's harness) with the same
binaries, configurations, --set values and runs. Rounds alternate which runner
goes first; the ratio is benchgate / compare.js (target <= 1.10).

Every round also checks every column of the two CSVs: the same header; the same
(binary, filename, configuration) keys with the same counts; rates written as
JavaScript prints numbers; times written in the same form (Node's harness sends
9-decimal strings: both CSVs must hold them verbatim) and with sensible values:
rate x time is the operation count, the same for every sample of a configuration
in both CSVs, and each configuration's median time is within a factor of
--time-factor of compare.js's.

Node's benchmark/compare.js, _cli.js, _benchmark_progress.js, common.js and
_http-benchmarkers.js are not part of this repository: pass a directory that has
them (a Node checkout's benchmark/):

    python tests/perf/perf_run.py --node-benchmark ~/node/benchmark [--runs 10] [--rounds 3] \\
        [--categories calc text strings events --set n=10000]
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import re
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


NODE_TIME = re.compile(r"\d+\.\d{9}")


def workspace(node_benchmark: Path, root: Path, categories: list[str]) -> Path:
    """Node's harness files, and each category from our fixtures, our examples or Node's directory."""
    bench = root / "benchmark"
    bench.mkdir(parents=True)
    for name in NODE_FILES:
        shutil.copy(node_benchmark / name, bench / name)
    shutil.copy(FIXTURES / "_trace.js", bench / "_trace.js")
    if (node_benchmark / "fixtures").is_dir():
        shutil.copytree(node_benchmark / "fixtures", bench / "fixtures")
    for category in categories:
        source = next(
            (base / category for base in (FIXTURES, EXAMPLES, node_benchmark) if (base / category).is_dir()), None
        )
        if source is None:
            raise SystemExit(f"perf_run: no category {category!r} in the fixtures, the examples or {node_benchmark}")
        shutil.copytree(source, bench / category)
    return bench


def keys(text: str) -> Counter:
    rows = list(csv.reader(io.StringIO(text)))
    return Counter((row[0], row[1], row[2]) for row in rows[1:])


def _samples(text: str) -> list[tuple[tuple[str, str, str], str, str]]:
    """(key, rate text, time text) per data row, the numbers exactly as written."""
    samples = []
    for row in list(csv.reader(io.StringIO(text)))[1:]:
        samples.append(((row[0], row[1], row[2]), row[3], row[4]))
    return samples


def js_number_text(text: str) -> bool:
    """True when ``text`` is how JavaScript prints a number (what compare.js writes for a JSON number)."""
    from benchgate.results import js_number

    try:
        return js_number(float(text)) == text
    except ValueError:
        return False


def check_columns(compare_csv: str, ours_csv: str, time_factor: float) -> list[str]:
    """Every column of benchgate's CSV against compare.js's: a list of problems (empty when they agree)."""
    problems = []
    if compare_csv.splitlines()[0] != ours_csv.splitlines()[0]:
        problems.append("CSV headers differ")
    compare_keys, our_keys = keys(compare_csv), keys(ours_csv)
    if compare_keys != our_keys:
        problems.append(
            f"CSV keys differ: compare.js only {compare_keys - our_keys}, benchgate only {our_keys - compare_keys}"
        )
    theirs, ours = _samples(compare_csv), _samples(ours_csv)
    for name, samples in (("compare.js", theirs), ("benchgate", ours)):
        bad = [rate for _, rate, _ in samples if not js_number_text(rate)]
        if bad:
            problems.append(f"{name}: rates not written as JavaScript prints numbers: {bad[:3]}")
    strings = all(NODE_TIME.fullmatch(time) for _, _, time in theirs)
    for name, samples in (("compare.js", theirs), ("benchgate", ours)):
        form = NODE_TIME.fullmatch if strings else js_number_text
        bad = [time for _, _, time in samples if not form(time)]
        if bad:
            wanted = "9-decimal strings" if strings else "JavaScript numbers"
            problems.append(f"{name}: times not written as {wanted}: {bad[:3]}")
    if problems:
        return problems
    # rate = operations / time in Node's harness: rate x time is the operation count of the configuration.
    products: dict[tuple, list[float]] = {}
    for key, rate, seconds in theirs + ours:
        products.setdefault(key[1:], []).append(float(rate) * float(seconds))
    for key, values in products.items():
        if max(values) > min(values) * (1 + 1e-6):
            problems.append(f"{key}: rate x time differs between samples ({min(values):g} .. {max(values):g})")
    for key in {key[1:] for key, _, _ in theirs}:
        theirs_median = statistics.median(float(t) for k, _, t in theirs if k[1:] == key)
        ours_median = statistics.median(float(t) for k, _, t in ours if k[1:] == key)
        ratio = ours_median / theirs_median if theirs_median else math.inf
        if not 1 / time_factor <= ratio <= time_factor:
            problems.append(f"{key}: median time {ours_median:g} s vs compare.js {theirs_median:g} s")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-benchmark", type=Path, required=True, help="directory with Node's compare.js etc.")
    parser.add_argument("--node", default=shutil.which("node"), help="the node binary (both sides)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--categories", nargs="+", default=["calc", "text", "strings"])
    parser.add_argument("--set", action="append", default=[], help="passed to both runners (repeatable)")
    parser.add_argument("--time-factor", type=float, default=5.0, help="largest ratio of median times accepted")
    args = parser.parse_args()
    missing = [name for name in NODE_FILES if not (args.node_benchmark / name).is_file()]
    if missing:
        print(f"perf_run: {args.node_benchmark} lacks {', '.join(missing)}", file=sys.stderr)
        return 2
    ratios = []
    with tempfile.TemporaryDirectory(prefix="benchgate-perf-") as scratch:
        bench = workspace(args.node_benchmark, Path(scratch), args.categories)
        sets = [item for value in args.set for item in ("--set", value)]
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
                        *sets,
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
                        *sets,
                    ]
                started = time.perf_counter()
                completed = subprocess.run(command, cwd=bench.parent, capture_output=True, text=True)
                timings[runner] = time.perf_counter() - started
                if completed.returncode != 0:
                    print(f"{runner} failed ({completed.returncode}): {completed.stderr[-2000:]}", file=sys.stderr)
                    return 1
                outputs[runner] = completed.stdout if runner == "compare.js" else (out / "results.csv").read_text()
            problems = check_columns(outputs["compare.js"], outputs["benchgate"], args.time_factor)
            if problems:
                print("CSV columns differ:\n  " + "\n  ".join(problems[:20]), file=sys.stderr)
                return 1
            our_keys = keys(outputs["benchgate"])
            ratio = timings["benchgate"] / timings["compare.js"]
            ratios.append(ratio)
            print(
                f"round {round_index + 1}: compare.js {timings['compare.js']:.2f} s, "
                f"benchgate run {timings['benchgate']:.2f} s, ratio {ratio:.3f} "
                f"({sum(our_keys.values())} samples each; same keys, rates, time form, rate x time)"
            )
    print(
        f"median ratio benchgate/compare.js over {args.rounds} rounds: {statistics.median(ratios):.3f} (target <= 1.10)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
