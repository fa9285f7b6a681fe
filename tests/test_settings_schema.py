"""One declaration per setting (benchgate.config.schema): these fail when a second copy appears.

Every command's setting flags, the configuration keys, the labels, the action's inputs and docs/cli.md's
table come from ``SETTINGS``; one precedence (``config.resolve``) serves every command and both workflow
shapes (mode all and split jobs).
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from benchgate import cli, config
from benchgate.commands import action
from benchgate.config import flags, labels, schema
from benchgate.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
# Inputs that are not settings: where things are, what a step does, the hand-off between jobs.
NON_SETTING_INPUTS = {
    "mode",
    "github-token",
    "repo-path",
    "base-ref",
    "head-ref",
    "run-settings",
    "results",
    "config",
    "comment-author",
    "pr",
    "head-sha",
    "nothing-to-benchmark",
    "base-binary",
    "head-binary",
    "base-node-args",
    "head-node-args",
    "benchmark-dir",
    "no-sandbox",
    "plot",
    "python",
    "history",
    "history-store",
    "bisect-since",
    "bisect-output",
    "history-site",
}


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = {}
    for item in parser._actions:
        if isinstance(item, argparse._SubParsersAction):
            for name, sub in item.choices.items():
                found[name] = sub
                found.update({f"{name} {deeper}": p for deeper, p in _subparsers(sub).items()})
    return found


def test_every_setting_flag_of_every_command_comes_from_the_schema():
    commands = _subparsers(cli.build_parser())
    assert set(cli.COMMANDS) <= set(commands)
    seen = set()
    for name, parser in commands.items():
        for item in parser._actions:
            for option in item.option_strings:
                key = option.removeprefix("--")
                if key in schema.BY_KEY:
                    # add_flags names its dests setting_<attr>; a hand-written copy would not.
                    assert item.dest == f"setting_{schema.BY_KEY[key].attr}", f"benchgate {name} {option}"
                    assert name in schema.BY_KEY[key].commands, f"benchgate {name} {option}"
                    seen.add((name, key))
    declared = {(command, setting.key) for setting in schema.SETTINGS for command in setting.commands}
    assert seen == declared


def test_settings_fields_are_the_schemas():
    assert [field.name for field in fields(config.Settings)] == [s.attr for s in schema.SETTINGS] + ["sources"]
    assert config.Settings() == config.Settings(**{s.attr: s.default for s in schema.SETTINGS})


def test_every_action_input_is_a_setting_or_named_as_none():
    inputs = set(_action()["inputs"])
    settings_inputs = set(schema.INPUTS)
    assert inputs - settings_inputs == NON_SETTING_INPUTS
    assert settings_inputs <= inputs, "a setting's input is missing from action.yml"
    # Each step hands an input to benchgate as BENCHGATE_<INPUT>, and only through its env: list.
    for step in _action()["runs"]["steps"]:
        for name, value in (step.get("env") or {}).items():
            used = re.findall(r"inputs\.([a-z-]+)", str(value))
            if used and name.startswith("BENCHGATE_") and used[0] in settings_inputs:
                assert name == action.env_name(used[0]), (step["id"], name)


def test_every_label_the_parser_accepts_is_in_the_schema():
    for setting in schema.SETTINGS:
        text = f"benchmark:{setting.key}" + (f"={setting.label}" if setting.label else "")
        parsed = labels.parse_label(text, "benchmark")
        if setting.label is None:
            assert parsed.error and "unknown setting" in parsed.error, text
        else:
            assert parsed.error is None and parsed.key == setting.key, text


def test_every_file_key_is_the_schemas(tmp_path):
    path = tmp_path / "benchgate.yml"
    path.write_text("min-runs: 3\n")  # a run's own flag and input, not a key of the file
    with pytest.raises(InputError, match="unknown key"):
        config.read_config_file(path)
    path.write_text("max_resolution: 30%\n")
    with pytest.raises(InputError, match="did you mean 'max-resolution'"):
        config.read_config_file(path)
    path.write_text("max-resolution: 30%\nmin-effect: 3\n")
    settings = config.load_settings(path, {})
    assert (settings.max_resolution, settings.min_effect) == (30.0, 3.0)
    assert settings.policy().max_resolution == 30.0 and config.Settings().policy().max_resolution == 25.0


@pytest.mark.parametrize("command", ["analyze", "run", "report", "versions"])
@pytest.mark.parametrize("text", ["3%", "3", " 3 % "])
def test_a_value_means_the_same_in_every_command(command, text):
    parser = cli.build_parser(command)
    extra = {"analyze": ["x.csv"], "run": ["-o", "out"], "report": [], "versions": ["1.0.0", "2.0.0", "-o", "o"]}
    args = parser.parse_args([command, f"--min-effect={text}", *extra[command]])
    assert flags.settings_from_flags(args, command).min_effect == 3.0


def test_one_precedence_file_inputs_labels_with_sources():
    settings = config.resolve(
        file_values={"runs": 10, "min-effect": 5.0, "threshold": "**"},
        option_values={"runs": 20, "min-effect": 4.0},
        label_values={"runs": 60},
    )
    assert (settings.runs, settings.min_effect, settings.threshold) == (60, 4.0, "**")
    assert settings.sources == {"runs": "label", "min_effect": "option", "threshold": "file"}


def test_the_run_job_applies_the_same_precedence_to_authorizes_run_settings():
    # authorize resolved a file's runs and a maintainer's label; the run job's inputs go over the file's
    # value, never over the label's, whether run is the same job (mode all) or another (split jobs).
    authorized = config.resolve(file_values={"runs": 10, "cpuset": "2-3"}, label_values={"filter": ("tojson",)})
    carried = {**flags.run_settings(authorized), "sources": {"runs": "file", "cpuset": "file", "filter": "label"}}
    merged = action.carried_settings(json.dumps(carried), {"runs": "12", "filter": "other", "cpuset": "0-1"})
    assert (merged.runs, merged.filter, merged.cpuset) == (12, ("tojson",), "0-1")
    assert merged.source_of("filter") == "label" and merged.source_of("runs") == "option"
    with pytest.raises(InputError, match="not JSON"):
        action.carried_settings("{not json", {})


def test_raising_max_resolution_from_a_label_counts_only_from_writers():
    settings = config.Settings()
    assert labels.needs_trust("max-resolution", 30.0, settings) == "loosens the gate"
    assert labels.needs_trust("max-resolution", 20.0, settings) is None
    decision = labels.decide(
        ["benchmark:max-resolution=40%"], settings, actor_of=lambda label: "drive-by", can_write=lambda user: False
    )
    assert decision.values == {} and decision.outcomes[0].status == labels.IGNORED


def test_action_yml_runs_one_line_steps_and_keeps_no_policy():
    for step in _action()["runs"]["steps"]:
        script = step.get("run")
        if script is None:
            continue
        assert len(script.strip().splitlines()) <= 3, step["id"]
        # The trust policy keyed on the event name lives in benchgate.github.events, not in a script.
        assert "EVENT_NAME" not in script and "exit" not in script, step["id"]


def markdown_table() -> str:
    """docs/cli.md's settings table, generated from the schema (the test below checks the docs hold it)."""
    lines = [
        "| setting | default | file | flag on | input | label | a label loosens the gate by |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in schema.SETTINGS:
        cells = (
            f"`{s.key}`",
            "" if s.default in flags._UNSET else f"`{flags._shown(s.default)}`",
            "yes" if s.file else "",
            ", ".join(s.commands),
            f"`{s.input}`" if s.input else "",
            "" if s.label is None else f"`benchmark:{s.key}" + (f"={s.label}`" if s.label else "`"),
            s.loosens[1] if s.loosens else "",
        )
        lines.append(f"| {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def test_docs_cli_holds_the_generated_settings_table():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    start, end = "<!-- settings table: generated by tests/test_settings_schema.py markdown_table -->\n", "<!-- end -->"
    assert start in text, "docs/cli.md lost its settings table"
    table = text.split(start, 1)[1].split(end, 1)[0]
    assert table == markdown_table(), (
        "docs/cli.md's settings table is stale: paste tests/test_settings_schema.py's markdown_table() there"
    )
    # No command's own table repeats a setting's flag: the settings table is the one place.
    for line in text.splitlines():
        match = re.match(r"\| `--([a-z-]+)", line)
        assert not (match and match.group(1) in schema.BY_KEY), line
