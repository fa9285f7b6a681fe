"""Running benchmarks: selection, plan, schedule, benchmark processes, the session with checkpoints, progress.

The layout: docs/development.md; the design: docs/statistics.md ("Adaptive runs", "Duet runs").
"""
