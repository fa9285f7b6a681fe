"""Configuration: precedence (defaults < file < options < labels) and one-line validation errors."""

from __future__ import annotations

import json
import re

import pytest

from benchgate import config
from benchgate.cli import main
from benchgate.errors import InputError
from benchgate.stats.gate import GateRule


def write(tmp_path, text):
    path = tmp_path / "benchgate.yml"
    path.write_text(text)
    return path


def test_defaults_without_file(tmp_path):
    settings = config.load_settings(tmp_path / "absent.yml", {})
    assert (settings.threshold, settings.correction, settings.min_effect, settings.runs) == ("***", "holm", 0.0, "auto")
    assert settings.label_prefix == "benchmark"
    assert settings.source_of("threshold") == "default"


def test_precedence_file_then_options_then_labels(tmp_path):
    path = write(
        tmp_path,
        "threshold: '**'\nmin-effect: 2%\nruns: 40\ncategories: [buffers, url]\nlabel-prefix: perf\n"
        "rules:\n  - match: 'misc/*.js'\n    ignore: true\n  - match: 'buffers/buffer-compare.js'\n"
        "    min-effect: 5\n    threshold: '*'\n",
    )
    settings = config.load_settings(path, {"runs": "50", "threshold": "", "categories": None})
    assert settings.threshold == "**" and settings.source_of("threshold") == "file"
    assert settings.runs == 50 and settings.source_of("runs") == "option"
    assert settings.min_effect == 2.0 and settings.categories == ("buffers", "url")
    assert settings.label_prefix == "perf"
    assert settings.rules == (
        GateRule("misc/*.js", None, None, True),
        GateRule("buffers/buffer-compare.js", "*", 5.0, False),
    )
    labelled = config.resolve(base=settings, label_values={"runs": 60, "threshold": "off"})
    assert labelled.runs == 60 and labelled.source_of("runs") == "label"
    assert labelled.threshold == "off" and labelled.policy().threshold == "off"
    assert labelled.min_effect == 2.0 and labelled.source_of("min_effect") == "file"
    with pytest.raises(AttributeError):
        labelled.runs = 3  # frozen


def test_unquoted_off_in_yaml_means_off(tmp_path):
    assert config.load_settings(write(tmp_path, "threshold: off\n"), {}).threshold == "off"


def test_options_accept_comma_lists_and_percent():
    values = config.parse_options({"categories": "url, buffers", "min-effect": "3%", "set": "n=10\ntype=a,b"})
    assert values == {"categories": ("url", "buffers"), "min-effect": 3.0, "set": ("n=10", "type=a,b")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("threshold: '****'\n", "key 'threshold': must be one of *, **, ***, off"),
        ("threshold: ***\n", "line 1: not valid YAML"),
        ("runs: 1\n", "key 'runs': must be between 2 and 1000"),
        ("runs: many\n", "key 'runs': must be a whole number of runs"),
        ("min-effect: -3\n", "key 'min-effect': must be between 0 and 1000 percent"),
        ("min_effect: 3\n", "key 'min_effect': unknown key (did you mean 'min-effect'?)"),
        ("colour: red\n", "key 'colour': unknown key; known keys:"),
        ("correction: bonferroni\n", "key 'correction': must be one of holm, none"),
        ("rules:\n  - threshold: '*'\n", "key 'rules[0]': missing 'match'"),
        ("rules:\n  - match: 'a/*'\n    speed: 3\n", "key 'rules[0].speed': unknown key"),
        ("rules:\n  - match: 'a/*'\n", "key 'rules[0]': a rule needs threshold, min-effect, max-sigma or ignore"),
        ("categories: ['url; rm -rf /']\n", "key 'categories': 'url; rm -rf /' is not a valid benchmark category"),
        ("build:\n  jobs: 0\n", "key 'build': jobs must be a positive integer"),
        ("build:\n  colour: red\n", "key 'build': unknown build setting(s) colour"),
        ("accept-regression: true\n", "key 'accept-regression': can only be set by a PR label"),
        ("- a\n- b\n", "the configuration must be a YAML mapping"),
        ("shard: 5/4\n", "key 'shard': must be I/N with 1 <= I <= N"),
        ("changed-files:\n  rules: [{categories: [fs]}]\n", "key 'changed-files': rules[0] has no paths"),
    ],
)
def test_invalid_file_names_file_key_and_reason(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        config.load_settings(path, {})
    message = caught.value.one_line()
    assert message.startswith(f"{path}: ")
    assert expected in message
    assert "\n" not in message


def test_invalid_option_is_named():
    with pytest.raises(InputError, match=r"option --threshold: key 'threshold'"):
        config.parse_options({"threshold": "4"})
    with pytest.raises(InputError, match="can only be set in the configuration file"):
        config.parse_options({"rules": "x"})


def test_missing_required_file(tmp_path):
    with pytest.raises(InputError, match="configuration file not found"):
        config.load_settings(tmp_path / "nope.yml", {}, config_required=True)


def test_report_command_exits_2_on_bad_config(tmp_path, capsys, repo_root):
    path = write(tmp_path, "runs: 0\n")
    status = main(["report", str(repo_root / "examples" / "compare-sample.csv"), "--config", str(path), "--dry-run"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and str(path) in err and "'runs'" in err


def test_example_config_is_valid(repo_root):
    settings = config.load_settings(repo_root / "examples" / "benchgate.yml", {}, config_required=True)
    assert settings.rules and settings.label_prefix == "benchmark"
    assert json.loads(settings.changed_files)["default"] == ["misc"]


def test_unchanged_confidence_and_the_noise_budget(tmp_path):
    path = write(
        tmp_path,
        "unchanged-confidence: 97.5%\nnoisy: {max-sigma: 8%}\nrules:\n  - match: 'http/*'\n    max-sigma: 20\n",
    )
    settings = config.load_settings(path, {})
    policy = settings.policy()
    assert (policy.unchanged_confidence, policy.noisy_max_sigma) == (97.5, 8.0)
    assert policy.rules[0].max_sigma == 20.0
    assert config.load_settings(path, {"unchanged-confidence": "99"}).policy().unchanged_confidence == 99.0
    for text, reason in (
        ("noisy: 8%\n", "key 'noisy': must be strict or a mapping with max-sigma"),
        ("noisy: {max-sigma: 0}\n", "key 'noisy.max-sigma': must be a percentage above 0"),
        ("unchanged-confidence: 40\n", "key 'unchanged-confidence': must be a confidence from 50 to 99.999 percent"),
    ):
        with pytest.raises(InputError, match=re.escape(reason)):
            config.load_settings(write(tmp_path, text), {})
    with pytest.raises(InputError, match="can only be set in the configuration file"):
        config.load_settings(None, {"noisy": "8%"})
    # noisy: strict: every row gated at its target (no coarser gate up to max-resolution, no budget).
    assert config.load_settings(None, {}).policy().max_resolution == 25.0
    strict = config.load_settings(write(tmp_path, "noisy: strict\nmax-resolution: 30%\n"), {}).policy()
    assert (strict.max_resolution, strict.noisy_max_sigma) == (None, None)
