"""The history of main: every trusted run stored, its series, their change points, and the site.

Runs flow in (``benchgate history record``), reports read from it (the PR comment's context, the
dashboard). The data model (``model``) is shared by the store, the change-point analysis and the
renderers; storage adapters stay apart from the analysis, as in Apache Otava.
"""
