"""Settings: defaults, the repository file, options and PR labels merged into one frozen object (docs/cli.md)."""

from benchgate._lazy import exports

# The package's public API (what other packages use); everything else is imported from its module.
_MODULES = {
    "schema": ("parse_setting",),
    "settings": (
        "DEFAULT_CONFIG_PATH",
        "Settings",
        "read_config_file",
        "parse_options",
        "resolve",
        "load_settings",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
