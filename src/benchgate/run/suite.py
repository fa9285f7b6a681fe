"""Benchmark discovery and selection, with the meaning ``node benchmark/compare.js`` gives its arguments."""

import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from benchgate.errors import InputError
from benchgate.results.recordparts import Selection

# Directories in benchmark/ that are not categories (compare.js skips fixtures too).
_NOT_CATEGORIES = frozenset({"fixtures", "node_modules"})
_BENCHMARK_SUFFIXES = (".js", ".mjs", ".cjs")
# HTTP benchmarks hand the load generation to bench.http(), which needs autocannon or wrk.
_HTTP_CALL = re.compile(r"\.http\(\s*\{")
HTTP_BENCHMARKERS = ("wrk", "autocannon")
# A file may name its benchmarker, as a config (http2: `benchmarker: ['test-double-http2']`, earlier
# `['h2load']`) or in its bench.http() options; then that one, not wrk or autocannon, must be there.
_DECLARED_BENCHMARKER = re.compile(r"""\bbenchmarker\s*:\s*(\[[^\]]*\]|'[^']*'|"[^"]*")""")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def parse_set(values: Iterable[str]) -> tuple[str, ...]:
    """Validate ``--set key=value`` arguments the way common.js parses them; InputError on the first bad one."""
    parsed = tuple(values)
    for value in parsed:
        if value.partition("=")[0] in ("", value):  # a non-empty key up to the first '='; the value may be empty
            raise InputError(f"--set {value!r}: expected key=value with a non-empty key")
    return parsed


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """Parse ``I/N`` (1 <= I <= N) into (I, N); None for no sharding."""
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise InputError(f"--shard {text!r}: expected I/N, e.g. 1/4")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise InputError(f"--shard {text!r}: I must be between 1 and N")
    return index, count


def list_categories(benchmark_dir: Path) -> dict[str, list[str]]:
    """Every category of a benchmark directory and its benchmark files (sorted, as names inside the category)."""
    if not benchmark_dir.is_dir():
        raise InputError("benchmark directory not found", where=str(benchmark_dir))
    categories: dict[str, list[str]] = {}
    for entry in sorted(benchmark_dir.iterdir()):
        if not entry.is_dir() or entry.name in _NOT_CATEGORIES or entry.name[0] in "._":
            continue
        categories[entry.name] = sorted(
            child.name
            for child in entry.iterdir()
            if child.is_file() and child.name[0] not in "._" and child.name.endswith(_BENCHMARK_SUFFIXES)
        )
    return categories


def select(
    benchmark_dir: Path,
    categories: Sequence[str],
    *,
    filters: Sequence[str] = (),
    excludes: Sequence[str] = (),
    set_args: Sequence[str] = (),
    shard: tuple[int, int] | None = None,
) -> Selection:
    """Resolve categories and filters to benchmark files (``category/file.js``), as run.json's ``selection`` records
    them; InputError when nothing matches."""
    benchmark_dir = benchmark_dir.resolve()
    if not (benchmark_dir / "common.js").is_file():
        raise InputError("not a Node benchmark directory (no common.js)", where=str(benchmark_dir))
    available = list_categories(benchmark_dir)
    if not categories:
        raise InputError("no benchmark category given (e.g. 'buffers', or 'all')")
    wanted = list(available) if "all" in categories else list(dict.fromkeys(categories))
    unknown = [name for name in wanted if name not in available]
    if unknown:
        raise InputError(
            f"unknown category {', '.join(repr(name) for name in unknown)}; "
            f"available: {', '.join(available) or 'none'}",
            where=str(benchmark_dir),
        )
    files = [
        f"{category}/{name}"
        for category in wanted
        for name in available[category]
        if (not filters or any(pattern in name for pattern in filters))
        and not any(pattern in name for pattern in excludes)
    ]
    if not files:
        raise InputError(
            f"no benchmark file in {', '.join(wanted)} matches --filter {list(filters)} / --exclude {list(excludes)}"
        )
    if shard is not None:  # shard I of N: every N-th of the sorted files from the I-th, a deterministic 1/N of them
        index, count = shard
        selected_count = len(files)
        files = sorted(files)[index - 1 :: count]
        if not files:
            raise InputError(f"shard {index}/{count} of {selected_count} selected file(s) is empty; use fewer shards")
    return Selection(
        benchmark_dir=str(benchmark_dir),
        categories=tuple(wanted),
        filter=tuple(filters),
        exclude=tuple(excludes),
        set=parse_set(set_args),
        shard="{}/{}".format(*shard) if shard else None,
        files=tuple(files),
    )


def source(path: Path) -> str:
    """A benchmark file's text ("" when it cannot be read)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def is_http_benchmark(path: Path) -> bool:
    """True when the benchmark drives an HTTP load generator through ``bench.http({...})``."""
    return bool(_HTTP_CALL.search(source(path)))


def declared_benchmarkers(path: Path) -> list[str]:
    """The benchmarkers a file names itself (its ``benchmarker`` config values or bench.http option)."""
    declarations = _DECLARED_BENCHMARKER.findall(source(path))
    names = [single or double for declaration in declarations for single, double in _QUOTED.findall(declaration)]
    return list(dict.fromkeys(name for name in names if name))


def http_skips(selection: Selection, which: Callable[[str], str | None] = shutil.which) -> list[dict]:
    """run.json's skips of HTTP benchmarks whose load generator (autocannon, wrk, or their own) is missing."""
    chosen = [arg.partition("=")[2] for arg in selection.set if arg.startswith("benchmarker=")]
    benchmark_dir = Path(selection.benchmark_dir)
    # Node's test double ships with the suite (benchmark/_test-double-benchmarker.js), not on the PATH.
    shipped = (benchmark_dir / "_test-double-benchmarker.js").is_file()
    skips = []
    for name in selection.files:
        path = benchmark_dir / name
        if not is_http_benchmark(path):
            continue
        needed = chosen[:1] or declared_benchmarkers(path)
        missing = [tool for tool in needed if not (shipped if tool.startswith("test-double") else which(tool))]
        reason = f"needs {' and '.join(missing)}, which is not installed" if missing else None
        if not needed and not any(which(tool) for tool in HTTP_BENCHMARKERS):
            reason = "needs autocannon or wrk, and neither is installed"
        if reason is not None:
            skips.append({"filename": name, "reason": f"HTTP benchmark {reason}: not run"})
    return skips
