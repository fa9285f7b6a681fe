"""One frozen settings object, merged from every source and validated in one place.

Precedence, lowest to highest: built-in defaults < the repository file
(``.github/benchgate.yml``) < action inputs / command-line options < PR labels
(labels only after the trust policy in ``benchgate.config.labels`` let them through).

Every value, whatever its source, goes through ``parse_setting``; a bad value
raises InputError naming the source (file, option or label), the key and why.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from benchgate.errors import InputError
from benchgate.stats.defaults import AUTO_MAX_RUNS, AUTO_MIN_RUNS, DEFAULT_INCONCLUSIVE_ABOVE
from benchgate.stats.gate import CORRECTIONS, MAX_RUNS, THRESHOLDS, GatePolicy, GateRule

DEFAULT_CONFIG_PATH = ".github/benchgate.yml"
AUTO_RUNS = "auto"
MAX_CONFIG_BYTES = 256 * 1024
MAX_MIN_EFFECT = 1000.0
# Strictness order of thresholds: a higher index fails fewer rows (looser).
THRESHOLD_ORDER = ("*", "**", "***", "off")

_CATEGORY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_FILTER = re.compile(r"^[A-Za-z0-9_.\-/=]{1,128}$")
_SET = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}=[^\s\x00-\x1f]{0,256}$")
_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/ ]{0,39}$")
_CPUSET = re.compile(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$")
_SHARD = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")
_GLOB = re.compile(r"^[^\x00-\x1f]{1,200}$")


@dataclass(frozen=True)
class Settings:
    """Everything a run and a report need; ``sources`` says where each non-default value came from."""

    threshold: str = "***"
    correction: str = "holm"
    min_effect: float = 0.0
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE
    runs: int | str = 30  # or "auto": adaptive runs, each file until its comparisons are decided
    max_runs: int = 100  # the most runs a PR label may ask for (labels cost runner time); caps "auto" too
    categories: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    set: tuple[str, ...] = ()
    cpuset: str = ""
    shard: str = ""
    label_prefix: str = "benchmark"
    accept_regression: bool = False
    rules: tuple[GateRule, ...] = ()
    changed_files: str = ""  # the changed-files map as JSON, "" for the shipped one
    build: tuple[tuple[str, Any], ...] = ()
    history: tuple[tuple[str, Any], ...] = ()  # benchgate.config.history: store, keep, site-url
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def policy(self) -> GatePolicy:
        """The gate policy these settings describe."""
        return GatePolicy(self.threshold, self.correction, self.min_effect, self.rules, self.inconclusive_above)

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
    "label-prefix": "label_prefix",
    "accept-regression": "accept_regression",
    "rules": "rules",
    "changed-files": "changed_files",
    "build": "build",
    "history": "history",
}
FILE_ONLY_KEYS = ("rules", "changed-files", "build", "history")


def _fail(where: str, key: str, reason: str) -> InputError:
    return InputError(f"key {key!r}: {reason}", where=where)


def _as_list(value: Any, where: str, key: str) -> list[str]:
    # Inputs and labels give comma/newline separated text; the file may give a YAML list.
    # A --set value may itself hold commas (type="a,b"), so set entries are one per line.
    if isinstance(value, str):
        items = [item.strip() for item in re.split(r"\n" if key == "set" else r"[,\n]", value)]
        return [item for item in items if item]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise _fail(where, key, f"must be a list of strings or comma-separated text, not {value!r}")


def _checked_items(value: Any, where: str, key: str, pattern: re.Pattern[str], what: str) -> tuple[str, ...]:
    items = _as_list(value, where, key)
    if len(items) > 200:
        raise _fail(where, key, f"too many entries ({len(items)} > 200)")
    for item in items:
        if not pattern.match(item):
            raise _fail(where, key, f"{item[:80]!r} is not a valid {what}")
    return tuple(items)


def parse_threshold(value: Any, where: str, key: str = "threshold") -> str:
    if value is False:  # YAML 1.1 reads an unquoted `off` as false
        return "off"
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else None
    if text not in THRESHOLDS:
        raise _fail(where, key, f"must be one of {', '.join(THRESHOLDS)} (quote the stars in YAML), not {value!r}")
    return text


def parse_percent(value: Any, where: str, key: str = "min-effect") -> float:
    if isinstance(value, bool):
        raise _fail(where, key, f"must be a percentage such as 3 or 3%, not {value!r}")
    if isinstance(value, str):
        text = value.strip().removesuffix("%").strip()
        try:
            number = float(text)
        except ValueError:
            raise _fail(where, key, f"must be a percentage such as 3 or 3%, not {value!r}") from None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise _fail(where, key, f"must be a percentage such as 3 or 3%, not {value!r}")
    if not math.isfinite(number) or number < 0 or number > MAX_MIN_EFFECT:
        raise _fail(where, key, f"must be between 0 and {MAX_MIN_EFFECT:g} percent, not {value!r}")
    return number


_OR_AUTO = {"runs": " or auto", "max-runs": ""}


def parse_runs(value: Any, where: str, key: str = "runs") -> int | str:
    if key == "runs" and isinstance(value, str) and value.strip() == AUTO_RUNS:
        return AUTO_RUNS
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _fail(where, key, f"must be a whole number of runs{_OR_AUTO[key]}, not {value!r}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise _fail(where, key, f"must be a whole number of runs{_OR_AUTO[key]}, not {value!r}") from None
    if not 2 <= number <= MAX_RUNS:
        raise _fail(where, key, f"must be between 2 and {MAX_RUNS} (the t-test needs 2 samples a side), not {number}")
    return number


def _parse_bool(value: Any, where: str, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise _fail(where, key, f"must be true or false, not {value!r}")


def _parse_string(value: Any, where: str, key: str, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise _fail(where, key, f"must be {what}, not {value!r}")
    text = str(value).strip()
    if text and not pattern.match(text):
        raise _fail(where, key, f"must be {what}, not {text[:80]!r}")
    return text


def _parse_rules(value: Any, where: str, key: str) -> tuple[GateRule, ...]:
    if not isinstance(value, list):
        raise _fail(where, key, "must be a list of rules, each with 'match' and threshold, min-effect or ignore")
    rules = []
    allowed = {"match", "threshold", "min-effect", "ignore"}
    for index, entry in enumerate(value):
        here = f"{key}[{index}]"
        if not isinstance(entry, dict):
            raise _fail(where, here, "must be a mapping with 'match' and threshold, min-effect or ignore")
        unknown = sorted(set(map(str, entry)) - allowed)
        if unknown:
            raise _fail(where, f"{here}.{unknown[0]}", f"unknown key; allowed: {', '.join(sorted(allowed))}")
        if "match" not in entry:
            raise _fail(where, here, "missing 'match' (a glob on the benchmark file name, e.g. 'buffers/*.js')")
        pattern = _parse_string(entry["match"], where, f"{here}.match", _GLOB, "a glob on the benchmark file name")
        if not pattern:
            raise _fail(where, f"{here}.match", "must not be empty")
        threshold = parse_threshold(entry["threshold"], where, f"{here}.threshold") if "threshold" in entry else None
        effect = parse_percent(entry["min-effect"], where, f"{here}.min-effect") if "min-effect" in entry else None
        ignore = _parse_bool(entry.get("ignore", False), where, f"{here}.ignore")
        if threshold is None and effect is None and not ignore:
            raise _fail(where, here, "a rule needs threshold, min-effect or ignore: true")
        rules.append(GateRule(pattern, threshold, effect, ignore))
    return tuple(rules)


def _parse_changed_files(value: Any, where: str, key: str) -> str:
    # Same format as the runner's changed-files map, checked by the runner's own parser; kept as JSON
    # (valid YAML) so authorize can hand it to the benchmark job, which must not read the PR's config.
    from benchgate.run.changes import parse_mapping

    if not isinstance(value, dict):
        raise _fail(where, key, "must be a mapping with 'rules' (paths -> categories), 'ignore' and 'default'")
    text = json.dumps(value, sort_keys=True)
    try:
        parse_mapping(text, where)
    except InputError as error:
        raise _fail(where, key, error.message) from None
    return text


def _parse_build(value: Any, where: str, key: str) -> tuple[tuple[str, Any], ...]:
    # The build module owns the meaning of its settings; validating through it keeps one set of rules.
    from benchgate.build.settings import BuildSettings

    if not isinstance(value, dict) or not all(isinstance(name, str) for name in value):
        raise _fail(where, key, "must be a mapping of build settings (configure-flags, jobs, ccache, ...)")
    try:
        BuildSettings.from_mapping(value)
    except InputError as error:
        raise _fail(where, key, error.message) from None
    except (TypeError, ValueError) as error:
        raise _fail(where, key, str(error).splitlines()[0]) from None
    return tuple((name, tuple(item) if isinstance(item, list) else item) for name, item in value.items())


def parse_setting(key: str, value: Any, *, where: str) -> Any:
    """Validate one user-facing setting (``key`` as users spell it) and return its typed value."""
    if key == "threshold":
        return parse_threshold(value, where)
    if key == "correction":
        if value not in CORRECTIONS:
            raise _fail(where, key, f"must be one of {', '.join(CORRECTIONS)}, not {value!r}")
        return value
    if key == "min-effect":
        return parse_percent(value, where)
    if key == "inconclusive-above":
        number = parse_percent(value, where, key)
        if number <= 0:
            raise _fail(where, key, f"must be a percentage above 0, not {value!r}")
        return number
    if key in ("runs", "max-runs"):
        return parse_runs(value, where, key)
    if key == "categories":
        return _checked_items(value, where, key, _CATEGORY, "benchmark category")
    if key in ("filter", "exclude"):
        return _checked_items(value, where, key, _FILTER, "file-name filter")
    if key == "set":
        return _checked_items(value, where, key, _SET, "key=value benchmark option")
    if key == "cpuset":
        return _parse_string(value, where, key, _CPUSET, "a CPU list such as 2-3 or 0,2")
    if key == "shard":
        text = _parse_string(value, where, key, _SHARD, "I/N with 1 <= I <= N, such as 1/4")
        match = _SHARD.match(text)
        if match and int(match.group(1)) > int(match.group(2)):
            raise _fail(where, key, f"must be I/N with 1 <= I <= N, not {text!r}")
        return text
    if key == "label-prefix":
        text = _parse_string(value, where, key, _PREFIX, "a label prefix of letters, digits, '-', '_', '.'")
        if not text:
            raise _fail(where, key, "must not be empty")
        return text
    if key == "accept-regression":
        return _parse_bool(value, where, key)
    if key == "rules":
        return _parse_rules(value, where, key)
    if key == "changed-files":
        return _parse_changed_files(value, where, key)
    if key == "build":
        return _parse_build(value, where, key)
    if key == "history":
        from benchgate.config.history import parse_history

        return parse_history(value, where, key)
    raise _fail(where, key, f"unknown key; known keys: {', '.join(KEYS)}")


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
            raise _fail(where, key, "can only be set in the configuration file")
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
