"""A small Node-like git repository for build tests, created by the tests (real git, real make, real cc).

Its ``configure`` accepts a few of Node's flags (and rejects unknown ones like Node's does),
its ``Makefile`` compiles ``src/node_main.c`` with ``$(CC)`` into ``out/Release/node``: a
launcher that execs the installed ``node``, so the built "node" runs real JavaScript.
``--nodelike-info`` makes it print its version and configure flags instead.

Environment knobs read by the build:
- ``NODELIKE_BUILD_MARKER``: file that configure and make append one line to each time they
  run (proves whether a build command ran at all);
- ``NODELIKE_BUILD_DELAY``: seconds make sleeps before linking (for concurrency tests).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

CONFIGURE = """#!/bin/sh
# Node-like configure for benchgate's tests: a few of Node's flags, unknown ones rejected.
set -e
flags=""
for arg in "$@"; do
  case "$arg" in
    --ninja|--debug|--without-intl|--with-intl=*|--fully-static|--openssl-no-asm|--shared|--enable-lto)
      flags="$flags $arg" ;;
    *) echo "configure: error: no such option: $arg" >&2; exit 2 ;;
  esac
done
if [ -n "$NODELIKE_BUILD_MARKER" ]; then echo "configure $(git rev-parse HEAD)$flags" >> "$NODELIKE_BUILD_MARKER"; fi
node_path=$(command -v node) || { echo "configure: error: node not found on PATH" >&2; exit 1; }
printf 'CONFIG_FLAGS :=%s\\nREAL_NODE := %s\\n' "$flags" "$node_path" > config.mk
echo "configure: flags:$flags"
"""

MAKEFILE = """-include config.mk
OUT := out/Release

all: $(OUT)/node

config.mk:
\t@echo "Makefile: run ./configure first" >&2; exit 1

$(OUT)/obj/node_main.o: src/node_main.c src/node_version.h config.mk
\t@if [ -n "$$NODELIKE_BUILD_MARKER" ]; then echo "make $$(git rev-parse HEAD)" >> "$$NODELIKE_BUILD_MARKER"; fi
\tmkdir -p $(OUT)/obj
\t$(CC) -O2 -Isrc -DNODE_PATH='"$(REAL_NODE)"' -DCONFIG_FLAGS='"$(CONFIG_FLAGS)"' -c src/node_main.c -o $@

$(OUT)/node: $(OUT)/obj/node_main.o
\t@if [ -n "$$NODELIKE_BUILD_DELAY" ]; then sleep "$$NODELIKE_BUILD_DELAY"; fi
\t$(CC) $< -o $@

.PHONY: all
"""

NODE_MAIN = """#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "node_version.h"

/* The fixture's "node": reports its build, or runs the installed node with the same arguments. */
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--nodelike-info") == 0) {
    printf("nodelike %s flags=[%s]\\n", NODELIKE_VERSION, CONFIG_FLAGS);
    return 0;
  }
  argv[0] = NODE_PATH;
  execv(NODE_PATH, argv);
  perror("nodelike: execv " NODE_PATH);
  return 127;
}
"""

BROKEN_NODE_MAIN = NODE_MAIN.replace("int main(int argc, char **argv) {", "int main(int argc, char **argv) { oops(")


TESTS = Path(__file__).resolve().parent
EXAMPLE_HARNESS = TESTS.parent / "examples" / "suite" / "benchmark" / "common.js"
FIXTURE_BENCHMARKS = TESTS / "fixtures" / "bench" / "benchmark"


def example_benchmark_files() -> dict[str, str]:
    """A checkout's benchmark/ with the example harness, its tracer and calc/add.js: path -> text.

    Copies, not a require() of this checkout: the sandboxed processes may not see where the tests live.
    """
    return {
        "benchmark/common.js": EXAMPLE_HARNESS.read_text(),
        "benchmark/_trace.js": (FIXTURE_BENCHMARKS / "_trace.js").read_text(),
        "benchmark/calc/add.js": (FIXTURE_BENCHMARKS / "calc" / "add.js").read_text(),
    }


def version_header(version: str) -> str:
    return f'#define NODELIKE_VERSION "{version}"\n'


@dataclass
class NodeLikeRepo:
    """The fixture repository and the commits it holds, by name."""

    path: Path
    commits: dict[str, str] = field(default_factory=dict)


def git(repo: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", "-c", "user.name=benchgate tests", "-c", "user.email=tests@benchgate.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return completed.stdout.strip()


def _write(repo: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if name == "configure":
            os.chmod(path, 0o755)


def _commit(repo: Path, message: str, files: Mapping[str, str]) -> str:
    _write(repo, files)
    git(repo, "add", "--", *files)
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_node_like_repo(path: Path, *, extra_files: Mapping[str, str] | None = None) -> NodeLikeRepo:
    """Create the fixture repository in ``path`` (commits v1, v2, docs on main; ``feature``; ``broken``).

    - ``v1``: version 0.1.0 (tag ``v0.1.0``); ``v2``: version 0.2.0;
    - ``docs`` (tip of ``main``): README change only, so it compiles exactly like ``v2``;
    - ``feature``: a branch off ``v2`` changing benchmark/README.md (merge-base with main is ``v2``);
    - ``broken``: a branch off ``docs`` whose C source does not compile.
    ``extra_files`` (path -> text) are added in the first commit.
    """
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "-b", "main")
    repo = NodeLikeRepo(path)
    first = {
        "configure": CONFIGURE,
        "Makefile": MAKEFILE,
        "src/node_main.c": NODE_MAIN,
        "src/node_version.h": version_header("0.1.0"),
        "README.md": "# nodelike\n\nA Node-like fixture for benchgate's build tests.\n",
        "benchmark/README.md": "Benchmarks live here.\n",
        ".gitignore": "/out/\n/config.mk\n",
        **(extra_files or {}),
    }
    repo.commits["v1"] = _commit(path, "nodelike 0.1.0", first)
    git(path, "tag", "v0.1.0")
    repo.commits["v2"] = _commit(path, "nodelike 0.2.0", {"src/node_version.h": version_header("0.2.0")})
    repo.commits["docs"] = _commit(path, "docs: explain the fixture", {"README.md": "# nodelike\n\nDocs changed.\n"})
    git(path, "checkout", "--quiet", "-b", "feature", repo.commits["v2"])
    repo.commits["feature"] = _commit(path, "benchmark docs", {"benchmark/README.md": "Feature work.\n"})
    git(path, "checkout", "--quiet", "-b", "broken", repo.commits["docs"])
    repo.commits["broken"] = _commit(path, "break the build", {"src/node_main.c": BROKEN_NODE_MAIN})
    git(path, "checkout", "--quiet", "main")
    return repo


def marker_lines(marker: Path) -> list[str]:
    """The lines configure/make appended to the build marker (empty when nothing ran)."""
    return marker.read_text().splitlines() if marker.exists() else []
