"""The results on disk, which every later stage reads: results.csv, run.json and pairs.csv (docs/formats.md).
It imports nothing of benchgate's but ``benchgate.errors``."""

from benchgate._lazy import exports

# The package's public API; everything else is imported from its module.
_MODULES = {
    "csvfile": ("CSV_HEADER", "SAMPLE_COLUMNS", "empty_samples", "read_samples", "ResultsWriter", "sample_keys_after"),
    "jsformat": ("js_number", "field_text", "format_sample_line", "js_inspect", "format_configuration"),
    "rundirs": ("load",),
    "pairs": ("PAIRS_FILE", "PairsWriter", "pairing_record"),
    "recordparts": ("AUTO", "Binary", "BuildFailure", "SandboxUse", "MAX_RECORD_BYTES"),
    "runrecord": (
        "RunRecord",
        "RunSummary",
        "parse_run_record",
        "load_run_record",
        "write_run_record",
        "write_atomically",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
