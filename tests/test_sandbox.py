"""benchgate.sandbox: what a confined process can see, write, reach and leave behind; the probe; copying out.

Real bwrap on this machine (CI installs bubblewrap); every path a test checks lives under tmp_path.
"""

from __future__ import annotations

import errno
import os
import random
import socket
import subprocess
import time
from pathlib import Path

import pytest
from hostile import survivors
from sandboxing import fake_bwrap, fresh_probe, needs_bwrap  # noqa: F401 - fresh_probe is a fixture

from benchgate import cli, sandbox
from benchgate.errors import EXIT_BAD_INPUT
from benchgate.sandbox import Confinement, Mounts

ROOT = Path("/")  # a working directory every sandbox sees
PYTHON = "/usr/bin/python3"  # the system's: benchgate's own venv is hidden in the sandbox


def run_confined(
    script: str, mounts: Mounts, cwd: Path, env: dict[str, str] | None = None, **popen
) -> subprocess.CompletedProcess:
    """``sh -c script`` in the sandbox; stdout is what the confined process saw."""
    confinement = Confinement(sandbox.probe(), mounts)
    argv, child_env = confinement.wrap(["sh", "-c", script], cwd=cwd, env=env or dict(os.environ))
    return subprocess.run(argv, env=child_env, capture_output=True, text=True, timeout=60, **popen)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A fake cache with a binary and a secret, a checkout, a worktree and an output directory."""
    paths = {
        "cache": tmp_path / "cache",
        "binary": tmp_path / "cache" / "binaries" / "key" / "node",
        "entry": tmp_path / "cache" / "binaries" / "key" / "entry.json",
        "checkout": tmp_path / "checkout",
        "nested_cache": tmp_path / "checkout" / ".cache",
        "worktree": tmp_path / "cache" / "worktrees" / "sha-key",
        "output": tmp_path / "out",
    }
    for name in ("checkout", "nested_cache", "worktree", "output"):
        paths[name].mkdir(parents=True)
    paths["binary"].parent.mkdir(parents=True)
    paths["binary"].write_text("#!/bin/sh\necho genuine\n")
    paths["binary"].chmod(0o755)
    paths["entry"].write_text('{"sha256": "genuine"}\n')
    (paths["checkout"] / "bench.js").write_text("// benchmark\n")
    (paths["nested_cache"] / "secret").write_text("secret\n")
    return paths


@needs_bwrap
def test_only_what_is_exposed_is_visible_and_only_the_worktree_is_writable(tree, tmp_path):
    mounts = Mounts(
        read_only=(tree["binary"], tree["checkout"]),
        writable=(tree["worktree"],),
        hidden=(tree["cache"], tree["output"], tree["nested_cache"]),
    )
    script = "; ".join(
        f"{command} && echo {label}:yes || echo {label}:no"
        for label, command in [
            ("run-binary", f"{tree['binary']}"),
            ("read-checkout", f"cat {tree['checkout'] / 'bench.js'}"),
            ("read-entry", f"cat {tree['entry']}"),
            ("read-nested-secret", f"cat {tree['nested_cache'] / 'secret'}"),
            ("list-output", f"ls {tree['output']}"),
            ("write-worktree", f"touch {tree['worktree'] / 'built'}"),
            ("write-output", f"touch {tree['output'] / 'results.csv'}"),
            ("write-entry-dir", f"touch {tree['entry'].parent / 'COMPLETE'}"),
            ("write-checkout", f"touch {tree['checkout'] / 'forged'}"),
            ("write-binary", f"echo x > {tree['binary']}"),
            ("write-tmp-private", "touch /tmp/scratch"),
            ("write-home-private", "touch $HOME/scratch"),
            ("write-system", "touch /usr/forged"),
        ]
    )
    seen = run_confined(script, mounts, tree["worktree"]).stdout
    answers = dict(line.rsplit(":", 1) for line in seen.splitlines() if line.endswith((":yes", ":no")))
    assert answers == {
        "run-binary": "yes",
        "read-checkout": "yes",
        "read-entry": "no",
        "read-nested-secret": "no",  # hidden again inside the exposed checkout: the deepest rule wins
        "list-output": "yes",  # an empty directory ...
        "write-worktree": "yes",
        "write-output": "no",  # ... that is read-only
        "write-entry-dir": "no",
        "write-checkout": "no",
        "write-binary": "no",
        "write-tmp-private": "yes",
        "write-home-private": "yes",
        "write-system": "no",
    }, seen
    assert "genuine" in seen
    assert (tree["worktree"] / "built").exists()
    assert list(tree["output"].iterdir()) == []
    assert sorted(path.name for path in tree["entry"].parent.iterdir()) == ["entry.json", "node"]
    assert tree["binary"].read_text() == "#!/bin/sh\necho genuine\n"
    assert not (tree["checkout"] / "forged").exists()


@needs_bwrap
def test_homes_run_and_secret_files_are_hidden_and_home_is_private_and_empty(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("key\n")
    monkeypatch.setenv("HOME", str(home))
    seen = run_confined(
        'echo "home=$HOME"; ls -A "$HOME" | wc -l; ls -A /root /run | wc -l; cat /etc/shadow | wc -c',
        Mounts(),
        ROOT,
    ).stdout.split()
    assert seen == [f"home={home}", "0", "3", "0"], seen  # "3": the headers `ls` prints for two empty directories


@needs_bwrap
def test_the_environment_is_an_allowlist(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_fake")
    monkeypatch.setenv("ACTIONS_RUNTIME_TOKEN", "fake")
    monkeypatch.setenv("NODE_OPTIONS", "--require /tmp/evil.js")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("CC", "gcc")
    confinement = Confinement(sandbox.probe(), Mounts(), keep_env=("CC",), extra_env={"NODE_TEST_DIR": "/tmp"})
    argv, env = confinement.wrap(["sh", "-c", "env; tr '\\0' '\\n' < /proc/1/environ"], cwd=ROOT, env=os.environ)
    seen = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60).stdout
    names = {line.split("=", 1)[0] for line in seen.splitlines() if "=" in line}
    assert "GITHUB_TOKEN" not in names and "ACTIONS_RUNTIME_TOKEN" not in names and "NODE_OPTIONS" not in names
    assert {"PATH", "LC_ALL", "CC", "HOME", "TMPDIR", "NODE_TEST_DIR"} <= names
    assert "ghs_fake" not in seen  # not even in the environment bwrap itself was started with


def test_without_a_sandbox_only_credentials_are_removed(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_fake")
    monkeypatch.setenv("NODE_OPTIONS", "--max-old-space-size=100")
    argv, env = Confinement(None).wrap(["node", "x.js"], cwd=Path("/"), env=os.environ, extra_env={"A": "1"})
    assert argv == ["node", "x.js"]
    assert "GITHUB_TOKEN" not in env and env["NODE_OPTIONS"] == "--max-old-space-size=100" and env["A"] == "1"
    assert Confinement(None).record() == {"used": False, "untrusted_head": True, "reason": "--no-sandbox"}


@needs_bwrap
def test_the_network_is_a_loopback_of_its_own():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        port = server.getsockname()[1]
        script = (
            f'{PYTHON} -c "import socket; s = socket.socket(); '
            f"print('connect', s.connect_ex(('127.0.0.1', {port})))\"; "
            # Its own loopback works: a server and a client inside, as an HTTP benchmark needs.
            f"{PYTHON} -c \"import socket; a = socket.socket(); a.bind(('127.0.0.1', 0)); a.listen(); "
            "b = socket.create_connection(a.getsockname()); print('inside', a.accept()[0] is not None)\""
        )
        seen = run_confined(script, Mounts(), ROOT).stdout.split("\n")
        with pytest.raises(TimeoutError):
            server.accept()
    assert seen[0] != "connect 0" and seen[1] == "inside True", seen


@needs_bwrap
def test_unix_sockets_of_the_host_are_out_of_reach(tmp_path):
    # A read-only mount does not stop connect() on a socket file: sockets are unreachable because
    # where they live (/run, /tmp, homes, the runner's directories) is hidden, and abstract ones are
    # per network namespace.
    path = tmp_path / "service.sock"
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as abstract:
        server.bind(str(path))
        server.listen()
        abstract.bind(b"\0benchgate-test-" + str(os.getpid()).encode())
        abstract.listen()
        script = (
            f"{PYTHON} -c \"import socket; s = socket.socket(socket.AF_UNIX); print(s.connect_ex('{path}'));"
            f" t = socket.socket(socket.AF_UNIX); print(t.connect_ex(b'\\0benchgate-test-{os.getpid()}'))\""
        )
        seen = run_confined(script, Mounts(), ROOT).stdout.split()
        assert seen == [str(errno.ENOENT), str(errno.ECONNREFUSED)], seen


@needs_bwrap
def test_nothing_it_started_survives_it():
    tag = str(random.randrange(10**8, 10**9))
    started = time.monotonic()
    completed = run_confined(f"setsid sleep {tag} & (nohup sleep {tag} >/dev/null 2>&1 &); echo left", Mounts(), ROOT)
    assert completed.stdout.strip() == "left" and time.monotonic() - started < 30
    assert survivors(tag) == []


@needs_bwrap
def test_an_inherited_descriptor_passes_through_bwrap():
    parent, child = socket.socketpair()
    try:
        confinement = Confinement(sandbox.probe(), Mounts())
        argv, env = confinement.wrap(
            [PYTHON, "-c", "import os; fd = os.environ['FD']; os.write(int(fd), f'hello on {fd}'.encode())"],
            cwd=ROOT,
            env=os.environ,
            extra_env={"FD": str(child.fileno())},
        )
        number = child.fileno()
        subprocess.run(argv, env=env, pass_fds=(number,), check=True, timeout=60)
        child.close()
        assert parent.recv(100) == f"hello on {number}".encode()
    finally:
        parent.close()


def test_a_missing_bwrap_is_refused_with_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(tmp_path / "no-such-bwrap"))
    with pytest.raises(sandbox.SandboxUnavailable) as raised:
        sandbox.probe()
    message = raised.value.one_line()
    assert raised.value.exit_status == EXIT_BAD_INPUT and "\n" not in message
    assert "bubblewrap is not installed" in message and "apt-get install bubblewrap" in message
    assert "--no-sandbox" in message


def test_a_bwrap_that_cannot_create_namespaces_is_refused_with_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(fake_bwrap(tmp_path, "bwrap: setting up uid map: Permission denied")))
    with pytest.raises(sandbox.SandboxUnavailable) as raised:
        sandbox.probe()
    message = raised.value.one_line()
    assert "could not create a sandbox (bwrap: setting up uid map: Permission denied)" in message
    assert "enable unprivileged user namespaces" in message and "--no-sandbox" in message


@needs_bwrap
def test_the_probe_runs_once(monkeypatch):
    calls = []
    real_run = subprocess.run
    monkeypatch.setattr(sandbox.subprocess, "run", lambda *a, **k: calls.append(a[0]) or real_run(*a, **k))
    first, second = sandbox.probe(), sandbox.probe()
    assert first is second and len(calls) == 2  # --version, then the trivial sandbox: once per process


# -- copying out what a sandboxed build wrote ----------------------------------------------------


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda tree, outside: (tree / "node").symlink_to(outside), "leads outside its tree"),
        (lambda tree, outside: (tree / "out").symlink_to(outside.parent), "leads outside its tree"),
        (lambda tree, outside: os.mkfifo(tree / "node"), "not a regular file"),
        (lambda tree, outside: (tree / "node").mkdir(), "not a regular file"),
        (lambda tree, outside: None, "does not exist"),
    ],
    ids=["symlink-out", "parent-symlink-out", "fifo", "directory", "missing"],
)
def test_copy_out_refuses_what_leads_out_or_is_no_file(tmp_path, make, why):
    tree, outside = tmp_path / "tree", tmp_path / "secret" / "node"
    tree.mkdir()
    outside.parent.mkdir()
    outside.write_text("the trusted base binary")
    make(tree, outside)
    relative = "out/node" if (tree / "out").is_symlink() else "node"
    with pytest.raises(sandbox.UnsafePath, match=why):
        sandbox.copy_out(tree, relative, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_copy_out_follows_symlinks_inside_the_tree(tmp_path):
    (tmp_path / "out" / "Release").mkdir(parents=True)
    (tmp_path / "out" / "Release" / "node").write_text("binary")
    (tmp_path / "out" / "Release" / "node").chmod(0o755)
    (tmp_path / "node").symlink_to("out/Release/node")  # Node's own Makefile leaves such a link
    copy = sandbox.copy_out(tmp_path, "node", tmp_path / "copy")
    assert copy.read_text() == "binary" and os.access(copy, os.X_OK)
    assert sandbox.read_inside(tmp_path, "missing", 10) == b""
    assert sandbox.read_inside(tmp_path, "node", 3) == b"bin"


def test_the_run_and_build_commands_offer_no_sandbox():
    parser = cli.build_parser()
    assert parser.parse_args(["build", "--no-sandbox", "main"]).use_sandbox is False
    assert parser.parse_args(["build", "main"]).use_sandbox is True
