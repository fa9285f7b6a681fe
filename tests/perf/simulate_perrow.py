"""simulate_gate.py's ``auto-per-row`` mode: ``--runs auto`` where every comparison stops on its own.

With one job per configuration (``benchgate run --jobs per-configuration``) the unit that stops
is the row, not the file: ``stopping.files_to_stop`` gets each row as its own unit, so a row
stops at the first look at which it is settled, whatever the other rows of its file do, and its
decision is the one of that look. The live loop is otherwise the one of ``simulate_gate.run_auto``
(and of ``benchgate.run.adaptive``): same design, same looks, same decision rules.

Why the error control stays valid: the sequential p-values are valid whatever the stopping
(stopping is a non-binding futility rule), and the settle guard bounds calling a real 5 %
regression unchanged per row and look, so it does not depend on how rows are grouped. The
table's ``auto-per-row`` line shows it on the same samples as ``auto`` (common random numbers).
"""

from __future__ import annotations

import numpy as np

from benchgate.stats import sequential, stopping

MODE = "auto-per-row"


def run_auto_per_row(base: np.ndarray, head: np.ndarray, test: str, strata: np.ndarray | None = None, **design_options):
    """The live loop of ``--runs auto`` with per-row stops: each row is its own unit; the ``Decisions`` and the
    samples per row.

    ``strata`` (a duet: ``base[..., i]`` and ``head[..., i]`` are one pair, ``strata`` its CPU-set
    assignment) gives every look its pairs, for the paired test (``stopping.look_statistics``).
    """
    design = sequential.make_design(test=test, **design_options)
    looks = [(base[..., :runs], head[..., :runs]) for runs in design.looks]
    if strata is not None:  # a duet: each look's pairs are its samples
        looks = [(*look, (*look, strata[..., :runs])) for look, runs in zip(looks, design.looks, strict=True)]
    rows = base.shape[1]
    replayed = stopping.replay(design, looks, np.arange(rows), rows, with_mde=False)
    return replayed.result.decisions, np.asarray(design.looks, dtype=float)[replayed.stopped_after]
