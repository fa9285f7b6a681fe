"""benchgate: gate Node.js pull requests on benchmark regressions."""

__version__ = "0.1.0"
