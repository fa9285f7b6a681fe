"""Label parsing and the trust policy: decisions from callables, and through the fake GitHub API.

The report command's label tests (tests/test_report_cmd.py) cover the same policy end to end.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchgate import config
from benchgate.config import labels
from benchgate.errors import InputError

DEFAULTS = config.Settings()
FIXED_30 = config.Settings(runs=30)  # compare.js's count, the default before --runs auto was


@pytest.mark.parametrize(
    ("label", "key", "value"),
    [
        ("benchmark", None, None),
        ("benchmark:accept-regression", "accept-regression", True),
        ("benchmark:threshold=**", "threshold", "**"),
        ("benchmark:threshold=off", "threshold", "off"),
        ("benchmark:min-effect=3%", "min-effect", 3.0),
        ("benchmark:runs=60", "runs", 60),
        ("benchmark:categories=url,buffers", "categories", ("url", "buffers")),
        ("benchmark:filter=tojson", "filter", ("tojson",)),
    ],
)
def test_parse_valid(label, key, value):
    parsed = labels.parse_label(label, "benchmark")
    assert parsed is not None and parsed.error is None
    assert (parsed.key, parsed.value) == (key, value)


@pytest.mark.parametrize(
    ("label", "reason"),
    [
        ("benchmark:threshold=****", "must be one of *, **, ***, off"),
        ("benchmark:runs=1", "must be between 2 and 1000"),
        ("benchmark:min-effect=lots", "must be a percentage"),
        ("benchmark:speed=fast", "unknown setting 'speed'"),
        ("benchmark:runs", "'runs' needs a value"),
        ("benchmark:accept-regression=yes", "takes no value"),
    ],
)
def test_parse_invalid_names_reason(label, reason):
    parsed = labels.parse_label(label, "benchmark")
    assert parsed is not None and parsed.error is not None and reason in parsed.error


def test_other_labels_and_prefixes_are_not_ours():
    assert labels.parse_label("bug", "benchmark") is None
    assert labels.parse_label("benchmarks", "benchmark") is None
    assert labels.parse_label("perf:runs=60", "perf").value == 60


def test_trust_policy():
    adders = {
        "benchmark:threshold=off": "outsider",
        "benchmark:min-effect=5%": "maintainer",
        "benchmark:runs=1": "maintainer",
        "benchmark:accept-regression": "maintainer",
    }
    asked = []

    def can_write(user):
        asked.append(user)
        return user == "maintainer"

    decision = labels.decide(["bug", "benchmark", *adders], DEFAULTS, actor_of=adders.get, can_write=can_write)
    by_label = {outcome.label: outcome for outcome in decision.outcomes}
    assert by_label["benchmark"].status == labels.REQUEST
    # Loosening by a read-only user: ignored, and the reason names them.
    assert by_label["benchmark:threshold=off"].status == labels.IGNORED
    assert "@outsider" in by_label["benchmark:threshold=off"].reason
    assert by_label["benchmark:min-effect=5%"].status == labels.APPLIED
    assert by_label["benchmark:accept-regression"].status == labels.APPLIED
    assert by_label["benchmark:runs=1"].status == labels.INVALID
    assert decision.values == {"min-effect": 5.0, "accept-regression": True}
    assert sorted(asked) == ["maintainer", "outsider"]  # one API call per user, cached


def test_tightening_label_needs_no_permission():
    decision = labels.decide(
        ["benchmark:threshold=*", "benchmark:min-effect=0"],
        DEFAULTS,
        actor_of=lambda label: "outsider",
        can_write=lambda user: pytest.fail("no permission check for a tightening label"),
    )
    assert decision.values == {"threshold": "*", "min-effect": 0.0}


def test_more_runs_than_configured_count_only_from_maintainers_and_never_past_max_runs():
    roles = {"benchmark:runs=100": "outsider"}
    decision = labels.decide(list(roles), FIXED_30, actor_of=roles.get, can_write=lambda user: False)
    (outcome,) = decision.outcomes
    assert decision.values == {} and outcome.status == labels.IGNORED
    assert outcome.reason.startswith("asks for more runs than the configured 30 (runner time)")
    trusted = labels.decide(list(roles), FIXED_30, actor_of=roles.get, can_write=lambda user: True)
    assert trusted.values == {"runs": 100}
    # Past the cap (max-runs, default 100) nobody's label counts: 1000 runs is 33x the work of 30.
    for settings, label in (
        (FIXED_30, "benchmark:runs=101"),
        (config.resolve(file_values={"runs": 30, "max-runs": 40}), "benchmark:runs=41"),
    ):
        capped = labels.decide([label], settings, actor_of=lambda _: "admin", can_write=lambda user: True)
        assert capped.values == {} and capped.outcomes[0].status == labels.INVALID
        assert f"more than max-runs ({settings.max_runs})" in capped.outcomes[0].reason
    # The configured runs themselves are a no-op from anyone.
    same = labels.decide(["benchmark:runs=30"], FIXED_30, actor_of=roles.get, can_write=lambda user: pytest.fail())
    assert same.values == {"runs": 30}


def test_max_runs_is_not_a_label():
    parsed = labels.parse_label("benchmark:max-runs=1000", "benchmark")
    assert parsed.error is not None and "unknown setting 'max-runs'" in parsed.error


def test_loosening_is_relative_to_configured_settings():
    strict_file = config.resolve(file_values={"threshold": "*", "min-effect": 10.0})
    decision = labels.decide(
        ["benchmark:threshold=**", "benchmark:min-effect=3%"],
        strict_file,
        actor_of=lambda label: "outsider",
        can_write=lambda user: False,
    )
    statuses = {outcome.label: outcome.status for outcome in decision.outcomes}
    assert statuses == {"benchmark:threshold=**": labels.IGNORED, "benchmark:min-effect=3%": labels.APPLIED}


def test_unknown_adder_is_ignored():
    decision = labels.decide(
        ["benchmark:accept-regression"], DEFAULTS, actor_of=lambda label: None, can_write=lambda user: True
    )
    assert decision.values == {}
    assert "do not say who added it" in decision.outcomes[0].reason


def test_label_adders_takes_latest_and_forgets_removed():
    events = [
        SimpleNamespace(event="labeled", label="a", actor="x"),
        SimpleNamespace(event="labeled", label="a", actor="y"),
        SimpleNamespace(event="labeled", label="b", actor="x"),
        SimpleNamespace(event="unlabeled", label="b", actor="x"),
        SimpleNamespace(event="commented", label=None, actor="z"),
    ]
    assert labels.label_adders(events) == {"a": "y"}


def test_conflicting_labels_change_nothing():
    decision = labels.decide(
        ["benchmark:threshold=*", "benchmark:threshold=off"],
        DEFAULTS,
        actor_of=lambda label: "maintainer",
        can_write=lambda user: True,
    )
    assert decision.values == {}
    assert [outcome.status for outcome in decision.outcomes] == [labels.INVALID, labels.INVALID]
    assert "conflicts with benchmark:threshold=off" in decision.outcomes[0].reason


def test_trust_through_the_api_uses_the_latest_adder(fake_github):
    from benchgate.github.client import GitHubClient

    repo = "nodejs/node"
    fake_github.add_pull(repo, 3)
    fake_github.set_role(repo, "maintainer", "admin")
    fake_github.set_role(repo, "reader", "read")
    fake_github.add_event(repo, 3, "labeled", "maintainer", "benchmark:min-effect=9%")
    fake_github.add_event(repo, 3, "unlabeled", "reader", "benchmark:min-effect=9%")
    fake_github.add_event(repo, 3, "labeled", "reader", "benchmark:min-effect=9%")  # re-added by a reader
    fake_github.add_event(repo, 3, "labeled", "maintainer", "benchmark:accept-regression")
    client = GitHubClient(token="t", repository=repo, api_url=fake_github.url, max_retries=0)
    pull = client.pull_request(3)
    decision = labels.decide_with_client(client, 3, pull.labels, DEFAULTS)
    statuses = {outcome.label: (outcome.status, outcome.actor) for outcome in decision.outcomes}
    assert statuses == {
        "benchmark:min-effect=9%": (labels.IGNORED, "reader"),
        "benchmark:accept-regression": (labels.APPLIED, "maintainer"),
    }
    assert decision.values == {"accept-regression": True}


def test_runs_auto_may_stop_early_so_it_needs_a_maintainer_where_a_fixed_count_is_configured():
    assert labels.parse_label("benchmark:runs=auto", "benchmark").value == "auto"
    roles = {"benchmark:runs=auto": "outsider"}
    ignored = labels.decide(list(roles), FIXED_30, actor_of=roles.get, can_write=lambda user: False)
    assert ignored.values == {} and ignored.outcomes[0].reason.startswith("loosens the gate")
    trusted = labels.decide(list(roles), FIXED_30, actor_of=roles.get, can_write=lambda user: True)
    assert trusted.values == {"runs": "auto"}
    # Configured auto: the label keeps it, from anyone; a fixed count under auto's most (60) loosens it,
    # more than that costs runner time, and neither may pass max-runs.
    auto = config.resolve(file_values={"runs": "auto"})
    keeps = labels.decide(list(roles), auto, actor_of=roles.get, can_write=lambda user: pytest.fail())
    assert keeps.values == {"runs": "auto"}
    assert labels.needs_trust("runs", 30, auto) == "loosens the gate"
    assert (
        labels.needs_trust("runs", 80, auto)
        == "asks for more runs than the configured 60, the most of auto (runner time)"
    )
    assert labels.needs_trust("runs", 60, auto) is None


def test_auto_runs_are_capped_by_max_runs():
    assert FIXED_30.adaptive_runs() is None and DEFAULTS.adaptive_runs() == (5, 60)  # auto is the default
    assert config.resolve(file_values={"runs": "auto"}).adaptive_runs() == (5, 60)
    assert config.resolve(file_values={"runs": "auto", "max-runs": 40}).adaptive_runs() == (5, 40)
    assert config.resolve(file_values={"runs": "auto", "max-runs": 3}).adaptive_runs() == (3, 3)
    with pytest.raises(InputError, match="max-runs.*whole number of runs, not 'auto'"):
        config.parse_setting("max-runs", "auto", where="file")


def test_unchanged_confidence_label_raises_from_anyone_and_lowers_only_from_writers():
    """A higher confidence calls fewer rows unchanged (tightens); a lower one could pass a real regression."""
    assert labels.parse_label("benchmark:unchanged-confidence=99%", "benchmark").value == 99.0
    bad = labels.parse_label("benchmark:unchanged-confidence=100", "benchmark")
    assert bad is not None and "must be a confidence from 50 to 99.999 percent" in bad.error
    raised = labels.decide(
        ["benchmark:unchanged-confidence=99"],
        DEFAULTS,
        actor_of=lambda label: "outsider",
        can_write=lambda user: pytest.fail("no permission check for a raising label"),
    )
    assert raised.values == {"unchanged-confidence": 99.0}
    lowered = ["benchmark:unchanged-confidence=80"]
    ignored = labels.decide(lowered, DEFAULTS, actor_of=lambda label: "outsider", can_write=lambda user: False)
    (outcome,) = ignored.outcomes
    assert ignored.values == {} and outcome.status == labels.IGNORED and "loosens the gate" in outcome.reason
    applied = labels.decide(lowered, DEFAULTS, actor_of=lambda label: "maintainer", can_write=lambda user: True)
    assert applied.values == {"unchanged-confidence": 80.0}
    settings = config.resolve(base=DEFAULTS, label_values=applied.values)
    assert settings.policy().unchanged_confidence == 80.0 and settings.source_of("unchanged_confidence") == "label"
    # Against a configured 99, a label of 97.5 lowers it: writers only.
    strict = config.resolve(file_values={"unchanged-confidence": 99.0})
    assert labels.needs_trust("unchanged-confidence", 97.5, strict) == "loosens the gate"
    assert labels.needs_trust("unchanged-confidence", 99.5, strict) is None
