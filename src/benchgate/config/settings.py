"""One frozen settings object: defaults < the file < inputs / options < PR labels that count (``resolve``), each
value through its setting's parser; and where the history store comes from (docs/cli.md, docs/history.md)."""

import os
from collections.abc import Mapping
from dataclasses import field, make_dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from benchgate.config.schema import BY_KEY, FILE_KEYS, OPTION_KEYS, SETTINGS, parse_setting
from benchgate.config.values import AUTO_RUNS, NOISY_STRICT, HistorySettings
from benchgate.errors import InputError
from benchgate.stats.defaults import AUTO_MAX_RUNS, AUTO_MIN_RUNS
from benchgate.stats.gate import GatePolicy

DEFAULT_CONFIG_PATH = ".github/benchgate.yml"
MAX_CONFIG_BYTES = 256 * 1024
DEFAULT_STORE = "sqlite:///benchgate-history.db"
ENVIRONMENT = "BENCHGATE_HISTORY"


class _SettingsMethods:
    """What ``Settings`` (its fields generated from the schema) derives from its values."""

    def policy(self) -> GatePolicy:
        """The gate policy these settings describe."""
        names = ("threshold", "correction", "min_effect", "rules", "inconclusive_above", "unchanged_confidence")
        values = {name: getattr(self, name) for name in names}
        if self.noisy == NOISY_STRICT:  # every row at its target: no coarser gate, no noise budget
            return GatePolicy(**values, max_resolution=None)
        return GatePolicy(**values, noisy_max_sigma=self.noisy, max_resolution=self.max_resolution)

    def adaptive_runs(self) -> tuple[int, int] | None:
        """``runs: auto``'s fewest and most runs per side: 5 to 60, never more than ``max-runs``; None when fixed."""
        if self.runs != AUTO_RUNS:
            return None
        high = min(AUTO_MAX_RUNS, self.max_runs)
        return min(self.min_runs or AUTO_MIN_RUNS, high), high

    def most_runs(self) -> int:
        """The runs a side these settings take at most: the fixed count, or auto's maximum."""
        adaptive = self.adaptive_runs()
        return adaptive[1] if adaptive else int(self.runs)

    def source_of(self, key: str) -> str:
        """Where the value of ``key`` (a settings attribute name) came from: default, file, option or label."""
        return self.sources.get(key, "default")


Settings = make_dataclass(
    "Settings",
    [(setting.attr, setting.type, field(default=setting.default)) for setting in SETTINGS]
    + [("sources", Mapping[str, str], field(default_factory=dict, compare=False))],
    bases=(_SettingsMethods,),
    frozen=True,
)
Settings.__module__ = __name__
Settings.__doc__ = "Everything a run and a report need (schema.SETTINGS); ``sources``: where each value came from."


def read_config_file(path: str | Path, *, required: bool = False) -> dict[str, Any]:
    """Read and validate the repository configuration file; {} when it is absent and not ``required``."""
    path, where = Path(path), str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        if required:
            raise InputError("configuration file not found", where=where) from None
        return {}
    if size > MAX_CONFIG_BYTES:
        raise InputError(f"configuration file is too large ({size} bytes > {MAX_CONFIG_BYTES})", where=where)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError("configuration file is not UTF-8 text", where=where) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        hint = " (quote thresholds: threshold: '***')" if "alias" in str(problem) else ""
        raise InputError(f"{line}not valid YAML: {problem}{hint}", where=where) from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise InputError("the configuration must be a YAML mapping of keys to values", where=where)
    return {key: parse_setting(key, value, where=where, keys=FILE_KEYS) for key, value in document.items()}


def parse_options(options: Mapping[str, Any], *, where: str = "option") -> dict[str, Any]:
    """Validate action inputs / CLI options (by key); None and empty strings mean "not given"."""
    values: dict[str, Any] = {}
    for key, value in options.items():
        if value is None or value == () or (isinstance(value, str) and not value.strip()):
            continue
        values[key] = parse_setting(key, value, where=f"{where} --{key}", keys=OPTION_KEYS)
    return values


def resolve(
    *,
    file_values: Mapping[str, Any] | None = None,
    option_values: Mapping[str, Any] | None = None,
    label_values: Mapping[str, Any] | None = None,
    base: Any = None,
) -> Any:
    """THE precedence of validated values by key: ``base`` (default Settings()) < file < options < labels."""
    settings = base if base is not None else Settings()
    sources: dict[str, str] = dict(settings.sources)
    for layer, source in ((file_values, "file"), (option_values, "option"), (label_values, "label")):
        changes = {BY_KEY[key].attr: value for key, value in (layer or {}).items()}
        settings = replace(settings, **changes)
        sources.update(dict.fromkeys(changes, source))
    return replace(settings, sources=sources)


def load_settings(config_path: str | Path | None, options: Mapping[str, Any], *, config_required: bool = False):
    """Defaults < config file < options, validated; labels are applied later with ``resolve(base=...)``."""
    file_values = read_config_file(config_path, required=config_required) if config_path else {}
    return resolve(file_values=file_values, option_values=parse_options(options))


def configured_history(config_path: str | Path | None) -> HistorySettings:
    """The ``history:`` section of the configuration file at ``config_path`` (None or absent: not configured)."""
    return (read_config_file(config_path) if config_path else {}).get("history", HistorySettings())


def resolve_store(option: str | None, configured: HistorySettings, default: str | None = DEFAULT_STORE) -> str | None:
    """The store URL: the option, else $BENCHGATE_HISTORY, else the file's ``history.store``, else ``default``."""
    return option or os.environ.get(ENVIRONMENT) or configured.store or default
