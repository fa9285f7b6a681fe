"""Settings: defaults, the repository file, options and PR labels merged into one frozen object.

- ``values``: the value parsers (thresholds, percentages, runs, lists, strings, booleans).
- ``sections``: the configuration file's own sections (rules, noisy, changed-files, build).
- ``history``: the ``history:`` section and where the history store comes from.
- ``settings``: the keys, their validation, precedence, ``Settings``.
- ``labels``: PR labels as settings, and the trust policy deciding which of them count
  (who added a label and their permission come from a client it is given).
"""

from benchgate._lazy import exports

_MODULES = {
    "labels": (
        "VALUE_KEYS",
        "FLAG_KEYS",
        "APPLIED",
        "IGNORED",
        "INVALID",
        "REQUEST",
        "LabelOutcome",
        "LabelDecision",
        "ParsedLabel",
        "parse_label",
        "loosens",
        "needs_trust",
        "decide",
        "label_adders",
        "decide_with_client",
    ),
    "values": ("AUTO_RUNS", "MAX_MIN_EFFECT", "parse_threshold", "parse_percent", "parse_runs"),
    "settings": (
        "DEFAULT_CONFIG_PATH",
        "MAX_CONFIG_BYTES",
        "THRESHOLD_ORDER",
        "Settings",
        "KEYS",
        "FILE_ONLY_KEYS",
        "parse_setting",
        "read_config_file",
        "parse_options",
        "resolve",
        "with_labels",
        "load_settings",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
