"""Running benchmarks: what to run, in which order, in which processes, with checkpoints.

- ``suite``: selection as compare.js means it; ``changedfiles``: categories from changed files.
- ``plan``: options checked and turned into the plan and the first run.json.
- ``process``: the schedule and one benchmark process speaking Node's IPC protocol.
- ``session``: carries out the schedule one job at a time (``slots``: several at once), stopping fixed or adaptive.
- ``recorder``: the one writer of results.csv, pairs.csv and the run.json checkpoints ``--resume`` continues from.
- ``adaptive``: ``--runs auto``: its design, the looks taken during the run, the files that stop.
- ``trust``: which heads are untrusted, and the sandbox their benchmark processes start in.
- ``local``: one ``benchgate run`` from plan to results on disk; ``system``: the runner's checks;
  ``topology``: the CPUs' core types and SMT siblings, which CPU sets a run's slots get;
  ``progress``: the progress line and its ETA.
"""

from benchgate._lazy import exports

_MODULES = {
    "adaptive": (
        "design_for",
        "new_record_fields",
        "Adaptive",
    ),
    "changedfiles": (
        "Rule",
        "Mapping",
        "ChangedCategories",
        "glob_to_regex",
        "load_mapping",
        "parse_mapping",
        "changed_files",
        "map_changes",
        "categories_for_change",
    ),
    "local": (
        "check_output_dir",
        "run_benchmarks",
    ),
    "plan": (
        "BUILD_LOG_TAIL_LINES",
        "BUILD_LOG_TAIL_CHARS",
        "BuildFailure",
        "RunOptions",
        "build_failure_record",
        "prepare",
    ),
    "process": (
        "BASE",
        "HEAD",
        "CSV_LABELS",
        "STDERR_TAIL_BYTES",
        "Job",
        "build_schedule",
        "ProcessResult",
        "BenchmarkProcess",
        "job_argv",
    ),
    "progress": (
        "format_seconds",
        "Progress",
    ),
    "protocol": (
        "RUN_FN_VARIABLE",
        "MAX_WARNINGS",
        "EMPTY_QUEUE_REASON",
        "Sample",
        "JobMessages",
        "benchmark_environment",
        "environment_notes",
        "add_warning",
        "describe_warning",
        "unused_set_keys",
    ),
    "recorder": (
        "SessionState",
        "Recorder",
        "mark_gating",
        "now",
    ),
    "session": (
        "RunPlan",
        "FixedStopping",
        "RunningProcesses",
        "Session",
        "plan_from_record",
    ),
    "suite": (
        "HTTP_BENCHMARKERS",
        "Shard",
        "Selection",
        "parse_set",
        "parse_shard",
        "list_categories",
        "select",
        "is_http_benchmark",
        "declared_benchmarkers",
        "find_http_benchmarker",
        "http_skips",
        "default_benchmark_dir",
    ),
    "system": (
        "LOAD_WARNING_PER_CPU",
        "Facts",
        "parse_cpu_list",
        "Check",
        "CpuModel",
        "CpuCount",
        "Governor",
        "Turbo",
        "LoadAverage",
        "IsolatedCpus",
        "Aslr",
        "Memory",
        "collect",
        "render",
    ),
    "trust": (
        "DEFAULT_PROCESS_TIMEOUT",
        "BENCHMARK_ENV",
        "untrusted_head",
        "find_sandbox",
        "record",
        "repository_paths",
        "confinement",
        "recorded_paths",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
