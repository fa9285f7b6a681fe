"""Monte-Carlo of whole PR reports through the gate's own code (benchgate.stats.decisions, .sequential, .stopping).

Every simulated report has 400 comparisons (40 files x 10 configurations), rates with
log-normal noise whose sigma is drawn per file, log-uniform (0.5 % to 25 %, or to 2 % for the
quiet suites), times a per-configuration factor; a slow multiplicative drift over the run that
is common to both sides (base and head of a file run back to back in every iteration), with
``--side-drift K`` hitting the head K times harder; occasional slow outliers (``--outliers``
of the samples, default 2 %, slowed by 10-50 %). Four suites: "aa" (A/A, sigma 0.5-25 %),
"quiet" (A/A, sigma <= 2 %), "mostly" (sigma <= 2 %, 10 of 400 rows changed: 4 regress and 4
improve by 2-90 %, log-uniform, 2 regress by 50-90 %) and "mixed" (sigma 0.5-25 %, 18 rows
changed: those 10 plus the power probes, 4 rows at 1 % noise and 4 at 2 % noise regressing by 5 %).

For each candidate test (``candidates.TESTS``) and each mode (fixed N runs, ``--fixed``, and
``--runs auto`` with ``sequential.make_design``, the live run's loop) it prints the figures the
gate is held to. All tests see the same samples (common random numbers); the tests other than
the gate's see only the first ``--candidate-reports`` A/A reports (default 2000), the gate's all
of them (default 10,000). ``--quick`` is a seconds-long smoke run (tests/test_simulator.py); the
full table takes about 7 minutes of wall time and 8 CPU-minutes with ``--jobs 2`` on a loaded
2-core machine.

    python tests/perf/simulate_gate.py --jobs 2            # the full table
    python tests/perf/simulate_gate.py --quick             # smoke run
    python tests/perf/simulate_gate.py --tests yuen_log --reports 20000 --side-drift 0.1
    python tests/perf/simulate_gate.py --tests yuen_log --fixed 30 --reports 100 --looks 5,7,10,15,21,29,42,60
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import candidates as candidate_tests
import duet_model
import node_noise
import numpy as np
import simulate_perrow

from benchgate.stats import decisions, paired, sequential, stopping, yuenwelch
from benchgate.stats.defaults import DEFAULT_MAX_RESOLUTION
from benchgate.stats.resolution import Coarsening

FILES, CONFIGURATIONS = 40, 10
ROWS = FILES * CONFIGURATIONS
FILE_OF_ROW = np.repeat(np.arange(FILES), CONFIGURATIONS)
MAX_RUNS = sequential.MAX_RUNS
CHUNK = 50  # reports generated at once


@dataclass(frozen=True)
class Model:
    sigma_low: float = 0.5  # percent
    sigma_high: float = 25.0
    drift: float = 3.0  # percent: the trend over 60 runs is uniform in +-drift
    side_drift: float = 0.0  # the head's drift is (1 + side_drift) times the base's
    outliers: float = 0.02  # share of samples slowed down
    outlier_low: float = 1.10
    outlier_high: float = 1.50
    changes: tuple[tuple[int, int], ...] = ()  # (kind, rows per report): see generate


MIXED = ((1, 4), (2, 4), (3, 4), (4, 4), (5, 2))  # the power probes and changes of every size
MOSTLY = ((3, 4), (4, 4), (5, 2))  # 10 of 400 rows changed, by 2-90 %


def _sigmas(rng: np.random.Generator, model: Model, reports: int) -> np.ndarray:
    low, high = np.log(model.sigma_low / 100), np.log(model.sigma_high / 100)
    per_file = np.exp(rng.uniform(low, high, (reports, FILES)))
    per_row = per_file[:, FILE_OF_ROW] * np.exp(0.25 * rng.standard_normal((reports, ROWS)))
    return np.clip(per_row, model.sigma_low / 100, model.sigma_high / 100)


def draw_rows(rng: np.random.Generator, model: Model, reports: int):
    """Each row's noise (sigma of the log rate), true log effect and kind: ``(reports, ROWS)`` arrays."""
    sigma = _sigmas(rng, model, reports)
    effect = np.zeros((reports, ROWS))
    kind = np.zeros((reports, ROWS), dtype=np.int8)  # 0 A/A, 1 probe 1 %/-5 %, 2 probe 2 %/-5 %, 3 reg, 4 imp, 5 big
    if model.changes:
        picks = np.argsort(rng.random((reports, ROWS)), axis=1)[:, : sum(count for _, count in model.changes)]
        start = 0
        for code, count in model.changes:
            rows = picks[:, start : start + count]
            start += count
            np.put_along_axis(kind, rows, code, axis=1)
        sigma = np.where(kind == 1, 0.01, np.where(kind == 2, 0.02, sigma))
        size = np.exp(rng.uniform(np.log(0.02), np.log(0.90), (reports, ROWS)))
        big = rng.uniform(0.50, 0.90, (reports, ROWS))
        effect = np.select(
            [(kind == 1) | (kind == 2), kind == 3, kind == 4, kind == 5],
            [np.log(0.95), np.log1p(-size), np.log1p(size), np.log1p(-big)],
            0.0,
        )
    return sigma, effect, kind


