"""Run directories (results.csv + run.json) as `benchgate run --output` writes them, with chosen effects."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchgate import results

HEAD_SHA = "c0ffee" + "0" * 34
BASE_SHA = "ba5e" + "0" * 36


def write_run(
    directory: Path,
    effects: dict[tuple[str, str], float],
    *,
    runs: int = 10,
    seed: int = 1,
    record: dict | None = None,
    head_sha: str = HEAD_SHA,
) -> Path:
    """Samples with the given relative head/base effects (0.8 = 20 % slower), plus a run.json."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    with results.ResultsWriter(directory / "results.csv") as writer:
        for (filename, configuration), effect in effects.items():
            for _ in range(runs):
                writer.append("old", filename, configuration, float(rng.normal(1000, 5)), 0.1)
                writer.append("new", filename, configuration, float(rng.normal(1000 * effect, 5)), 0.1)
    data = {
        "schema": 1,
        "binaries": {
            "base": {"path": "/tmp/node-base", "version": "v20.11.0", "sha": BASE_SHA, "node_args": []},
            "head": {"path": "/tmp/node-head", "version": "v20.11.0", "sha": head_sha, "node_args": ["--jitless"]},
        },
        "selection": {"categories": ["buffers"]},
        "seed": 7,
        "runs": runs,
        "started_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T00:01:00Z",
        "complete": True,
        "durations": {},
        "environment": {"cpu_model": "Test CPU", "cores": 2, "warnings": ["load average is high"]},
        "failures": [],
        "skipped": [],
    }
    data.update(record or {})
    # Written as JSON, not through the run's writer: a test forges what no run would write.
    (directory / "run.json").write_text(json.dumps(data, indent=2))
    return directory


REGRESSION = {
    ("buffers/buffer-compare.js", "n=100 size=16"): 0.8,
    ("buffers/buffer-tojson.js", "len=256 n=10"): 1.5,
    ("url/url-parse.js", "n=10"): 1.0,
}
NEUTRAL = {
    ("buffers/buffer-compare.js", "n=100 size=16"): 1.0,
    ("buffers/buffer-tojson.js", "len=256 n=10"): 1.5,
    ("url/url-parse.js", "n=10"): 1.0,
}
