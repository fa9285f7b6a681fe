"""What the PR comment shows, as one value: the type that ``comment`` and ``commentgate`` both render.

It lives below both so that the comment's modules import it and not each other: ``comment`` imports
``commentgate``, and ``commentgate`` needs only this type.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from benchgate.config.labels import LabelDecision
from benchgate.config.settings import Settings
from benchgate.results.runrecord import RunSummary
from benchgate.stats.outcome import Outcome


@dataclass(frozen=True)
class CommentContext:
    """Everything the comment shows; built by ``benchgate report``."""

    gated: pd.DataFrame
    settings: Settings
    outcome: Outcome
    run: RunSummary
    labels: LabelDecision = LabelDecision()
    run_url: str | None = None
    full_report: str = "the job summary and the results artifact of the workflow run"
    nothing_selected: bool = False  # the change touches no benchmarked area, so nothing ran
    charts: tuple[str, ...] = ()  # file names of the charts written for the workflow run's artifact
