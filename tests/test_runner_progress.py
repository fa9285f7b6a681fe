"""Progress with ETA (a plain line every interval, on a terminal too), and resuming mid-process."""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from rundirs import write_run

from benchgate import results
from benchgate.build import releases
from benchgate.run.adaptive import Adaptive, design_for, new_record_fields
from benchgate.run.process import BASE, HEAD, Job, RunPlan, build_schedule
from benchgate.run.progress import Progress, format_seconds
from benchgate.run.session import Recorder, Session, new_progress

BENCH = Path(__file__).parent / "fixtures" / "bench" / "benchmark"
NODE = shutil.which("node")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_weighs_remaining_jobs_by_what_each_file_and_side_took():
    clock = Clock()
    schedule = build_schedule(["a/slow.js", "a/fast.js"], 3, seed=1)
    progress = Progress(io.StringIO(), interval=1000, clock=clock)
    progress.start(schedule)
    assert progress.eta() is None
    durations = {"a/slow.js": 10.0, "a/fast.js": 1.0}
    for job in schedule[:4]:  # the whole first iteration
        clock.now += durations[job.filename]
        progress.job_finished(job, durations[job.filename])
    assert progress.eta() == pytest.approx(2 * (2 * 10.0 + 2 * 1.0))
    assert "4/12 jobs" in progress.line() and "ETA 0:44" in progress.line()


def _after_a_look(tmp_path: Path, schedule: list, stopped: set, expected: dict) -> Adaptive:
    """A real adaptive run of ``schedule`` (up to 10 runs), in the state its first look leaves: the units it
    ``stopped`` and the runs each comparison and file is ``expected`` to need (what ``Adaptive._look`` records)."""
    files = sorted({job.filename for job in schedule})
    record = json.loads((write_run(tmp_path / "run", {}) / "run.json").read_text())
    record.update(new_record_fields(design_for("auto", 5, 10)), selection={"files": files})
    adaptive = Adaptive(schedule, record, tmp_path / "run" / "results.csv")
    adaptive.record["looks"].append({"runs": 5})
    adaptive.stopped |= stopped
    adaptive.expected = expected
    return adaptive


def test_an_adaptive_plan_counts_the_runs_each_running_file_is_expected_to_need(tmp_path):
    clock = Clock()
    schedule = build_schedule(["a/slow.js", "a/fast.js", "a/done.js"], 10, seed=1)
    stream = io.StringIO()
    # after a look: done.js stopped; slow.js is expected to need 3 runs, fast.js 6 (of at most 10)
    expected = {("a/slow.js", None): 3, ("a/fast.js", None): 6}
    stopping = _after_a_look(tmp_path, schedule, {("a/done.js", None)}, expected)
    progress = Progress(stream, interval=1000, clock=clock, stopping=stopping)
    progress.start(schedule)
    durations = {"a/slow.js": 10.0, "a/fast.js": 1.0, "a/done.js": 5.0}
    for job in schedule[:6]:  # the first iteration
        clock.now += durations[job.filename]
        progress.job_finished(job, durations[job.filename])
    assert progress.eta() == pytest.approx(2 * (2 * 10.0 + 5 * 1.0))
    assert progress.eta(worst=True) == pytest.approx(2 * 9 * (10.0 + 1.0))
    line = progress.line()
    assert "2/3 files running" in line and "ETA 0:50 (at most 3:18)" in line
    done_job = next(job for job in schedule[6:] if job.filename == "a/done.js")
    progress.job_skipped(done_job)
    assert progress.done == done_job.index + 1 and progress.skipped == 1
    progress.finish()
    assert "(1 skipped: their comparisons or files had stopped)" in stream.getvalue().splitlines()[-1]


