"""Which benchmark categories a change touches: ``git diff`` in the Node checkout, mapped by a YAML file
(``benchgate/data/changed-files.yml`` or ``--changed-map``)."""

import re
import subprocess
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

import yaml

from benchgate.errors import InputError


@dataclass(frozen=True)
class Rule:
    patterns: tuple[re.Pattern[str], ...]
    categories: tuple[str, ...]


@dataclass(frozen=True)
class Mapping:
    """A parsed changed-files.yml."""

    rules: tuple[Rule, ...]
    ignore: tuple[re.Pattern[str], ...]
    default: tuple[str, ...]
    source: str


@dataclass
class ChangedCategories:
    """The categories a change selects, and how each changed file was placed."""

    categories: list[str] = field(default_factory=list)
    changed_files: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    fallback: list[str] = field(default_factory=list)
    map_source: str = ""

    def record(self) -> dict:
        fields = asdict(self)
        return {"map": fields.pop("map_source"), **fields}

    def notes(self) -> list[str]:
        """Lines for the user: what fell back to the default, and what selects nothing."""
        lines = []
        if self.unmapped:
            lines.append(
                f"{len(self.unmapped)} changed file(s) map to no benchmark category, so the default "
                f"{self.fallback or 'nothing'} runs for them: {', '.join(self.unmapped)}"
            )
        if not self.categories:
            lines.append("the change touches no benchmarked code: nothing to run")
        return lines


# A glob's tokens: ``**/`` and ``**`` cross directories, ``*`` and ``?`` stay in one, ``{name}`` captures a part.
_GLOB_TOKENS = re.compile(r"\*\*/|\*\*|\*|\?|\{(\w+)\}|.", re.DOTALL)
_GLOB_REGEX = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A path glob: ``*`` and ``?`` stay in one directory, ``**`` crosses them, ``{name}`` captures one part."""
    out = []
    for token in _GLOB_TOKENS.finditer(pattern):
        text, name = token.group(0), token.group(1)
        out.append(f"(?P<{name}>[^/]+)" if name else _GLOB_REGEX.get(text, re.escape(text)))
    return re.compile("".join(out) + r"\Z")


def _strings(value, where: str, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise InputError(f"{what} must be a list of non-empty strings", where=where)
    return tuple(value)


def load_mapping(path: Path | None = None) -> Mapping:
    """Parse a changed-files YAML (the shipped one when ``path`` is None); InputError naming the problem."""
    if path is None:
        text = resources.files("benchgate").joinpath("data/changed-files.yml").read_text(encoding="utf-8")
        return parse_mapping(text, "benchgate/data/changed-files.yml")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read the changed-files map: {error.strerror}", where=str(path)) from None
    return parse_mapping(text, str(path))


def parse_mapping(text: str, where: str) -> Mapping:
    """Parse the text of a changed-files map (YAML, or JSON which is YAML); ``where`` names it in errors."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InputError(f"not valid YAML: {str(error).splitlines()[0]}", where=where) from None
    if not isinstance(data, dict):
        raise InputError("expected a mapping with 'rules', 'ignore' and 'default'", where=where)
    rules = []
    for index, item in enumerate(data.get("rules") or []):
        if not isinstance(item, dict):
            raise InputError(f"rules[{index}] must be a mapping with 'paths' and 'categories'", where=where)
        paths = _strings(item.get("paths"), where, f"rules[{index}].paths")
        categories = _strings(item.get("categories"), where, f"rules[{index}].categories")
        if not paths:
            raise InputError(f"rules[{index}] has no paths", where=where)
        rules.append(Rule(tuple(glob_to_regex(pattern) for pattern in paths), categories))
    return Mapping(
        rules=tuple(rules),
        ignore=tuple(glob_to_regex(pattern) for pattern in _strings(data.get("ignore"), where, "ignore")),
        default=_strings(data.get("default"), where, "default"),
        source=where,
    )


def changed_files(repo: Path, ref: str) -> list[str]:
    """Files changed from the merge base of ``ref`` to HEAD, uncommitted and untracked ones included."""

    def git(*args: str) -> str:
        try:
            completed = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120)
        except OSError as error:
            raise InputError(f"cannot run git: {error}") from None
        if completed.returncode != 0:
            message = (completed.stderr.strip().splitlines() or ["git failed"])[-1]
            raise InputError(f"--changed-from {ref}: git {' '.join(args)}: {message}", where=str(repo))
        return completed.stdout

    names = git("diff", "--name-only", "--no-renames", f"{ref}...HEAD").splitlines()
    # The working tree is what gets measured: uncommitted and new (untracked) files count too.
    names += git("diff", "--name-only", "--no-renames", "HEAD").splitlines()
    names += git("ls-files", "--others", "--exclude-standard").splitlines()
    return sorted(set(names) - {""})


def _categories_of(path: str, rule: Rule) -> list[str] | None:
    for pattern in rule.patterns:
        match = pattern.match(path)
        if match:
            captured = match.groupdict()
            return [category.format(**captured) if "{" in category else category for category in rule.categories]
    return None


def map_changes(
    files: list[str], mapping: Mapping, available: set[str] | None, default: tuple[str, ...] | None = None
) -> ChangedCategories:
    """Place each changed file: ignored, mapped to categories in ``available`` (None: any), or unmapped."""

    def exists(name: str) -> bool:
        return available is None or name in available

    fallback = [name for name in (mapping.default if default is None else default) if exists(name)]
    result = ChangedCategories(changed_files=list(files), fallback=fallback, map_source=mapping.source)
    selected: dict[str, None] = {}
    for path in files:
        if any(pattern.match(path) for pattern in mapping.ignore):
            result.ignored.append(path)
            continue
        found = [name for rule in mapping.rules for name in (_categories_of(path, rule) or []) if exists(name)]
        if found:
            selected.update(dict.fromkeys(found))
        else:
            result.unmapped.append(path)
    if result.unmapped:
        selected.update(dict.fromkeys(fallback))
    result.categories = list(selected)
    return result
