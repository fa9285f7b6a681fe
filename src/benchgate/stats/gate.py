"""The gate's policy (threshold, correction, minimum effect, per-benchmark rules) and what it says per row.
A row gates when a ``regression`` of at least the minimum effect, is undecided when ``inconclusive`` (``analysis``)."""

import fnmatch
from dataclasses import dataclass, field

from benchgate.stats.defaults import DEFAULT_INCONCLUSIVE_ABOVE, DEFAULT_MAX_RESOLUTION, DEFAULT_UNCHANGED_CONFIDENCE

THRESHOLDS = {"*": 0.05, "**": 0.01, "***": 0.001, "off": None}
CORRECTIONS = ("holm", "none")
RULES = ("gate", "compare-r")  # the gate's tests, or compare.R's p-value rule (benchgate.stats.analysis)
MAX_MIN_EFFECT = 1000.0  # percent; the configuration's cap too
MIN_RUNS = 2  # Welch's t-test needs two samples a side
MAX_RUNS = 1000  # samples per side and configuration: a bound on what one label or option may ask for
DISPLAY_LEVEL = 0.001  # the decisions shown under --threshold off (they gate nothing)
# resolution: percent, the smallest regression the row's evidence rules out (benchgate.stats.resolution);
# gated_at: percent, the regression it must rule out to be unchanged (coarser than its target: "coarse")
DECISION_COLUMNS = (
    *("decision", "change", "ci_low", "ci_high", "ci_level", "gate_p", "mde", "sigma", "noisy_mde", "resolution"),
    *("gated_at", "runs_needed"),
)
UNCHANGED_CONFIDENCES = MIN_UNCHANGED_CONFIDENCE, MAX_UNCHANGED_CONFIDENCE = 50.0, 99.999  # percent, the range


@dataclass(frozen=True)
class GateRule:
    """A per-benchmark override, matched by glob on the benchmark file name."""

    pattern: str
    threshold: str | None = None
    min_effect: float | None = None
    ignore: bool = False
    max_sigma: float | None = None  # percent: a noise budget of its own (see GatePolicy.noisy_max_sigma)


@dataclass(frozen=True)
class GatePolicy:
    """Everything that decides whether a row gates."""

    threshold: str = "***"
    correction: str = "holm"
    min_effect: float = 0.0
    rules: tuple[GateRule, ...] = field(default_factory=tuple)
    inconclusive_above: float = DEFAULT_INCONCLUSIVE_ABOVE
    unchanged_confidence: float = DEFAULT_UNCHANGED_CONFIDENCE  # percent, the one-sided bound of ``unchanged``
    # percent: an undecided row noisier than this (per-sample sigma) is too noisy to gate and does not hold
    # the verdict inconclusive; None (the default) keeps every undecided row holding it
    noisy_max_sigma: float | None = None
    # percent: a row whose base-side noise cannot reach its target (inconclusive-above or min-effect) by max-runs
    # is gated at the best resolution it can reach, up to this (benchgate.stats.resolution); None: noisy: strict
    max_resolution: float | None = DEFAULT_MAX_RESOLUTION
    rule: str = "gate"  # one of RULES

    def __post_init__(self) -> None:
        for name, allowed in (("rule", RULES), ("threshold", THRESHOLDS), ("correction", CORRECTIONS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")
        if not (0 <= self.min_effect <= MAX_MIN_EFFECT):
            # inf (or 1e9) would turn the gate off without saying so; --threshold off is the way to do that.
            raise ValueError(f"min-effect must be a percentage from 0 to {MAX_MIN_EFFECT:g}, not {self.min_effect!r}")
        if not (MIN_UNCHANGED_CONFIDENCE <= self.unchanged_confidence <= MAX_UNCHANGED_CONFIDENCE):
            raise ValueError(
                f"unchanged-confidence must be a percentage from {MIN_UNCHANGED_CONFIDENCE:g} to "
                f"{MAX_UNCHANGED_CONFIDENCE:g}, not {self.unchanged_confidence!r}"
            )
        for name, value in (
            ("inconclusive-above", self.inconclusive_above),
            ("noisy max-sigma", self.noisy_max_sigma),
            ("max-resolution", self.max_resolution),
        ):
            if value is not None and not (0 < value <= MAX_MIN_EFFECT):
                raise ValueError(f"{name} must be a percentage above 0, at most {MAX_MIN_EFFECT:g}, not {value!r}")


@dataclass(frozen=True)
class RowRules:
    """What the policy and its rules say for each row of a table (lists in the table's order)."""

    threshold: list[str]
    min_effect: list[float]
    ignored: list[bool]
    max_sigma: list[float] | None = None  # per row, NaN: no noise budget

    @property
    def alpha(self) -> list[float]:
        """The level each row is decided at (``--threshold off``: the *** level, for display)."""
        return [THRESHOLDS[threshold] or DISPLAY_LEVEL for threshold in self.threshold]

    @property
    def judged(self) -> list[bool]:
        """Rows whose decision counts: not ignored and not under a threshold of ``off``."""
        pairs = zip(self.threshold, self.ignored, strict=True)
        return [not ignored and THRESHOLDS[threshold] is not None for threshold, ignored in pairs]


def row_rules(filenames, policy: GatePolicy) -> RowRules:
    """Each row's threshold, minimum effect and whether a rule ignores it."""
    thresholds, effects, ignored, sigmas = [], [], [], []
    budget = float("nan") if policy.noisy_max_sigma is None else policy.noisy_max_sigma
    for filename in filenames:
        # The last matching rule wins, so later, more specific entries in the config override earlier ones.
        matching = (rule for rule in reversed(policy.rules) if fnmatch.fnmatchcase(str(filename), rule.pattern))
        rule = next(matching, GateRule("*"))
        thresholds.append(rule.threshold or policy.threshold)
        effects.append(policy.min_effect if rule.min_effect is None else rule.min_effect)
        ignored.append(bool(rule.ignore))
        sigmas.append(budget if rule.max_sigma is None else rule.max_sigma)
    return RowRules(thresholds, effects, ignored, sigmas)
