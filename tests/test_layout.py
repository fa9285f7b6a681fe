"""The package layout follows the pipeline: imports only go down its layers, modules stay small.

Layers, bottom first (``tools.layering_metrics.LAYERS``): errors, results, sandbox, stats, history, build,
run, config, report, github, bisect, commands, cli. A module may import its own subpackage or a lower layer; an
import up the pipeline (the runner reaching for the report, the statistics for the configuration)
fails here, and so does a cycle between subpackages.
"""

from __future__ import annotations

import ast
import importlib
from collections import Counter
from pathlib import Path

import pytest
from tools.layering_metrics import RANK, SRC, import_graph, layer_of, module_files, upward_imports

# "Modules of about 400 lines, split by idea": 450 is the ceiling past which a module must be split.
MAX_MODULE_LINES = 450
MAX_SRC_LINES = 13_500  # issue 20: src at most 13,500 lines (aim: 12,000)
MAX_README_CHARACTERS = 12_000  # the README introduces; docs/ holds the rest
ROOT = SRC.parent


def labelled_upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module in a higher layer than the importer's, as "importer (layer) -> imported (layer)"."""
    pairs = upward_imports(graph, strict=True)
    return [f"{source} ({layer_of(source)}) -> {target} ({layer_of(target)})" for source, target in pairs]


def subpackage_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Cycles in the graph of layers (an edge when any module of one imports any module of another)."""
    edges: dict[str, set[str]] = {}
    for source, targets in graph.items():
        for target in targets:
            if layer_of(source) != layer_of(target):
                edges.setdefault(layer_of(source), set()).add(layer_of(target))
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for following in sorted(edges.get(node, ())):
            if state.get(following) == "open":
                cycles.append(path[path.index(following) :] + [following] if following in path else [node, following])
            elif following not in state:
                visit(following, [*path, following])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


def test_every_module_belongs_to_a_layer():
    unplaced = [name for name in module_files() if layer_of(name) not in RANK]
    assert unplaced == []


def test_imports_only_go_down_the_pipeline():
    assert labelled_upward_imports(import_graph()) == []


def test_no_cycle_between_subpackages():
    assert subpackage_cycles(import_graph()) == []


def test_the_checks_catch_an_upward_import_and_a_cycle():
    graph = {
        "benchgate.run.session": {"benchgate.report.comment", "benchgate.results.csvfile"},
        "benchgate.report.comment": {"benchgate.run.session"},
        "benchgate.results.csvfile": set(),
    }
    assert labelled_upward_imports(graph) == ["benchgate.run.session (run) -> benchgate.report.comment (report)"]
    assert subpackage_cycles(graph) == [["report", "run", "report"]]


@pytest.mark.parametrize("name", sorted(module_files()))
def test_modules_fit_in_ones_head(name):
    lines = module_files()[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines; split it"


def _lines(path: Path) -> int:
    return path.read_text(encoding="utf-8").count("\n")


def test_src_stays_within_its_line_budget():
    total = sum(_lines(path) for path in SRC.rglob("*.py"))
    assert total <= MAX_SRC_LINES, f"src has {total} lines"


def test_no_two_modules_share_a_file_name():
    names = Counter(path.name for path in (SRC / "benchgate").rglob("*.py") if path.name != "__init__.py")
    shared = {name for name, count in names.items() if count > 1}
    assert shared == set(), "two modules with one name: name each for what it holds"


def test_no_formatter_is_switched_off():
    markers = ("# fmt: " + "skip", "# fmt: " + "off")  # spelled apart, so this file does not hold them
    cramped = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in (SRC, ROOT / "tests")
        for path in sorted(folder.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if any(marker in line for marker in markers)
    ]
    assert cramped == []


def test_the_readme_stays_an_introduction():
    length = len((ROOT / "README.md").read_text(encoding="utf-8"))
    assert length <= MAX_README_CHARACTERS, f"README.md has {length} characters: move the details to docs/"


SUBPACKAGES = sorted(path.name for path in (SRC / "benchgate").iterdir() if (path / "__init__.py").is_file())


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_each_subpackage_says_what_it_owns_and_exports_resolve(package):
    init = SRC / "benchgate" / package / "__init__.py"
    assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{init} needs a docstring"
    module = importlib.import_module(f"benchgate.{package}")
    for name in getattr(module, "__all__", []):
        assert getattr(module, name) is not None, f"benchgate.{package}.{name}"


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_no_name_is_exported_by_two_modules_of_a_package(package):
    modules = getattr(importlib.import_module(f"benchgate.{package}"), "_MODULES", {})
    names = [name for exported in modules.values() for name in exported]
    assert sorted({name for name in names if names.count(name) > 1}) == []


def test_public_entry_points_keep_working():
    from benchgate.build import build_ref, merge_base
    from benchgate.cli import main

    assert callable(build_ref) and callable(merge_base) and callable(main)
    assert Path(importlib.import_module("benchgate.build").__file__).parent.name == "build"