def generate(rng: np.random.Generator, model: Model, reports: int, runs: int = MAX_RUNS):
    """Rates ``(reports, ROWS, runs)`` per side, the true log effect per row and the kind of each row."""
    sigma, effect, kind = draw_rows(rng, model, reports)
    trend = rng.uniform(-model.drift, model.drift, (reports, 1, 1)) / 100 * np.arange(runs) / (MAX_RUNS - 1)
    level = rng.normal(np.log(1e5), 2.0, (reports, ROWS, 1))  # rates from ~1e3 to ~1e7 ops/s
    sides = []
    for side, drift in ((0, trend), (1, trend * (1 + model.side_drift))):
        log_rate = level + drift + sigma[..., None] * rng.standard_normal((reports, ROWS, runs))
        if side == 1:
            log_rate += effect[..., None]
        slow = rng.random((reports, ROWS, runs)) < model.outliers
        log_rate[slow] -= np.log(rng.uniform(model.outlier_low, model.outlier_high, int(slow.sum())))
        sides.append(np.exp(log_rate, out=log_rate))
    return sides[0], sides[1], effect, kind


def run_fixed(
    base, head, test: str, runs: int, unchanged_confidence=decisions.DEFAULT_UNCHANGED_CONFIDENCE, max_resolution=None
):
    """A fixed-runs analysis of the first ``runs`` samples; ``max_resolution`` None: strict (every row at 10 %)."""
    result = candidate_tests.decide(
        base[..., :runs],
        head[..., :runs],
        test=test,
        with_mde=False,
        unchanged_confidence=unchanged_confidence,
        coarsening=None if max_resolution is None else Coarsening(max_resolution),
    )
    return result, np.full(result.decision.shape, float(runs))


def run_auto(base, head, test: str, **design_options):
    """The live loop of ``--runs auto``: a look, then the files whose rows are all settled stop."""
    design = sequential.make_design(test=test, **design_options)
    looks = ((base[..., :runs], head[..., :runs]) for runs in design.looks)
    replayed = stopping.replay(design, looks, FILE_OF_ROW, FILES, with_mde=False)
    return replayed.result.decisions, np.asarray(design.looks, dtype=float)[replayed.stopped_after[:, FILE_OF_ROW]]


