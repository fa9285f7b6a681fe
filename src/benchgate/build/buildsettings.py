"""How Node binaries are built: configure flags, commands, binary path, compiler cache, cache bounds.

Defaults follow Node's BUILDING.md: ``./configure`` (``--ninja`` when ninja is installed),
then ``make -j$(nproc)``, binary at ``out/Release/node``.
"""

from __future__ import annotations

import platform
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from benchgate.build import compilercache
from benchgate.build.cache import CacheLimit, parse_size
from benchgate.errors import InputError

DEFAULT_BUILD_COMMAND = "make -j$(nproc)"
# A build of Node takes one to two hours on a small runner; a build still going after four is stuck
# (or a pull request keeping the machine busy), and is killed with everything it started.
DEFAULT_BUILD_TIMEOUT = 4 * 3600.0


@dataclass(frozen=True)
class BuildSettings:
    """How binaries are built. Defaults follow Node's BUILDING.md.

    ``configure_command`` gets ``--ninja`` (when ``ninja`` is True, or None and ninja is
    installed) and ``configure_flags`` appended; an empty ``configure_command`` skips
    configuring. String commands run through ``sh -c``; tuples run as argv.
    """

    configure_flags: tuple[str, ...] = ()
    build_command: tuple[str, ...] | str = DEFAULT_BUILD_COMMAND
    binary_path: str = "out/Release/node"
    configure_command: tuple[str, ...] | str = ("./configure",)
    ninja: bool | None = None
    use_ccache: bool | None = None
    cache_limit: CacheLimit = field(default_factory=CacheLimit)
    ccache_max_size: str = "10G"
    timeout: float | None = DEFAULT_BUILD_TIMEOUT  # seconds for the whole build (configure and build command)
    keep_failed_worktree: bool = False
    jobs: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.configure_flags, str):
            try:
                object.__setattr__(self, "configure_flags", tuple(shlex.split(self.configure_flags)))
            except ValueError as error:
                raise InputError(f"configure flags {self.configure_flags!r}: {error}") from None
        for name in ("configure_flags", "build_command", "configure_command"):
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, value := tuple(value))
            if not isinstance(value, str | tuple) or (
                isinstance(value, tuple) and not all(isinstance(item, str) for item in value)
            ):
                raise InputError(f"{name.replace('_', '-')} must be a string or a list of strings, not {value!r}")
        if not self.build_command:
            raise InputError("build command is empty")
        for name in ("ninja", "use_ccache"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), bool):
                raise InputError(f"{name.replace('use_', '')} must be true or false, not {getattr(self, name)!r}")
        if self.jobs is not None and (isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1):
            raise InputError(f"jobs must be a positive integer, not {self.jobs!r}")
        if self.timeout is not None and (
            isinstance(self.timeout, bool) or not isinstance(self.timeout, int | float) or self.timeout <= 0
        ):
            raise InputError(f"timeout must be a positive number of seconds, not {self.timeout!r}")
        if not isinstance(self.ccache_max_size, str) or not re.fullmatch(
            r"\d+(\.\d+)?\s*([kMGT]i?)?", self.ccache_max_size
        ):
            raise InputError(f"ccache max size must look like 10G or 500M, not {self.ccache_max_size!r}")
        if not isinstance(self.binary_path, str):
            raise InputError(f"binary path must be a string, not {self.binary_path!r}")
        binary = Path(self.binary_path)
        if not self.binary_path or binary.is_absolute() or ".." in binary.parts:
            raise InputError(f"binary path {self.binary_path!r} must be relative to the checkout, without '..'")

    @classmethod
    def from_mapping(cls, config: Mapping[str, object]) -> BuildSettings:
        """Settings from a config mapping; keys may use - or _ (configure-flags, configure-command,
        build-command, binary-path, jobs, ninja, ccache, cache-max-entries, cache-max-size,
        ccache-max-size, timeout). ``cache-dir`` is accepted and ignored: pass it to build_ref."""
        normalized = {str(name).replace("-", "_"): value for name, value in config.items()}
        normalized.pop("cache_dir", None)
        plain = {"configure_flags", "configure_command", "build_command", "binary_path", "jobs", "ninja"}
        plain |= {"ccache_max_size", "timeout"}
        known = plain | {"ccache", "cache_max_entries", "cache_max_size"}
        unknown = sorted(set(normalized) - known)
        if unknown:
            raise InputError(f"unknown build setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        values: dict = {name: normalized[name] for name in plain if name in normalized}
        if "ccache" in normalized:
            values["use_ccache"] = normalized["ccache"]
        if "cache_max_entries" in normalized or "cache_max_size" in normalized:
            size = normalized.get("cache_max_size")
            values["cache_limit"] = CacheLimit(
                max_entries=normalized.get("cache_max_entries", CacheLimit().max_entries),  # type: ignore[arg-type]
                max_bytes=parse_size(str(size)) if size is not None else CacheLimit().max_bytes,
            )
        return cls(**values)

    def uses_ninja(self) -> bool:
        return self.ninja if self.ninja is not None else shutil.which("ninja") is not None

    def configure_argv(self) -> list[str] | None:
        """The configure step as argv, or None when configuring is skipped."""
        if not self.configure_command:
            return None
        extra = list(self.configure_flags)
        if self.uses_ninja() and "--ninja" not in extra:
            extra.insert(0, "--ninja")
        if isinstance(self.configure_command, str):
            return ["sh", "-c", " ".join([self.configure_command, shlex.join(extra)]).strip()]
        return [*self.configure_command, *extra]

    def build_argv(self) -> list[str]:
        """The build step as argv; ``jobs`` replaces the default command's ``$(nproc)``."""
        command = self.build_command
        if command == DEFAULT_BUILD_COMMAND and self.jobs is not None:
            command = f"make -j{self.jobs}"
        if isinstance(command, str):
            return ["sh", "-c", command]
        return list(command)

    def key_inputs(self, env: Mapping[str, str]) -> dict:
        """Everything besides the SHA that changes the binary."""
        return {
            "configure": self.configure_argv(),
            # The command as configured: the job count of make -j does not change the binary.
            "build": ["sh", "-c", self.build_command] if isinstance(self.build_command, str) else self.build_command,
            "binary_path": self.binary_path,
            "compilers": compilercache.compiler_identity(env),
            "machine": platform.machine(),
        }
