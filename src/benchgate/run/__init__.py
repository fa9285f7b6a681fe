"""Running benchmarks: selection, plan, schedule, benchmark processes, the session with checkpoints, progress.

The layout: docs/development.md; the design: docs/statistics.md ("Adaptive runs", "Duet runs").
"""

import sys


def say(message: str) -> None:
    """A line for the user on stderr, as every message of a run starts: ``benchgate: message``."""
    print(f"benchgate: {message}", file=sys.stderr)
