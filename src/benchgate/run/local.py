"""One `benchgate run` from options to results on disk (the analysis is ``benchgate.commands.run``'s)."""

import contextlib
import itertools
import os
import shlex
from dataclasses import replace
from pathlib import Path

from benchgate import results
from benchgate.errors import EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_OK, InputError, RunError
from benchgate.run import duet, protocol, say
from benchgate.run.plan import RunOptions, prepare
from benchgate.run.process import RunPlan
from benchgate.run.progress import Progress
from benchgate.run.session import Recorder, Session, now


def check_output_dir(output: Path) -> None:
    """``--output`` must be a writable directory or one that can be created (tried: /proc, read-only mounts)."""
    if output.is_dir():
        if not os.access(output, os.W_OK | os.X_OK):
            raise InputError(f"--output {output}: the directory is not writable")
        return
    if output.exists() or output.is_symlink():
        raise InputError(f"--output {output}: exists and is not a directory")
    missing = [output, *itertools.takewhile(lambda parent: not parent.exists(), output.parents)]
    if not missing[-1].parent.is_dir():
        raise InputError(f"--output {output}: {missing[-1].parent} is not a directory")
    try:
        output.mkdir(parents=True)
    except OSError as error:
        raise InputError(f"--output {output}: cannot create {error.filename or output}: {error.strerror}") from None
    finally:
        for directory in missing:  # the deepest first; those not created are not there
            with contextlib.suppress(FileNotFoundError):
                directory.rmdir()


def run_benchmarks(options: RunOptions) -> int | None:
    """Run (or resume) into ``options.output``: the exit status without a verdict, or None for the analysis."""
    output = options.output
    check_output_dir(output)
    plan, record = prepare(options)
    output.mkdir(parents=True, exist_ok=True)
    record_path, csv_path = output / "run.json", output / "results.csv"
    if plan is None:
        record.update(complete=True, ended_at=now())
        results.write_run_record(record_path, record)
        print("benchgate: no benchmark category selected by the change; nothing ran")
        return EXIT_OK
    for item in record["skipped"]:
        say(f"skipped {item['filename']}: {item['reason']}")
    if not options.resume:
        plan = _expand_configurations(plan, record, options.jobs)
    for warning in record["environment"].get("warnings", []):
        say(f"warning: {warning}")
    csv_bytes = record["progress"]["csv_bytes"]
    already_written = []
    concurrent = plan.pairing != "sequential" or plan.slots > 1
    if options.resume and plan.pairing == "duet":
        duet.resume_from_checkpoint(output, record, csv_bytes)  # an unfinished duet runs again whole
    elif options.resume and csv_path.exists():
        already_written = results.sample_keys_after(csv_path, csv_bytes)
    pairs = results.PairsWriter(output / results.PAIRS_FILE) if concurrent else contextlib.nullcontext()
    with results.ResultsWriter(csv_path) as writer, pairs as pairs_writer:
        recorder = Recorder(writer, record, record_path=record_path, pairs=pairs_writer)
        stopping = None
        if record.get("runs") == results.AUTO:
            from benchgate.run.adaptive import Adaptive

            stopping = Adaptive(plan.schedule(), record, csv_path, where=str(record_path))
        progress = Progress(interval=options.progress_interval, stopping=stopping) if options.progress else None
        session = Session(plan, recorder, progress=progress, already_written=already_written, stopping=stopping)
        recorder.checkpoint(len(session.schedule))
        session.run()
    record["complete"] = record["progress"]["completed_jobs"] >= len(session.schedule)
    record["interrupted"] = session.interrupted
    if record["samples"] and not session.interrupted:
        for key in protocol.unused_set_keys(plan.set_args, csv_path):
            protocol.add_warning(
                record["protocol_warnings"],
                f"--set {key}=...: no benchmark that reported has a configuration {key!r}; common.js passed it on "
                "as an extra option, which changes nothing unless a file reads it (a typo?)",
            )
    recorder.checkpoint(len(session.schedule), final=True)
    for item in record["protocol_warnings"]:
        say(f"warning: {protocol.describe_warning(item)}")
    if stopping is not None:
        say(stopping.summary())
    say(f"results in {output} (results.csv, run.json)")
    if session.interrupted:
        say(
            f"interrupted; {record['samples']} sample(s) are in {csv_path}; continue with "
            f"`benchgate run --resume --output {shlex.quote(str(output))}`"
        )
        return EXIT_INTERRUPTED
    return None if options.analyze else _status_without_statistics(record, output)


def _expand_configurations(plan: RunPlan, record: dict, jobs: str) -> RunPlan:
    """``--jobs per-configuration``: each file's configurations recorded (or why it runs whole), in the plan."""
    from benchgate.run import configurations, suite

    record["jobs"] = jobs
    if jobs != configurations.PER_CONFIGURATION:
        return plan
    env = protocol.benchmark_environment(os.environ)

    def expand(filename: str, side: str) -> configurations.SideExpansion:
        binary, options = plan.binaries[side], {"env": env, "timeout": plan.timeout, "sandbox": plan.sandbox}
        return configurations.expand_side(binary, plan.benchmark_dir, filename, plan.set_args, **options)

    expanded, whole = configurations.expand_files(
        plan.files, expand, is_http=lambda filename: suite.is_http_benchmark(plan.benchmark_dir / filename)
    )
    record["configurations"] = {name: found.model_dump(mode="json") for name, found in expanded.items()}
    record["whole_files"] = whole
    for name, reason in whole.items():
        say(f"{name} runs whole (one job per run and side): {reason}")
    return replace(plan, configurations=expanded)


def _status_without_statistics(record: dict, output: Path) -> int:
    """--no-analyze: the exit status without pandas and scipy, never a pass with gating failures or no samples."""
    gating = [failure for failure in record["failures"] if failure.get("gating")]
    if gating:
        say(f"verdict FAIL ({len(gating)} benchmark process(es) failed on the head where the base succeeded)")
        return EXIT_GATE_FAILED
    if record.get("samples", 0) == 0:
        raise RunError(
            f"no benchmark produced a sample ({len(record['failures'])} failure(s), {len(record['skipped'])} "
            "skip(s), listed in run.json)",
            where=str(output),
        )
    say(
        f"run complete; statistics skipped (--no-analyze): "
        f"`benchgate analyze {shlex.quote(str(output / 'results.csv'))}` gives the verdict"
    )
    return EXIT_OK
