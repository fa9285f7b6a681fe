"""The gate's candidate tests besides its own (``yuenwelch.TESTS``), which tests/perf/simulate_gate.py compares it with,
and the verdict of decision codes (``verdicts``) the simulator counts.

``welch_raw``: Welch on the rates (compare.R's test); ``yuen10_log``: Yuen with 10 % trimming; ``either``: Welch on
log rates or on rates, Bonferroni over the two. They go through the gate's own decisions (fixed runs only: a design's
test is one of ``yuenwelch.TESTS``)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from benchgate.stats import decisions, paired, yuenwelch
from benchgate.stats.yuenwelch import GATE_TEST, Stats, combine

yuenwelch.TRIM.setdefault("yuen10_log", 0.1)  # a trimmed candidate: gate_statistics and projections know its trim
TESTS = ("welch_raw", "welch_log", "yuen_log", "yuen10_log", "either")
# --pairing duet's candidates: the plain paired t and the trimmed one without aligning CPU sets, and the gate's.
PAIRED_TESTS = ("paired_t_log", "paired_trimmed_log", paired.PAIRED_TEST)


@dataclass(frozen=True)
class RawStats(Stats):
    """Statistics on the rates themselves: ``delta`` the difference of the means, the change relative to the base's."""

    scale_base: np.ndarray  # the base's mean rate

    def percent(self, delta: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return 100 * delta / self.scale_base


@dataclass(frozen=True)
class EitherStats(Stats):
    """``either``: the log test's fields, and the raw test's delta, se, df and base mean (``raw``)."""

    raw_delta: np.ndarray
    raw_se: np.ndarray
    raw_df: np.ndarray
    raw_scale: np.ndarray

    @property
    def log_test(self) -> Stats:
        return Stats(**{item.name: getattr(self, item.name) for item in fields(Stats)})

    @property
    def raw(self) -> RawStats:
        changed = {"test": "welch_raw", "delta": self.raw_delta, "se": self.raw_se, "df": self.raw_df}
        return RawStats(**vars(self.log_test) | changed, scale_base=self.raw_scale)

    @property
    def p_value(self) -> np.ndarray:
        """Bonferroni over its two tests: 2 × the smaller p."""
        return np.minimum(1.0, 2 * np.fmin(self.log_test.p_value, self.raw.p_value))

    def interval(self, level):
        """Both tests' intervals at ``level / 2``, intersected."""
        level = np.asarray(level, dtype=float)
        low_a, high_a = self.log_test.interval(level / 2)
        low_b, high_b = self.raw.interval(level / 2)
        return np.fmax(low_a, low_b), np.fmin(high_a, high_b)

    def mde(self, level, power=yuenwelch.DEFAULT_POWER):
        return self.log_test.mde(np.asarray(level, dtype=float) / 2, power)  # its log test at half the level

    def projected(self, runs, level):
        return self.log_test.projected(runs, np.asarray(level, dtype=float) / 2)


def welch_raw(base: np.ndarray, head: np.ndarray) -> RawStats:
    """Welch's test on the rates (``yuenwelch.gate_statistics``' steps without the logarithm or trimming)."""
    base, head = (np.asarray(side, dtype=float) for side in (base, head))
    base = base if base.shape[-1] else np.full((*base.shape[:-1], 1), np.nan)
    head = head if head.shape[-1] else np.full((*head.shape[:-1], 1), np.nan)
    side_x, side_y = yuenwelch._prepare(base), yuenwelch._prepare(head)
    loc_x, d_x, f_x, n_x = yuenwelch._side(side_x, 0.0)
    loc_y, d_y, f_y, n_y = yuenwelch._side(side_y, 0.0)
    constant = yuenwelch._constant(side_x) & yuenwelch._constant(side_y)
    with np.errstate(divide="ignore", invalid="ignore"):
        se2 = d_x + d_y
        df = se2 * se2 / (d_x * d_x / f_x + d_y * d_y / f_y)
        se = np.sqrt(se2)
    incomplete = (n_x < 2) | (n_y < 2)
    return RawStats(
        test="welch_raw",
        delta=np.where(n_x * n_y > 0, loc_y - loc_x, np.nan),
        se=np.where(incomplete, np.nan, np.where(constant, 0.0, se)),
        df=np.where(incomplete | constant, np.nan, df),
        n_base=n_x,
        n_head=n_y,
        scale_base=np.where(n_x > 0, loc_x, np.nan),
        var_base=d_x * n_x,
        var_head=d_y * n_y,
        constant=constant & ~incomplete,
    )


def gate_statistics(base: np.ndarray, head: np.ndarray, test: str = GATE_TEST) -> Stats:
    """``yuenwelch.gate_statistics`` for any of ``TESTS``."""
    if test == "welch_raw":
        return welch_raw(base, head)
    if test == "either":
        raw = welch_raw(base, head)
        log = vars(yuenwelch.gate_statistics(base, head, "welch_log")) | {"test": "either"}
        return EitherStats(**log, raw_delta=raw.delta, raw_se=raw.se, raw_df=raw.df, raw_scale=raw.scale_base)
    return yuenwelch.gate_statistics(base, head, test)


def duet_statistics(base_pairs, head_pairs, base, head, test: str, strata: np.ndarray | None = None) -> Stats:
    """``paired.test_statistics`` for any of ``PAIRED_TESTS`` (the candidates on unaligned pairs)."""
    if test == paired.PAIRED_TEST:
        return paired.test_statistics(test, base, head, (base_pairs, head_pairs, strata))
    if test not in PAIRED_TESTS:
        raise ValueError(f"paired test must be one of {', '.join(PAIRED_TESTS)}, not {test!r}")
    trim = 0.0 if test == "paired_t_log" else paired.PAIRED_TRIM
    in_pairs = replace(paired.paired_statistics(base_pairs, head_pairs, None, trim), test=test)
    paired_rows = in_pairs.n_base >= 2
    return combine(lambda a, b: np.where(paired_rows, a, b), in_pairs, yuenwelch.gate_statistics(base, head))


def decide(base: np.ndarray, head: np.ndarray, alpha=decisions.DEFAULT_ALPHA, *, test: str = GATE_TEST, **options):
    """A fixed-runs analysis with any of ``TESTS``: one look spending the whole level (``decide_looks``' options)."""
    return decisions.decide_looks([gate_statistics(base, head, test)], [1.0], alpha, **options)


VERDICTS = ("pass", "fail", "inconclusive")


def verdict(decision: np.ndarray, ignored: np.ndarray | None = None) -> str:
    """``fail`` when a row regresses, else ``inconclusive`` when a row is, else ``pass`` (one report's codes)."""
    decision = np.asarray(decision)
    if ignored is not None:
        decision = decision[~np.asarray(ignored, dtype=bool)]
    return VERDICTS[int(verdicts(decision))]


def verdicts(decision: np.ndarray) -> np.ndarray:
    """``verdict`` along the last axis for many reports at once: 0 pass, 1 fail, 2 inconclusive."""
    fail = (decision == decisions.REGRESSION).any(axis=-1)
    undecided = (decision == decisions.INCONCLUSIVE).any(axis=-1)
    return np.where(fail, 1, np.where(undecided, 2, 0))
