"""Releases as series for the site: ``benchgate versions``' steps recorded into a scratch store and read back as
the store's release series, and a change point where a step's compare.R test starred the row (its improvement,
confidence 1 - p)."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from benchgate.history.model import RELEASES_BRANCH, ChangePoint, Series
from benchgate.history.recording import record_run
from benchgate.history.store import series

STARRED = ("*", "**", "***")


@dataclass(frozen=True)
class ReleaseStep:
    """A finished step: its newer release, its run directory and compare.R's table of it."""

    head: str
    directory: Path
    compared: pd.DataFrame  # filename, configuration, confidence, improvement, p_value per row


def release_series(steps: Sequence[ReleaseStep]) -> tuple[list[Series], list[ChangePoint]]:
    """Every row's series over the releases, and the steps compare.R starred as its change points."""
    with tempfile.TemporaryDirectory(prefix="benchgate-releases-") as scratch:
        store = f"sqlite:///{Path(scratch) / 'releases.db'}"
        for step in steps:
            record_run(step.directory, store, commit=f"v{step.head}", branch=RELEASES_BRANCH)
        found = series(store, branch=RELEASES_BRANCH)
    changes = []
    for step in steps:
        release, starred = f"v{step.head}", step.compared[step.compared["confidence"].astype(str).isin(STARRED)]
        rows = {(str(row.filename), str(row.configuration)): row for row in starred.itertuples(index=False)}
        for one in found:
            row = rows.get((one.key.filename, one.key.configuration))
            index = next((i for i, point in enumerate(one.points) if point.commit == release), 0)
            if row is None or index == 0 or not math.isfinite(row.improvement):
                continue  # a row whose older release measured nothing (a failure) has no step to mark
            before, after = one.points[index - 1], one.points[index]
            change, sure = float(row.improvement), 1.0 - float(row.p_value)
            changes.append(
                ChangePoint(
                    one.key, index, release, after.date, change, before.mean_rate, after.mean_rate, sure, before.commit
                )
            )
    return found, changes
