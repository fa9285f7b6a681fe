"""Deciding an adaptive run from its record (benchgate.stats.adaptivetable, benchgate.results.recordparts)."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from benchgate.errors import InputError
from benchgate.results.recordparts import Look, Stop
from benchgate.results.rundirs import AdaptiveShard
from benchgate.results.runrecord import RunRecord, parse_run_record
from benchgate.stats import adaptivetable, sequential
from benchgate.stats.gate import GatePolicy

DESIGN = sequential.make_design(min_runs=5, max_runs=12)
STRICT = GatePolicy(max_resolution=None)  # every row gated at its target


def frame(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    samples = pd.DataFrame(rows, columns=["side", "filename", "configuration", "rate"])
    samples["side"] = pd.Categorical(samples["side"], categories=["base", "head"])
    return samples


def adaptive_record(files: list[str], **fields) -> RunRecord:
    """An adaptive run's run.json with ``files`` selected and the given looks, stops and configurations."""
    fields = {"schema": 1, "runs": "auto", "design": DESIGN.to_json(), "selection": {"files": files}, **fields}
    return RunRecord.model_validate(fields)


def forged(shard: AdaptiveShard, samples: tuple | None = None, **update) -> AdaptiveShard:
    """``shard`` with its record's fields replaced as given (unchecked, as a forged run.json would be)."""
    record = shard.record.model_copy(update=update)
    return AdaptiveShard(shard.where, record, shard.look_samples if samples is None else samples)


def live_shard(
    rng, files: dict[str, tuple[float, float]], where: str = "run.json", *, rows_of=None, row_files=frozenset()
) -> AdaptiveShard:
    """An adaptive run of ``files`` (name -> (noise, change)), one configuration each, as the live run records it.

    ``rows_of``: name -> {configuration: (noise, change)} for files with several rows; a file in
    ``row_files`` runs one job per configuration (each row stops on its own), others run whole.
    """
    names = list(files) + [name for name in (rows_of or {}) if name not in files]
    rows_of = {**{name: {"n=1": files[name]} for name in files}, **(rows_of or {})}
    rows, looks, stops, look_samples, stopped = [], [], [], [], set()
    for runs in range(1, DESIGN.max_runs + 1):
        for name in names:
            for configuration, (sigma, change) in rows_of[name].items():
                if (name, None) in stopped or (name, configuration) in stopped:
                    continue
                for side, shift in (("base", 0.0), ("head", np.log1p(change))):
                    rate = float(np.exp(np.log(1e5) + shift + sigma * rng.standard_normal()))
                    rows.append((side, name, configuration, rate))
        if runs not in DESIGN.looks:
            continue
        look_samples.append(frame(list(rows)))  # what this look saw: the run so far
        keys = sorted({(row[1], row[2]) for row in rows})
        replayed, units = adaptivetable.replay_samples(DESIGN, names, look_samples, keys, row_files)
        k = len(looks)
        looks.append(Look(runs=runs, csv_bytes=len(rows)))
        for position in np.flatnonzero(replayed.stopped_after == k):
            filename, configuration = units[position]
            stops.append(
                Stop(
                    filename=filename,
                    configuration=configuration,
                    after_runs=runs,
                    look=k,
                    reason=replayed.reasons[position],
                )
            )
            stopped.add(units[position])
        if len(stopped) == len(units):
            break
    configurations = {name: {} for name in row_files}
    record = adaptive_record(names, looks=looks, stops=2, stopped=stops, configurations=configurations)
    return AdaptiveShard(where, record, tuple(look_samples))


def test_the_table_is_the_sequential_decision_of_the_replayed_looks_not_a_fixed_runs_test():
    rng = np.random.default_rng(1)
    shard = live_shard(rng, {"fast.js": (0.01, -0.3), "same.js": (0.01, 0.0), "noisy.js": (0.4, 0.0)})
    keys = [("fast.js", "n=1"), ("noisy.js", "n=1"), ("same.js", "n=1")]
    table = adaptivetable.decide_shards([shard], keys, STRICT).set_index("filename")
    assert table.loc["fast.js", "decision"] == "regression" and table.loc["same.js", "decision"] == "unchanged"
    assert table.loc["noisy.js", "decision"] == "inconclusive" and table.loc["noisy.js", "runs_needed"] > 5
    fixed = adaptivetable.decide_samples(shard.look_samples[-1], keys, STRICT).set_index("filename")
    # the same samples tested once would spend the whole level at the last look: a smaller p-value
    assert table.loc["fast.js", "gate_p"] > fixed.loc["fast.js", "gate_p"]
    stop = {stop.filename: stop for stop in shard.record.stopped}
    assert stop["fast.js"].after_runs < DESIGN.max_runs and stop["fast.js"].reason == "decided"
    assert stop["noisy.js"].reason in ("hopeless", "max-runs")


