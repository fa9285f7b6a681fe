"""The duet mode of simulate_gate.py: a model of duet noise and the paired tests run on it.

In a duet (``--pairing duet``) base and head of one configuration and iteration run at the same
moment on two disjoint CPU sets. Each sample's log rate is the row's level, plus

- interference **shared by the pair** (it hits both halves at once and cancels in the pair's log
  ratio): a share ``rho`` of the row's noise variance, ``rho`` drawn per file uniformly from
  ``shared_low`` to ``shared_high`` (the issue measured the ratio's sd at 0.031-0.038 duet against
  0.046-0.059 sequential, rho ~ 0.5; 0 is included: a file that gains nothing), the run's slow drift,
  and shared slow-downs (``shared_outliers`` of the pairs, 10-50 %, each half slowed by 0.5-1.5 times that);
- **independent noise** of each half: the other ``1 - rho`` of the variance, and the sequential
  model's own outliers (``outliers`` of the samples of each side, 10-50 %);
- a **CPU set bias**: per report and file one of the two CPU sets is faster by a normal
  ``cpu_bias`` percent; which side gets which set is drawn per pair (as the runner does from the
  seed), so the bias is noise of either sign in the ratio, not a false change.

The rows (their sigma, true effect, kind) come from simulate_gate.draw_rows, so the duet rows of a
suite are the sequential suite's in distribution. ``run_duet`` decides them with each paired test
(candidates.PAIRED_TESTS) at a fixed number of pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import candidates
import numpy as np
import simulate_perrow

from benchgate.stats import decisions

AUTO_MODE = "duet-auto"


@dataclass(frozen=True)
class DuetModel:
    shared_low: float = 0.0
    shared_high: float = 0.8
    shared_outliers: float = 0.02
    cpu_bias: float = 1.0  # percent, sd of the per-file speed difference of the two CPU sets


def generate(rng: np.random.Generator, model, rows, files_of_row, runs: int, duet: DuetModel = DuetModel()):
    """Paired rates ``(reports, rows, runs)`` per side from ``rows`` = (sigma, effect, kind) of draw_rows."""
    sigma, effect, _ = rows
    reports, count = sigma.shape
    files = int(files_of_row.max()) + 1
    rho = rng.uniform(duet.shared_low, duet.shared_high, (reports, files))[:, files_of_row][..., None]
    trend = rng.uniform(-model.drift, model.drift, (reports, 1, 1)) / 100 * np.arange(runs) / max(runs - 1, 1)
    level = rng.normal(np.log(1e5), 2.0, (reports, count, 1))
    shared = level + trend + np.sqrt(rho) * sigma[..., None] * rng.standard_normal((reports, count, runs))
    hit = rng.random((reports, count, runs)) < duet.shared_outliers
    slowdown = np.where(hit, np.log(rng.uniform(model.outlier_low, model.outlier_high, hit.shape)), 0.0)
    bias = rng.normal(0.0, duet.cpu_bias / 100, (reports, files))[:, files_of_row][..., None]
    # As the runner assigns them: in each two iterations one pair each way round, the order drawn.
    flips = rng.random((reports, count, (runs + 1) // 2)) < 0.5
    head_on_first = np.repeat(flips, 2, axis=-1)[..., :runs] ^ (np.arange(runs) % 2 == 1)
    sides = []
    for side in (0, 1):
        own = np.sqrt(1 - rho) * sigma[..., None] * rng.standard_normal((reports, count, runs))
        log_rate = shared + own - slowdown * rng.uniform(0.5, 1.5, hit.shape)
        on_first = head_on_first if side == 1 else ~head_on_first
        log_rate += np.where(on_first, bias / 2, -bias / 2)
        if side == 1:
            log_rate += effect[..., None]
        slow = rng.random((reports, count, runs)) < model.outliers
        log_rate[slow] -= np.log(rng.uniform(model.outlier_low, model.outlier_high, int(slow.sum())))
        sides.append(np.exp(log_rate))
    return sides[0], sides[1], head_on_first.astype(np.int8)


def run_duet(base: np.ndarray, head: np.ndarray, strata: np.ndarray, test: str, runs: int):
    """Decisions of one paired test on the first ``runs`` pairs, and the samples a side each row took."""
    base, head = base[..., :runs], head[..., :runs]
    st = candidates.duet_statistics(base, head, base, head, test, strata[..., :runs])
    result = decisions.decide_looks([st], [1.0], with_mde=False)
    return result.decision, np.full(result.decision.shape, float(runs))


def run_duet_auto(base: np.ndarray, head: np.ndarray, strata: np.ndarray, test: str, **design_options):
    """``--runs auto --pairing duet``: the paired test over the design's looks, every comparison stopping on its own.

    The live loop of ``benchgate.run.adaptive`` with one job per configuration (simulate_perrow's): the
    same design (looks, Lan-DeMets weights, settle and futility rules) as the unpaired ``auto-per-row``
    mode, each look's statistics the paired test's on the pairs so far. Decisions per row and the pairs
    (samples a side) each row took.
    """
    result, samples = simulate_perrow.run_auto_per_row(base, head, test, strata, **design_options)
    return result.decision, samples
