"""Settings: defaults, the repository file, options and PR labels merged into one frozen object.

- ``values``: the value parsers (thresholds, percentages, runs, lists, strings, booleans).
- ``sections``: the configuration file's own sections (rules, noisy, changed-files, build).
- ``history``: the ``history:`` section and where the history store comes from.
- ``schema``: every setting declared once (key, parser, default, flags, input, label, loosening).
- ``flags``: what the schema gives commands: flags, authorize's run-settings, docs/cli.md's table.
- ``settings``: the file reader, the one precedence (``resolve``), ``Settings`` (fields from the schema).
- ``labels``: PR labels as settings, and the trust policy deciding which of them count
  (who added a label and their permission come from a client it is given).
"""

from benchgate._lazy import exports

# The package's public API (what other packages use); everything else is imported from its module.
_MODULES = {
    "values": ("AUTO_RUNS",),
    "schema": ("parse_setting",),
    "settings": (
        "DEFAULT_CONFIG_PATH",
        "Settings",
        "read_config_file",
        "parse_options",
        "resolve",
        "with_labels",
        "load_settings",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
