"""Bisect: the first commit or release at which a benchmark's rows become like the later end (docs/bisect.md)."""
