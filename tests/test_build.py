"""Building binaries from git refs of a Node-like fixture repository: real git, worktrees, make and cc."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nodelike import NodeLikeRepo, git, make_node_like_repo, marker_lines

from benchgate import cli
from benchgate.build import BaseBuildError, BuildSettings, HeadBuildError, build_ref, merge_base
from benchgate.build import cache as buildcache
from benchgate.build.cache import BinaryCache
from benchgate.errors import EXIT_BUILD_FAILED, InputError

# Deterministic across machines: no --ninja unless a test asks for it.
SETTINGS = BuildSettings(ninja=False)
needs_ccache = pytest.mark.skipif(shutil.which("ccache") is None, reason="ccache not installed")


@pytest.fixture(scope="module")
def node_repo(tmp_path_factory: pytest.TempPathFactory) -> NodeLikeRepo:
    return make_node_like_repo(tmp_path_factory.mktemp("nodelike") / "node")


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "build-marker"
    monkeypatch.setenv("NODELIKE_BUILD_MARKER", str(path))
    monkeypatch.delenv("NODELIKE_BUILD_DELAY", raising=False)
    return path


def run_binary(binary: Path, *args: str) -> str:
    return subprocess.run([str(binary), *args], check=True, capture_output=True, text=True, timeout=60).stdout.strip()


def make_runs(marker: Path) -> list[str]:
    return [line for line in marker_lines(marker) if line.startswith("make ")]


def worktree_paths(repo: Path) -> set[str]:
    listing = git(repo, "worktree", "list", "--porcelain")
    return {line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("worktree ")}


def test_cold_build_then_cached_hit_runs_no_build_command(node_repo, cache_dir, marker) -> None:
    cold = build_ref(node_repo.path, "main", side="base", settings=SETTINGS, cache_dir=cache_dir)
    sha = node_repo.commits["docs"]
    assert (cold.sha, cold.cached) == (sha, False)
    assert marker_lines(marker) == [f"configure {sha}", f"make {sha}"]
    assert run_binary(cold.binary, "--nodelike-info") == "nodelike 0.2.0 flags=[]"
    assert run_binary(cold.binary, "-e", "console.log(6 * 7)") == "42"  # a launcher around the real node
    assert cold.log is not None and "$ sh -c 'make -j$(nproc)'" in cold.log.read_text()

    warm = build_ref(node_repo.path, sha, side="base", settings=SETTINGS, cache_dir=cache_dir)
    assert warm.cached and warm.binary == cold.binary and warm.key == cold.key
    assert warm.binary_sha256 == cold.binary_sha256
    assert len(marker_lines(marker)) == 2  # neither configure nor make ran again
    assert warm.log is not None and "make" in warm.log.read_text()  # the producing build's log, kept in the entry
    record = json.loads(json.dumps(warm.record()))
    assert record["cached"] is True and record["sha"] == sha and record["cache_key"] == cold.key
    assert record["ref"] == sha and record["log"] == str(warm.log)


def test_changed_configure_flag_is_a_cache_miss(node_repo, cache_dir, marker) -> None:
    plain = build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    flagged_settings = BuildSettings(ninja=False, configure_flags=("--without-intl",))
    flagged = build_ref(node_repo.path, "v0.1.0", side="base", settings=flagged_settings, cache_dir=cache_dir)
    assert not flagged.cached and flagged.key != plain.key
    assert run_binary(flagged.binary, "--nodelike-info") == "nodelike 0.1.0 flags=[--without-intl]"
    again = build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    assert again.cached and again.binary == plain.binary
    assert len(make_runs(marker)) == 2


def test_ninja_flag_when_asked() -> None:
    assert BuildSettings(ninja=True).configure_argv() == ["./configure", "--ninja"]
    assert BuildSettings(ninja=False, configure_flags=("--debug",)).configure_argv() == ["./configure", "--debug"]
    if shutil.which("ninja"):
        assert "--ninja" in BuildSettings().configure_argv()


def test_key_covers_everything_that_changes_the_binary() -> None:
    env = {"PATH": os.environ["PATH"]}
    base = BuildSettings(ninja=False).key_inputs(env)
    variants = [
        BuildSettings(ninja=False, configure_flags=("--debug",)).key_inputs(env),
        BuildSettings(ninja=False, build_command="make -j1 V=1").key_inputs(env),
        BuildSettings(ninja=False, binary_path="out/Debug/node").key_inputs(env),
        BuildSettings(ninja=False).key_inputs({**env, "CFLAGS": "-O0"}),
        BuildSettings(ninja=False).key_inputs({**env, "CC": "definitely-not-a-compiler"}),
    ]
    for variant in variants:
        assert variant != base
    # The job count does not change the binary, so it does not change the key.
    assert BuildSettings(ninja=False, jobs=1).key_inputs(env) == base
    assert base["compilers"]["CC"]["version"]  # the compiler's own version string is in the key


@pytest.mark.parametrize("damage", ["truncate", "chmod -x", "delete", "remove marker"])
def test_damaged_cache_entry_is_rebuilt(node_repo, cache_dir, marker, damage: str) -> None:
    first = build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    if damage == "truncate":
        first.binary.write_bytes(first.binary.read_bytes()[:100])
    elif damage == "chmod -x":
        first.binary.chmod(0o644)
    elif damage == "delete":
        first.binary.unlink()
    else:
        (first.binary.parent / buildcache.COMPLETE_MARKER).unlink()
    second = build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    assert not second.cached
    assert len(make_runs(marker)) == 2
    assert run_binary(second.binary, "--nodelike-info") == "nodelike 0.1.0 flags=[]"
    assert second.binary_sha256 == buildcache.file_sha256(second.binary)


@pytest.mark.parametrize(
    ("side", "error_class", "infrastructure"), [("head", HeadBuildError, False), ("base", BaseBuildError, True)]
)
def test_failing_build_names_side_ref_and_log_tail(
    node_repo, cache_dir, marker, side, error_class, infrastructure
) -> None:
    with pytest.raises(error_class) as caught:
        build_ref(node_repo.path, "broken", side=side, settings=SETTINGS, cache_dir=cache_dir, trusted=side == "base")
    error = caught.value
    assert error.infrastructure is infrastructure and error.side == side and error.exit_status == EXIT_BUILD_FAILED
    line = error.one_line()
    assert "\n" not in line
    assert line.startswith(f"{side} build of broken ({node_repo.commits['broken'][:12]}) failed")
    assert "error: expected" in line and "node_main.c" in line  # the compiler's complaint, from the log's tail
    assert error.log is not None and error.log.exists() and str(error.log) in line
    cache = BinaryCache(cache_dir)
    assert cache.complete_entries() == []
    assert not any((cache_dir / "worktrees").iterdir())  # the failed worktree is gone ...
    assert not any("/worktrees/" in path for path in worktree_paths(node_repo.path) if str(cache_dir) in path)


def test_configure_failure_is_reported(node_repo, cache_dir, marker) -> None:
    settings = BuildSettings(ninja=False, configure_flags=("--bogus",))
    with pytest.raises(BaseBuildError, match=r"`./configure --bogus` exited with status 2.*no such option: --bogus"):
        build_ref(node_repo.path, "main", side="base", settings=settings, cache_dir=cache_dir)
    assert make_runs(marker) == []


def test_build_step_timeout_kills_the_build(node_repo, cache_dir, marker, monkeypatch) -> None:
    monkeypatch.setenv("NODELIKE_BUILD_DELAY", "30")  # reaches the trusted build only
    settings = BuildSettings(ninja=False, timeout=1.5)
    started = time.monotonic()
    with pytest.raises(BaseBuildError, match=r"`sh -c 'make -j\$\(nproc\)'` timed out"):
        build_ref(node_repo.path, "main", side="base", settings=settings, cache_dir=cache_dir)
    assert time.monotonic() - started < 20
    # The untrusted head's build command runs in the sandbox, and is killed there too.
    sleepy = BuildSettings(ninja=False, timeout=1.5, build_command="sleep 30")
    with pytest.raises(HeadBuildError, match=r"`sh -c 'sleep 30'` timed out"):
        build_ref(node_repo.path, "main", side="head", settings=sleepy, cache_dir=cache_dir, trusted=False)
    assert time.monotonic() - started < 40
    assert BinaryCache(cache_dir).complete_entries() == []


def test_the_timeout_bounds_the_whole_build_not_each_step(node_repo, cache_dir, marker) -> None:
    # Each step alone is under the limit; configure and build together are not.
    steps = {"configure_command": "sleep 2 && ./configure", "build_command": "sleep 2"}
    settings = BuildSettings(ninja=False, timeout=3, **steps)
    with pytest.raises(BaseBuildError, match=r"`sh -c 'sleep 2'` timed out"):
        build_ref(node_repo.path, "main", side="base", settings=settings, cache_dir=cache_dir)


def test_builds_have_a_default_timeout() -> None:
    assert BuildSettings().timeout == 4 * 3600


def _cli_build(repo: Path, cache_dir: Path, ref: str, env: dict[str, str]) -> subprocess.Popen:
    command = [sys.executable, "-m", "benchgate", "build", "--repo", str(repo), "--cache-dir", str(cache_dir)]
    return subprocess.Popen(
        [*command, "--no-ninja", ref], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def test_two_concurrent_builds_of_one_sha_build_once(node_repo, cache_dir, marker) -> None:
    env = {**os.environ, "NODELIKE_BUILD_DELAY": "2"}
    jobs = [_cli_build(node_repo.path, cache_dir, "main", env) for _ in range(2)]
    outputs = [job.communicate(timeout=120) for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], outputs
    paths = {stdout.strip().splitlines()[-1] for stdout, _ in outputs}
    assert len(paths) == 1 and Path(paths.pop()).is_file()
    assert len(make_runs(marker)) == 1  # the build ran once ...
    summaries = sorted(stdout.splitlines()[0].split()[3] for stdout, _ in outputs)
    assert summaries == ["built", "cached"]  # ... and the other job reused it
    assert any("waiting for another job" in stderr for _, stderr in outputs)  # really at the same time


def test_users_working_tree_is_untouched(tmp_path, cache_dir, marker) -> None:
    repo = make_node_like_repo(tmp_path / "user")
    (repo.path / "README.md").write_text("my uncommitted notes\n")
    (repo.path / "src" / "node_version.h").write_text('#define NODELIKE_VERSION "9.9.9-wip"\n')
    git(repo.path, "add", "src/node_version.h")
    (repo.path / "scratch.js").write_text("console.log('untracked work')\n")
    before_status = git(repo.path, "status", "--porcelain", "--ignored")
    before_head = git(repo.path, "rev-parse", "HEAD")
    for ref in ("v0.1.0", "feature"):
        result = build_ref(repo.path, ref, side="head", settings=SETTINGS, cache_dir=cache_dir, trusted=False)
        assert result.worktree.parent == cache_dir.resolve() / "worktrees"
    assert git(repo.path, "status", "--porcelain", "--ignored") == before_status
    assert git(repo.path, "rev-parse", "HEAD") == before_head
    assert git(repo.path, "symbolic-ref", "--short", "HEAD") == "main"
    assert (repo.path / "README.md").read_text() == "my uncommitted notes\n"
    assert "9.9.9-wip" in git(repo.path, "diff", "--cached")
    assert not (repo.path / "out").exists() and not (repo.path / "config.mk").exists()


def test_worktree_is_clean_after_build_and_removed_with_its_entry(node_repo, cache_dir, marker) -> None:
    limit = BuildSettings(ninja=False, cache_max_entries=2, cache_max_size=None)
    old = build_ref(node_repo.path, "v0.1.0", side="base", settings=limit, cache_dir=cache_dir)
    assert git(old.worktree, "rev-parse", "HEAD") == node_repo.commits["v1"]
    assert git(old.worktree, "status", "--porcelain", "--ignored") == ""  # build outputs gone, sources kept
    assert (old.worktree / "benchmark" / "README.md").is_file()
    assert str(old.worktree) in worktree_paths(node_repo.path)
    build_ref(node_repo.path, node_repo.commits["v2"], side="base", settings=limit, cache_dir=cache_dir)
    # v0.1.0 used again: v2 becomes the least recently used and is the one evicted next.
    assert build_ref(node_repo.path, "v0.1.0", side="base", settings=limit, cache_dir=cache_dir).cached
    v2_worktree = next((cache_dir / "worktrees").glob(f"{node_repo.commits['v2'][:12]}-*"))
    newest = build_ref(node_repo.path, "main", side="base", settings=limit, cache_dir=cache_dir)
    cache = BinaryCache(cache_dir)
    assert sorted(entry.metadata["sha"] for entry in cache.complete_entries()) == sorted([old.sha, newest.sha])
    assert not v2_worktree.exists() and str(v2_worktree) not in worktree_paths(node_repo.path)
    assert (
        old.worktree.exists()
        and build_ref(node_repo.path, "v0.1.0", side="base", settings=limit, cache_dir=cache_dir).cached
    )
    assert len(make_runs(marker)) == 3


def test_a_worktree_left_locked_by_a_killed_job_is_recreated(node_repo, cache_dir, marker) -> None:
    # A kill -9 during `git worktree add` leaves the worktree registered, locked and half-written.
    first = build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    first.release()
    git(node_repo.path, "worktree", "lock", "--reason", "initializing", str(first.worktree))
    shutil.rmtree(first.worktree)
    first.worktree.mkdir()
    shutil.rmtree(BinaryCache(cache_dir).entries_dir)  # a cache miss: the job checks the worktree out again
    again = build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    assert not again.cached and again.worktree == first.worktree
    assert git(again.worktree, "rev-parse", "HEAD") == node_repo.commits["v1"]
    assert len(make_runs(marker)) == 2


def test_binary_in_use_is_not_evicted(node_repo, cache_dir, marker) -> None:
    one_entry = BuildSettings(ninja=False, cache_max_entries=1, cache_max_size=None)
    base = build_ref(node_repo.path, "v0.1.0", side="base", settings=one_entry, cache_dir=cache_dir)
    head = build_ref(node_repo.path, "main", side="head", settings=one_entry, cache_dir=cache_dir, trusted=False)
    assert base.binary.is_file() and base.worktree.is_dir()  # over the limit, but base is still in use
    base.release()
    head.release()
    build_ref(node_repo.path, node_repo.commits["v2"], side="base", settings=one_entry, cache_dir=cache_dir)
    assert not base.binary.exists() and not base.worktree.exists()
    assert not head.binary.exists()


def ccache_files(cache_dir: Path) -> set[str]:
    """The compiled results and manifests ccache holds (not its statistics counters)."""
    root = cache_dir / "ccache"
    if not root.exists():
        return set()
    # ccache 4 names results <hash>R and manifests <hash>M.
    return {str(path.relative_to(root)) for path in root.rglob("*") if re.fullmatch(r"[0-9a-z]{20,}[RM]", path.name)}


@needs_ccache
def test_untrusted_build_reads_ccache_but_never_writes_it(node_repo, cache_dir, marker) -> None:
    untrusted = build_ref(node_repo.path, "v0.1.0", side="head", settings=SETTINGS, cache_dir=cache_dir, trusted=False)
    assert untrusted.ccache_mode == "read-only" and untrusted.record()["ccache"]["read_only"] is True
    assert untrusted.ccache.misses == 1 and untrusted.ccache.writes == 0
    assert ccache_files(cache_dir) == set()

    trusted = build_ref(node_repo.path, node_repo.commits["v2"], side="base", settings=SETTINGS, cache_dir=cache_dir)
    assert trusted.ccache_mode == "read-write" and trusted.ccache.misses == 1 and trusted.ccache.writes > 0
    written = ccache_files(cache_dir)
    assert written

    # main differs from v2 only in its README: a new SHA, but the same object file, read from ccache.
    head = build_ref(node_repo.path, "main", side="head", settings=SETTINGS, cache_dir=cache_dir, trusted=False)
    assert not head.cached and head.ccache.hits == 1 and head.ccache.writes == 0
    assert ccache_files(cache_dir) == written
    assert "ccache (read-only): 1 hits" in head.log.read_text()


@pytest.mark.parametrize("how", ["binary", "directory"])
def test_an_untrusted_build_cannot_hand_over_a_file_outside_its_worktree(node_repo, cache_dir, marker, how) -> None:
    base = build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    # The head's "build" links its binary (or the directory holding it) to the cached base binary: outside the
    # sandbox, benchgate would otherwise store that file as the head's, or any other file it can read.
    link = f"mkdir -p out/Release && ln -s {base.binary} out/Release/node"
    if how == "directory":
        link = f"mkdir -p out && ln -s {base.binary.parent} out/Release"
    hostile = BuildSettings(ninja=False, configure_command="", build_command=link)
    with pytest.raises(HeadBuildError, match="leads outside its tree"):
        build_ref(node_repo.path, "v0.1.0", side="head", settings=hostile, cache_dir=cache_dir, trusted=False)
    cache = BinaryCache(cache_dir)
    assert [entry.key for entry in cache.complete_entries()] == [base.key]
    assert cache.validate(base.key)[0].sha256 == base.binary_sha256


def processes_inside(directory: Path) -> list[int]:
    """Processes whose working directory is inside ``directory`` (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cwd = Path(os.readlink(proc / "cwd"))
        except OSError:
            continue
        if cwd == directory or directory in cwd.parents:
            found.append(int(proc.name))
    return found


def test_interrupted_build_leaves_no_complete_entry(node_repo, cache_dir, marker) -> None:
    job = _cli_build(node_repo.path, cache_dir, "main", {**os.environ, "NODELIKE_BUILD_DELAY": "30"})
    deadline = time.monotonic() + 60
    while not make_runs(marker) and time.monotonic() < deadline:  # make is compiling, then sleeping
        time.sleep(0.05)
    job.send_signal(signal.SIGTERM)
    _, stderr = job.communicate(timeout=30)
    assert job.returncode == 130, stderr
    cache = BinaryCache(cache_dir)
    assert cache.complete_entries() == []
    worktree = next((cache_dir / "worktrees").iterdir())
    assert processes_inside(worktree) == []  # make and its children were killed with the build
    build_ref(node_repo.path, "v0.1.0", side="base", settings=SETTINGS, cache_dir=cache_dir)
    assert not worktree.exists() and str(worktree) not in worktree_paths(node_repo.path)  # orphan cleaned up
    result = build_ref(node_repo.path, "main", side="base", settings=SETTINGS, cache_dir=cache_dir)
    assert not result.cached and len(make_runs(marker)) == 3
    assert run_binary(result.binary, "--nodelike-info").startswith("nodelike 0.2.0")


def test_merge_base(node_repo) -> None:
    assert merge_base(node_repo.path, "feature", "main") == node_repo.commits["v2"]
    git(node_repo.path, "update-ref", "refs/remotes/origin/trunk", node_repo.commits["v1"])
    assert merge_base(node_repo.path, "feature", "trunk") == node_repo.commits["v1"]  # origin/ fallback
    with pytest.raises(InputError, match="base branch 'nope'"):
        merge_base(node_repo.path, "feature", "nope")


def test_merge_base_in_a_shallow_clone_says_so(node_repo, tmp_path) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "--quiet", "--depth=1", "--no-single-branch", f"file://{node_repo.path}", str(clone))
    with pytest.raises(InputError, match="no common ancestor.*shallow clone"):
        merge_base(clone, "origin/feature", "main")


