"""Two figures for the package layout: the longest import chain, and how often `benchgate run` doubles back.

    python tests/tools/layering_metrics.py [--trace-steps 74]

1. **Longest import chain**: the longest path of distinct benchgate modules, each importing the next
   (module-level and function-local imports alike), read from the source with ``ast``.
2. **Run path**: ``benchgate run`` on one file of the example suite (2 runs, --no-analyze) is traced with
   ``sys.setprofile``; every call into a benchgate function names its module, consecutive calls in the
   same module are one step, and a *return* is a step into a module the path had already left before;
   counted apart are those into a module that is not on the call stack (not a caller resuming its work).
   Printed for the part until the first benchmark process starts (options, plan, binaries, selection)
   and for the whole run, with the number of *upward calls*: calls from a module of a lower pipeline
   layer into one of a higher layer (``LAYERS``; modules of the flat layout before the subpackages are
   placed by ``FLAT_LAYOUT``). Import-time code (module and class bodies) and the packages' lazy
   exports are not counted.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "benchgate"
# The pipeline's layers, bottom first: a module may import only from its own layer or a lower one.
LAYERS = (
    "errors",
    "results",
    "sandbox",
    "stats",
    "history",
    "build",
    "run",
    "config",
    "report",
    "github",
    "bisect",
    "commands",
    "cli",
)
RANK = {name: index for index, name in enumerate(LAYERS)}
# Where each module of the flat layout (before the subpackages) belongs, to count its upward calls.
FLAT_LAYOUT = {
    "jsformat": "results",
    "results": "results",
    "runrecord": "results",
    "stats": "stats",
    "gate": "stats",
    "outcome": "stats",
    "build": "build",
    "buildcache": "build",
    "buildsettings": "build",
    "buildsteps": "build",
    "compilercache": "build",
    "worktrees": "build",
    "releases": "build",
    "suite": "run",
    "changes": "run",
    "runplan": "run",
    "runner": "run",
    "session": "run",
    "localrun": "run",
    "system": "run",
    "progress": "run",
    "config": "config",
    "labels": "config",
    "report": "report",
    "bars": "report",
    "comment": "report",
    "github": "github",
    "actions_env": "github",
    "errors": "errors",
    "_lazy": "errors",
    "cli": "cli",
    "__main__": "cli",
}


def layer_of(module: str) -> str:
    """The pipeline layer of a benchgate module, in the subpackage layout or the flat one before it."""
    parts = module.split(".")[1:]
    if not parts:
        return "errors"  # the package itself holds only __version__
    if parts[0] == "commands":
        return "commands"
    if parts[0] in LAYERS and parts[0] not in FLAT_LAYOUT:
        return parts[0]
    if len(parts) > 1 and parts[0] in LAYERS:
        return parts[0]  # a subpackage that kept a flat module's name (benchgate.stats.welch)
    return FLAT_LAYOUT.get(parts[0], parts[0])


def module_files() -> dict[str, Path]:
    """Every benchgate module name -> its source file."""
    modules = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The benchgate modules ``name`` imports anywhere in its source (``from X import Y`` counts X.Y when a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(base)  # names defined in the module (or package) ``base`` itself
    return {module for module in found if module in known and module != name}


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {name: imported_modules(name, path, known) for name, path in files.items()}


def upward_imports(graph: dict[str, set[str]], *, strict: bool = False) -> list[tuple[str, str]]:
    """Every import of a module in a higher layer than the importer's, as (importer, imported), sorted.

    A module in no layer counts as the lowest (old layouts may hold modules ``FLAT_LAYOUT`` does not place);
    ``strict``: it is a KeyError instead (the layout test: every module must have a layer).
    """

    def rank(module: str) -> int:
        return RANK[layer_of(module)] if strict else RANK.get(layer_of(module), 0)

    pairs = ((source, target) for source, targets in graph.items() for target in targets)
    return sorted((source, target) for source, target in pairs if rank(target) > rank(source))


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest simple path (exact search; the graph is small)."""

    best: list[str] = []

    def walk(path: list[str], seen: set[str]) -> None:
        nonlocal best
        if len(path) > len(best):
            best = list(path)
        for following in sorted(graph[path[-1]]):
            if following not in seen:
                seen.add(following)
                path.append(following)
                walk(path, seen)
                path.pop()
                seen.discard(following)

    for start in sorted(graph):
        walk([start], {start})
    return best


