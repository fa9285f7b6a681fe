"""Synthetic benchmark rates for the statistics tests."""

from __future__ import annotations

import numpy as np


def lognormal(rng, sigma, shape, change=0.0):
    """Rates around 1e5 (times ``1 + change``) with log-scale noise ``sigma``, of the given ``shape``."""
    return np.exp(np.log1p(change) + sigma * rng.standard_normal(shape)) * 1e5
