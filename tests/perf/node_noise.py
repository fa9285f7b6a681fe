"""The simulator's suites at the noise of Node's own benchmark machine (issue 17), for tests/perf/simulate_gate.py.

Per-row sigma is drawn from the quantiles in ``data/node_noise_2023.json`` (compare.R's 95 %
accuracy over the rows of the "State of Node.js performance 2023" tables, 30 runs a side),
converted with ``sigma = accuracy / (t * sqrt(2 / 30))``, interpolated log-linearly between
the quantiles. Reports of 400 rows, log-normal noise, no drift and no outliers: the published
accuracy already holds whatever the machine adds. Suites:

- ``node``: A/A;
- ``node-ten``: one row per report regressed by exactly 10 % (the hardest case of "10 % or
  more"), its sigma drawn from the same distribution; the others A/A;
- ``node-big``: one row per report regressed by 50-90 %.

``tally`` counts what the targets of issue 17 are about, ``table`` prints them per mode, also
with the noise budget ``noisy: {max-sigma: 8%}`` (``BUDGET``): an inconclusive row whose
estimated sigma (``gatetable.noise_sigma``, what the gate sees) is above it does not hold the
verdict. The regressed row's sigma bins are by its true sigma.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from benchgate.stats import decisions, gatetable

DATA = Path(__file__).parent / "data" / "node_noise_2023.json"
SUITES = ("node", "node-ten", "node-big")
SIGMA_BINS = ((0.0, 3.0, "sigma <= 3 %"), (3.0, 8.3, "3-8.3 %"), (8.3, 100.0, "> 8.3 %"))
BUDGET = 8.0  # percent: the example noise budget


def sigma_quantiles(path: Path = DATA) -> tuple[np.ndarray, np.ndarray]:
    """The shipped quantiles: probabilities and per-sample sigma (fractions, not percent)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    table = np.asarray(data["quantiles"], dtype=float)
    factor = float(data["t"]) * np.sqrt(2 / int(data["runs"]))
    return table[:, 0], table[:, 1] / factor / 100


def draw_sigmas(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Per-row sigma drawn from Node's published noise (inverse CDF, log-linear between the quantiles)."""
    probabilities, sigmas = sigma_quantiles()
    return np.exp(np.interp(rng.random(shape), probabilities, np.log(sigmas)))


def generate(rng: np.random.Generator, suite: str, reports: int, rows: int, runs: int):
    """Rates ``(reports, rows, runs)`` per side, and the truth: the log effect and sigma per row (row 0 is the
    regressed one in the changed suites)."""
    sigma = draw_sigmas(rng, (reports, rows))
    effect = np.zeros((reports, rows))
    if suite != "node":
        size = np.full(reports, 0.10) if suite == "node-ten" else rng.uniform(0.50, 0.90, reports)
        effect[:, 0] = np.log1p(-size)  # the row's place does not matter: no test depends on order
    level = rng.normal(np.log(1e5), 2.0, (reports, rows, 1))
    base = np.exp(level + sigma[..., None] * rng.standard_normal((reports, rows, runs)))
    head = np.exp(level + effect[..., None] + sigma[..., None] * rng.standard_normal((reports, rows, runs)))
    return base, head, (effect, sigma)


def tally(name, decision, samples, truth, current: decisions.Stats, out: Counter) -> None:
    """Per suite and mode: verdicts (also with the noise budget), A/A inconclusive rows, the regressed row's fate."""
    effect, sigma = truth
    verdict = decisions.verdicts(decision)
    passed = np.isin(decision, (decisions.UNCHANGED, decisions.IMPROVEMENT))
    with np.errstate(invalid="ignore"):
        spared = (decision == decisions.INCONCLUSIVE) & (gatetable.noise_sigma(current) > BUDGET)
    budget_verdict = decisions.verdicts(np.where(spared, decisions.UNCHANGED, decision))
    out[(name, "budget_inconclusive")] += int((budget_verdict == 2).sum())
    out[(name, "budget_pass")] += int((budget_verdict == 0).sum())
    out[(name, "reports")] += decision.shape[0]
    out[(name, "fail")] += int((verdict == 1).sum())
    out[(name, "inconclusive")] += int((verdict == 2).sum())
    out[(name, "pass")] += int((verdict == 0).sum())
    out[(name, "rows")] += decision.size
    out[(name, "samples")] += float(samples.sum())
    out[(name, "inconclusive_rows")] += int((decision == decisions.INCONCLUSIVE).sum())
    changed = effect < 0
    if changed.any():
        row_sigma = 100 * sigma[:, 0]
        row_passed = passed[:, 0]
        for low, high, label in SIGMA_BINS:
            picked = (row_sigma > low) & (row_sigma <= high)
            out[(name, f"bin_reports {label}")] += int(picked.sum())
            out[(name, f"bin_pass {label}")] += int((picked & (verdict == 0)).sum())
            out[(name, f"bin_unchanged {label}")] += int((picked & row_passed).sum())
        out[(name, "found")] += int((decision[:, 0] == decisions.REGRESSION).sum())


def _pct(numerator: float, denominator: float) -> str:
    return "n/a" if not denominator else f"{100 * numerator / denominator:.3g} %"


def table(total: Counter, modes) -> str:
    """The targets of issue 17 per mode (a mode: e.g. ``("fixed-30", 95.0)``)."""
    header = [
        "mode",
        "unchanged at",
        "A/A false fail (<=0.1 %)",
        "A/A inconclusive (<=20 % fixed 30, <=5 % auto)",
        "A/A pass",
        "A/A rows inconclusive",
        "samples vs 30 (A/A)",
        f"A/A inconclusive, noisy: max-sigma {BUDGET:g} %",
        "10 % regr.: report passes (<=5 %)",
        f"passes, noisy: max-sigma {BUDGET:g} %",
        *(f"passes, row {label}" for *_, label in SIGMA_BINS),
        "10 % regr. row unchanged",
        "10 % regr. found",
        ">=50 % regr. passes (0)",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for mode, confidence in modes:
        aa, ten, big = ((suite, mode, confidence) for suite in SUITES)
        bins = [
            f"{_pct(total[(ten, f'bin_pass {label}')], total[(ten, f'bin_reports {label}')])} "
            f"({total[(ten, f'bin_reports {label}')]})"
            for *_, label in SIGMA_BINS
        ]
        unchanged = sum(total[(ten, f"bin_unchanged {label}")] for *_, label in SIGMA_BINS)
        cells = [
            mode,
            "old rule" if confidence is None else f"{confidence:g} %",
            f"{_pct(total[(aa, 'fail')], total[(aa, 'reports')])} ({total[(aa, 'fail')]}/{total[(aa, 'reports')]})",
            f"{_pct(total[(aa, 'inconclusive')], total[(aa, 'reports')])}",
            _pct(total[(aa, "pass")], total[(aa, "reports")]),
            _pct(total[(aa, "inconclusive_rows")], total[(aa, "rows")]),
            _pct(total[(aa, "samples")] / 30, total[(aa, "rows")]),
            _pct(total[(aa, "budget_inconclusive")], total[(aa, "reports")]),
            f"{_pct(total[(ten, 'pass')], total[(ten, 'reports')])} ({total[(ten, 'pass')]}/{total[(ten, 'reports')]})",
            _pct(total[(ten, "budget_pass")], total[(ten, "reports")]),
            *bins,
            _pct(unchanged, total[(ten, "reports")]),
            _pct(total[(ten, "found")], total[(ten, "reports")]),
            f"{total[(big, 'pass')]}/{total[(big, 'reports')]}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