def _tally(name, decision, samples, kind, effect, out: Counter) -> None:
    verdict = candidate_tests.verdicts(decision)
    out[(name, "reports")] += decision.shape[0]
    out[(name, "fail")] += int((verdict == 1).sum())
    out[(name, "inconclusive")] += int((verdict == 2).sum())
    out[(name, "rows")] += decision.size
    out[(name, "samples")] += float(samples.sum())
    aa = kind == 0
    out[(name, "aa_rows")] += int(aa.sum())
    out[(name, "aa_regression")] += int((aa & (decision == decisions.REGRESSION)).sum())
    out[(name, "aa_inconclusive_rows")] += int((aa & (decision == decisions.INCONCLUSIVE)).sum())
    for code, label in ((1, "probe1"), (2, "probe2"), (3, "reg"), (4, "imp")):
        rows = kind == code
        out[(name, f"{label}_rows")] += int(rows.sum())
        wanted = decisions.IMPROVEMENT if code == 4 else decisions.REGRESSION
        out[(name, f"{label}_hit")] += int((rows & (decision == wanted)).sum())
    passed = np.isin(decision, (decisions.UNCHANGED, decisions.IMPROVEMENT))
    big = kind == 5
    out[(name, "big_rows")] += int(big.sum())
    out[(name, "big_passed_rows")] += int((big & passed).sum())
    out[(name, "big_reports")] += int(big.any(axis=-1).sum())
    out[(name, "big_reports_pass")] += int((big.any(axis=-1) & (verdict == 0)).sum())
    # A real regression of 10 % or more called unchanged: the error the settle rule is bounded by (looks x level).
    ten = np.isin(kind, (1, 2, 3, 5)) & (effect <= np.log(0.90))
    out[(name, "ten_rows")] += int(ten.sum())
    out[(name, "ten_passed")] += int((ten & passed).sum())


def simulate_node_chunk(task) -> Counter:
    """One chunk of a suite at Node's published noise (tests/perf/node_noise.py), at every unchanged confidence."""
    suite, reports, seed, fixed, auto, design_options, confidences, ceilings = task
    base, head, truth = node_noise.generate(np.random.default_rng(seed), suite, reports, ROWS, MAX_RUNS)
    out: Counter = Counter()
    for confidence in confidences:
        for ceiling in ceilings:
            for runs in fixed:
                result, samples = run_fixed(base, head, yuenwelch.GATE_TEST, runs, confidence, ceiling)
                node_noise.tally((suite, f"fixed-{runs}", confidence, ceiling), result, samples, truth, out)
            if auto:
                options = {**design_options, "unchanged_confidence": confidence, "max_resolution": ceiling}
                # --jobs per-configuration, the default: each comparison stops on its own
                result, samples = simulate_perrow.run_auto_per_row(base, head, yuenwelch.GATE_TEST, **options)
                node_noise.tally((suite, "auto", confidence, ceiling), result, samples, truth, out)
    if suite == "node":
        node_noise.check_projection(np.random.default_rng(seed.spawn(1)[0]), base, head, truth, out)
    return out


def simulate_chunk(task) -> Counter:
    """One chunk of reports of one suite, through every test and mode asked for; returns counts."""
    if task[0] in node_noise.SUITES:
        return simulate_node_chunk(task)
    suite, model, reports, seed, tests, fixed, auto_tests, design_options = task
    rng = np.random.default_rng(seed)
    base, head, effect, kind = generate(rng, model, reports)
    out: Counter = Counter()
    for test in [test for test in tests if test not in candidate_tests.PAIRED_TESTS]:
        for runs in fixed:
            confidence = design_options.get("unchanged_confidence", decisions.DEFAULT_UNCHANGED_CONFIDENCE)
            result, samples = run_fixed(base, head, test, runs, confidence, design_options.get("max_resolution"))
            _tally((suite, test, f"fixed-{runs}"), result.decision, samples, kind, effect, out)
        if test in auto_tests and test not in candidate_tests.PAIRED_TESTS:
            result, samples = run_auto(base, head, test, **design_options)
            _tally((suite, test, "auto"), result.decision, samples, kind, effect, out)
            result, samples = simulate_perrow.run_auto_per_row(base, head, test, **design_options)
            _tally((suite, test, simulate_perrow.MODE), result.decision, samples, kind, effect, out)
    duet_tests = [test for test in tests if test in candidate_tests.PAIRED_TESTS]
    if duet_tests:  # --pairing duet: its own samples (tests/perf/duet_model.py)
        rows = draw_rows(rng, model, reports)
        base, head, strata = duet_model.generate(rng, model, rows, FILE_OF_ROW, MAX_RUNS)
        for test in duet_tests:
            for runs in fixed:
                decision, samples = duet_model.run_duet(base, head, strata, test, runs)
                _tally((suite, test, f"duet-{runs}"), decision, samples, rows[2], rows[1], out)
            if test in auto_tests and test == paired.PAIRED_TEST:  # --runs auto --pairing duet: per-row stops
                decision, samples = duet_model.run_duet_auto(base, head, strata, test, **design_options)
                _tally((suite, test, duet_model.AUTO_MODE), decision, samples, rows[2], rows[1], out)
    return out


