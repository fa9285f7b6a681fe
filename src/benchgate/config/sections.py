"""The configuration file's own sections (``rules``, ``noisy``, ``changed-files``, ``build``), each validated
here or, where another layer owns its meaning, by that layer's own parser."""

from __future__ import annotations

import json
import re
from typing import Any

from benchgate.config.values import fail, json_or, parse_above_zero, parse_bool, parse_percent, parse_threshold, text_of
from benchgate.errors import InputError
from benchgate.stats.gate import GateRule

_parse_glob = text_of(re.compile(r"^[^\x00-\x1f]{1,200}$"), "a glob on the benchmark file name")


def parse_rules(value: Any, where: str, key: str) -> tuple[GateRule, ...]:
    if not isinstance(value, list):
        raise fail(where, key, "must be a list of rules, each with 'match' and threshold, min-effect or ignore")
    rules = []
    allowed = {"match", "threshold", "min-effect", "ignore", "max-sigma"}
    for index, entry in enumerate(value):
        here = f"{key}[{index}]"
        if not isinstance(entry, dict):
            raise fail(where, here, "must be a mapping with 'match' and threshold, min-effect or ignore")
        unknown = sorted(set(map(str, entry)) - allowed)
        if unknown:
            raise fail(where, f"{here}.{unknown[0]}", f"unknown key; allowed: {', '.join(sorted(allowed))}")
        if "match" not in entry:
            raise fail(where, here, "missing 'match' (a glob on the benchmark file name, e.g. 'buffers/*.js')")
        pattern = _parse_glob(entry["match"], where, f"{here}.match")
        if not pattern:
            raise fail(where, f"{here}.match", "must not be empty")
        threshold = parse_threshold(entry["threshold"], where, f"{here}.threshold") if "threshold" in entry else None
        effect = parse_percent(entry["min-effect"], where, f"{here}.min-effect") if "min-effect" in entry else None
        ignore = parse_bool(entry.get("ignore", False), where, f"{here}.ignore")
        sigma = parse_above_zero(entry["max-sigma"], where, f"{here}.max-sigma") if "max-sigma" in entry else None
        if threshold is None and effect is None and not ignore and sigma is None:
            raise fail(where, here, "a rule needs threshold, min-effect, max-sigma or ignore: true")
        rules.append(GateRule(pattern, threshold, effect, ignore, sigma))
    return tuple(rules)


@json_or
def parse_changed_files(value: Any, where: str, key: str) -> str:
    # Same format as the runner's changed-files map, checked by the runner's own parser; kept as JSON
    # (valid YAML) so authorize can hand it to the benchmark job, which must not read the PR's config.
    from benchgate.run.changedfiles import parse_mapping

    if not isinstance(value, dict):
        raise fail(where, key, "must be a mapping with 'rules' (paths -> categories), 'ignore' and 'default'")
    text = json.dumps(value, sort_keys=True)
    try:
        parse_mapping(text, where)
    except InputError as error:
        raise fail(where, key, error.message) from None
    return text


@json_or
def parse_build(value: Any, where: str, key: str) -> tuple[tuple[str, Any], ...]:
    # The build module owns the meaning of its settings; validating through it keeps one set of rules.
    from benchgate.build.buildsettings import BuildSettings

    if not isinstance(value, dict) or not all(isinstance(name, str) for name in value):
        raise fail(where, key, "must be a mapping of build settings (configure-flags, jobs, ccache, ...)")
    try:
        BuildSettings.from_mapping(value)
    except InputError as error:
        raise fail(where, key, error.message) from None
    except (TypeError, ValueError) as error:
        raise fail(where, key, str(error).splitlines()[0]) from None
    return tuple((name, tuple(item) if isinstance(item, list) else item) for name, item in value.items())


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
