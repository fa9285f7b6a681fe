"""Synthetic benchmark rates for the statistics tests."""

from __future__ import annotations

import numpy as np


def lognormal(rng, sigma, shape, change=0.0):
    """Rates around 1e5 (times ``1 + change``) with log-scale noise ``sigma``, of the given ``shape``."""
    return np.exp(np.log1p(change) + sigma * rng.standard_normal(shape)) * 1e5


# mulberry32 in JavaScript, for the seeded stub benchmarks in Node's format (tests/bisectrepo.py,
# tests/test_run_prior.py): `generator(seed)` returns a function of uniform numbers in [0, 1).
SEEDED_GENERATOR_JS = """function generator(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
"""
