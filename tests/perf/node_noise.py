"""The simulator's suites at the noise of Node's own benchmark machine (issue 17), for tests/perf/simulate_gate.py.

Per-row sigma is drawn from the quantiles in ``data/node_noise_2023.json`` (compare.R's 95 %
accuracy over the rows of the "State of Node.js performance 2023" tables, 30 runs a side),
converted with ``sigma = accuracy / (t * sqrt(2 / 30))``, interpolated log-linearly between
the quantiles. Reports of 400 rows, log-normal noise, no drift and no outliers: the published
accuracy already holds whatever the machine adds. Suites:

- ``node``: A/A;
- ``node-ten``: one row per report regressed by exactly 10 % (the hardest case of "10 % or
  more"), its sigma drawn from the same distribution; the others A/A;
- ``node-big``: one row per report regressed by 50-90 %;
- ``node-res``: one row among the noisiest quarter regressed by 10-30 % (is a regression at least as
  large as the row's stated resolution, the one it is gated at, passed at most 5 % of the time?), one
  by 12 % (never passed at sigma <= 3 %?) and one by 5 % at sigma 1 % (power).

Each mode runs with the gate of issue 21 (rows that cannot reach 10 % gated at what they can reach, up to
``max-resolution``) and strict (``noisy: strict``, the rule before). ``tally`` counts what the targets of
issues 17 and 21 are about, ``table`` prints them per mode, also
with the noise budget ``noisy: {max-sigma: 8%}`` (``BUDGET``): an inconclusive row whose
estimated sigma (``adaptivetable.noise_sigma``, what the gate sees) is above it does not hold the
verdict. The regressed row's sigma bins are by its true sigma.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import candidates
import numpy as np

from benchgate.stats import adaptivetable, decisions

DATA = Path(__file__).parent / "data" / "node_noise_2023.json"
SUITES = ("node", "node-ten", "node-big", "node-res")
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
    """Rates ``(reports, rows, runs)`` per side, and the truth: the log effect and sigma per row.

    ``node-ten``: row 0 regressed by exactly 10 %; ``node-big``: row 0 by 50-90 %; ``node-res``: row 0, among
    the noisiest quarter, by 10-30 % (for the promise that a regression at least as large as the row's stated
    resolution passes at most 5 % of the time), row 1 by 12 % and row 2 by 5 % at sigma 1 % (the power probe).
    """
    sigma = draw_sigmas(rng, (reports, rows))
    effect = np.zeros((reports, rows))
    if suite == "node-res":  # row 0 among the noisier quarter (sigma above ~3 %), where rows are gated coarser
        probabilities, sigmas = sigma_quantiles()
        sigma[:, 0] = np.exp(np.interp(rng.uniform(0.75, 1.0, reports), probabilities, np.log(sigmas)))
        effect[:, 0] = np.log1p(-rng.uniform(0.10, 0.30, reports))
        effect[:, 1] = np.log(0.88)
        effect[:, 2], sigma[:, 2] = np.log(0.95), 0.01
    elif suite != "node":
        size = np.full(reports, 0.10) if suite == "node-ten" else rng.uniform(0.50, 0.90, reports)
        effect[:, 0] = np.log1p(-size)  # the row's place does not matter: no test depends on order
    level = rng.normal(np.log(1e5), 2.0, (reports, rows, 1))
    base = np.exp(level + sigma[..., None] * rng.standard_normal((reports, rows, runs)))
    head = np.exp(level + effect[..., None] + sigma[..., None] * rng.standard_normal((reports, rows, runs)))
    return base, head, (effect, sigma)


def tally(name, result: decisions.Decisions, samples, truth, out: Counter) -> None:
    """Per suite and mode: verdicts (also with the noise budget), A/A inconclusive rows, the regressed rows' fate."""
    effect, sigma = truth
    decision = result.decision
    verdict = candidates.verdicts(decision)
    passed = np.isin(decision, (decisions.UNCHANGED, decisions.IMPROVEMENT))
    with np.errstate(invalid="ignore"):
        spared = (decision == decisions.INCONCLUSIVE) & (adaptivetable.noise_sigma(result.current) > BUDGET)
    budget_verdict = candidates.verdicts(np.where(spared, decisions.UNCHANGED, decision))
    out[(name, "budget_inconclusive")] += int((budget_verdict == 2).sum())
    out[(name, "budget_pass")] += int((budget_verdict == 0).sum())
    out[(name, "reports")] += decision.shape[0]
    out[(name, "fail")] += int((verdict == 1).sum())
    out[(name, "inconclusive")] += int((verdict == 2).sum())
    out[(name, "pass")] += int((verdict == 0).sum())
    out[(name, "rows")] += decision.size
    out[(name, "samples")] += float(samples.sum())
    out[(name, "inconclusive_rows")] += int((decision == decisions.INCONCLUSIVE).sum())
    out[(name, "coarse_rows")] += int((result.coarse & passed).sum())
    out[(name, "false_regression_rows")] += int(((effect == 0) & (decision == decisions.REGRESSION)).sum())
    if name[0] == "node-res":
        _tally_resolution(name, result, truth, passed, out)
        return
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