def test_an_adaptive_plan_counts_each_comparison_that_stops_on_its_own(tmp_path):
    clock = Clock()
    rows = {"a/mixed.js": [(("len=0",), "len=0"), (("len=256",), "len=256")]}
    schedule = build_schedule(["a/mixed.js"], 10, seed=1, configurations=rows)
    # a look: len=256 settled at 5 runs and stopped; len=0 is expected to need 6 runs, so its file too
    expected = {("a/mixed.js", None): 6, ("a/mixed.js", "len=256"): 5, ("a/mixed.js", "len=0"): 6}
    stopping = _after_a_look(tmp_path, schedule, {("a/mixed.js", "len=256")}, expected)
    progress = Progress(io.StringIO(), interval=1000, clock=clock, stopping=stopping)
    progress.start(schedule)
    durations = {"len=0": 1.0, "len=256": 4.0}
    for job in schedule[:4]:  # the first iteration: both configurations on both sides
        clock.now += durations[job.row]
        progress.job_finished(job, durations[job.row])
    mean = (1.0 + 4.0) / 2  # the file's mean job so far, per side
    assert progress.eta() == pytest.approx(5 * 2 * mean)  # runs 2-6 of len=0 only, on both sides
    assert progress.eta(worst=True) == pytest.approx(9 * 2 * mean)  # len=0 to max-runs; len=256 is done


def test_plain_lines_come_every_interval_in_ci_logs():
    clock = Clock()
    stream = io.StringIO()
    progress = Progress(stream, interval=30, clock=clock)
    jobs = [Job(i, 0, "a/x.js", BASE if i % 2 else HEAD) for i in range(10)]
    progress.start(jobs)
    for job in jobs:
        clock.now += 10
        progress.job_started(job)
        progress.sample()
        progress.job_finished(job, 10)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0].startswith("benchgate: 0/10 jobs")
    assert 3 <= len(lines) <= 6  # start, one every 30 s over 100 s, done
    assert lines[-1] == "benchgate: done: 10/10 jobs, 10 samples in 1:40"


def test_a_terminal_gets_the_same_plain_lines():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(stream, interval=30, clock=Clock())
    jobs = [Job(i, 0, "a/x.js", BASE) for i in range(4)]
    progress.start(jobs)
    progress.job_finished(jobs[0], 1.0)
    progress.job_finished(jobs[1], 1.0)
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
    assert stream.getvalue().startswith("benchgate: 0/4 jobs")
    progress.finish(interrupted=True)
    assert stream.getvalue().endswith("benchgate: interrupted: 2/4 jobs, 0 samples in 0:00\n")


def test_format_seconds():
    assert format_seconds(59.6) == "1:00" and format_seconds(3725) == "1:02:05"


class _StopAfter(Progress):
    """Interrupts the session (through its signal handler) after a number of samples."""

    def __init__(self, session_ref: list, samples: int) -> None:
        super().__init__(io.StringIO())
        self.session_ref, self.limit = session_ref, samples

    def sample(self) -> None:
        super().sample()
        if self.samples == self.limit:
            self.session_ref[0]._handle_signal(2, None)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_resume_after_an_interrupt_inside_a_process_reaches_exact_counts(tmp_path):
    node = releases.inspect_binary(NODE, side="base")
    plan = RunPlan(benchmark_dir=BENCH, files=("text/quote.js",), binaries={BASE: node, HEAD: node}, runs=2, seed=4)
    csv = tmp_path / "results.csv"
    state = new_progress()
    holder: list = []
    with results.ResultsWriter(csv) as writer:
        session = Session(plan, Recorder(writer, state), progress=_StopAfter(holder, 6))
        holder.append(session)
        session.run()
    assert session.interrupted and state["progress"]["completed_jobs"] == 1  # 4 samples of job 1, 2 of job 2
    assert len(results.read_samples([csv])) == 6
    already = results.sample_keys_after(csv, state["progress"]["csv_bytes"])
    assert len(already) == 2
    resumed_state = new_progress()
    resumed_state["progress"].update(state["progress"])
    with results.ResultsWriter(csv) as writer:
        Session(plan, Recorder(writer, resumed_state), already_written=already).run()
    samples = results.read_samples([csv])
    counts = Counter(zip(samples["side"], samples["configuration"], strict=True))
    assert len(counts) == 8 and set(counts.values()) == {2}
