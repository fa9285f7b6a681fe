"""The sandbox (bubblewrap) that code from an untrusted head runs in: ``bwrap`` says what it sees, probes and
starts it and reads what it left. Only ``benchgate.errors`` is imported (docs/security.md)."""

from benchgate._lazy import exports

# The package's public API; everything else is imported from its module.
_MODULES = {
    "bwrap": (
        "SandboxUnavailable",
        "Sandbox",
        "unsandboxed_record",
        "probe",
        "Confinement",
        "UnsafePath",
        "copy_out",
        "read_inside",
        "Mounts",
        "private_home",
        "confined_env",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
