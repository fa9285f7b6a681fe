"""results.csv from `benchgate run` is what compare.R reads: R's read.csv and t.test, and benchgate analyze."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from benchgate import cli, results, stats

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

# Our own few lines of R doing what compare.R does per benchmark: read.csv, then Welch's t.test of
# rate by binary for each filename + configuration, improvement of the means.
R_SCRIPT = r"""
dat <- read.csv(file("stdin"))
dat$name <- paste(dat$filename, dat$configuration)
out <- data.frame()
for (name in unique(dat$name)) {
  sub <- dat[dat$name == name, ]
  old <- sub$rate[sub$binary == "old"]
  new <- sub$rate[sub$binary == "new"]
  test <- t.test(rate ~ binary, data = sub)
  out <- rbind(out, data.frame(name = name, n_old = length(old), n_new = length(new),
                               improvement = (mean(new) - mean(old)) / mean(old) * 100, p = test$p.value))
}
write.csv(out, stdout(), row.names = FALSE)
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run") / "out"
    status = cli.main(
        [
            "run",
            "calc",
            "text",
            "--benchmark-dir",
            str(BENCH),
            "--base-binary",
            NODE,
            "--head-binary",
            NODE,
            "--head-node-args=--no-opt",
            "--runs",
            "3",
            "--no-progress",
            "--no-analyze",
            "--output",
            str(out),
        ]
    )
    assert status == 0
    return out


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="R is not installed")
def test_r_reads_the_csv_and_agrees_with_benchgate(run_dir):
    csv_text = (run_dir / "results.csv").read_text()
    completed = subprocess.run(["Rscript", "-e", R_SCRIPT], input=csv_text, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    from_r = pd.read_csv(io.StringIO(completed.stdout)).set_index("name")
    ours = stats.compare_samples(results.read_samples([run_dir / "results.csv"]))
    ours.index = ours["filename"] + " " + ours["configuration"]
    assert sorted(from_r.index) == sorted(ours.index)
    assert len(from_r) == 7  # calc/add.js x2, calc/flags.js, text/quote.js x4 (quoted strings survived)
    assert (from_r["n_old"] == 3).all() and (from_r["n_new"] == 3).all()
    for name, row in from_r.iterrows():
        assert ours.loc[name, "improvement"] == pytest.approx(row["improvement"], rel=1e-9)
        assert ours.loc[name, "p_value"] == pytest.approx(row["p"], rel=1e-6)


def test_benchgate_analyze_reads_the_csv(run_dir, capsys):
    assert cli.main(["analyze", str(run_dir / "results.csv")]) == 0
    out = capsys.readouterr().out
    assert "text/quote.js n=50 word='say \"hi\"'" in out and "calc/flags.js n=100" in out
