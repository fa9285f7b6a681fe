"""One frozen settings object, merged from every source and validated in one place.

Precedence, lowest to highest: built-in defaults < the repository file
(``.github/benchgate.yml``) < action inputs / command-line options < PR labels
(labels only after the trust policy in ``benchgate.config.labels`` let them through).

Every value, whatever its source, goes through ``parse_setting``; a bad value
raises InputError naming the source (file, option or label), the key and why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from benchgate.config.sections import parse_build, parse_changed_files, parse_rules, parse_sigma
from benchgate.config.values import (
    AUTO_RUNS,
    checked_items,
    fail,
    parse_bool,
    parse_percent,
    parse_runs,
    parse_string,
    parse_threshold,
)
from benchgate.errors import InputError
from benchgate.stats import gate
from benchgate.stats.defaults import AUTO_MAX_RUNS, AUTO_MIN_RUNS, DEFAULT_INCONCLUSIVE_ABOVE
from benchgate.stats.gate import CORRECTIONS, GatePolicy, GateRule

DEFAULT_CONFIG_PATH = ".github/benchgate.yml"
MAX_CONFIG_BYTES = 256 * 1024
# Strictness order of thresholds: a higher index fails fewer rows (looser).
THRESHOLD_ORDER = ("*", "**", "***", "off")

_CATEGORY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_FILTER = re.compile(r"^[A-Za-z0-9_.\-/=]{1,128}$")
_SET = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}=[^\s\x00-\x1f]{0,256}$")
_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/ ]{0,39}$")
_CPUSET = re.compile(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$")
_SHARD = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")


@dataclass(frozen=True)
class Settings:
    """Everything a run and a report need; ``sources`` says where each non-default value came from."""

    threshold: str = "***"
    correction: str = "holm"
    min_effect: float = 0.0
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE
    runs: int | str = AUTO_RUNS  # adaptive runs, each comparison until it is decided; or a fixed count (30: compare.js)
    max_runs: int = 100  # the most runs a PR label may ask for (labels cost runner time); caps "auto" too
    categories: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    set: tuple[str, ...] = ()
    cpuset: str = ""
    shard: str = ""
    pairing: str = "sequential"  # or "duet": base and head side by side (benchgate run --pairing)
    slots: int = 1  # jobs (or duets) at once on disjoint CPU sets (benchgate run --slots)
    label_prefix: str = "benchmark"
    accept_regression: bool = False
    rules: tuple[GateRule, ...] = ()
    changed_files: str = ""  # the changed-files map as JSON, "" for the shipped one
    build: tuple[tuple[str, Any], ...] = ()
    unchanged_confidence: float = gate.DEFAULT_UNCHANGED_CONFIDENCE  # percent: the one-sided bound of "unchanged"
    noisy_max_sigma: float | None = None  # percent: ``noisy: {max-sigma: 8%}``, the noise budget
    history: tuple[tuple[str, Any], ...] = ()  # benchgate.config.history: store, keep, site-url
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def policy(self) -> GatePolicy:
        """The gate policy these settings describe."""
        values = (self.threshold, self.correction, self.min_effect, self.rules, self.inconclusive_above)
        return GatePolicy(*values, self.unchanged_confidence, self.noisy_max_sigma)

    def adaptive_runs(self) -> tuple[int, int] | None:
        """``runs: auto``'s fewest and most runs per side: 5 to 60, never more than ``max-runs``; None when fixed."""
        if self.runs != AUTO_RUNS:
            return None
        high = min(AUTO_MAX_RUNS, self.max_runs)
        return min(AUTO_MIN_RUNS, high), high

    def source_of(self, key: str) -> str:
        """Where the value of ``key`` (a settings attribute name) came from: default, file, option or label."""
        return self.sources.get(key, "default")


# Keys as users write them (config file, action inputs, labels) -> Settings attribute.
KEYS = {
    "threshold": "threshold",
    "correction": "correction",
    "min-effect": "min_effect",
    "inconclusive-above": "inconclusive_above",
    "runs": "runs",
    "max-runs": "max_runs",
    "categories": "categories",
    "filter": "filter",
    "exclude": "exclude",
    "set": "set",
    "cpuset": "cpuset",
    "shard": "shard",
    "pairing": "pairing",
    "slots": "slots",
    "label-prefix": "label_prefix",
    "accept-regression": "accept_regression",
    "rules": "rules",
    "changed-files": "changed_files",
    "build": "build",
    "unchanged-confidence": "unchanged_confidence",
    "noisy": "noisy_max_sigma",
    "history": "history",
}
FILE_ONLY_KEYS = ("rules", "changed-files", "build", "noisy", "history")


