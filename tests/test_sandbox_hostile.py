"""A hostile pull request against `benchgate run --repo`: every escape it attempts fails in the sandbox.

The head (tests/hostile.py) attacks from its configure, its Makefile, its built "node" and its
benchmark file: (1) poison the trusted base binary's cache entry, (2) forge results in --output,
(3) write to $HOME (and read the key there), (4) read GITHUB_TOKEN, (5) reach a service on the
runner's loopback (TCP and a Unix socket), (6) leave a process running; also read a file and
write anywhere outside its worktree, and point its worktree's .git at a config that runs a
command. The test checks every target is untouched, that the run still completed with samples,
that the next trusted base build is served the genuine binary, and pins what the attacks saw.
The same head with --no-sandbox shows that the attacks are real (and that the test could fail).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hostile import Targets, add_hostile_head, observations, processes_with, survivors
from nodelike import example_benchmark_files, make_node_like_repo
from sandboxing import fresh_probe, needs_bwrap  # noqa: F401 - fresh_probe is a fixture

from benchgate import results
from benchgate.build import BuildSettings, build_ref

FAKE_TOKEN = "ghs_fakeTokenForTheSandboxTest0123456789"
SETTINGS = BuildSettings(ninja=False)
pytestmark = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("node", "cc", "make", "git", "setsid")),
    reason="needs node, a C toolchain, git and setsid",
)
STAGES = ("configure", "build", "binary", "bench")


class Service:
    """A fake runner service on 127.0.0.1 and on a Unix socket: records every connection it gets."""

    def __init__(self, socket_path: Path) -> None:
        self.connections: list[str] = []
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(socket_path))
        self.unix.listen()
        self.port = self.tcp.getsockname()[1]
        self._threads = [threading.Thread(target=self._serve, args=(s,), daemon=True) for s in (self.tcp, self.unix)]
        for thread in self._threads:
            thread.start()

    def _serve(self, server: socket.socket) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            self.connections.append(connection.recv(100).decode(errors="replace"))
            connection.close()

    def close(self) -> None:
        self.tcp.close()
        self.unix.close()


def _snapshot(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` (or the file itself) with its sha256."""
    files = [directory] if directory.is_file() else sorted(path for path in directory.rglob("*") if path.is_file())
    return {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


@pytest.fixture
def scene(tmp_path, monkeypatch):
    """The repository with a benign main and the hostile head, a trusted base already cached, and the targets."""
    repo = make_node_like_repo(tmp_path / "node", extra_files=example_benchmark_files())
    cache, home, out = tmp_path / "cache", tmp_path / "home", tmp_path / "out"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN FAKE KEY-----\n")
    (tmp_path / "secret.txt").write_text("a secret outside the worktree\n")
    out.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BENCHGATE_CACHE", str(cache))
    monkeypatch.setenv("GITHUB_TOKEN", FAKE_TOKEN)
    base = build_ref(repo.path, "main", side="base", settings=SETTINGS, cache_dir=cache)
    base.release()
    service = Service(tmp_path / "service.sock")
    tag = str(random.randrange(10**8, 10**9))
    targets = Targets(
        root=str(tmp_path),
        cache=str(cache),
        baseEntry=str(base.binary.parent),
        output=str(out),
        home=str(home),
        secret=str(tmp_path / "secret.txt"),
        repo=str(repo.path),
        token=FAKE_TOKEN,
        port=service.port,
        socket=str(tmp_path / "service.sock"),
        tag=tag,
    )
    add_hostile_head(repo, targets)
    protected = {
        "base entry": _snapshot(base.binary.parent),
        "home": _snapshot(home),
        "repository .git": _snapshot(repo.path / ".git" / "hooks") | _snapshot(repo.path / ".git" / "config"),
        "secret": _snapshot(tmp_path / "secret.txt"),
    }
    try:
        yield {
            "repo": repo,
            "cache": cache,
            "out": out,
            "home": home,
            "base": base,
            "tag": tag,
            "service": service,
            "protected": protected,
            "root": tmp_path,
        }
    finally:
        service.close()
        for pid in processes_with(tag):  # only where a defence failed
            os.kill(pid, signal.SIGKILL)


def _run_hostile(scene, *extra: str) -> tuple[int, str, dict]:
    """`benchgate run --repo` on the hostile head, as its own process (as in a job: its command line names
    --output, its environment holds the token)."""
    argv = ["run", "calc", "hostile", "--repo", str(scene["repo"].path), "--base-ref", "main", "--head-ref", "hostile"]
    argv += ["--build-cache", str(scene["cache"]), "--no-ninja", "--runs", "2", "--no-progress", "--no-analyze"]
    completed = subprocess.run(
        [sys.executable, "-m", "benchgate", *argv, "--output", str(scene["out"]), *extra],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    record = json.loads((scene["out"] / "run.json").read_text()) if (scene["out"] / "run.json").exists() else {}
    return completed.returncode, completed.stderr, record


def _seen(record: dict) -> dict[tuple[str, str], str]:
    """What the hostile code observed, by stage: the head build's log, the probe's stderr in run.json."""
    seen = observations(Path(record["build"]["head"]["log"]).read_text())
    for failure in record["failures"]:
        for (stage, name), result in observations(failure["stderr_tail"]).items():
            seen[(f"{stage}@{failure['side']}", name)] = result
    return seen


@needs_bwrap
def test_every_escape_of_a_hostile_head_fails_in_the_sandbox(scene):
    status, err, record = _run_hostile(scene)
    root, out, tag = scene["root"], scene["out"], scene["tag"]

    # The run completed: the genuine benchmark has its samples, the hostile probe failed on both sides.
    assert status == 0, err
    assert record["complete"] is True and record["sandbox"]["used"] is True
    samples = results.read_samples([out / "results.csv"])
    assert len(samples) == 2 * 2 * 2 and set(samples["filename"]) == {"calc/add.js"}
    assert (samples["rate"] < 1e15).all()  # the forged sample never landed
    assert sorted(path.name for path in out.iterdir()) == ["results.csv", "run.json"]

    # Targets untouched: the cache entry, $HOME, the repository, no file written outside, no service reached.
    protected = scene["protected"]
    assert _snapshot(scene["base"].binary.parent) == protected["base entry"]
    assert _snapshot(scene["home"]) == protected["home"]
    repo_git = scene["repo"].path / ".git"
    assert _snapshot(repo_git / "hooks") | _snapshot(repo_git / "config") == protected["repository .git"]
    assert not [path.name for path in root.iterdir() if path.name.startswith(("escape-", "hook-", "fsmonitor-"))]
    assert scene["service"].connections == []
    assert survivors(tag) == []  # (6): nothing it started survived

    # The worktree's .git link was restored before benchgate's own git ran there.
    worktree = Path(record["build"]["head"]["worktree"])
    assert (worktree / ".git").read_text().startswith(f"gitdir: {repo_git.resolve()}/worktrees/")
    assert not (worktree / ".evil-git").exists()

    # (1) The next trusted base build is served the genuine binary.
    again = build_ref(scene["repo"].path, "main", side="base", settings=SETTINGS, cache_dir=scene["cache"])
    assert again.cached and again.binary_sha256 == scene["base"].binary_sha256
    assert hashlib.sha256(again.binary.read_bytes()).hexdigest() == scene["base"].binary_sha256

    # What the hostile code saw, in each stage (build time, the built binary, the benchmark on both sides).
    seen = _seen(record)
    stages = sorted({stage for stage, _ in seen})
    assert stages == ["bench@base", "bench@head", "binary@head", "build", "configure"], stages
    for stage in stages:
        column = 0 if stage in ("configure", "build") else 1
        got = {name: result for (where, name), result in seen.items() if where == stage and name in SEEN}
        assert got == {name: results[column] for name, results in SEEN.items()}, f"{stage}: {json.dumps(got, indent=1)}"
        assert seen[(stage, "find-output")].startswith("not found")  # a PID namespace: benchgate is not in /proc
    assert seen[("build", "replace-git-link")] == "ok"  # its worktree is writable: undone before our git ran (above)


# What each attempt returned (the error code, or what it found): at build time, in a benchmark process.
SEEN = {
    # (1) The cache is an empty read-only directory; a benchmark sees the two binaries in it, bound read-only.
    "poison-cache": ("ENOENT", "EROFS"),
    "read-cache-entry": ("ENOENT", "ENOENT"),
    "list-cache": ("ENOENT", "2 entries"),
    # (2) --output is an empty read-only directory.
    "forge-results": ("EROFS", "EROFS"),
    "forge-record": ("EROFS", "EROFS"),
    # (3) $HOME is a private tmpfs at the same path: writable, empty, gone afterwards (the host's is untouched).
    "write-host-home": ("ok", "ok"),
    "read-home-key": ("ENOENT", "ENOENT"),
    # (4) The environment is an allowlist, and no ancestor outside the sandbox is visible in /proc.
    "read-token": ("unset here, in 0 ancestor(s)", "unset here, in 0 ancestor(s)"),
    # (5) A loopback of its own; the directories holding Unix sockets are hidden.
    "connect-service": ("ECONNREFUSED", "ECONNREFUSED"),
    "connect-unix-service": ("ENOENT", "ENOENT"),
    # (6) Started, and killed with the sandbox's PID namespace (checked above).
    "leave-process": ("started", "started"),
    "read-outside": ("ENOENT", "ENOENT"),
    # tmp_path is under /tmp, which is the sandbox's own tmpfs: the write lands there, not on the host (above).
    "write-outside": ("ok", "ok"),
    "write-repo-hook": ("ENOENT", "ENOENT"),  # the user's repository is hidden
}


def test_without_the_sandbox_the_same_head_gets_out(scene):
    # The control: --no-sandbox (as before the sandbox). The attacks are real, so the test above can fail.
    status, err, record = _run_hostile(scene, "--no-sandbox")
    assert status == 0, err
    assert record["sandbox"] == {"used": False, "untrusted_head": True, "reason": "--no-sandbox"}
    seen = _seen(record)
    # --no-sandbox still removes credential-like variables from the PR's processes, but benchgate's own
    # process is in reach: its command line and its environment, in /proc.
    assert seen[("binary@head", "read-token")] == "unset here, in 1 ancestor(s)"
    assert seen[("bench@head", "find-output")] == f"found {scene['out']}"
    assert seen[("build", "poison-cache")] == "ok"
    assert any(message == "pwned" for message in scene["service"].connections)
    assert processes_with(scene["tag"])  # left running (the fixture kills them)
    assert (scene["root"] / "escape-build").exists() and (scene["home"] / "pwned").exists()
    poisoned = build_ref(scene["repo"].path, "main", side="base", settings=SETTINGS, cache_dir=scene["cache"])
    assert poisoned.cached and b"poisoned by the pull request" in poisoned.binary.read_bytes()  # as the trusted base
