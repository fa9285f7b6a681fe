"""Running benchmarks: what to run, in which order, in which processes, with checkpoints.

- ``suite``: selection as compare.js means it; ``changedfiles``: categories from changed files.
- ``plan``: options checked and turned into the plan and the first run.json.
- ``process``: the schedule and one benchmark process speaking Node's IPC protocol.
- ``session``: carries out the schedule one job at a time (``slots``: several at once), stopping fixed or adaptive.
- ``recorder``: the one writer of results.csv, pairs.csv and the run.json checkpoints ``--resume`` continues from.
- ``adaptive``: ``--runs auto``: its design, the looks taken during the run, the files that stop.
- ``trust``: which heads are untrusted, and the sandbox their benchmark processes start in.
- ``local``: one ``benchgate run`` from plan to results on disk; ``system``: the runner's checks;
  ``topology``: the CPUs' core types and SMT siblings, which CPU sets a run's slots get;
  ``progress``: the progress line and its ETA.
"""
