"""The results on disk, which every later stage reads: the compare.js CSV and the run record.

- ``csvfile``: results.csv, written sample by sample like compare.js and read back exactly.
- ``jsformat``: numbers and configurations formatted as JavaScript and ``util.inspect`` print them.
- ``timefield``: the time column read back exactly (seconds and whole nanoseconds).
- ``runrecord``: run.json, written atomically, validated field by field when read (untrusted data).
- ``lookrecord``: an adaptive run's design, looks and stops in run.json, type-checked.
- ``recordfields``: the field-by-field checks both of them make, with the field's path in every error.
- ``pairs``: a duet run's pairing (pairs.csv and run.json's ``pairing``), written and checked when read.
- ``rundirs``: run directories and shards, size-capped and merged; an adaptive run's samples look by look.

It imports nothing of benchgate's but ``benchgate.errors``.
"""

from benchgate._lazy import exports

_MODULES = {
    "csvfile": (
        "CSV_HEADER",
        "REQUIRED_COLUMNS",
        "BASE",
        "HEAD",
        "SAMPLE_COLUMNS",
        "empty_samples",
        "read_samples",
        "read_samples_prefix",
        "read_samples_prefixes",
        "ResultsWriter",
        "sample_keys_after",
    ),
    "jsformat": (
        "DECIMAL",
        "js_number",
        "is_decimal_text",
        "field_text",
        "format_sample_line",
        "js_inspect",
        "format_configuration",
    ),
    "lookrecord": (
        "AUTO",
        "MAX_LOOKS",
        "MAX_FILES",
        "Look",
        "Stop",
        "AdaptiveRecord",
        "is_adaptive",
        "adaptive_record",
    ),
    "recordfields": (
        "MAX_LIST",
        "MAX_TEXT",
        "FieldChecker",
    ),
    "rundirs": (
        "MAX_CSV_BYTES",
        "MAX_RECORD_BYTES",
        "MAX_SHARDS",
        "merge",
        "locate",
        "load",
        "nothing_selected",
        "AdaptiveShard",
    ),
    "pairs": (
        "PAIRS_FILE",
        "Pair",
        "Pairing",
        "PairsWriter",
        "pairing_record",
        "validate_pairing",
        "read_pairs",
        "pair_indices",
    ),
    "runrecord": (
        "MAX_NAME",
        "Failure",
        "Skipped",
        "Binary",
        "BuildFailure",
        "SandboxUse",
        "RunSummary",
        "validate_record",
        "write_run_record",
        "read_run_record",
    ),
    "timefield": (
        "nanoseconds",
        "parse_times",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
