"""Package exports that load their module on first use, so importing a light module never loads pandas,
scipy or PyGithub through a sibling, and packages never import each other just by being imported."""

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, modules: Mapping[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name comes from the submodule that lists it."""
    source = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in source:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{source[name]}"), name)
        vars(sys.modules[package])[name] = value  # later lookups find it directly
        return value

    def __dir__() -> list[str]:
        return sorted(source)

    return __getattr__, __dir__
