"""The sandbox that code from an untrusted head (a pull request) runs in: bubblewrap's namespaces.

- ``policy``: what a sandboxed process sees (the mounts that hide, expose and confine paths)
  and which environment variables reach it; ``strip_credentials`` for the unsandboxed fallback.
- ``bwrap``: finding bwrap and probing it once, and the command line that confines one process;
  ``Confinement`` wraps a command for the sandbox, or only strips credentials under ``--no-sandbox``.
- ``files``: reading what a sandboxed process wrote without following its symlinks out of its tree.

Only ``benchgate.errors`` is imported, so both the builds and the benchmark runs can use it.
"""

from benchgate._lazy import exports

# The package's public API; everything else is imported from its module.
_MODULES = {
    "bwrap": ("SandboxUnavailable", "Sandbox", "unsandboxed_record", "probe", "Confinement"),
    "files": ("UnsafePath", "copy_out", "read_inside"),
    "policy": ("Mounts", "private_home", "confined_env"),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
