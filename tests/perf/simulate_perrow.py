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
    reports, rows = base.shape[0], base.shape[1]
    unit_of_row = np.arange(rows)
    stopped_after = np.full((reports, rows), -1)
    history = []
    result = None
    for k, runs in enumerate(design.looks):
        active = stopped_after < 0
        pairs = None if strata is None else (base[..., :runs], head[..., :runs], strata[..., :runs])
        history.append(stopping.look_statistics(design, base[..., :runs], head[..., :runs], active, pairs))
        result = stopping.decide_at_look(design, history, with_mde=False)
        stop = stopping.files_to_stop(unit_of_row, result.settled | ~active, rows) & (stopped_after < 0)
        stopped_after[stop] = k
        if (stopped_after >= 0).all():
            break
    assert result is not None
    looks = np.asarray(design.looks, dtype=float)
    return result.decisions, looks[stopped_after]
