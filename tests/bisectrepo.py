"""A Node-like repository for the bisect tests: 32 commits on main whose "node" runs at rates the test chose.

Built like tests/nodelike.py (real git, configure, make, cc), but each commit's ``src/node_version.h``
also holds ``NODELIKE_PLANS``: for every plan, the rate and noise of this commit ("1000:0.02"), or
"crash". The launcher exports it as ``NODELIKE_PLANS`` before it execs the installed node, and the
seeded stub benchmark ``benchmark/bisect/stub.js`` reports ``rate × exp(noise × z)`` for the plan
``BISECT_PLAN`` names, with z from a generator seeded by the process's number in ``BISECT_COUNTER``
(a file it counts in), so every run of a test measures the same samples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
from nodelike import BROKEN_NODE_MAIN, CONFIGURE, EXAMPLE_HARNESS, MAKEFILE, NODE_MAIN, NodeLikeRepo, _commit, git
from synthetic import SEEDED_GENERATOR_JS

from benchgate import results

LAUNCHER = NODE_MAIN.replace(
    "  argv[0] = NODE_PATH;", '  setenv("NODELIKE_PLANS", NODELIKE_PLANS, 1);\n  argv[0] = NODE_PATH;'
)
LAUNCHER = LAUNCHER.replace("#include <unistd.h>", "#include <stdlib.h>\n#include <unistd.h>")
BROKEN_LAUNCHER = LAUNCHER.replace("int main(int argc, char **argv) {", "int main(int argc, char **argv) { oops(")

STUB = r"""'use strict';
const fs = require('fs');
const common = require('../common.js');
const bench = common.createBenchmark(main, { n: [1000] });

// generator(): mulberry32 (tests/synthetic.py), seeded by this process's number: the same samples every run.
SEEDED_GENERATOR

function main({ n }) {
  const plan = (process.env.NODELIKE_PLANS || '').split(',')[Number(process.env.BISECT_PLAN || 0)];
  if (plan === 'crash') throw new Error('this commit crashes the benchmark');
  const [rate, noise] = plan.split(':').map(Number);
  const counter = process.env.BISECT_COUNTER;
  fs.appendFileSync(counter, 'x');
  const random = generator(fs.statSync(counter).size * 7919 + Math.round(rate));
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  bench.start();
  bench.report(rate * Math.exp(noise * z), 1000000n);
}
""".replace("SEEDED_GENERATOR\n", SEEDED_GENERATOR_JS)


def header(version: int, plans: Sequence[str]) -> str:
    return f'#define NODELIKE_VERSION "0.{version}.0"\n#define NODELIKE_PLANS "{",".join(plans)}"\n'


def make_bisect_repo(
    path: Path, plans: Callable[[int], Sequence[str]], *, commits: int = 32, broken: Sequence[int] = ()
) -> NodeLikeRepo:
    """``commits`` commits on main; commit k's plans are ``plans(k)``; commits in ``broken`` do not compile.

    ``repo.commits`` names them ``c0`` .. ``c31``; every commit's benchmark/ holds the stub.
    """
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "-b", "main")
    repo = NodeLikeRepo(path)
    first = {
        "configure": CONFIGURE,
        "Makefile": MAKEFILE,
        "src/node_main.c": LAUNCHER,
        "src/node_version.h": header(0, plans(0)),
        ".gitignore": "/out/\n/config.mk\n",
        "benchmark/common.js": EXAMPLE_HARNESS.read_text(),
        "benchmark/bisect/stub.js": STUB,
    }
    repo.commits["c0"] = _commit(path, "nodelike 0.0.0", first)
    for index in range(1, commits):
        files = {"src/node_version.h": header(index, plans(index))}
        files["src/node_main.c"] = BROKEN_LAUNCHER if index in broken else LAUNCHER
        repo.commits[f"c{index}"] = _commit(path, f"change {index}", files)
    return repo


assert NODE_MAIN != LAUNCHER and BROKEN_NODE_MAIN  # the launcher is nodelike's, plus the plans

ROW = ("bisect/stub.js", "n=1000")


def write_main_run(run: Path, sha: str, parent: str, rate: float, when: datetime, seed: int) -> None:
    """A run directory of main as `benchgate run` writes it: 10 runs a side of ROW, 2 % noise."""
    rng = np.random.default_rng(seed)
    with results.ResultsWriter(run / "results.csv") as writer:
        for _ in range(10):
            for side in ("old", "new"):
                value = float(rate * np.exp(rng.normal(0, 0.02)))
                writer.append(side, *ROW, value, 1000 / value)
    binary = {"version": "v0.1.0", "node_args": [], "source": "build"}
    results.write_run_record(
        run / "run.json",
        {
            "schema": 1,
            "tool": "benchgate",
            "binaries": {"base": {**binary, "sha": parent}, "head": {**binary, "sha": sha}},
            "selection": {"files": [ROW[0]]},
            "runs": 10,
            "started_at": when.isoformat(timespec="seconds").replace("+00:00", "Z"),
            "complete": True,
            "environment": {"cpu_model": "Nightly CPU", "cpu_count": 2, "governor": "performance", "warnings": []},
            "failures": [],
            "skipped": [],
            "sandbox": {"used": False, "untrusted_head": False, "reason": "the head is trusted"},
        },
    )
