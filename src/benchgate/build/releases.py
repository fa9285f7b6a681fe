"""Node binaries: checking a local one, and fetching official releases (from the dist site or a mirror,
checked against ``SHASUMS256.txt``, or npm's ``node-linux-ARCH``) into ``$BENCHGATE_CACHE/releases``."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from benchgate.build import cache
from benchgate.build.cache import BinaryCache, CacheEntry, CacheLimit, default_cache_dir
from benchgate.errors import InputError, RunError

if TYPE_CHECKING:
    from benchgate.sandbox import Confinement

DEFAULT_DIST_URL = "https://nodejs.org/dist"
SOURCES = ("auto", "dist", "npm")  # the --release-source choices
_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")
_NODE_VERSION_OUTPUT = re.compile(r"^v\d+\.\d+\.\d+\S*$")
_DOWNLOAD_TIMEOUT = 60


@dataclass(frozen=True)
class NodeBinary:
    """One side's Node executable and how it was obtained."""

    path: Path
    version: str
    sha256: str
    node_args: tuple[str, ...] = ()
    source: str = "local"
    ref: str | None = None
    sha: str | None = None
    extra: dict = field(default_factory=dict)

    def record(self) -> dict:
        """The binary as run.json stores it."""
        fields = asdict(self)
        extra = fields.pop("extra")
        return {**fields, "path": str(self.path), "node_args": list(self.node_args), **extra}


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file (computed once per path, size and modification time)."""
    status = path.stat()
    return _sha256_of(str(path), status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    del size, mtime_ns  # part of the cache key only
    return cache.file_sha256(Path(path))


def inspect_binary(
    path: str | Path, *, side: str, node_args: tuple[str, ...] = (), sandbox: Confinement | None = None, **fields
) -> NodeBinary:
    """Check that ``path`` runs as Node (``--version``, inside ``sandbox`` if given); InputError naming the side."""
    option = f"--{side}-binary"
    candidate = Path(path).expanduser()
    if not candidate.exists():
        raise InputError(f"{option} {path}: no such file")
    if candidate.is_dir() or not os.access(candidate, os.X_OK):
        raise InputError(f"{option} {path}: not an executable file")
    candidate = candidate.resolve()
    argv, env = [str(candidate), "--version"], dict(os.environ)
    if sandbox is not None:
        argv, env = sandbox.wrap(argv, cwd=Path("/"), env=env)
    try:
        completed = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InputError(f"{option} {path}: cannot run it to ask its version ({error})") from None
    version = completed.stdout.strip()
    if completed.returncode != 0 or not _NODE_VERSION_OUTPUT.match(version):
        shown = (version or completed.stderr.strip())[:80]
        raise InputError(f"{option} {path}: not a Node executable ('--version' printed {shown!r})")
    # A local binary has no git ref: its path is what identifies it in the report.
    fields.setdefault("ref", str(candidate))
    return NodeBinary(candidate, version, file_sha256(candidate), tuple(node_args), **fields)


def normalize_version(text: str) -> str:
    """``18.16.0`` or ``v18.16.0`` -> ``18.16.0``; InputError for anything else."""
    match = _VERSION.match(text.strip())
    if not match:
        raise InputError(f"release version {text!r}: expected X.Y.Z, e.g. 18.16.0")
    return ".".join(match.groups())


def platform_arch() -> str:
    """Node's name for this machine's architecture (x64, arm64...)."""
    machine = platform.machine().lower()
    return {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(machine, machine)


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT) as response:
            return response.read()
    except (urllib.error.URLError, OSError, TimeoutError) as error:
        raise RunError(f"cannot download {url}: {getattr(error, 'reason', error)}") from None


def _from_dist(version: str, arch: str, mirror: str, scratch: Path) -> tuple[Path, str, str, str]:
    """``node-vVERSION-linux-ARCH.tar.xz`` checked against SHASUMS256.txt: (archive, its node, origin, checksum)."""
    base = f"{mirror.rstrip('/')}/v{version}"
    archive_name = f"node-v{version}-linux-{arch}.tar.xz"
    sums = _download(f"{base}/SHASUMS256.txt").decode("utf-8", errors="replace")
    expected = next((line.split()[0] for line in sums.splitlines() if line.split()[1:] == [archive_name]), None)
    if expected is None:
        raise RunError(f"{base}/SHASUMS256.txt lists no {archive_name}")
    archive = _download(f"{base}/{archive_name}")
    actual = hashlib.sha256(archive).hexdigest()
    if actual != expected:
        raise RunError(f"{base}/{archive_name}: sha256 {actual} does not match SHASUMS256.txt ({expected})")
    (scratch / archive_name).write_bytes(archive)
    member = f"node-v{version}-linux-{arch}/bin/node"
    return scratch / archive_name, member, f"{base}/{archive_name}", f"sha256:{expected} (SHASUMS256.txt)"


def _from_npm(version: str, arch: str, scratch: Path) -> tuple[Path, str, str, str]:
    """``npm pack node-linux-ARCH@VERSION`` (npm verifies the registry's integrity hash): ``_from_dist``'s tuple."""
    if shutil.which("npm") is None:
        raise RunError("npm is not installed; it is needed to fetch releases from the npm registry")
    spec = f"node-linux-{arch}@{version}"
    argv = ["npm", "pack", spec, "--json", "--pack-destination", str(scratch)]
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=900, cwd=scratch)
    if completed.returncode != 0:
        tail = completed.stderr.strip().splitlines()[-1:] or ["no output"]
        raise RunError(f"npm pack {spec} failed: {tail[0]}")
    info = json.loads(completed.stdout)[0]
    return scratch / info["filename"], "package/bin/node", f"npm:{spec}", info.get("integrity", "")


def _read_member(archive: Path, member: str, where: str) -> bytes:
    """The bytes of the node executable in a release archive; a one-line error when it is missing."""
    with tarfile.open(archive) as bundle:
        try:
            return bundle.extractfile(member).read()
        except (KeyError, AttributeError):  # no such member, or not a regular file (extractfile gives None)
            raise RunError(f"{where} holds no {member}") from None


def _fetch(source: str, version: str, mirror: str) -> CacheEntry:
    """The release from ``source`` (dist or npm), from the cache when it is there undamaged, else fetched and stored."""
    arch = platform_arch()
    releases = BinaryCache(default_cache_dir(), CacheLimit(None, None), entries="releases")
    key = f"{source}-v{version}-linux-{arch}"
    with releases.lock(key):
        entry, _ = releases.validate(key)
        if entry is None:  # missing or damaged: fetch it (again)
            with tempfile.TemporaryDirectory(prefix="benchgate-release-") as scratch:
                if source == "dist":
                    archive, member, origin, checksum = _from_dist(version, arch, mirror, Path(scratch))
                else:
                    archive, member, origin, checksum = _from_npm(version, arch, Path(scratch))
                node = _read_member(archive, member, origin)
            metadata = {"origin": origin, "checksum": checksum}
            entry = releases.store(key, Path("node"), metadata, copy=lambda _, staged: staged.write_bytes(node))
    return entry


def release_binary(
    version: str, *, side: str, node_args: tuple[str, ...] = (), source: str = "auto", mirror: str = DEFAULT_DIST_URL
) -> NodeBinary:
    """An official release, fetched once into the cache (``auto``: the dist site, else npm) and checked like a
    local binary."""
    version = normalize_version(version)
    if source != "auto":
        entry = _fetch(source, version, mirror)
    else:
        try:
            entry, source = _fetch("dist", version, mirror), "dist"
        except RunError as dist_error:
            try:
                entry, source = _fetch("npm", version, mirror), "npm"
            except RunError as npm_error:
                raise RunError(f"node {version}: dist site: {dist_error.message}; npm: {npm_error.message}") from None
    origin, checksum = entry.metadata["origin"], entry.metadata["checksum"]
    binary = inspect_binary(entry.binary, side=side, node_args=node_args, source=f"release:{source}")
    if binary.version != f"v{version}":
        raise RunError(f"the {origin} binary reports {binary.version}, expected v{version}")
    # The ref is the release's tag in nodejs/node.
    return replace(binary, ref=f"v{version}", extra={"origin": origin, "checksum": checksum})