def _tally_resolution(name, result: decisions.Decisions, truth, passed, out: Counter) -> None:
    """node-res: row 0 passes when its regression is at least its stated resolution (by sigma); rows 1 and 2."""
    effect, sigma = truth
    size = -100 * np.expm1(effect[:, 0])
    covered = result.gated_at[:, 0] <= size  # the row says "unchanged (<= gated_at)": a regression it rules out
    for low, high, label in SIGMA_BINS:
        picked = covered & (100 * sigma[:, 0] > low) & (100 * sigma[:, 0] <= high)
        out[(name, f"res_rows {label}")] += int(picked.sum())
        out[(name, f"res_pass {label}")] += int((picked & passed[:, 0]).sum())
    quiet = sigma[:, 1] <= 0.03
    out[(name, "twelve_rows")] += int(quiet.sum())
    out[(name, "twelve_pass")] += int((quiet & passed[:, 1]).sum())
    out[(name, "probe_rows")] += int(result.decision[:, 2].size)
    out[(name, "probe_hit")] += int((result.decision[:, 2] == decisions.REGRESSION).sum())


def _pct(numerator: float, denominator: float) -> str:
    return "n/a" if not denominator else f"{100 * numerator / denominator:.3g} %"


def rule_text(max_resolution: float | None) -> str:
    return "strict" if max_resolution is None else f"<= {max_resolution:g} %"


