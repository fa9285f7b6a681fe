"""The gate's defaults that the light policy (``gate``) and the numeric tests share.

A leaf module with no imports, so the configuration and the runner can read them without
loading numpy, and the tests without importing the policy.
"""

DEFAULT_INCONCLUSIVE_ABOVE = 10.0  # percent: with min-effect 0, an interval reaching this regression is undecided
AUTO_MIN_RUNS, AUTO_MAX_RUNS = 5, 60  # --runs auto: the first look and the most runs (benchgate.stats.sequential)