def test_cli_build_prints_binary_path_last(node_repo, cache_dir, marker, capsys) -> None:
    args = ["build", "--repo", str(node_repo.path), "--cache-dir", str(cache_dir), "--no-ninja"]
    assert cli.main([*args, "--configure-flags=--debug", "v0.1.0"]) == 0
    binary = Path(capsys.readouterr().out.splitlines()[-1])
    assert run_binary(binary, "--nodelike-info") == "nodelike 0.1.0 flags=[--debug]"

    assert cli.main([*args, "no-such-ref"]) == 2
    assert "ref 'no-such-ref' is not a commit" in capsys.readouterr().err
    assert cli.main(["build", "--repo", str(cache_dir), "--cache-dir", str(cache_dir), "main"]) == 2
    assert "is not a git repository" in capsys.readouterr().err
    assert cli.main([*args, "--side", "head", "broken"]) == EXIT_BUILD_FAILED
    err = capsys.readouterr().err
    assert err.startswith("benchgate: error: head build of broken") and err.count("\n") == 1


def test_settings_from_config_mapping() -> None:
    settings = BuildSettings.from_mapping({"configure-flags": ["--debug"], "jobs": 3, "ccache": False})
    assert settings.configure_flags == ("--debug",) and settings.ccache is False
    assert settings.build_argv() == ["sh", "-c", "make -j3"]
    with pytest.raises(InputError, match="unknown build setting"):
        BuildSettings.from_mapping({"configure-flag": "--debug"})
    with pytest.raises(InputError, match="binary path"):
        BuildSettings(binary_path="../node")
