"""Conformance with Node's own compare.js and compare.R, on a real Node benchmark/ directory.

Needs BENCHGATE_NODE_BENCHMARK=DIR: a Node checkout's ``benchmark/`` (its common.js, compare.js,
_cli.js, _benchmark_progress.js, _http-benchmarkers.js, compare.R, _cli.R and benchmark files):

    BENCHGATE_NODE_BENCHMARK=~/node/benchmark pytest tests/test_conformance.py

Each case runs one benchmark file through ``node DIR/compare.js`` and through ``benchgate run``
(both binaries: the node on PATH; 2 runs; the same --set, --filter and --exclude), then checks that
the CSVs have the same header, the same (binary, filename, configuration) keys with the same
counts, rates written as JavaScript prints numbers, and the time column written the same way (a
9-decimal string when the harness sends strings, JavaScript's Number#toString when it sends
numbers; values differ from run to run, so only the form is compared). Where compare.js fails,
benchgate must record the failure on both sides and finish; where compare.js writes no row (the
file's queue is empty), benchgate records a skip, not a failure. ``benchgate analyze`` must read
every CSV, and compare.R (when R with ggplot2 and plyr is installed) benchgate's.

Coverage: running every file takes ~20 minutes on 2 cores (each process start costs ~0.2 s and
files have up to 100 configurations), so by default CASES is a subset, one to three files per
category of Node's directory, each narrowed by --set to one or two configurations: numbers and
strings ('', '|', '%', backquotes) in configurations, a file with a ``flags`` option, an empty
queue (combinationFilter) and a file that fails (a fixture outside benchmark/). With
BENCHGATE_CONFORMANCE_ALL=1 every file MANIFEST.tsv marks as running on node 20 (or, without a
manifest, every file) is added with ``--set n=20``.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchgate import cli, results

NODE = shutil.which("node")
_DIR = os.environ.get("BENCHGATE_NODE_BENCHMARK")
DIR = Path(_DIR).expanduser().resolve() if _DIR else None
pytestmark = [
    pytest.mark.skipif(
        DIR is None,
        reason="set BENCHGATE_NODE_BENCHMARK=DIR (a Node checkout's benchmark/ directory) to compare with compare.js",
    ),
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
]
NODE_TIME = re.compile(r"\d+\.\d{9}")
RUNS = 2

# file -> --set values: one or two configurations each, small operation counts.
CASES: dict[str, list[str]] = {
    "assert/ok.js": ["n=100"],
    "assert/deepequal-buffer.js": ["n=50", "len=100", "strict=1", "method=deepEqual", "method=notDeepEqual"],
    "assert/deepequal-object.js": ["n=10"],  # its combinationFilter excludes n=10: an empty queue
    "es/eval.js": ["method=without-sourcemap", "n=100"],
    "es/spread-assign.js": ["method=spread", "count=5", "n=1000"],
    "events/ee-add-remove.js": ["n=1000"],
    "events/eventtarget-creation.js": ["n=1000"],  # flags: ['--expose-internals']
    "os/cpus.js": ["n=10"],
    "path/basename-posix.js": ["pathext=", "pathext=/foo/.bar.baz|.baz", "n=1000"],
    "path/join-posix.js": ["n=1000"],
    "process/memoryUsage.js": ["n=100"],
    "querystring/querystring-unescape.js": ["input=%%2a", "decodeSpaces=1", "n=1000"],
    "string_decoder/string-decoder-create.js": ["encoding=UTF-8", "n=1000"],
    "url/url-parse.js": ["type=escaped", "n=1000"],  # `--filter url-parse.js` needs excludes: see _selection
    "url/whatwg-url-idna.js": ["domain=empty", "to=ascii", "n=100"],
    "url/whatwg-url-parse.js": ["n=10"],  # reads test/fixtures/url-dataset.txt: fails without a checkout's test/
}


def _manifest() -> dict[str, dict[str, str]]:
    """MANIFEST.tsv beside DIR (the test-data copy has one): path inside benchmark/ -> its row."""
    path = DIR.parent / "MANIFEST.tsv" if DIR else None
    if path is None or not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return {row["path"].removeprefix("benchmark/"): row for row in rows}


def _cases() -> dict[str, list[str]]:
    cases = dict(CASES)
    if DIR is not None and os.environ.get("BENCHGATE_CONFORMANCE_ALL") == "1":
        manifest = _manifest()
        for path in sorted(DIR.glob("*/*.js")):
            name = f"{path.parent.name}/{path.name}"
            if path.parent.name in ("fixtures", "node_modules") or path.name.startswith(("_", ".")):
                continue
            if not manifest or manifest.get(name, {}).get("runs_on_node20") == "yes":
                cases.setdefault(name, ["n=20"])
    return {name: sets for name, sets in cases.items() if DIR is not None and (DIR / name).is_file()}


@dataclass
class Outcome:
    """Both runners' results for one file."""

    compare_status: int
    compare_stderr: str
    compare_csv: str
    benchgate_status: int
    benchgate_stderr: str
    benchgate_csv: str
    record: dict
    csv_path: Path


