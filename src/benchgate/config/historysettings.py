"""The configuration's ``history:`` section (store, keep, site-url) and where the store comes from: ``--store``,
else ``$BENCHGATE_HISTORY``, else the section's ``store``, else the default (docs/history.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchgate.config.values import fail

DEFAULT_STORE = "sqlite:///benchgate-history.db"
ENVIRONMENT = "BENCHGATE_HISTORY"
_KEYS = ("store", "keep", "site-url")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^\s]{0,1000}$")
_SITE = re.compile(r"^https?://[^\s]{1,500}$")


@dataclass(frozen=True)
class HistorySettings:
    """The ``history:`` section, validated; empty values mean "not configured"."""

    store: str = ""
    keep: int = 0
    site_url: str = ""


def parse_history(value: Any, where: str, key: str = "history") -> tuple[tuple[str, Any], ...]:
    """Validate the section; returns its items (hashable, as Settings keeps them)."""
    if not isinstance(value, dict):
        raise fail(where, key, "must be a mapping with store, keep and site-url")
    if unknown := [name for name in value if name not in _KEYS]:
        raise fail(where, key, f"unknown key {str(unknown[0])[:40]!r}; known keys: {', '.join(_KEYS)}")
    store, keep, site = value.get("store"), value.get("keep", 0), value.get("site-url")
    if store is not None and (not isinstance(store, str) or not _URL.match(store)):
        raise fail(where, key, "store must be a database URL such as sqlite:///benchgate-history.db")
    if isinstance(store, str) and re.match(r"^[^:]+://[^/@]*:[^/@]*@", store):
        raise fail(where, key, "store must not hold a password: put that URL in the BENCHGATE_HISTORY secret")
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= 10_000_000:
        raise fail(where, key, "keep must be a whole number of runs (0 keeps all)")
    if site is not None and (not isinstance(site, str) or not _SITE.match(site)):
        raise fail(where, key, "site-url must be an http(s) URL")
    return tuple(item for item in (("store", store), ("keep", keep), ("site-url", site)) if item[1] is not None)


def history_settings(items: tuple[tuple[str, Any], ...]) -> HistorySettings:
    """The section's typed form from the items ``parse_history`` returned."""
    values = dict(items)
    return HistorySettings(values.get("store") or "", int(values.get("keep") or 0), values.get("site-url") or "")


def configured_history(config_path: str | Path | None) -> HistorySettings:
    """The ``history:`` section of the configuration file at ``config_path`` (None or absent: not configured)."""
    from benchgate.config.settings import read_config_file

    return history_settings((read_config_file(config_path) if config_path else {}).get("history", ()))


def resolve_store(
    option: str | None,
    configured: HistorySettings,
    environment: Mapping[str, str] | None = None,
    default: str | None = DEFAULT_STORE,
) -> str | None:
    """The store URL: the option, else $BENCHGATE_HISTORY, else the file's ``history.store``, else ``default``."""
    environment = os.environ if environment is None else environment
    return option or environment.get(ENVIRONMENT) or configured.store or default


def configured_store(option: str | None, configured: HistorySettings) -> str | None:
    """``resolve_store`` without the default: None when no store is configured (``benchgate run``'s prior)."""
    return resolve_store(option, configured, default=None)
