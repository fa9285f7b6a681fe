"""Main's history as prior knowledge: each selected row's noise before the run (run.json's ``prior``).

A store that cannot be read costs a warning, never the run (docs/history.md, "As the gate's prior").
"""

from __future__ import annotations

import math
import sys

from benchgate.errors import StoreCorrupt, StoreUnavailable


def shown_store(store_url: str) -> tuple[str, bool]:
    """The store's URL without password, and whether it may hold runs; InputError for a URL that is not a store's."""
    from benchgate.history.store import open_store

    try:
        store = open_store(store_url)
    except StoreUnavailable as error:  # a SQLite file in a missing directory: the reader says so, as a warning
        return error.where or store_url, True
    store.engine.dispose()
    return store.shown, store.sqlite_path is None or store.sqlite_path.is_file()


def read_prior(store_url: str, files, environment: dict, node_args) -> tuple[dict | None, str | None]:
    """run.json's ``prior`` for ``files`` (None: the store gave none) and a warning; ``environment``: the run's."""
    from benchgate.history.reading import main_spreads
    from benchgate.history.runentry import runner_fingerprint
    from benchgate.stats.resolution import PRIOR_RUNS, prior_variance

    runner = runner_fingerprint({key: value for key, value in environment.items() if key != "warnings"})
    flags = " ".join(node_args)
    shown, recorded = shown_store(store_url)
    try:  # an empty history (nothing recorded yet) is no warning: every row falls back to its base's samples
        spreads = main_spreads(store_url, files, runner=runner, node_flags=flags) if recorded else {}
    except (StoreUnavailable, StoreCorrupt) as error:  # history being down must not fail a run
        return None, f"no prior from main's history (the base's samples decide how coarsely rows are gated): {error}"
    keys = sorted(spreads)
    variances = prior_variance([spreads[key] for key in keys], PRIOR_RUNS)
    rows = [
        {
            "filename": key[0],
            "configuration": key[1],
            "variance": float(variance),
            "runs": sum(1 for spread in spreads[key][-PRIOR_RUNS:] if spread > 0 and math.isfinite(spread)),
        }
        for key, variance in zip(keys, variances.tolist(), strict=True)
        if variance == variance  # NaN: too few runs, the base's samples decide
    ]
    prior = {"store": shown, "runner": runner, "branch": "main", "node_flags": flags, "recent": PRIOR_RUNS}
    return {**prior, "rows": rows}, None


def attach_prior(record: dict, store_url: str | None, files) -> None:
    """Read the prior into ``record`` (a new run's) when a store is configured; a store that is down is a warning."""
    if not store_url or not files:
        return
    node_args = record["binaries"]["base"].get("node_args") or ()
    prior, warning = read_prior(store_url, files, record["environment"], node_args)
    if prior is not None:
        record["prior"] = prior
        known = len(prior["rows"])
        print(f"benchgate: main's history ({prior['store']}) gives the noise of {known} row(s)", file=sys.stderr)
    if warning is not None:
        record["environment"].setdefault("warnings", []).append(warning[:512])