def test_shards_are_one_holm_family_and_the_order_of_keys_is_the_callers():
    rng = np.random.default_rng(2)
    first = live_shard(rng, {"a.js": (0.01, -0.3), "b.js": (0.01, 0.0)}, "shard1/run.json")
    second = live_shard(rng, {"c.js": (0.01, 0.0), "d.js": (0.02, 0.4)}, "shard2/run.json")
    keys = [("d.js", "n=1"), ("a.js", "n=1"), ("c.js", "n=1"), ("b.js", "n=1")]
    table = adaptivetable.decide_shards([first, second], keys, STRICT)
    assert table["filename"].tolist() == ["d.js", "a.js", "c.js", "b.js"]
    assert table["decision"].tolist() == ["improvement", "regression", "unchanged", "unchanged"]
    assert (table["ci_level"] <= 0.001 / 4 * 2).all()  # Holm over all four rows, not two per shard
    with pytest.raises(InputError, match="exactly one adaptive run"):
        adaptivetable.decide_shards([first], keys, STRICT)
    other = sequential.make_design(min_runs=5, max_runs=20).to_json()
    changed = forged(second, (), design=other)
    with pytest.raises(InputError, match="designs differ"):
        adaptivetable.decide_shards([first, changed], keys, STRICT)


def test_a_record_the_samples_do_not_replay_to_is_refused():
    rng = np.random.default_rng(3)
    shard = live_shard(rng, {"fast.js": (0.01, -0.3), "same.js": (0.01, 0.0)})
    keys = [("fast.js", "n=1"), ("same.js", "n=1")]
    moved = tuple(s.model_copy(update={"configuration": None, "look": s.look + 1}) for s in shard.record.stopped)
    with pytest.raises(InputError, match="the recorded stops do not follow from results.csv"):
        adaptivetable.decide_shards([forged(shard, stopped=moved)], keys, STRICT)
    off_design = (Look(runs=4, csv_bytes=shard.record.looks[0].csv_bytes), *shard.record.looks[1:])
    odd = forged(shard, looks=off_design)
    with pytest.raises(InputError, match="not one of the design's looks"):
        adaptivetable.decide_shards([odd], keys, STRICT)


def test_no_look_yet_decides_nothing():
    record = adaptive_record(["a.js"])
    table = adaptivetable.decide_shards([AdaptiveShard("run.json", record, ())], [("a.js", "n=1")], STRICT)
    assert table["decision"].tolist() == ["inconclusive"] and table["ci_low"].isna().all()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"design": "x"}, "design: must be an object"),
        ({"looks": {}}, "looks: must be a list"),
        ({"looks": [{"runs": 5, "csv_bytes": 10}, {"runs": 5, "csv_bytes": 20}]}, "looks must follow each other"),
        ({"looks": [{"runs": 5, "csv_bytes": -1}]}, "looks[0].csv_bytes: must be a whole number"),
        ({"looks": [{"runs": 5, "csv_bytes": 1, "csv_sha256": "AB" * 32}]}, "looks[0].csv_sha256: must be a sha256"),
        ({"stopped": {"other.js": {"after_runs": 5, "look": 0, "reason": "decided"}}}, "must name a selected file"),
        ({"stopped": {"a.js": {"after_runs": 5, "look": 0, "reason": 7}}}, "reason: must be a short string"),
        ({"stops": 3}, "stops: must be 1 or 2"),
        ({"stops": 2, "stopped": {}}, "stopped: must be a list"),
        ({"stops": 2, "stopped": [], "configurations": {"b.js": {}}}, "must name a selected file"),
        (  # a comparison's stop in a file that ran whole
            {
                "stops": 2,
                "stopped": [
                    {"filename": "a.js", "configuration": "n=1", "after_runs": 5, "look": 0, "reason": "decided"}
                ],
            },
            "must be a comparison of a file run one configuration a job",
        ),
        (  # a file's stop where each comparison stops on its own
            {
                "stops": 2,
                "configurations": {"a.js": {}},
                "stopped": [
                    {"filename": "a.js", "configuration": None, "after_runs": 5, "look": 0, "reason": "decided"}
                ],
            },
            "must be a comparison of a file run one configuration a job",
        ),
        (
            {
                "stops": 2,
                "configurations": {"a.js": {}},
                "stopped": [
                    {"filename": "a.js", "configuration": "n=1", "after_runs": 5, "look": 0, "reason": "decided"},
                    {"filename": "a.js", "configuration": "n=1", "after_runs": 6, "look": 1, "reason": "decided"},
                ],
            },
            "stops a unit that already stopped",
        ),
    ],
)
def test_the_record_is_checked_as_untrusted_data(change, message):
    record = {"schema": 1, "runs": "auto", "design": DESIGN.to_json(), "selection": {"files": ["a.js"]}, "stopped": {}}
    record.update(change)
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_run_record(record, "run.json")


