"""The value parsers ``(value, where, key) -> value``, the file's own sections (``rules``, ``noisy``,
``changed-files``, ``build``, ``history``) among them; each raises InputError naming where, the key and why."""

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchgate.errors import InputError
from benchgate.stats.gate import MAX_MIN_EFFECT, MAX_RUNS, THRESHOLDS, UNCHANGED_CONFIDENCES, GateRule

AUTO_RUNS = "auto"


def fail(where: str, key: str, reason: str) -> InputError:
    return InputError(f"key {key!r}: {reason}", where=where)


def parse_threshold(value: Any, where: str, key: str = "threshold") -> str:
    if value is False:  # YAML 1.1 reads an unquoted `off` as false
        return "off"
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else None
    if text not in THRESHOLDS:
        raise fail(where, key, f"must be one of {', '.join(THRESHOLDS)} (quote the stars in YAML), not {value!r}")
    return text


def parse_percent(value: Any, where: str, key: str = "min-effect") -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError
        number = float(value.strip().removesuffix("%") if isinstance(value, str) else value)
    except ValueError:
        raise fail(where, key, f"must be a percentage such as 3 or 3%, not {value!r}") from None
    if not math.isfinite(number) or number < 0 or number > MAX_MIN_EFFECT:
        raise fail(where, key, f"must be between 0 and {MAX_MIN_EFFECT:g} percent, not {value!r}")
    return number


def parse_runs(value: Any, where: str, key: str = "runs") -> int | str:
    if key == "runs" and isinstance(value, str) and value.strip() == AUTO_RUNS:
        return AUTO_RUNS
    try:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError
        number = int(str(value).strip())
    except ValueError:
        or_auto = " or auto" if key == "runs" else ""
        raise fail(where, key, f"must be a whole number of runs{or_auto}, not {value!r}") from None
    if not 2 <= number <= MAX_RUNS:
        raise fail(where, key, f"must be between 2 and {MAX_RUNS} (the t-test needs 2 samples a side), not {number}")
    return number