def parse_setting(key: str, value: Any, *, where: str) -> Any:
    """Validate one user-facing setting (``key`` as users spell it) and return its typed value."""
    if key == "threshold":
        return parse_threshold(value, where)
    if key == "correction":
        if value not in CORRECTIONS:
            raise fail(where, key, f"must be one of {', '.join(CORRECTIONS)}, not {value!r}")
        return value
    if key == "min-effect":
        return parse_percent(value, where)
    if key == "inconclusive-above":
        number = parse_percent(value, where, key)
        if number <= 0:
            raise fail(where, key, f"must be a percentage above 0, not {value!r}")
        return number
    if key == "unchanged-confidence":
        number, (low, high) = parse_percent(value, where, key), gate.UNCHANGED_CONFIDENCES
        if not low <= number <= high:
            raise fail(where, key, f"must be a confidence from {low:g} to {high:g} percent, not {value!r}")
        return number
    if key == "noisy":  # a mapping: room for what such rows do besides the budget
        if not isinstance(value, dict) or set(map(str, value)) != {"max-sigma"}:
            raise fail(where, key, f"must be a mapping with max-sigma (e.g. noisy: {{max-sigma: 8%}}), not {value!r}")
        return parse_sigma(value["max-sigma"], where, f"{key}.max-sigma")
    if key in ("runs", "max-runs"):
        return parse_runs(value, where, key)
    if key == "categories":
        return checked_items(value, where, key, _CATEGORY, "benchmark category")
    if key in ("filter", "exclude"):
        return checked_items(value, where, key, _FILTER, "file-name filter")
    if key == "set":
        return checked_items(value, where, key, _SET, "key=value benchmark option")
    if key == "cpuset":
        return parse_string(value, where, key, _CPUSET, "a CPU list such as 2-3 or 0,2")
    if key == "shard":
        text = parse_string(value, where, key, _SHARD, "I/N with 1 <= I <= N, such as 1/4")
        match = _SHARD.match(text)
        if match and int(match.group(1)) > int(match.group(2)):
            raise fail(where, key, f"must be I/N with 1 <= I <= N, not {text!r}")
        return text
    if key == "pairing":
        text = str(value).strip() if isinstance(value, str) else value
        if text not in ("sequential", "duet"):
            raise fail(where, key, f"must be sequential or duet, not {str(value)[:40]!r}")
        return text
    if key == "slots":
        # 1..256 as benchgate.run.duet.MAX_SLOTS (not imported: config sits below run); run refuses more than CPU sets
        if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 3:
            value = int(value.strip())  # an action input or authorize --slots
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 256:
            raise fail(where, key, f"must be a whole number from 1 to 256, not {str(value)[:40]!r}")
        return value
    if key == "label-prefix":
        text = parse_string(value, where, key, _PREFIX, "a label prefix of letters, digits, '-', '_', '.'")
        if not text:
            raise fail(where, key, "must not be empty")
        return text
    if key == "accept-regression":
        return parse_bool(value, where, key)
    if key == "rules":
        return parse_rules(value, where, key)
    if key == "changed-files":
        return parse_changed_files(value, where, key)
    if key == "build":
        return parse_build(value, where, key)
    if key == "history":
        from benchgate.config.history import parse_history

        return parse_history(value, where, key)
    raise fail(where, key, f"unknown key; known keys: {', '.join(KEYS)}")


def read_config_file(path: str | Path, *, required: bool = False) -> dict[str, Any]:
    """Read and validate the repository configuration file; {} when it is absent and not ``required``."""
    path = Path(path)
    where = str(path)
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
    values: dict[str, Any] = {}
    for key, value in document.items():
        if not isinstance(key, str) or key not in KEYS:
            close = str(key).replace("_", "-")
            hint = f" (did you mean {close!r}?)" if close in KEYS else f"; known keys: {', '.join(KEYS)}"
            raise InputError(f"key {key!r}: unknown key{hint}", where=where)
        if key == "accept-regression":
            raise InputError(f"key {key!r}: only a PR label can accept a regression", where=where)
        values[key] = parse_setting(key, value, where=where)
    return values


def parse_options(options: Mapping[str, Any], *, where: str = "option") -> dict[str, Any]:
    """Validate action inputs / CLI options; None and empty strings mean "not given"."""
    values: dict[str, Any] = {}
    for key, value in options.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if key in FILE_ONLY_KEYS or key == "accept-regression":
            raise fail(where, key, "can only be set in the configuration file")
        values[key] = parse_setting(key, value, where=f"{where} --{key}")
    return values


def resolve(
    *,
    file_values: Mapping[str, Any] | None = None,
    option_values: Mapping[str, Any] | None = None,
    label_values: Mapping[str, Any] | None = None,
) -> Settings:
    """Merge validated layers (defaults < file < options < labels) into one Settings."""
    settings = Settings()
    sources: dict[str, str] = {}
    for layer, source in ((file_values, "file"), (option_values, "option"), (label_values, "label")):
        if not layer:
            continue
        changes = {KEYS[key]: value for key, value in layer.items()}
        settings = replace(settings, **changes)
        sources.update({name: source for name in changes})
    return replace(settings, sources=sources)


def with_labels(settings: Settings, label_values: Mapping[str, Any]) -> Settings:
    """Settings with trusted label values applied on top (labels have the highest precedence)."""
    if not label_values:
        return settings
    changes = {KEYS[key]: value for key, value in label_values.items()}
    sources = dict(settings.sources)
    sources.update({name: "label" for name in changes})
    return replace(settings, **changes, sources=sources)


def load_settings(config_path: str | Path | None, options: Mapping[str, Any], *, config_required: bool = False):
    """Defaults < config file < options, validated; labels are applied later with ``with_labels``."""
    file_values = read_config_file(config_path, required=config_required) if config_path else {}
    return resolve(file_values=file_values, option_values=parse_options(options))
