"""The docs cannot drift from the CLI: every `benchgate` command line in README.md and docs/ parses.

Each shell block (```sh, ```bash, ```console) is read line by line (backslash continuations joined,
comments and `$ ` prompts dropped); every command that starts with `benchgate` (also after `&&`,
`;` or `|`) is split like a shell would and handed to benchgate's own argument parser. A line that
argparse refuses (an unknown option, a missing value, a bad choice) fails with its file and line.
Placeholders the docs use for values (`...`, `FILE`, `SHA`) are ordinary arguments to the parser.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from benchgate import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
_FENCE = re.compile(r"^```(\w*)\s*$")
_SHELL = {"sh", "bash", "shell", "console"}
_SEPARATORS = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")


def shell_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, logical line) of every shell code block in a markdown file."""
    found: list[tuple[int, str]] = []
    in_block, pending, start = False, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fence = _FENCE.match(line.strip())
        if fence:
            in_block = not in_block and fence.group(1) in _SHELL
            pending = ""
            continue
        if not in_block:
            continue
        text = line.strip().removeprefix("$ ")
        if not pending:
            start = number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        found.append((start, pending + text))
        pending = ""
    return found


def benchgate_commands(line: str) -> list[list[str]]:
    """The argv (after `benchgate`) of each benchgate command on a shell line."""
    line = re.sub(r"\s#.*$", "", line)  # a trailing comment
    line = re.sub(r"\$\((?:[^()]|\([^()]*\))*\)", "VALUE", line)  # $(command -v node) -> one word
    commands = []
    for part in _SEPARATORS.split(line):
        try:
            words = shlex.split(part)
        except ValueError as error:
            raise AssertionError(f"cannot split {part!r}: {error}") from None
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
            words = words[1:]  # VAR=value before the command
        if words and words[0] == "benchgate":
            commands.append(_without_redirections(words[1:]))
    return commands


def _without_redirections(words: list[str]) -> list[str]:
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in (">", "<", "2>", ">>"):
            skip = True  # the file name that follows
            continue
        if not word.startswith((">", "<", "2>")):
            out.append(word)
    return out


CASES = [(path, number, line) for path in DOCS for number, line in shell_lines(path) if "benchgate" in line]


def test_the_docs_have_command_lines_to_check():
    assert len([case for case in CASES if benchgate_commands(case[2])]) >= 10


@pytest.mark.parametrize(("path", "number", "line"), CASES, ids=[f"{p.name}:{n}" for p, n, _ in CASES])
def test_every_documented_command_line_parses(path, number, line, capsys):
    for argv in benchgate_commands(line):
        if argv in (["--version"], ["--help"], ["-h"]):
            continue
        parser = cli.build_parser(only=argv[0] if argv else None)
        try:
            parser.parse_args(argv)
        except SystemExit as stop:
            error = capsys.readouterr().err.strip().splitlines()[-1:] or ["?"]
            pytest.fail(
                f"{path.name}:{number}: `benchgate {shlex.join(argv)}` does not parse ({stop.code}): {error[0]}"
            )


def test_a_drifted_command_line_is_caught(capsys):
    (argv,) = benchgate_commands("benchgate run url --no-such-option 3 --output out  # a comment")
    with pytest.raises(SystemExit):
        cli.build_parser(only="run").parse_args(argv)


@pytest.mark.parametrize("command", cli.COMMANDS)
def test_the_cli_reference_names_every_option(command):
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = reference.split(f"## benchgate {command}", 1)[1].split("\n## ", 1)[0]
    parser = cli.build_parser(only=command)
    sub = next(action for action in parser._actions if hasattr(action, "choices") and action.choices)
    options = {
        option
        for action in sub.choices[command]._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }
    missing = sorted(option for option in options if f"`{option}" not in section and f", `{option}" not in section)
    assert missing == [], f"docs/cli.md's {command} section does not document {missing}"


def test_the_action_page_names_every_input_and_output():
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    page = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    inputs_table = page.split("## Inputs", 1)[1].split("\n## ", 1)[0]
    outputs_table = page.split("## Outputs", 1)[1].split("\n## ", 1)[0]
    assert [name for name in action["inputs"] if f"`{name}`" not in inputs_table] == []
    assert [name for name in action["outputs"] if f"`{name}`" not in outputs_table] == []


def workflow_blocks(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every ```yaml block in a markdown file that is a workflow (has jobs:)."""
    blocks, current, start = [], None, 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if current is None and line.strip() == "```yaml":
            current, start = [], number
        elif current is not None and line.strip() == "```":
            text = "\n".join(current)
            if re.search(r"^jobs:", text, re.M):
                blocks.append((start, text))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


WORKFLOW_CASES = [(path, number, text) for path in DOCS for number, text in workflow_blocks(path)]


def test_the_readme_shows_a_workflow():
    assert any(path.name == "README.md" for path, _, _ in WORKFLOW_CASES)


@pytest.mark.parametrize(
    ("path", "number", "text"), WORKFLOW_CASES, ids=[f"{p.name}:{n}" for p, n, _ in WORKFLOW_CASES]
)
def test_documented_workflows_use_the_action_as_declared(path, number, text):
    import yaml

    inputs = set(yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"])
    workflow = yaml.safe_load(text)
    for name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            uses = str(step.get("uses", ""))
            if uses.startswith("benchgate/benchgate@"):
                unknown = set(step.get("with", {})) - inputs
                assert not unknown, f"{path.name}:{number}: job {name} gives undeclared inputs {sorted(unknown)}"
                assert step["with"].get("mode"), f"{path.name}:{number}: job {name} names no mode"
            elif uses:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses), (
                    f"{path.name}:{number}: {uses} is not pinned"
                )
