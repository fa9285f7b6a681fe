"""Pure rendering of an analysis (no file I/O): compare.R's text table, markdown, JSON, CSV, text bars, the PR
comment, the ``--plot`` charts (matplotlib loads only when one is drawn), ``versions`` and ``history`` reports."""
