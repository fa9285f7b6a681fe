"""The bisection's pure logic and its state file, with a seeded in-memory probe (no builds, no processes)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchgate.bisect import render, state
from benchgate.bisect.search import (
    BETWEEN,
    EARLIER,
    LATER,
    UNDECIDED,
    Bisection,
    Budget,
    Candidate,
    Measure,
    culprits,
    find_step,
    next_action,
    place,
)
from benchgate.errors import InputError

ROW = "buffers/stub.js n=1"


def stub(levels, noise=0.02, seed=1, failing=(), noisy=None):
    """Rates ``1e5 × level`` with log-normal noise, seeded per candidate and batch; ``failing`` do not build."""

    def measure(candidate: Candidate, runs: int, batch: int) -> state.Measured:
        index = int(candidate.key)
        if index in failing:
            return state.Measured({}, failed="does not build: error: oops")
        rng = np.random.default_rng([seed, index, batch])
        sigma = (noisy or {}).get(index, noise)
        return state.Measured({ROW: list(1e5 * levels[index] * np.exp(sigma * rng.standard_normal(runs)))})

    return measure


def bisect(tmp_path, levels, budget: Budget | None = None, **options):
    bisection = Bisection(
        [Candidate(str(index), f"change {index}") for index in range(len(levels))], budget or Budget()
    )
    done = state.run(bisection, stub(levels, **options), state_path=tmp_path / "state.json", setup={}, progress=None)
    return bisection, done


@pytest.mark.parametrize("planted", [1, 2, 13, 16, 30, 31])
def test_a_planted_step_among_32_takes_at_most_seven_probes(tmp_path, planted):
    bisection, done = bisect(tmp_path, [1.0 if index < planted else 0.7 for index in range(32)])
    assert done.reason == "found" and len(bisection.probes) <= 7
    (culprit,) = culprits(bisection)
    assert (culprit.first, culprit.last, culprit.resolved) == (planted, planted, True)
    assert 0.8 < culprit.share < 1.2


def test_a_step_in_three_parts_names_each_with_its_share(tmp_path):
    levels = [1.0 if i < 5 else 0.9 if i < 17 else 0.8 if i < 26 else 0.7 for i in range(32)]
    bisection, done = bisect(tmp_path, levels)
    found = {culprit.last: culprit.share for culprit in culprits(bisection)}
    assert done.reason == "found" and set(found) == {5, 17, 26}
    assert sum(found.values()) == pytest.approx(1.0, abs=0.15)
    assert all(0.15 < share < 0.5 for share in found.values())


def test_an_undecided_probe_gets_more_runs_up_to_the_budget(tmp_path):
    levels = [1.0 if index < 10 else 0.7 for index in range(32)]
    bisection, done = bisect(tmp_path, levels, noisy={15: 0.15})
    assert bisection.probes[15].batches > 1 and bisection.probes[15].runs <= 40
    assert [c.last for c in culprits(bisection)] == [10]
    # With no runs to spare it is taken by its point estimate, and says so.
    bisection, done = bisect(tmp_path, levels, Budget(max_runs=10), noisy={15: 0.15})
    assert bisection.probes[15].batches == 1 and bisection.level_of(15, bisection.step())[2] is False


def test_skipped_candidates_move_to_the_neighbour_and_a_range_is_named_when_needed(tmp_path):
    levels = [1.0 if index < 13 else 0.7 for index in range(32)]
    bisection, done = bisect(tmp_path, levels, failing={15, 13})
    (culprit,) = culprits(bisection)
    assert (culprit.first, culprit.last, culprit.skipped) == (13, 14, (13,))
    assert bisection.probes[15].failed.startswith("does not build") and 14 in bisection.probes
    # The reason is the build's or the benchmark's output: in the markdown report only inside a code span.
    assert "`does not build: error: oops`" in render.render(render.report_data(bisection, done, {}), markdown=True)


def test_no_step_and_budget_are_reasons_not_culprits(tmp_path):
    bisection, done = bisect(tmp_path, [1.0] * 8)
    assert done.reason == "no-step" and culprits(bisection) == []
    assert bisection.probes[0].runs == bisection.probes[7].runs == 40  # more runs before giving up
    bisection, done = bisect(tmp_path, [1.0 if index < 13 else 0.7 for index in range(32)], Budget(max_probes=4))
    assert done.reason == "budget" and len(bisection.probes) == 4
    assert [culprit.resolved for culprit in culprits(bisection)] == [False]
    bisection, done = bisect(tmp_path, [1.0 if index < 13 else 0.7 for index in range(32)], Budget(max_hours=1e-12))
    assert done.reason == "budget" and sorted(bisection.probes) == [0, 31]  # the ends, then out of time


def test_classes_against_both_ends():
    rng = np.random.default_rng(3)
    sample = lambda level, n=10: {ROW: list(1e5 * level * np.exp(0.02 * rng.standard_normal(n)))}  # noqa: E731
    earlier, later = sample(1.0), sample(0.7)
    step = find_step(earlier, later)
    assert step.stepped == (ROW,) and -32 < step.change[ROW] < -28
    assert place(sample(1.0), earlier, later, step).cls == EARLIER
    assert place(sample(0.7), earlier, later, step).cls == LATER
    assert place(sample(0.85), earlier, later, step).cls == BETWEEN
    noisy = {ROW: list(1e5 * 0.7 * np.exp(0.3 * rng.standard_normal(4)))}
    assert place(noisy, earlier, later, step).cls == UNDECIDED


def test_the_state_round_trips_and_a_forged_or_truncated_one_is_refused(tmp_path):
    bisection, _ = bisect(tmp_path, [1.0 if index < 5 else 0.7 for index in range(16)])
    path = tmp_path / "state.json"
    restored = state.load(path, {})
    assert restored.probes == bisection.probes and list(restored.probes) == list(bisection.probes)
    assert next_action(restored) == next_action(bisection)
    text = path.read_text()
    for damaged, why in [
        (text[: len(text) // 2], "truncated or not JSON"),
        (text.replace('"failed": null', '"failed": "x"', 1), "digest does not match"),
        ("", "truncated or not JSON"),
    ]:
        path.write_text(damaged)
        with pytest.raises(state.BisectStateError, match=why) as caught:
            state.load(path, {})
        assert caught.value.exit_status == state.EXIT_BISECT_STATE and "\n" not in caught.value.one_line()
    # A forger who recomputes the digest still cannot give a probe more samples than runs or a bad rate.
    data = json.loads(text)
    data["probes"][0]["samples"][ROW] += [1.0] * 100
    del data["digest"]
    data["digest"] = state._digest(data)
    path.write_text(json.dumps(data))
    with pytest.raises(state.BisectStateError, match="more samples than runs"):
        state.load(path, {})
    path.write_text(text)
    with pytest.raises(state.BisectStateError, match="another bisection"):
        state.load(path, {"from": "elsewhere"})


def test_resuming_mid_way_measures_exactly_what_an_uninterrupted_bisection_does(tmp_path):
    levels = [1.0 if index < 21 else 0.7 for index in range(32)]
    whole, _ = bisect(tmp_path / "whole", levels)
    first = Bisection([Candidate(str(index), "") for index in range(32)], Budget(max_probes=4))
    state.run(first, stub(levels), state_path=tmp_path / "part.json", setup={}, progress=None)
    resumed = state.load(tmp_path / "part.json", {})
    resumed.budget = Budget()
    assert isinstance(next_action(resumed), Measure)
    state.run(resumed, stub(levels), state_path=tmp_path / "part.json", setup={}, progress=None)
    measured = lambda b: {i: (p.samples, p.runs, p.batches, p.failed) for i, p in b.probes.items()}  # noqa: E731
    assert measured(resumed) == measured(whole)


def test_commits_on_the_trusted_branch_build_trusted_and_others_untrusted(tmp_path):
    from nodelike import make_node_like_repo

    from benchgate.bisect import probes

    repo = make_node_like_repo(tmp_path / "node")
    prober = probes.Prober(workdir=tmp_path / "out", selection=probes.Selection(), repo=repo.path)
    assert prober._trusted(repo.commits["v2"]) and prober._trusted(repo.commits["docs"])
    assert not prober._trusted(repo.commits["feature"]) and not prober._trusted(repo.commits["broken"])
    candidates = probes.commit_candidates(repo.path, "v0.1.0", "feature", "https://example.org/c")
    assert [c.label for c in candidates] == ["nodelike 0.1.0", "nodelike 0.2.0", "benchmark docs"]
    assert candidates[-1].url == f"https://example.org/c/{repo.commits['feature']}"
    with pytest.raises(InputError, match="not an ancestor"):
        probes.commit_candidates(repo.path, "feature", "main")


@pytest.mark.parametrize("from_repo", [True, False])
def test_a_later_batch_at_a_candidate_neither_builds_nor_fetches_again(tmp_path, monkeypatch, from_repo):
    from types import SimpleNamespace

    from benchgate.bisect import probes

    calls = []

    def build_ref(repo, ref, **_):
        calls.append(ref)
        return SimpleNamespace(binary=tmp_path / f"node-{ref}", cached=False)

    def release_binary(version, **_):
        calls.append(version)
        return SimpleNamespace(path=tmp_path / f"node-{version}")

    monkeypatch.setattr(probes, "build_ref", build_ref)
    monkeypatch.setattr(probes.releases, "release_binary", release_binary)
    monkeypatch.setattr(probes.Prober, "_trusted", lambda self, sha: True)
    monkeypatch.setattr(probes.Prober, "_run", lambda self, binary, *_: ({ROW: [float(len(binary.name))]}, None))
    prober = probes.Prober(workdir=tmp_path, selection=probes.Selection(), repo=tmp_path if from_repo else None)
    first, second = (prober.measure(Candidate("a1", ""), 2, batch) for batch in (0, 1))
    other = prober.measure(Candidate("b2", ""), 2, 0)
    assert calls == ["a1", "b2"]
    assert first.built == from_repo and not second.built and second.build_seconds == 0.0
    assert first.samples == second.samples and other.built == from_repo
