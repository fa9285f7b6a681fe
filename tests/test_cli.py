"""The command line's last line of defence: one line and a distinct status, never a traceback."""

import argparse
from pathlib import Path

import pytest

from benchgate import cli
from benchgate.errors import EXIT_BAD_INPUT, EXIT_INTERNAL_ERROR


def _parser_with_handler(handler):
    def build_parser(only=None):
        parser = argparse.ArgumentParser(prog="benchgate")
        parser.set_defaults(handler=handler)
        return parser

    return build_parser


def test_os_error_on_a_user_path_is_one_line_bad_input(monkeypatch, capsys):
    def handler(args):
        Path("/nonexistent-dir/x.json").write_text("{}")

    monkeypatch.setattr(cli, "build_parser", _parser_with_handler(handler))
    assert cli.main([]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err == "benchgate: error: /nonexistent-dir/x.json: No such file or directory\n"


def test_unexpected_exception_is_one_line_internal_error(monkeypatch, capsys):
    def handler(args):
        raise KeyError("binaries")

    monkeypatch.setattr(cli, "build_parser", _parser_with_handler(handler))
    monkeypatch.delenv("BENCHGATE_DEBUG", raising=False)
    assert cli.main([]) == EXIT_INTERNAL_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error: KeyError: 'binaries'" in err


@pytest.mark.parametrize("argv", [["analyze", "--no-such-flag", "x.csv"], ["nosuchcommand"]])
def test_usage_errors_exit_2_on_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == EXIT_BAD_INPUT
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("command", ["analyze", "run", "report"])
def test_a_bad_setting_value_is_the_same_one_line_error_in_every_command(command, capsys):
    # The value is the schema's, parsed after argparse: the same message as from a file or an input.
    assert cli.main([command, "--threshold", "****", "x.csv"] + (["-o", "out"] if command == "run" else [])) == 2
    err = capsys.readouterr().err
    assert err == "benchgate: error: option --threshold: key 'threshold': must be one of *, **, ***, off " + (
        "(quote the stars in YAML), not '****'\n"
    )