def parse_bool(value: Any, where: str, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise fail(where, key, f"must be true or false, not {value!r}")


CATEGORY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
FILTER = re.compile(r"^[A-Za-z0-9_.\-/=]{1,128}$")
SET = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}=[^\s\x00-\x1f]{0,256}$")
PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/ ]{0,39}$")
CPUSET = re.compile(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$")
SHARD = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")


def choice(*choices: str) -> Callable[[Any, str, str], str]:
    def parse(value: Any, where: str, key: str) -> str:
        text = value.strip() if isinstance(value, str) else value
        if text not in choices:
            raise fail(where, key, f"must be one of {', '.join(choices)}, not {str(value)[:40]!r}")
        return text

    return parse


def parse_above_zero(value: Any, where: str, key: str) -> float:
    if (number := parse_percent(value, where, key)) <= 0:
        raise fail(where, key, f"must be a percentage above 0, not {value!r}")
    return number


def parse_confidence(value: Any, where: str, key: str) -> float:
    number, (low, high) = parse_percent(value, where, key), UNCHANGED_CONFIDENCES
    if not low <= number <= high:
        raise fail(where, key, f"must be a confidence from {low:g} to {high:g} percent, not {value!r}")
    return number


def items_of(pattern: re.Pattern[str], what: str) -> Callable[[Any, str, str], tuple[str, ...]]:
    """A parser of a list of at most 200 items, each matching ``pattern`` (``what`` names one in errors)."""

    def parse(value: Any, where: str, key: str) -> tuple[str, ...]:
        # Inputs and labels give comma/newline separated text; the file may give a YAML list.
        # A --set value may itself hold commas (type="a,b"), so set entries are one per line.
        if isinstance(value, str):
            value = re.split(r"\n" if key == "set" else r"[,\n]", value)
        elif not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
            raise fail(where, key, f"must be a list of strings or comma-separated text, not {value!r}")
        items = [item.strip() for item in value if item.strip()]
        if len(items) > 200:
            raise fail(where, key, f"too many entries ({len(items)} > 200)")
        for item in items:
            if not pattern.match(item):
                raise fail(where, key, f"{item[:80]!r} is not a valid {what}")
        return tuple(items)

    return parse


def text_of(pattern: re.Pattern[str], what: str, *, required: bool = False) -> Callable[[Any, str, str], str]:
    """A parser of text that matches ``pattern``, or is empty when not ``required`` (``what`` names it in errors)."""

    def parse(value: Any, where: str, key: str) -> str:
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise fail(where, key, f"must be {what}, not {value!r}")
        text = str(value).strip()
        if required and not text:
            raise fail(where, key, "must not be empty")
        if text and not pattern.match(text):
            raise fail(where, key, f"must be {what}, not {text[:80]!r}")
        return text

    return parse


def parse_shard(value: Any, where: str, key: str) -> str:
    text = text_of(SHARD, "I/N with 1 <= I <= N, such as 1/4")(value, where, key)
    if (match := SHARD.match(text)) and int(match[1]) > int(match[2]):
        raise fail(where, key, f"must be I/N with 1 <= I <= N, not {text!r}")
    return text


def parse_slots(value: Any, where: str, key: str) -> int:
    # 1..256 as benchgate.run.duet.MAX_SLOTS (not imported: config sits below run); run refuses more than CPU sets
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 3:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 256:
        raise fail(where, key, f"must be a whole number from 1 to 256, not {str(value)[:40]!r}")
    return value


parse_prefix = text_of(PREFIX, "a label prefix of letters, digits, '-', '_', '.'", required=True)
_parse_glob = text_of(re.compile(r"^[^\x00-\x1f]{1,200}$"), "a glob on the benchmark file name", required=True)
_RULE = {"threshold": parse_threshold, "min-effect": parse_percent, "ignore": parse_bool, "max-sigma": parse_above_zero}


def parse_rules(value: Any, where: str, key: str) -> tuple[GateRule, ...]:
    if not isinstance(value, list):
        raise fail(where, key, "must be a list of rules, each with 'match' and threshold, min-effect or ignore")
    rules = []
    allowed = sorted({"match", *_RULE})
    for index, entry in enumerate(value):
        here = f"{key}[{index}]"
        if not isinstance(entry, dict):
            raise fail(where, here, "must be a mapping with 'match' and threshold, min-effect or ignore")
        if unknown := sorted(set(map(str, entry)) - set(allowed)):
            raise fail(where, f"{here}.{unknown[0]}", f"unknown key; allowed: {', '.join(allowed)}")
        if "match" not in entry:
            raise fail(where, here, "missing 'match' (a glob on the benchmark file name, e.g. 'buffers/*.js')")
        pattern = _parse_glob(entry["match"], where, f"{here}.match")
        given = {name: parse(entry[name], where, f"{here}.{name}") for name, parse in _RULE.items() if name in entry}
        if not any(name != "ignore" or value for name, value in given.items()):  # ignore: false alone does nothing
            raise fail(where, here, "a rule needs threshold, min-effect, max-sigma or ignore: true")
        rules.append(GateRule(pattern, **{name.replace("-", "_"): value for name, value in given.items()}))
    return tuple(rules)


def owned_section(what: str, check: Callable[[dict], Any]) -> Callable[[Any, str, str], Any]:
    """A parser of a file section whose meaning another module owns: ``check`` validates the mapping through it and
    returns the value kept. It travels as JSON text in an action input (the run job never reads the file)."""

    def parse(value: Any, where: str, key: str) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as error:
                raise fail(where, key, f"must be JSON ({error})") from None
        if not isinstance(value, dict) or not all(isinstance(name, str) for name in value):
            raise fail(where, key, f"must be a mapping {what}")
        try:
            return check(value)
        except InputError as error:
            raise fail(where, key, error.message) from None
        except (TypeError, ValueError) as error:
            raise fail(where, key, str(error).splitlines()[0]) from None

    return parse


def _changed_files(mapping: dict) -> str:
    # Kept as JSON (valid YAML) so authorize can hand it to the benchmark job, which must not read the PR's config.
    from benchgate.run.changedfiles import parse_mapping

    text = json.dumps(mapping, sort_keys=True)
    parse_mapping(text, "changed-files")
    return text


def _build(mapping: dict) -> tuple[tuple[str, Any], ...]:
    from benchgate.build.buildsettings import BuildSettings

    BuildSettings.from_mapping(mapping)
    return tuple((name, tuple(item) if isinstance(item, list) else item) for name, item in mapping.items())


parse_changed_files = owned_section("with 'rules' (paths -> categories), 'ignore' and 'default'", _changed_files)
parse_build = owned_section("of build settings (configure-flags, jobs, ccache, ...)", _build)


NOISY_STRICT = "strict"  # noisy: strict: every row gated at its target, however noisy (before issue 21)


def parse_noisy(value: Any, where: str, key: str) -> float | str:
    """``noisy: strict``, or the noise budget ``noisy: {max-sigma: 8%}`` (its sigma in percent)."""
    if value == NOISY_STRICT:
        return NOISY_STRICT
    # A mapping: room for what such rows do besides the budget.
    if not isinstance(value, dict) or set(map(str, value)) != {"max-sigma"}:
        raise fail(
            where, key, f"must be strict or a mapping with max-sigma (e.g. noisy: {{max-sigma: 8%}}), not {value!r}"
        )
    return parse_above_zero(value["max-sigma"], where, f"{key}.max-sigma")


_HISTORY_KEYS = ("store", "keep", "site-url")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^\s]{0,1000}$")
_SITE = re.compile(r"^https?://[^\s]{1,500}$")


@dataclass(frozen=True)
class HistorySettings:
    """The ``history:`` section (store, keep, site-url), validated; empty values mean "not configured"."""

    store: str = ""
    keep: int = 0
    site_url: str = ""


def parse_history(value: Any, where: str, key: str = "history") -> HistorySettings:
    if not isinstance(value, dict):
        raise fail(where, key, "must be a mapping with store, keep and site-url")
    if unknown := [name for name in value if name not in _HISTORY_KEYS]:
        raise fail(where, key, f"unknown key {str(unknown[0])[:40]!r}; known keys: {', '.join(_HISTORY_KEYS)}")
    store, keep, site = value.get("store"), value.get("keep", 0), value.get("site-url")
    if store is not None and (not isinstance(store, str) or not _URL.match(store)):
        raise fail(where, key, "store must be a database URL such as sqlite:///benchgate-history.db")
    if isinstance(store, str) and re.match(r"^[^:]+://[^/@]*:[^/@]*@", store):
        raise fail(where, key, "store must not hold a password: put that URL in the BENCHGATE_HISTORY secret")
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= 10_000_000:
        raise fail(where, key, "keep must be a whole number of runs (0 keeps all)")
    if site is not None and (not isinstance(site, str) or not _SITE.match(site)):
        raise fail(where, key, "site-url must be an http(s) URL")
    return HistorySettings(store or "", keep, site or "")