def table(total: Counter, modes) -> str:
    """The targets of issues 17 and 21 per mode (a mode: e.g. ``("fixed-30", 95.0, 25.0)``)."""
    header = [
        "mode",
        "unchanged at",
        "gated at",
        "A/A false fail (<=0.1 %)",
        "A/A inconclusive",
        "A/A pass (>=95 %)",
        "A/A rows inconclusive",
        "A/A rows passed coarse",
        "samples vs 30 (A/A; auto <=40 %)",
        f"A/A inconclusive, noisy: max-sigma {BUDGET:g} %",
        "10 % regr.: report passes",
        *(f"passes, row {label}" for *_, label in SIGMA_BINS),
        "10 % regr. found",
        *(f"regr. >= stated resolution passes, row {label} (<=5 %)" for *_, label in SIGMA_BINS),
        "12 % regr. at sigma <= 3 % passes (0)",
        "power 5 %@1 % (>=99 %)",
        ">=50 % regr. passes (0)",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for mode, confidence, ceiling in modes:
        aa, ten, big, res = ((suite, mode, confidence, ceiling) for suite in SUITES)
        bins = [
            f"{_pct(total[(ten, f'bin_pass {label}')], total[(ten, f'bin_reports {label}')])} "
            f"({total[(ten, f'bin_reports {label}')]})"
            for *_, label in SIGMA_BINS
        ]
        res_bins = [
            f"{_pct(total[(res, f'res_pass {label}')], total[(res, f'res_rows {label}')])} "
            f"({total[(res, f'res_rows {label}')]})"
            for *_, label in SIGMA_BINS
        ]
        cells = [
            mode,
            "old rule" if confidence is None else f"{confidence:g} %",
            rule_text(ceiling),
            f"{_pct(total[(aa, 'fail')], total[(aa, 'reports')])} ({total[(aa, 'fail')]}/{total[(aa, 'reports')]})",
            f"{_pct(total[(aa, 'inconclusive')], total[(aa, 'reports')])}",
            f"{_pct(total[(aa, 'pass')], total[(aa, 'reports')])} ({total[(aa, 'reports')]})",
            _pct(total[(aa, "inconclusive_rows")], total[(aa, "rows")]),
            _pct(total[(aa, "coarse_rows")], total[(aa, "rows")]),
            _pct(total[(aa, "samples")] / 30, total[(aa, "rows")]),
            _pct(total[(aa, "budget_inconclusive")], total[(aa, "reports")]),
            f"{_pct(total[(ten, 'pass')], total[(ten, 'reports')])} ({total[(ten, 'pass')]}/{total[(ten, 'reports')]})",
            *bins,
            _pct(total[(ten, "found")], total[(ten, "reports")]),
            *res_bins,
            f"{total[(res, 'twelve_pass')]}/{total[(res, 'twelve_rows')]}",
            f"{_pct(total[(res, 'probe_hit')], total[(res, 'probe_rows')])} ({total[(res, 'probe_rows')]})",
            f"{total[(big, 'pass')]}/{total[(big, 'reports')]}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


PROJECTION_RUNS = (5, 10)  # the few-runs reports whose undecided rows the projection is checked on
PROJECTION_CAP = 1000  # rows projected to need more are counted apart, not rerun


def check_projection(rng: np.random.Generator, base, head, truth, out: Counter) -> None:
    """Rows undecided after a few runs, rerun with fresh samples at the count their projection names: decided?

    The projection is ``adaptivetable``'s ``runs_needed`` (``resolution.runs_to_reach``: a conservative sigma, t
    quantiles, the estimate never above 0); "decided" is any decision but inconclusive at that count.
    """
    _, sigma = truth
    for runs in PROJECTION_RUNS:
        result = candidates.decide(base[..., :runs], head[..., :runs], with_mde=False)
        undecided = result.decision == decisions.INCONCLUSIVE
        needed = adaptivetable.undecided_runs(result, 0.0, decisions.DEFAULT_INCONCLUSIVE_ABOVE)[undecided]
        out[("projection", runs, "rows")] += int(undecided.sum())
        reachable = np.isfinite(needed) & (needed <= PROJECTION_CAP)
        out[("projection", runs, "beyond")] += int((~reachable).sum())
        if not reachable.any():
            continue
        counts, row_sigma = needed[reachable].astype(int), sigma[undecided][reachable]
        width = int(counts.max())
        noise = row_sigma[:, None] * rng.standard_normal((2, counts.size, width))
        noise[:, np.arange(width)[None, :] >= counts[:, None]] = np.nan
        rerun = candidates.decide(np.exp(noise[0]), np.exp(noise[1]), correction="none", with_mde=False)
        out[("projection", runs, "rerun")] += int(counts.size)
        out[("projection", runs, "decided")] += int((rerun.decision != decisions.INCONCLUSIVE).sum())
        out[("projection", runs, "runs")] += int(counts.sum())


def projection_lines(total: Counter) -> list[str]:
    """One line per few-runs count: how often a row rerun at its projected count is decided."""
    lines = []
    for runs in PROJECTION_RUNS:
        rows, rerun = total[("projection", runs, "rows")], total[("projection", runs, "rerun")]
        if not rows:
            continue
        decided = _pct(total[("projection", runs, "decided")], rerun)
        mean = total[("projection", runs, "runs")] / rerun if rerun else float("nan")
        lines.append(
            f"projection after {runs} runs: {rows} undecided A/A rows; {rerun} rerun at their projected count "
            f"(mean {mean:.0f} runs a side) are decided {decided}; {total[('projection', runs, 'beyond')]} "
            f"projected beyond {PROJECTION_CAP} runs or none"
        )
    return lines
