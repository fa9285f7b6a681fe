"""Settings: defaults, the repository file, options and PR labels merged into one frozen object.

- ``settings``: the keys, their parsing and validation, precedence, ``Settings``.
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
    "settings": (
        "DEFAULT_CONFIG_PATH",
        "AUTO_RUNS",
        "MAX_CONFIG_BYTES",
        "MAX_MIN_EFFECT",
        "THRESHOLD_ORDER",
        "Settings",
        "KEYS",
        "FILE_ONLY_KEYS",
        "parse_threshold",
        "parse_percent",
        "parse_runs",
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
