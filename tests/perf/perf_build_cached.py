"""How long `benchgate build` takes for an already cached SHA, next to a cold build of it.

Run: python tests/perf/perf_build_cached.py [--repeats N]

Builds the Node-like fixture repository (tests/nodelike.py) with the real CLI in fresh
processes, in two variants:
- "fixture": the fixture's own ~16 KB launcher binary;
- "node-sized": the build also copies the installed node (~100 MB) to out/Release/node,
  so the cached path verifies a binary as big as a real Node build (sha256 of every byte).
For each: one cold build (empty binary cache and ccache), one rebuild of another SHA with
identical sources (binary cache miss, ccache hit), then N cached builds of the first SHA.
The fixture's configure and Makefile append a line to a marker file each time they run,
which proves the cached builds ran no build command. Exits 1 if a cached build took 2 s or
more, or ran a build command.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from nodelike import make_node_like_repo, marker_lines  # noqa: E402

from benchgate.build import BuildSettings, build_ref  # noqa: E402

LIMIT_SECONDS = 2.0
BUILD_ONLY = """
import argparse, sys
from benchgate.commands import build
parser = argparse.ArgumentParser()
build.register(parser.add_subparsers())
args = parser.parse_args()
sys.exit(args.handler(args))
"""


def timed_build(repo: Path, cache: Path, ref: str, extra: list[str], env: dict[str, str]) -> tuple[float, str]:
    command = [shutil.which("benchgate") or "benchgate", "build", "--repo", str(repo), "--cache-dir", str(cache)]
    started = time.perf_counter()
    completed = subprocess.run([*command, *extra, ref], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        sys.exit(f"benchgate build {ref} failed ({completed.returncode}): {completed.stderr.strip()}")
    return elapsed, completed.stdout


def measure(name: str, extra: list[str], repeats: int, workdir: Path) -> bool:
    repo = make_node_like_repo(workdir / name / "node")
    cache = workdir / name / "cache"
    marker = workdir / name / "marker"
    env = {**os.environ, "NODELIKE_BUILD_MARKER": str(marker)}
    cold, _ = timed_build(repo.path, cache, repo.commits["v2"], extra, env)
    ccache_warm, ccache_out = timed_build(repo.path, cache, "main", extra, env)  # same sources, new SHA
    runs_before = len(marker_lines(marker))
    cached = []
    for _ in range(repeats):
        elapsed, stdout = timed_build(repo.path, cache, repo.commits["v2"], extra, env)
        assert " cached in " in stdout.splitlines()[0], stdout
        cached.append(elapsed)
    in_process = []
    build_command = next((item.split("=", 1)[1] for item in extra if item.startswith("--build-command=")), None)
    settings = BuildSettings(ninja=False, **({"build_command": build_command} if build_command else {}))
    for _ in range(repeats):
        started = time.perf_counter()
        result = build_ref(repo.path, repo.commits["v2"], side="base", settings=settings, cache_dir=cache)
        in_process.append(time.perf_counter() - started)
        assert result.cached
    # The same command with only the build subcommand imported (cli.py imports every subcommand, and
    # with them pandas and scipy): shows how much of the cached time is interpreter and import start-up.
    build_only = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-c",
                BUILD_ONLY,
                "build",
                "--repo",
                str(repo.path),
                "--cache-dir",
                str(cache),
                *extra,
                repo.commits["v2"],
            ],
            check=True,
            capture_output=True,
            env=env,
        )
        build_only.append(time.perf_counter() - started)
    build_commands_run = len(marker_lines(marker)) - runs_before
    binary = Path(stdout.strip().splitlines()[-1])
    ok = max(cached) < LIMIT_SECONDS and build_commands_run == 0
    print(f"\n[{name}] binary {binary.stat().st_size / 1e6:.1f} MB")
    print(f"  cold build (empty caches)           : {cold:6.2f} s")
    print(
        f"  new SHA, same sources (ccache warm) : {ccache_warm:6.2f} s   ({ccache_out.splitlines()[0].split('; ')[-1]})"
    )
    print(
        f"  cached SHA x{repeats}: median {statistics.median(cached):.2f} s, max {max(cached):.2f} s"
        f"   cold/cached = {cold / statistics.median(cached):.1f}x"
    )
    print(
        f"  of which build_ref itself (in-process, median of {repeats}): {statistics.median(in_process) * 1000:.0f} ms"
    )
    print(f"  same, importing only commands/build.py (median of {repeats}): {statistics.median(build_only):.2f} s")
    print(f"  build commands run by cached builds : {build_commands_run} (marker lines before/after)")
    print(f"  verdict: {'OK' if ok else 'FAIL'} (limit {LIMIT_SECONDS:.0f} s, no build command)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    startup = [time.perf_counter()]
    subprocess.run([shutil.which("benchgate") or "benchgate", "--version"], check=True, capture_output=True)
    print(f"benchgate --version (interpreter + CLI start-up): {time.perf_counter() - startup[0]:.2f} s")
    with tempfile.TemporaryDirectory(prefix="perf-build-") as tmp:
        workdir = Path(tmp)
        results = [
            measure("fixture", ["--no-ninja"], args.repeats, workdir),
            measure(
                "node-sized",
                ["--no-ninja", '--build-command=make -j"$(nproc)" && cp "$(command -v node)" out/Release/node'],
                args.repeats,
                workdir,
            ),
        ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