def _selection(filename: str) -> list[str]:
    """--filter NAME and an --exclude for every other file of the category whose name contains NAME."""
    category, name = filename.split("/")
    others = [path.name for path in (DIR / category).glob("*.js") if name in path.name and path.name != name]
    return ["--filter", name, *(arg for other in others for arg in ("--exclude", other)), category]


def _run_both(filename: str, set_args: list[str], scratch: Path) -> Outcome:
    selection = _selection(filename)
    sets = [arg for value in set_args for arg in ("--set", value)]
    compare = subprocess.Popen(
        [NODE, str(DIR / "compare.js"), "--old", NODE, "--new", NODE, "--runs", str(RUNS), "--no-progress"]
        + sets
        + selection,
        cwd=DIR.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out = scratch / filename.replace("/", "__")
    argv = ["run", *selection[:-1], selection[-1], "--benchmark-dir", str(DIR), "--base-binary", NODE]
    argv += ["--head-binary", NODE, "--runs", str(RUNS), "--seed", "1", "--no-progress", "--no-analyze"]
    argv += ["--output", str(out), *sets]
    stderr = io.StringIO()
    # compare.js runs meanwhile on the other core: only the CSVs' form is compared, not the speed.
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(argv)
    compare_out, compare_err = compare.communicate(timeout=600)
    return Outcome(
        compare_status=compare.returncode,
        compare_stderr=compare_err,
        compare_csv=compare_out,
        benchgate_status=status,
        benchgate_stderr=stderr.getvalue(),
        benchgate_csv=(out / "results.csv").read_text(encoding="utf-8"),
        record=results.load_run_record(out / "run.json").to_json(),
        csv_path=out / "results.csv",
    )


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    scratch = tmp_path_factory.mktemp("conformance")
    return {name: _run_both(name, sets, scratch) for name, sets in _cases().items()}


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _raw_fields(text: str, column: int) -> list[str]:
    """The unquoted numeric fields (rate: -2, time: -1) exactly as written, from each data line."""
    lines = [line for line in text.splitlines()[1:] if line.startswith('"')]
    return [line.rsplit(",", 2)[column] for line in lines]


def _keys(text: str) -> Counter:
    return Counter(tuple(row[:3]) for row in _rows(text)[1:] if row)


def _case_ids() -> list[str]:
    return list(_cases()) or ["(no cases: the benchmark directory lacks every file of CASES)"]


@pytest.mark.parametrize("filename", _case_ids())
def test_csv_matches_compare_js(outcomes, filename):
    outcome = outcomes[filename]
    compare_rows = _rows(outcome.compare_csv)
    assert outcome.benchgate_csv.splitlines()[0] == outcome.compare_csv.splitlines()[0]  # the same header
    failures = [f for f in outcome.record["failures"] if f["filename"] == filename]
    if outcome.compare_status != 0:
        # compare.js stops at the first failing process; benchgate records it on both sides and finishes.
        assert {f["side"] for f in failures} == {"base", "head"}, outcome.record["failures"]
        assert all(f["reason"].startswith("crashed (exited with status") for f in failures)
        last_error = [line for line in outcome.compare_stderr.splitlines() if "Error" in line][-1:]
        assert last_error and all(last_error[0] in f["stderr_tail"] for f in failures)
        assert outcome.record["complete"] is True
        return
    assert failures == [], failures
    if len(compare_rows) == 1:
        # No row from compare.js and success: the file had nothing to run; benchgate skips, not fails.
        skipped = [s for s in outcome.record["skipped"] if s["filename"] == filename]
        assert {s.get("side") for s in skipped} == {"base", "head"}
        assert _keys(outcome.benchgate_csv) == Counter()
        return
    assert _keys(outcome.benchgate_csv) == _keys(outcome.compare_csv)
    assert sum(_keys(outcome.compare_csv).values()) % (2 * RUNS) == 0


@pytest.mark.parametrize("filename", _case_ids())
def test_rate_and_time_are_written_the_same_way(outcomes, filename):
    outcome = outcomes[filename]
    ours_time, theirs_time = _raw_fields(outcome.benchgate_csv, -1), _raw_fields(outcome.compare_csv, -1)
    ours_rate, theirs_rate = _raw_fields(outcome.benchgate_csv, -2), _raw_fields(outcome.compare_csv, -2)
    if not theirs_time:
        pytest.skip("compare.js wrote no row for this file (checked in test_csv_matches_compare_js)")
    for rates in (ours_rate, theirs_rate):
        assert all(results.js_number(float(rate)) == rate for rate in rates)  # JavaScript's Number#toString
    if all(NODE_TIME.fullmatch(time) for time in theirs_time):
        # The harness sends strings (Node v16.1.0+): both CSVs carry them verbatim, 9 fraction digits.
        assert all(NODE_TIME.fullmatch(time) for time in ours_time), ours_time
    else:
        # Numbers (Node v8 to v16.0): both as JavaScript prints them.
        assert all(results.js_number(float(time)) == time for time in theirs_time + ours_time)


def test_benchgate_analyze_reads_every_csv(outcomes, capsys):
    paths = [str(outcome.csv_path) for outcome in outcomes.values() if len(_rows(outcome.benchgate_csv)) > 1]
    assert paths
    assert cli.main(["analyze", *paths]) in (0, 1)  # a verdict, not bad input (2)
    # The exact time: every sample's nanoseconds are those of its 9-decimal field.
    samples = results.read_samples(paths)
    assert samples["time_ns"].notna().all()
    capsys.readouterr()


def _r_missing() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (Debian: r-base-core)"
    probe = subprocess.run(
        ["Rscript", "-e", "suppressMessages({library(ggplot2); library(plyr)})"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        return "compare.R needs the R packages ggplot2 and plyr (Debian: r-cran-ggplot2 r-cran-plyr)"
    return None


def test_compare_r_reads_benchgate_csv(outcomes):
    missing = _r_missing()
    if missing:
        pytest.skip(missing)
    if not (DIR / "compare.R").is_file():
        pytest.skip(f"{DIR} has no compare.R")
    texts = [outcome.benchgate_csv for outcome in outcomes.values() if len(_rows(outcome.benchgate_csv)) > 1]
    joined = texts[0] + "".join(text.split("\n", 1)[1] for text in texts[1:])  # one header, every file's rows
    completed = subprocess.run(
        ["Rscript", str(DIR / "compare.R")], input=joined, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    names = {f"{filename} {configuration}" for _, filename, configuration in _keys(joined)}
    table = completed.stdout
    assert all(name in table for name in names), table  # one line per benchmark and configuration


def test_outcomes_agree_with_the_manifest(outcomes):
    """The test-data copy's MANIFEST.tsv says which files run on node 20; the outcomes must agree."""
    manifest = _manifest()
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip()
    if not manifest or not version.startswith("v20."):
        pytest.skip("needs MANIFEST.tsv beside the benchmark directory and node 20 (its runs_on_node20 column)")
    for filename, outcome in outcomes.items():
        row = manifest.get(filename)
        if row is None:
            continue
        produced_rows = len(_rows(outcome.compare_csv)) > 1
        if row["runs_on_node20"] == "yes":
            assert outcome.compare_status == 0 and produced_rows, (filename, outcome.compare_stderr[-500:])
        elif "excluded by combinationFilter" in row["error"]:
            assert outcome.compare_status == 0  # an empty queue is success; rows depend on --set
        else:
            assert outcome.compare_status != 0, filename


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.parametrize("filename", _case_ids())
def test_configurations_are_the_ones_nodes_harness_runs(outcomes, filename):
    """Each file's configurations, listed by its own common.js for one job each, are compare.js's rows in its order."""
    outcome = outcomes[filename]
    record = outcome.record
    assert record["jobs"] == "per-configuration"
    # compare.js runs a file's configurations in its queue's order: the order of their first rows
    expected = list(dict.fromkeys(row[2] for row in _rows(outcome.compare_csv)[1:] if row and row[0] == "old"))
    listed = record["configurations"].get(filename)
    if listed is None:  # run whole: only where Node's harness forked no configuration child to run alone
        assert filename in record["whole_files"] and not expected, record["whole_files"]
        return
    assert filename not in record["whole_files"]
    if outcome.compare_status == 0:
        assert [row["configuration"] for row in listed["rows"]] == expected
    # the arguments are those common.js gives the child: every key of the configuration, key=value
    for row in listed["rows"]:  # the configuration's keys, in its order, then any extra --set keys
        position = 0
        for key in (arg.partition("=")[0] for arg in row["args"]):
            found = row["configuration"].find(f"{key}=", position)
            if found < 0:
                assert any(value.startswith(f"{key}=") for value in CASES.get(filename, [])), (key, row)
                continue
            position = found
        assert row["configuration"].startswith(row["args"][0].partition("=")[0] + "=")
    if filename == "events/eventtarget-creation.js":  # its options.flags go before the parent's execArgv
        assert listed["flags"] == {"base": ["--expose-internals"], "head": ["--expose-internals"]}
    else:
        assert listed["flags"] == {"base": [], "head": []}
