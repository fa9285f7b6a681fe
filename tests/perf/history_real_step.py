"""20 real `benchgate run`s of a git history with one real step, recorded, then `benchgate history changes`.

A git repository holds a one-file suite in Node's benchmark format (the example suite's harness,
``history/sum.js``); its 20 commits each touch a comment, and commit STEP (default 12) makes the
benchmark's inner loop do its work three times (about 3x slower). For every commit, oldest first, the
script checks it out, runs ``benchgate run`` with the installed ``node`` as both sides (``--runs``
samples a side), records the run directory with the commit's SHA and date, and finally prints
``benchgate history changes --format json``; then it does the same for an A/A history (no step).
It checks that the step's series has exactly one change point, at commit STEP, and the A/A none.

    python tests/perf/history_real_step.py                 # about 2-4 minutes on a loaded 2-core machine
    python tests/perf/history_real_step.py --runs 5 --keep /tmp/history-real
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARK = """'use strict';
// commit {index}
const common = require('../common.js');
const PASSES = {passes};
const bench = common.createBenchmark(main, {{ n: [4000] }});
function main({{ n }}) {{
  const values = new Float64Array(10000);
  for (let i = 0; i < values.length; i++) values[i] = i % 97;
  let total = 0;
  bench.start();
  for (let round = 0; round < n; round++)
    for (let pass = 0; pass < PASSES; pass++)
      for (let i = 0; i < values.length; i++) total += values[i] * (pass + 1);
  bench.end(n);
  if (total < 0) console.log(total);
}}
"""


def git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=benchgate", "-c", "user.email=perf@benchgate.invalid", *args]
    return subprocess.run(command, cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def history(work: Path, *, commits: int, step: int | None, runs: int, node: str) -> list[dict]:
    repo, store = work / "repo", f"sqlite:///{work / 'history.db'}"
    (repo / "benchmark" / "history").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "suite" / "benchmark" / "common.js", repo / "benchmark" / "common.js")
    git(repo, "init", "-q", "-b", "main")
    shas = []
    for index in range(commits):
        passes = 3 if step is not None and index >= step else 1
        (repo / "benchmark" / "history" / "sum.js").write_text(BENCHMARK.format(index=index, passes=passes))
        git(repo, "add", "-A")
        date = f"2026-04-{index + 1:02d}T12:00:00Z"
        git(repo, "commit", "-q", "-m", f"commit {index}", "--date", date)
        shas.append((git(repo, "rev-parse", "HEAD"), date))
    for index, (sha, date) in enumerate(shas):
        git(repo, "checkout", "-q", sha)
        out = work / f"run{index:02d}"
        run = [sys.executable, "-m", "benchgate", "run", "history", "--benchmark-dir", str(repo / "benchmark")]
        run += ["--base-binary", node, "--head-binary", node, "--runs", str(runs), "--no-progress", "--no-analyze"]
        subprocess.run([*run, "--output", str(out)], check=True, capture_output=True, text=True)
        record = [sys.executable, "-m", "benchgate", "history", "record", str(out), "--store", store]
        printed = subprocess.run([*record, "--commit", sha, "--date", date], check=True, capture_output=True, text=True)
        print(f"  {index:2d} {printed.stdout.strip()}", flush=True)
    changes = [sys.executable, "-m", "benchgate", "history", "changes", "--store", store, "--format", "json"]
    found = json.loads(subprocess.run(changes, check=True, capture_output=True, text=True).stdout)
    show = [sys.executable, "-m", "benchgate", "history", "show", "sum.js", "--store", store]
    print(subprocess.run(show, check=True, capture_output=True, text=True).stdout)
    if step is not None:
        print(f"  the step is at commit {step}: {shas[step][0]}")
    return [dict(item, expected=shas[step][0] if step is not None else None) for item in found]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--step", type=int, default=12)
    parser.add_argument("--runs", type=int, default=5, help="samples a side per run (default 5)")
    parser.add_argument("--node", default=shutil.which("node"))
    parser.add_argument("--keep", type=Path, default=None, help="keep the repositories, runs and stores here")
    args = parser.parse_args()
    if not args.node:
        sys.exit("no node on PATH (give --node)")
    work = args.keep or Path(tempfile.mkdtemp(prefix="history-real-"))
    try:
        print("step history:", flush=True)
        stepped = history(work / "step", commits=args.commits, step=args.step, runs=args.runs, node=args.node)
        print(json.dumps(stepped, indent=2))
        print("A/A history:", flush=True)
        same = history(work / "aa", commits=args.commits, step=None, runs=args.runs, node=args.node)
        print(json.dumps(same, indent=2))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    ok = len(stepped) == 1 and stepped[0]["commit"] == stepped[0]["expected"] and stepped[0]["change"] < 0
    print(f"step found at its commit: {ok}; A/A change points: {len(same)}")
    return 0 if ok and not same else 1


if __name__ == "__main__":
    sys.exit(main())
