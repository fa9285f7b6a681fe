"""Bisect: the first commit or release at which a benchmark's rows become like the later end.

- ``classify``: a probe against both ends (like the earlier, like the later, between), with the gate's test.
- ``search``: what to probe next and what was found, from the probes alone (pure).
- ``state``: the state file, written atomically after every batch, checked on ``--resume``.
- ``driver``: the loop: measure, save, progress line.
- ``probes``: the one adapter to builds, release binaries and the runner (``benchgate run``'s machinery).
- ``render``: the report in markdown, text and JSON.
"""