def simulate(
    suites, tests, fixed, auto_tests, seed: int, jobs: int, design_options=None, candidates=0, node=(0, (), ())
) -> Counter:
    """Every suite's reports in chunks; the gate's test sees all of them, the other tests the first ``candidates``.

    All tests of a chunk see the same samples (common random numbers). ``candidates`` 0: all.
    ``node``: reports per suite at Node's noise and the unchanged confidences to run them at.
    """
    tasks = []
    root = np.random.SeedSequence(seed)
    node_reports, confidences, ceilings = node
    node_seeds = np.random.SeedSequence(seed + 17).spawn(len(node_noise.SUITES))
    for suite, child in zip(node_noise.SUITES, node_seeds, strict=True):
        for index, grandchild in enumerate(child.spawn(max(1, -(-node_reports // CHUNK)) if node_reports else 0)):
            size = min(CHUNK, node_reports - index * CHUNK)
            auto = yuenwelch.GATE_TEST in auto_tests
            tasks.append((suite, size, grandchild, fixed, auto, design_options or {}, confidences, ceilings))
    for (suite, model, reports), child in zip(suites, root.spawn(len(suites)), strict=True):
        chunks = max(1, -(-reports // CHUNK))
        for index, grandchild in enumerate(child.spawn(chunks)):
            size = min(CHUNK, reports - index * CHUNK)
            others = not candidates or index * CHUNK < candidates
            chosen = [t for t in tests if others or t in (yuenwelch.GATE_TEST, paired.PAIRED_TEST)]
            auto = tuple(t for t in auto_tests if t in chosen)
            if auto_tests and paired.PAIRED_TEST in chosen:  # --runs auto with --pairing duet: its paired test
                auto += (paired.PAIRED_TEST,)
            tasks.append((suite, model, size, grandchild, chosen, fixed, auto, design_options or {}))
    total: Counter = Counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            for part in pool.map(simulate_chunk, tasks):
                total.update(part)
    else:
        for task in tasks:
            total.update(simulate_chunk(task))
    return total


def issue_cases(rng: np.random.Generator, tests, reports: int) -> list[str]:
    """The issue's two real shapes: n=4 with a -88.5 % row at 15-25 % noise; n=10 with a -36 % row."""
    lines = []
    for runs, change, label in ((4, -88.5, "n=4, -88.5 %"), (10, -36.0, "n=10, -36 %")):
        for rows in (3, ROWS):
            sigma = rng.uniform(0.15, 0.25, (reports, rows, 1))
            level = rng.normal(10, 1, (reports, rows, 1))
            base = np.exp(level + sigma * rng.standard_normal((reports, rows, runs)))
            shift = np.zeros((reports, rows, 1))
            shift[:, -1] = np.log1p(change / 100)
            head = np.exp(level + shift + sigma * rng.standard_normal((reports, rows, runs)))
            raw = candidate_tests.gate_statistics(base, head, "welch_raw").p_value[:, -1]
            stars = Counter(
                np.where(raw < 0.001, "***", np.where(raw < 0.01, "**", np.where(raw < 0.05, "*", ""))).tolist()
            )
            star_text = ", ".join(f"{key or 'none'} {100 * v / reports:.0f} %" for key, v in sorted(stars.items()))
            lines.append(f"{label} in a {rows}-row report, compare.R stars of the row: {star_text}")
            for test in [test for test in tests if test in candidate_tests.TESTS]:
                result = candidate_tests.decide(base, head, test=test, with_mde=False)
                verdict = candidate_tests.verdicts(result.decision)
                shares = [100 * float((verdict == v).mean()) for v in (1, 2, 0)]
                lines.append(
                    f"  {test:<11} fail {shares[0]:5.1f} %  inconclusive {shares[1]:5.1f} %  pass {shares[2]:5.1f} %"
                )
    return lines


def _pct(numerator: float, denominator: float) -> str:
    return "n/a" if not denominator else f"{100 * numerator / denominator:.3g} %"


def _count(total: Counter, key, what: str) -> str:
    return f"{total[(key, what)]}/{total[(key, 'reports')]}"


HEADER = [
    "test",
    "mode",
    "false fail A/A (<=0.1 %)",
    "A/A rows false regr.",
    "false fail quiet",
    "power 5%@1% (>=99 %)",
    "power 5%@2%",
    "samples vs 30: mostly unchanged (<=40 %)",
    "quiet A/A",
    "A/A",
    "mixed",
    ">=50 % passed rows / reports (0)",
    ">=10 % regr. passed (rows)",
    "inconclusive quiet A/A (<=1 %)",
    "inconclusive A/A",
    "regr. 2-90 % found",
    "impr. 2-90 % found",
]


def table(total: Counter, tests, modes, auto_tests=()) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for test in tests:
        for mode in modes:
            if mode.startswith("auto") and test not in auto_tests:
                continue
            if (test in candidate_tests.PAIRED_TESTS) != mode.startswith("duet-"):  # duet rows: paired tests only
                continue
            if mode == duet_model.AUTO_MODE and test != paired.PAIRED_TEST:
                continue
            aa, quiet, mostly, mixed = (
                ("aa", test, mode),
                ("quiet", test, mode),
                ("mostly", test, mode),
                ("mixed", test, mode),
            )
            hits = {label: total[(mixed, f"{label}_hit")] for label in ("probe1", "probe2")}
            rows = {label: total[(mixed, f"{label}_rows")] for label in ("probe1", "probe2")}
            cells = [
                test,
                mode,
                f"{_pct(total[(aa, 'fail')], total[(aa, 'reports')])} ({_count(total, aa, 'fail')})",
                _pct(total[(aa, "aa_regression")], total[(aa, "aa_rows")]),
                _count(total, quiet, "fail"),
                f"{_pct(hits['probe1'], rows['probe1'])} ({rows['probe1']})",
                _pct(hits["probe2"], rows["probe2"]),
                _pct(total[(mostly, "samples")] / 30, total[(mostly, "rows")]),
                _pct(total[(quiet, "samples")] / 30, total[(quiet, "rows")]),
                _pct(total[(aa, "samples")] / 30, total[(aa, "rows")]),
                _pct(total[(mixed, "samples")] / 30, total[(mixed, "rows")]),
                f"{total[(mixed, 'big_passed_rows')] + total[(mostly, 'big_passed_rows')]} / "
                f"{total[(mixed, 'big_reports_pass')] + total[(mostly, 'big_reports_pass')]}",
                f"{total[(mixed, 'ten_passed')] + total[(mostly, 'ten_passed')]}"
                f"/{total[(mixed, 'ten_rows')] + total[(mostly, 'ten_rows')]}",
                f"{_pct(total[(quiet, 'inconclusive')], total[(quiet, 'reports')])} "
                f"({_count(total, quiet, 'inconclusive')})",
                _pct(total[(aa, "inconclusive")], total[(aa, "reports")]),
                _pct(total[(mixed, "reg_hit")], total[(mixed, "reg_rows")]),
                _pct(total[(mixed, "imp_hit")], total[(mixed, "imp_rows")]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",") if v)


def _confidences(text: str) -> tuple[float | None, ...]:
    values = tuple(None if v.strip() == "old" else float(v) for v in text.split(",") if v.strip())
    if not values or any(v is not None and not 50 <= v < 100 for v in values):
        raise argparse.ArgumentTypeError(f"percents from 50 to under 100, or old, not {text!r}")
    return values


def _ceilings(text: str) -> tuple[float | None, ...]:
    values = tuple(None if v.strip() == "strict" else float(v) for v in text.split(",") if v.strip())
    if not values or any(v is not None and not 0 < v <= 1000 for v in values):
        raise argparse.ArgumentTypeError(f"percents above 0, or strict, not {text!r}")
    return values


def _confidence_text(confidence: float | None) -> str:
    if confidence is None:
        return "the old rule (the two-sided interval at the row's whole gate level)"
    return f"one-sided bound at {confidence:g} %, its risk spent over the looks"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=None, help="A/A reports, sigma 0.5-25 %% (default 10000)")
    parser.add_argument(
        "--candidate-reports",
        type=int,
        default=None,
        help="of those, how many the tests other than the gate's see (default 2000; 0: all)",
    )
    parser.add_argument("--quiet-reports", type=int, default=None, help="A/A reports with sigma <= 2 %% (2000)")
    parser.add_argument("--mostly-reports", type=int, default=None, help="sigma <= 2 %%, 10 of 400 rows changed (2000)")
    parser.add_argument("--mixed-reports", type=int, default=None, help="sigma 0.5-25 %%, 18 rows changed (2000)")
    parser.add_argument("--issue-reports", type=int, default=None, help="reports per issue case (2000)")
    parser.add_argument("--seed", type=int, default=20240610)
    parser.add_argument("--tests", default=",".join(candidate_tests.TESTS + candidate_tests.PAIRED_TESTS))
    parser.add_argument("--fixed", default="10,30", help="comma-separated fixed run counts (default 10,30)")
    parser.add_argument("--no-auto", action="store_true", help="skip --runs auto")
    parser.add_argument(
        "--auto-tests",
        default=None,
        help=f"tests to run --runs auto with, of {', '.join(yuenwelch.TESTS)} (default {yuenwelch.GATE_TEST}; 'all')",
    )
    parser.add_argument("--side-drift", type=float, default=0.0)
    parser.add_argument("--outliers", type=float, default=0.02)
    parser.add_argument("--drift", type=float, default=3.0, help="percent over 60 runs (default 3)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--looks", type=_ints, default=None, help="auto: the looks, e.g. 5,8,12,...,60")
    parser.add_argument("--spending", default=None, choices=sequential.SPENDING, help="auto: spending function")
    parser.add_argument("--futility-variance", type=float, default=None, help="auto: hopeless-row projection")
    parser.add_argument("--settle-above", type=float, default=None, help="auto: the settle guard's effect (percent)")
    parser.add_argument("--settle-level", type=float, default=None, help="auto: the settle guard's one-sided level")
    parser.add_argument("--no-issue", action="store_true", help="skip the issue's two real shapes")
    parser.add_argument(
        "--unchanged-confidence",
        type=_confidences,
        default=(decisions.DEFAULT_UNCHANGED_CONFIDENCE,),
        help="comma-separated percents ('old': the rule before issue 17); the Node suites run at each, "
        "the other suites at the first (default 95)",
    )
    parser.add_argument(
        "--max-resolution",
        type=_ceilings,
        default=(DEFAULT_MAX_RESOLUTION, None),
        help="comma-separated ceilings (percent) for rows that cannot reach 10 %%, or 'strict' (the rule before "
        "issue 21); the Node suites run at each, the other suites at the first (default 25,strict)",
    )
    parser.add_argument("--node-reports", type=int, default=None, help="reports per Node-noise suite (2000)")
    parser.add_argument("--node-only", action="store_true", help="only the suites at Node's published noise")
    parser.add_argument("--quick", action="store_true", help="a few seconds: few reports, all tests")
    args = parser.parse_args(argv)
    quick = args.quick

    def pick(value, full, small):
        return value if value is not None else small if quick else full

    reports = pick(args.reports, 10_000, 40)
    candidates = pick(args.candidate_reports, 2_000, 0)
    quiet_reports = pick(args.quiet_reports, 2_000, 25)
    mostly_reports = pick(args.mostly_reports, 2_000, 25)
    mixed_reports = pick(args.mixed_reports, 2_000, 25)
    issue_reports = pick(args.issue_reports, 2_000, 200)
    node_reports = pick(args.node_reports, 2_000, 20)
    if args.node_only:
        reports = quiet_reports = mostly_reports = mixed_reports = 0
    tests = [t for t in args.tests.split(",") if t]
    for test in tests:
        if test not in (known := candidate_tests.TESTS + candidate_tests.PAIRED_TESTS):
            parser.error(f"unknown test {test!r}; choose from {', '.join(known)}")
    fixed = [int(v) for v in args.fixed.split(",") if v]
    noise = {"drift": args.drift, "side_drift": args.side_drift, "outliers": args.outliers}
    suites = [
        ("aa", Model(**noise), reports),
        ("quiet", Model(sigma_high=2.0, **noise), quiet_reports),
        ("mostly", Model(sigma_high=2.0, changes=MOSTLY, **noise), mostly_reports),
        ("mixed", Model(changes=MIXED, **noise), mixed_reports),
    ]
    suites = [suite for suite in suites if suite[2] > 0]
    started = time.perf_counter()
    design_options = {
        key: value
        for key, value in (
            ("looks", args.looks),
            ("spending", args.spending),
            ("futility_variance", args.futility_variance),
            ("settle_above", args.settle_above),
            ("settle_level", args.settle_level),
        )
        if value is not None
    }
    main_options = {
        **design_options,
        "unchanged_confidence": args.unchanged_confidence[0],
        "max_resolution": args.max_resolution[0],
    }
    auto_tests = (args.auto_tests or yuenwelch.GATE_TEST).split(",")
    auto_tests = [] if args.no_auto else tests if args.auto_tests == "all" else auto_tests
    # A design's test is one of the gate's (yuenwelch.TESTS): the other candidates are compared at fixed runs.
    auto_tests = [test for test in auto_tests if test in yuenwelch.TESTS + candidate_tests.PAIRED_TESTS]
    node = (node_reports, args.unchanged_confidence, args.max_resolution)
    total = simulate(suites, tests, fixed, auto_tests, args.seed, args.jobs, main_options, candidates, node)
    modes = [f"fixed-{n}" for n in fixed] + (["auto", simulate_perrow.MODE] if auto_tests else [])
    modes += [f"duet-{n}" for n in fixed] + ([duet_model.AUTO_MODE] if auto_tests else [])
    design = sequential.make_design(**design_options)
    print(
        f"# {reports} A/A reports (sigma 0.5-25 %; tests other than {yuenwelch.GATE_TEST}: the first "
        f"{candidates or reports}), {quiet_reports} quiet A/A (sigma <= 2 %), {mostly_reports} mostly unchanged "
        f"(sigma <= 2 %, 10 rows changed by 2-90 %), {mixed_reports} mixed (sigma 0.5-25 %, 18 rows changed); {ROWS} "
        f"comparisons each; drift +-{args.drift:g} %, side drift {args.side_drift:g}, outliers "
        f"{100 * args.outliers:g} %; seed {args.seed}"
    )
    print(
        f"# auto design: looks {','.join(map(str, design.looks))}, spending {design.spending}, settle guard "
        f"{design.settle_above:g} % at {design.settle_level:g}, futility variance {design.futility_variance:g}"
    )
    if suites:
        print(f"# unchanged: {_confidence_text(args.unchanged_confidence[0])}")
        print(table(total, tests, modes, auto_tests))
    if node_reports:
        print(
            f"\n# Node's published noise (tests/perf/data/node_noise_2023.json): {node_reports} reports of {ROWS} rows "
            f"per suite, {yuenwelch.GATE_TEST}, no drift, no outliers"
        )
        node_modes = [
            (mode, confidence, ceiling)
            for confidence in args.unchanged_confidence
            for ceiling in args.max_resolution
            for mode in modes
            if mode in ("auto", *(f"fixed-{n}" for n in fixed))
        ]
        print(node_noise.table(total, node_modes))
        for line in node_noise.projection_lines(total):
            print(line)
    if not args.no_issue:
        print()
        for line in issue_cases(np.random.default_rng(args.seed + 1), tests, issue_reports):
            print(line)
    print(f"\n# {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