def trace_run(stop_at_first_process: bool) -> tuple[list[str], int, int]:
    """Module steps of one small `benchgate run`, and its upward calls (see the module docstring)."""
    from benchgate import cli

    steps: list[str] = []
    upward = 0
    jumps = 0  # steps into a module visited before that is not on the call stack (not a return to a caller)
    visited: set[str] = set()

    class FirstProcess(Exception):
        pass

    def profiler(frame, event, arg):
        nonlocal upward, jumps
        if event != "call" or not frame.f_code.co_flags & inspect.CO_NEWLOCALS:
            return  # module and class bodies run at import time: not steps of the run
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(PACKAGE) or module == "benchgate._lazy" or frame.f_code.co_name == "__getattr__":
            return  # a package's lazy export is how a name is found, not a step of the pipeline
        if stop_at_first_process and frame.f_code.co_name == "run" and "Benchmark" in frame.f_code.co_qualname:
            raise FirstProcess
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if caller.startswith(PACKAGE) and RANK.get(layer_of(module), 0) > RANK.get(layer_of(caller), 0):
            upward += 1
        if not steps or steps[-1] != module:
            steps.append(module)
            stack, outer = set(), frame.f_back
            while outer is not None:
                stack.add(outer.f_globals.get("__name__", ""))
                outer = outer.f_back
            if module in visited and module not in stack:
                jumps += 1
            visited.add(module)

    root = Path(__file__).resolve().parents[2]
    output = Path(tempfile.mkdtemp(prefix="layering-")) / "out"
    node = shutil.which("node")
    argv = [
        "run",
        "json",
        "--benchmark-dir",
        str(root / "examples/suite/benchmark"),
        "--base-binary",
        node,
        "--head-binary",
        node,
        "--runs",
        "2",
        "--set",
        "n=100",
        "--no-analyze",
        "--no-progress",
        "--output",
        str(output),
    ]
    sys.setprofile(profiler)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli.main(argv)
    except FirstProcess:
        pass
    finally:
        sys.setprofile(None)
        shutil.rmtree(output.parent, ignore_errors=True)
    return steps, upward, jumps


def returns(steps: list[str]) -> int:
    """Steps into a module the path had already left earlier."""
    left: set[str] = set()
    count = 0
    for previous, current in zip(steps, steps[1:], strict=False):
        left.add(previous)
        if current in left:
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace-steps", type=int, default=74, help="also count returns in the first N steps")
    parser.add_argument("--show", action="store_true", help="print the traced module sequence")
    parser.add_argument("--trace", choices=("first-process", "whole"), help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.trace:  # one trace in a fresh interpreter, so imports run (and are skipped) the same way
        steps, upward, jumps = trace_run(arguments.trace == "first-process")
        print(json.dumps({"steps": steps, "upward": upward, "jumps": jumps}))
        return
    graph = import_graph()
    chain = longest_chain(graph)
    print(f"modules: {len(graph)}")
    print(f"longest import chain: {len(chain)} modules: {' -> '.join(chain)}")
    upward = [f"{source} -> {target}" for source, target in upward_imports(graph)]
    print(f"imports up the pipeline's layers: {len(upward)}: {', '.join(upward)}")
    for label, trace in (("until the first benchmark process", "first-process"), ("whole run", "whole")):
        completed = subprocess.run(
            [sys.executable, __file__, "--trace", trace], capture_output=True, text=True, check=True
        )
        traced = json.loads(completed.stdout)
        steps = traced["steps"]
        head = steps[: arguments.trace_steps]
        print(
            f"run path, {label}: {len(steps)} steps over {len(set(steps))} modules, {returns(steps)} returns to a "
            f"module already left ({returns(head)} in the first {len(head)} steps; {traced['jumps']} of them not a "
            f"return to a caller), {traced['upward']} upward calls"
        )
        if arguments.show:
            print("  " + " -> ".join(name.removeprefix("benchgate.") for name in steps[: arguments.trace_steps]))


if __name__ == "__main__":
    main()
