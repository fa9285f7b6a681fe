"""Pure rendering of an analysis (no file I/O): tables, the PR comment, charts, versions and history reports."""
