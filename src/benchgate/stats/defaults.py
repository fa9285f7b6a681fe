"""The gate's defaults that the policy (``gate``) and the numeric tests share: a leaf, so no numpy is loaded."""

GATE_TEST = "yuen_log"  # Yuen's trimmed Welch test on log rates (benchgate.stats.yuenwelch)
DEFAULT_POWER = 0.8  # of the mde
DEFAULT_INCONCLUSIVE_ABOVE = 10.0  # percent: with min-effect 0, an interval reaching this regression is undecided
# percent: a row is unchanged when its one-sided bound at this confidence rules out a regression of the floor
# (the convention of equivalence testing, TOST); it bounds a missed regression per row (tests/perf/simulate_gate.py)
DEFAULT_UNCHANGED_CONFIDENCE = 95.0
AUTO_MIN_RUNS, AUTO_MAX_RUNS = 5, 60  # --runs auto: the first look and the most runs (benchgate.stats.sequential)
# percent: a row whose trusted noise cannot reach the target resolution by max-runs is gated at the best one it
# can reach, up to this ceiling (benchgate.stats.resolution); a row that cannot reach even this is gated strictly
DEFAULT_MAX_RESOLUTION = 25.0