def test_rows_of_a_file_run_one_configuration_a_job_stop_one_by_one(monkeypatch):
    # One file, two comparisons: a clear regression and a noisy unchanged one. Run one configuration a job,
    # the regression stops at an early look while the noisy row runs on; run whole, both run as long as the noisy.
    # (8 % noise: with unchanged at its own one-sided 95 %, issue 17, a 5 % row is settled at the first look too;
    # strict, since by default 12 runs cannot reach 10 % at 8 %: the row would be gated coarser and stop at once)
    monkeypatch.setattr(
        sys.modules[__name__], "DESIGN", sequential.make_design(min_runs=5, max_runs=12, max_resolution=None)
    )
    rows_of = {"mixed.js": {"len=256": (0.01, -0.5), "len=0": (0.08, 0.0)}}
    per_row = live_shard(np.random.default_rng(4), {}, rows_of=rows_of, row_files={"mixed.js"})
    stops = per_row.record.stopped_units()
    assert stops[("mixed.js", "len=256")].after_runs == DESIGN.min_runs
    assert stops[("mixed.js", "len=0")].after_runs > DESIGN.min_runs
    whole = live_shard(np.random.default_rng(4), {}, rows_of=rows_of)
    (whole_stop,) = whole.record.stopped  # the regression waits for the noisy row
    assert (whole_stop.filename, whole_stop.configuration) == (
        "mixed.js",
        None,
    ) and whole_stop.after_runs > DESIGN.min_runs
    keys = [("mixed.js", "len=0"), ("mixed.js", "len=256")]
    table = adaptivetable.decide_shards([per_row], keys, STRICT).set_index("configuration")
    assert table.loc["len=256", "decision"] == "regression"
    # the replay must reach each recorded per-row stop: a row's stop moved to a later look is refused
    moved = tuple(
        s.model_copy(update={"look": s.look + (s.configuration == "len=256")}) for s in per_row.record.stopped
    )
    with pytest.raises(InputError, match="recorded stops do not follow.*mixed.js len=256"):
        adaptivetable.decide_shards([forged(per_row, stopped=moved)], keys, STRICT)
    # the same stops read as a whole file's (the record's files-run-whole list forged) are refused too
    as_whole = forged(per_row, configurations={})
    with pytest.raises(InputError, match="recorded stops do not follow"):
        adaptivetable.decide_shards([as_whole], keys, STRICT)


def test_a_shard_that_stopped_first_sits_out_later_looks_under_the_designs_test(monkeypatch):
    # The first shard stops at the first look, the second runs on: the rows of the first sit out its later looks
    # under the design's test (Welch here), not the default one, so the table does not depend on the shards' order.
    design = sequential.make_design(min_runs=5, max_runs=12, test="welch_log", max_resolution=None)
    monkeypatch.setattr(sys.modules[__name__], "DESIGN", design)
    rng = np.random.default_rng(5)
    first = live_shard(rng, {"a.js": (0.01, -0.3)}, "shard1/run.json")
    second = live_shard(rng, {"b.js": (0.08, 0.0), "c.js": (0.08, 0.03)}, "shard2/run.json")
    assert len(first.record.looks) == 1 < len(second.record.looks)
    keys = [("a.js", "n=1"), ("b.js", "n=1"), ("c.js", "n=1")]
    decided, decide = [], adaptivetable.decide_at_look

    def spy(design: sequential.Design, history: list, **options) -> object:
        decided.append(history)
        return decide(design, history, **options)

    monkeypatch.setattr(adaptivetable, "decide_at_look", spy)
    table = adaptivetable.decide_shards([first, second], keys, STRICT)
    assert {st.test for st in decided[0]} == {"welch_log"}
    pd.testing.assert_frame_equal(table, adaptivetable.decide_shards([second, first], keys, STRICT))
