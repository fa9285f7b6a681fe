"""The schema's setting flags for the commands, and authorize's run-settings (a test writes docs/cli.md's table)."""

import argparse
import json
from typing import Any

from benchgate.config.schema import SETTINGS, Setting
from benchgate.config.settings import parse_options, resolve
from benchgate.config.values import HistorySettings

_METAVARS = {float: "PCT", int: "N", int | None: "N"}
_UNSET = (None, (), "", HistorySettings())  # defaults the flags (and the test's docs/cli.md table) do not show


def for_command(command: str) -> tuple[Setting, ...]:
    """The settings ``command`` takes as ``--key`` flags."""
    return tuple(setting for setting in SETTINGS if command in setting.commands)


def add_flags(parser: argparse.ArgumentParser | Any, command: str) -> None:
    """Add ``command``'s setting flags (default None: not given); values stay text, parsed as an input's are."""
    for setting in for_command(command):
        default = "" if setting.default in _UNSET else f" (default {_shown(setting.default)})"
        parser.add_argument(
            f"--{setting.key}",
            dest=f"setting_{setting.attr}",
            action="append" if setting.separator else "store",
            metavar=setting.metavar or _METAVARS.get(setting.type) or setting.key.upper(),
            help=(setting.help + default).replace("%", "%%"),
        )


def flag_values(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The setting flags given on ``command``'s line, by key, as text (a repeated list flag joined as an input)."""
    given = ((setting, getattr(args, f"setting_{setting.attr}", None)) for setting in for_command(command))
    return {s.key: s.separator.join(v) if s.separator else v for s, v in given if v is not None}


def _shown(value: Any) -> str:
    return f"{value:g}%" if isinstance(value, float) else str(value)


def run_settings(settings: Any) -> dict[str, Any]:
    """authorize's run-settings: each setting the benchmark job takes, as the text its input would be, and
    ``sources``: where each came from (the run job keeps a label's value above its own inputs)."""
    # runs auto: the bounds the run takes (max-runs caps the maximum); none for a fixed count
    bounds = dict(zip(("min-runs", "max-runs"), settings.adaptive_runs() or ("", ""), strict=True))
    text: dict[str, Any] = {"sources": {}}
    for setting in (setting for setting in SETTINGS if setting.run):
        value = bounds.get(setting.key, getattr(settings, setting.attr))
        if setting.key == "build":
            value = json.dumps(dict(value), sort_keys=True) if value else ""
        elif setting.key == "slots" and value == setting.default:
            value = ""
        elif setting.separator:
            value = setting.separator.join(value)
        text[setting.input] = str(value)
        text["sources"][setting.input] = settings.source_of(setting.attr)
    return text


def settings_from_flags(args: argparse.Namespace, command: str) -> Any:
    """Settings from ``command``'s setting flags over the defaults (sources: option)."""
    return resolve(option_values=parse_options(flag_values(args, command)))
