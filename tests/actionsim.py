"""A small simulation of how the Actions runner executes a composite action's steps.

What action.yml still needs of it: each step's ``if:`` and ``env:`` expressions (the security boundary
and the step order, which stay YAML) and its one-line ``run:`` (``benchgate action STEP``, the logic
itself in Python and tested there).

It does what the runner does for ``runs.using: composite``: input defaults and
``with:`` values become the ``inputs`` context (no ``INPUT_*`` variables for
composite actions: scripts see only the ``env:`` each step declares), each
step's ``if:`` and ``env:`` expressions are evaluated, its ``run:`` script runs
with ``bash --noprofile --norc -eo pipefail``, with a fresh ``GITHUB_OUTPUT``
and ``GITHUB_STEP_SUMMARY`` per step, and the outputs it writes become
``steps.<id>.outputs``. After a failing step, only steps whose ``if:`` calls a
status function (``always()``, ``!cancelled()``, ``failure()``) still run; the
others are skipped (GitHub's implicit ``success() &&``).

Expressions: the subset action.yml uses: context paths (``inputs.min-effect``,
``steps.run.outputs.head-sha``, ``github.event.pull_request.head.sha``),
'string' literals, ``==``, ``!=``, ``&&``, ``||``, ``!``, parentheses and the status functions
``success()``, ``failure()``, ``always()``, ``cancelled()`` (nothing is ever cancelled here), with
GitHub's semantics (``||`` yields the first truthy operand, ``==`` on strings
ignores case, a missing property is null).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_TOKEN = re.compile(r"\s*(?:(\|\||&&|==|!=|!|\(|\))|'((?:[^']|'')*)'|([A-Za-z_][A-Za-z0-9_.\-]*))")
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")
_STATUS_CALL = re.compile(r"\b(?:success|failure|always|cancelled)\s*\(")
_EMBEDDED = re.compile(r"\$\{\{(.*?)\}\}", re.S)


class Expression:
    """Recursive-descent evaluator over one expression string."""

    def __init__(self, text: str, context: dict[str, Any]) -> None:
        self.tokens = self._tokenize(text)
        self.position = 0
        self.context = context

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        tokens, index = [], 0
        text = text.strip()
        while index < len(text):
            match = _TOKEN.match(text, index)
            if not match or match.end() == index:
                raise ValueError(f"cannot parse expression at {text[index:]!r}")
            operator, literal, path = match.groups()
            if operator:
                tokens.append(("op", operator))
            elif literal is not None:
                tokens.append(("str", literal.replace("''", "'")))
            else:
                tokens.append(("path", path))
            index = match.end()
        return tokens

    def evaluate(self) -> Any:
        value = self._or()
        if self.position != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.position]}")
        return value

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self, operator: str) -> bool:
        if self._peek() == ("op", operator):
            self.position += 1
            return True
        return False

    def _or(self) -> Any:
        value = self._and()
        while self._take("||"):
            other = self._and()
            value = value if truthy(value) else other
        return value

    def _and(self) -> Any:
        value = self._comparison()
        while self._take("&&"):
            other = self._comparison()
            value = other if truthy(value) else value
        return value

    def _comparison(self) -> Any:
        value = self._unary()
        for operator in ("==", "!="):
            if self._take(operator):
                other = self._unary()
                same = (
                    str(value if value is not None else "").lower() == str(other if other is not None else "").lower()
                )
                return same if operator == "==" else not same
        return value

    def _unary(self) -> Any:
        if self._take("!"):
            return not truthy(self._unary())
        if self._take("("):
            value = self._or()
            if not self._take(")"):
                raise ValueError("missing )")
            return value
        kind, text = self.tokens[self.position]
        self.position += 1
        if kind == "str":
            return text
        if text in STATUS_FUNCTIONS and self._take("("):
            if not self._take(")"):
                raise ValueError(f"{text}() takes no arguments")
            failed = bool(self.context.get("__job_failed"))
            return {"success": not failed, "failure": failed, "always": True, "cancelled": False}[text]
        if text in ("true", "false"):
            return text == "true"
        return self._lookup(text)

    def _lookup(self, path: str) -> Any:
        value: Any = self.context
        for part in path.split("."):
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value


def truthy(value: Any) -> bool:
    return value not in (None, "", False, 0)


def evaluate(text: str, context: dict[str, Any]) -> Any:
    return Expression(text, context).evaluate()


def substitute(text: Any, context: dict[str, Any]) -> str:
    """A string with every ``${{ expr }}`` replaced by its value (null -> empty)."""
    if not isinstance(text, str):
        return "" if text is None else str(text).lower() if isinstance(text, bool) else str(text)

    def value(match: re.Match[str]) -> str:
        result = evaluate(match.group(1), context)
        if result is None:
            return ""
        if isinstance(result, bool):
            return str(result).lower()
        return str(result)

    return _EMBEDDED.sub(value, text)


def parse_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT lines: ``name=value`` or ``name<<DELIMITER`` ... ``DELIMITER``."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            values[name] = "\n".join(lines[index + 1 : end])
            index = end + 1
        else:
            name, _, value = line.partition("=")
            values[name] = value
            index += 1
    return values


@dataclass
class StepResult:
    id: str
    name: str
    ran: bool
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionResult:
    steps: list[StepResult]
    outputs: dict[str, str]

    @property
    def failed(self) -> StepResult | None:
        return next((step for step in self.steps if step.ran and step.returncode != 0), None)

    def step(self, step_id: str) -> StepResult:
        return next(step for step in self.steps if step.id == step_id)


def run_action(
    action_path: Path,
    *,
    with_inputs: dict[str, str],
    github: dict[str, Any],
    runner_env: dict[str, str],
    workdir: Path,
    timeout: float = 300,
) -> ActionResult:
    """Run the composite action at ``action_path`` (its action.yml) like the runner would."""
    action = yaml.safe_load((action_path / "action.yml").read_text(encoding="utf-8"))
    declared = action.get("inputs") or {}
    unknown = set(with_inputs) - set(declared)
    if unknown:
        raise ValueError(f"inputs not declared in action.yml: {sorted(unknown)}")
    github = {**github, "action_path": str(action_path)}
    runner = {"temp": runner_env.get("RUNNER_TEMP", "")}
    context: dict[str, Any] = {"github": github, "steps": {}, "env": runner_env, "runner": runner}
    inputs = {}
    for name, spec in declared.items():
        inputs[name] = (
            with_inputs[name] if name in with_inputs else substitute((spec or {}).get("default", ""), context)
        )
    context["inputs"] = inputs
    results = []
    job_failed = False
    for index, step in enumerate(action["runs"]["steps"]):
        step_id = step.get("id", f"__step{index}")
        condition = step.get("if")
        if condition is not None:
            condition = condition.strip()
            if condition.startswith("${{") and condition.endswith("}}"):
                condition = condition[3:-2]
        context["__job_failed"] = job_failed
        run_it = condition is None or truthy(evaluate(condition, context))
        if job_failed and not (condition is not None and _STATUS_CALL.search(condition)):
            run_it = False  # GitHub's implicit success() && before every if:
        if not run_it:
            results.append(StepResult(step_id, step.get("name", ""), ran=False))
            context["steps"][step_id] = {"outputs": {}, "outcome": "skipped"}
            continue
        step_dir = workdir / f"step-{index}"
        step_dir.mkdir(parents=True, exist_ok=True)
        if "uses" in step:
            results.append(_uses_step(step_id, step, context, workdir))
            context["steps"][step_id] = {"outputs": {}, "outcome": "success"}
            continue
        output_file, summary_file = step_dir / "output", step_dir / "summary.md"
        output_file.touch()
        summary_file.touch()
        env = dict(runner_env)
        env.update({name: substitute(value, context) for name, value in (step.get("env") or {}).items()})
        env.update({"GITHUB_OUTPUT": str(output_file), "GITHUB_STEP_SUMMARY": str(summary_file)})
        script = step_dir / "script.sh"
        script.write_text(step["run"], encoding="utf-8")
        assert step.get("shell") == "bash", "every step of the action declares shell: bash"
        completed = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            env=env,
            cwd=runner_env.get("GITHUB_WORKSPACE", os.getcwd()),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        outputs = parse_outputs(output_file)
        result = StepResult(
            step_id,
            step.get("name", ""),
            True,
            completed.returncode,
            completed.stdout,
            completed.stderr,
            outputs,
            summary_file.read_text(encoding="utf-8"),
            env,
        )
        results.append(result)
        context["steps"][step_id] = {
            "outputs": outputs,
            "outcome": "success" if completed.returncode == 0 else "failure",
        }
        if completed.returncode != 0:
            job_failed = True
    outputs = {name: substitute(spec["value"], context) for name, spec in (action.get("outputs") or {}).items()}
    return ActionResult(results, outputs)


def _uses_step(step_id: str, step: dict, context: dict, workdir: Path) -> StepResult:
    """A step that uses another action: its ``with:`` values, evaluated; actions/upload-artifact is carried out.

    The upload copies ``path`` to ``workdir/artifacts/<name>`` (what GitHub would store), so tests can
    check what a run leaves behind. Any other action is recorded, not run.
    """
    inputs = {name: substitute(str(value), context) for name, value in (step.get("with") or {}).items()}
    if str(step["uses"]).startswith("actions/upload-artifact@"):
        source = Path(inputs["path"])
        target = workdir / "artifacts" / inputs["name"]
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        elif inputs.get("if-no-files-found", "warn") == "error":
            return StepResult(step_id, step.get("name", ""), True, 1, "", f"no files at {source}", {}, "", inputs)
    return StepResult(step_id, step.get("name", ""), True, 0, "", "", {}, "", inputs)
