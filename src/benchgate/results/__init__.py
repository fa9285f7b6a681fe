"""The results on disk, which every later stage reads: the compare.js CSV and the run record.

- ``csvfile``: results.csv, written sample by sample like compare.js and read back exactly.
- ``jsformat``: numbers and configurations formatted as JavaScript and ``util.inspect`` print them.
- ``timefield``: the time column read back exactly (seconds and whole nanoseconds).
- ``runrecord``: run.json, one versioned model (``RunRecord``): one writer (atomic), one loader (untrusted data).
- ``lookrecord``: an adaptive run's looks and stops in run.json, and the view the replay reads.
- ``recordfields``: run.json's limits and field types, and the one-line error of a bad field.
- ``recordparts``: the parts of run.json (binaries, selection, failures, sandbox, build failure, ...).
- ``pairs``: a duet run's pairing (pairs.csv and run.json's ``pairing``), written and checked when read.
- ``rundirs``: run directories and shards, size-capped and merged; an adaptive run's samples look by look.

It imports nothing of benchgate's but ``benchgate.errors``.
"""

from benchgate._lazy import exports

# The package's public API; everything else is imported from its module.
_MODULES = {
    "csvfile": ("CSV_HEADER", "SAMPLE_COLUMNS", "empty_samples", "read_samples", "ResultsWriter", "sample_keys_after"),
    "jsformat": ("js_number", "field_text", "format_sample_line", "js_inspect", "format_configuration"),
    "lookrecord": ("AUTO",),
    "recordfields": ("MAX_RECORD_BYTES",),
    "rundirs": ("load",),
    "pairs": ("PAIRS_FILE", "PairsWriter", "pairing_record"),
    "recordparts": (
        "Binary",
        "BuildFailure",
        "SandboxUse",
    ),
    "runrecord": (
        "RunRecord",
        "Failure",
        "Skipped",
        "RunSummary",
        "parse_run_record",
        "load_run_record",
        "write_run_record",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
