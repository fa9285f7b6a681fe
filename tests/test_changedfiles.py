"""--changed-from: changed files in the Node checkout mapped to benchmark categories by the shipped YAML."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchgate.errors import InputError
from benchgate.run import changedfiles as changes

NODE_CATEGORIES = {"fs", "url", "buffers", "misc", "os", "http", "streams", "util", "esm", "module"}


def _map(files, available=NODE_CATEGORIES, **kwargs):
    return changes.map_changes(files, changes.load_mapping(), available, **kwargs)


@pytest.mark.parametrize(
    ("files", "categories"),
    [
        (["lib/fs.js"], ["fs"]),
        (["lib/internal/fs/utils.js", "lib/internal/fs/promises.js"], ["fs"]),
        (["lib/internal/url.js"], ["url"]),
        (["src/node_url.cc"], ["url"]),
        (["src/node_buffer.cc"], ["buffers"]),
        (["doc/api/fs.md", "README.md", "test/parallel/test-fs-read.js"], []),
        (["lib/os.js"], ["os"]),  # the generic lib/{name}.js rule, for a category that exists
        (["benchmark/url/legacy-vs-whatwg-url-parse.js"], ["url"]),
        (["lib/fs.js", "src/node_url.cc", "doc/api/url.md"], ["fs", "url"]),
    ],
)
def test_issue_examples(files, categories):
    assert _map(files).categories == categories


def test_unmapped_files_fall_back_to_the_default_and_are_named():
    result = _map(["src/node_platform.cc", "lib/fs.js"])
    assert result.categories == ["fs", "misc"]
    assert result.unmapped == ["src/node_platform.cc"]
    assert "src/node_platform.cc" in result.notes()[0] and "['misc']" in result.notes()[0]
    assert _map(["src/node_platform.cc"], default=("util",)).categories == ["util"]
    assert _map(["src/node_platform.cc"], default=()).categories == []


def test_generic_rule_needs_an_existing_category():
    result = _map(["lib/tls.js"])  # no tls category in this checkout
    assert result.unmapped == ["lib/tls.js"] and result.categories == ["misc"]


def test_docs_only_selects_nothing():
    result = _map(["doc/api/fs.md"])
    assert result.categories == [] and result.ignored == ["doc/api/fs.md"]
    assert "nothing to run" in result.notes()[-1]


def test_user_mapping_replaces_the_shipped_one(tmp_path):
    custom = tmp_path / "map.yml"
    custom.write_text("default: []\nignore: ['*.txt']\nrules:\n  - paths: ['src/**/*.cc']\n    categories: [misc]\n")
    mapping = changes.load_mapping(custom)
    result = changes.map_changes(["src/a/b.cc", "notes.txt", "lib/fs.js"], mapping, NODE_CATEGORIES)
    assert result.categories == ["misc"] and result.ignored == ["notes.txt"] and result.unmapped == ["lib/fs.js"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [1]", "rules\\[0\\] must be a mapping"),
        ("rules:\n  - categories: [x]", "has no paths"),
        ("[", "not valid YAML"),
        ("- a", "expected a mapping"),
        ("default: x", "default must be a list"),
    ],
)
def test_bad_mappings_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "map.yml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        changes.load_mapping(path)


def test_globs():
    assert changes.glob_to_regex("lib/*.js").match("lib/fs.js")
    assert not changes.glob_to_regex("lib/*.js").match("lib/internal/fs.js")
    assert changes.glob_to_regex("**/*.md").match("README.md")
    assert changes.glob_to_regex("**/*.md").match("doc/api/fs.md")
    assert changes.glob_to_regex("lib/{name}.js").match("lib/os.js").group("name") == "os"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_changed_files_come_from_git_diff_against_the_merge_base(tmp_path):
    repo = tmp_path / "node"
    (repo / "lib").mkdir(parents=True)
    (repo / "lib" / "fs.js").write_text("1\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "pr")
    (repo / "src").mkdir()
    (repo / "src" / "node_url.cc").write_text("x\n")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pr")
    (repo / "lib" / "fs.js").write_text("2\n")  # uncommitted: still part of the change being measured
    assert changes.changed_files(repo, "main") == ["lib/fs.js", "src/node_url.cc"]
    with pytest.raises(InputError, match="--changed-from nope"):
        changes.changed_files(repo, "nope")
