"""`benchgate run --repo` builds: a failed build reaches the PR, the config's build settings apply,
and trust is part of the binary-cache key.

Real git, configure, make and cc on the Node-like fixture repository (tests/nodelike.py);
the report is posted to the fake GitHub.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from nodelike import make_node_like_repo, marker_lines

from benchgate import cli, results
from benchgate.build import BuildSettings, build_ref
from benchgate.commands.authorize import authorize
from benchgate.commands.report import report_results
from benchgate.commands.run import build_settings
from benchgate.errors import InputError
from benchgate.github.client import GitHubClient
from benchgate.results import rundirs, runrecord
from benchgate.stats import analysis, outcome

REPO = "nodejs/node"
pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("make") is None or shutil.which("node") is None,
    reason="needs a C toolchain and node",
)


@pytest.fixture(scope="module")
def node_repo(tmp_path_factory):
    return make_node_like_repo(tmp_path_factory.mktemp("nodelike") / "node")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("build-cache")


@pytest.fixture
def quiet_actions(monkeypatch):
    """Not inside Actions: no outputs or summary files, no event."""
    for name in ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def run_repo(capsys, node_repo, cache_dir: Path, output: Path, *args: str) -> tuple[int, str]:
    status = cli.main(
        ["run", "--no-progress", "--repo", str(node_repo.path), "--build-cache", str(cache_dir), "-o", str(output)]
        + list(args)
    )
    return status, capsys.readouterr().err


def post_report(fake_github, run_dir: Path, head_sha: str, tmp_path: Path):
    fake_github.add_pull(REPO, 7, head_sha=head_sha)
    client = GitHubClient(token="t", repository=REPO, api_url=fake_github.url, max_retries=1, sleep=lambda s: None)
    return report_results(
        [str(run_dir)], config_path=tmp_path / "absent.yml", repository=REPO, pr=7, head_sha=head_sha, client=client
    )


# -- a failed build reaches the PR ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("side", "base_ref", "head_ref", "verdict", "exit_status", "conclusion", "says"),
    [
        ("head", "main", "broken", "fail", 1, "failure", "the head does not build"),
        ("base", "broken", "main", "error", 4, "neutral", "not this pull request's fault"),
    ],
)
def test_build_failure_is_recorded_then_reported(
    capsys,
    tmp_path,
    node_repo,
    cache_dir,
    fake_github,
    quiet_actions,
    side,
    base_ref,
    head_ref,
    verdict,
    exit_status,
    conclusion,
    says,
):
    out = tmp_path / "out"
    status, err = run_repo(capsys, node_repo, cache_dir, out, "--base-ref", base_ref, "--head-ref", head_ref)
    assert status == 4, err
    assert f"{side} build of broken" in err and "build failure recorded" in err

    record = json.loads((out / "run.json").read_text())
    failure = record["build_failure"]
    assert failure["side"] == side and failure["ref"] == "broken" and failure["sha"] == node_repo.commits["broken"]
    assert failure["infrastructure"] is (side == "base")
    assert "error:" in failure["log_tail"] and len(failure["log_tail"]) <= 4000  # the compiler's own message
    assert record["complete"] is False and record["samples"] == 0
    head_sha = node_repo.commits["broken"] if side == "head" else node_repo.commits["docs"]
    assert record["binaries"]["head"]["sha"] == head_sha  # named even when the base failed first
    assert (out / "results.csv").read_text() == results.CSV_HEADER + "\n"

    # The report job: a comment and a `benchgate` check, the right verdict and exit status.
    report = post_report(fake_github, out, head_sha, tmp_path)
    assert (report.exit_status, report.verdict) == (exit_status, verdict)
    checks = fake_github.state.repo(REPO).check_runs
    assert [(check.name, check.conclusion, check.head_sha) for check in checks] == [("benchgate", conclusion, head_sha)]
    assert "does not build" in checks[0].output["title"]
    (body,) = fake_github.comments(REPO, 7)
    assert says in body and "error:" in body and node_repo.commits["broken"][:12] in body

    # Locally, the dry run says the same and exits the same.
    assert cli.main(["report", "--dry-run", "--config", str(tmp_path / "absent.yml"), str(out)]) == exit_status
    assert says in capsys.readouterr().out


def test_report_exit_statuses_of_build_failures_differ_from_pass():
    head = runrecord.RunSummary(has_record=True, build_failure=_failure("head"))
    base = runrecord.RunSummary(has_record=True, build_failure=_failure("base"))
    from benchgate import config, stats

    empty = analysis.compare_r_table(stats.compare_samples(results.empty_samples()), config.Settings().policy())
    assert outcome.decide(empty, head, accept_regression=True).verdict == "fail"  # no label accepts a broken head
    decided = outcome.decide(empty, base)
    assert (decided.verdict, decided.check_conclusion, decided.exit_status) == ("error", "neutral", 4)


def _failure(side: str, **changes) -> runrecord.BuildFailure:
    values = dict(side=side, ref="x", sha="ab" * 20, log_tail="", infrastructure=side == "base")
    return runrecord.BuildFailure(**{**values, **changes})


def _record(build_failure) -> dict:
    return {"schema": 1, "binaries": {}, "complete": False, "build_failure": build_failure}


@pytest.mark.parametrize(
    ("build_failure", "why"),
    [
        ("head", "must be an object"),
        ({"side": "both", "infrastructure": False}, "must be base or head"),
        ({"side": "head", "infrastructure": "no"}, "must be true or false"),
        ({"side": "head", "infrastructure": True}, "must be false for the head"),  # a head failure posing as infra
        ({"side": "base", "infrastructure": False}, "must be true for the base"),
        ({"side": "head", "infrastructure": False, "sha": "not-a-sha"}, "hexadecimal"),
        ({"side": "head", "infrastructure": False, "log_tail": "x" * 5000}, "more than 4096"),
        ({"side": "head", "infrastructure": False, "ref": ["main"]}, "must be a string"),
    ],
)
def test_untrusted_build_failure_is_validated(build_failure, why):
    with pytest.raises(InputError, match=why) as raised:
        runrecord.parse_run_record(_record(build_failure), "run.json")
    assert "build_failure" in str(raised.value)


def test_a_head_build_failure_in_any_shard_decides():
    shards = [
        runrecord.RunSummary(has_record=True, build_failure=_failure("base")),
        runrecord.RunSummary(has_record=True, build_failure=_failure("head")),
    ]
    assert rundirs.merge(shards).build_failure.side == "head"


# -- the configuration's build settings apply ----------------------------------------------------


def test_config_build_settings_reach_the_build_and_the_cache_key(capsys, tmp_path, node_repo, cache_dir, monkeypatch):
    marker = tmp_path / "marker"
    monkeypatch.setenv("NODELIKE_BUILD_MARKER", str(marker))
    plain_out, flagged_out, override_out = tmp_path / "plain", tmp_path / "flagged", tmp_path / "override"
    config_file = tmp_path / "benchgate.yml"
    config_file.write_text("build:\n  configure-flags: [--without-intl]\n  ninja: false\n")
    refs = ("--base-ref", "v0.1.0", "--head-ref", "broken")  # the broken head keeps the test short

    assert run_repo(capsys, node_repo, cache_dir, plain_out, *refs, "--no-ninja")[0] == 4
    status, err = run_repo(capsys, node_repo, cache_dir, flagged_out, *refs, "--config", str(config_file))
    assert status == 4, err
    v1 = node_repo.commits["v1"]
    assert f"configure {v1}" in marker_lines(marker) and f"configure {v1} --without-intl" in marker_lines(marker)
    plain, flagged = (json.loads((out / "run.json").read_text())["build"]["base"] for out in (plain_out, flagged_out))
    assert plain["cache_key"] != flagged["cache_key"]
    info = subprocess.run([flagged["binary"], "--nodelike-info"], capture_output=True, text=True, check=True)
    assert info.stdout.strip() == "nodelike 0.1.0 flags=[--without-intl]"
    # The untrusted head was configured with the same settings (in its sandbox, where the marker
    # variable does not reach: its build log says so).
    head_log = Path(re.search(r"head build of broken .* log (\S+\.log)", err).group(1))
    assert "configure: flags: --without-intl" in head_log.read_text()
    assert "sandbox=bwrap" in head_log.read_text().splitlines()[1]

    # An option overrides the file's value; the repeatable --configure-flag adds one flag each.
    status, err = run_repo(
        capsys, node_repo, cache_dir, override_out, *refs, "--config", str(config_file), "--configure-flag=--debug"
    )
    assert status == 4, err
    assert f"configure {v1} --debug" in marker_lines(marker)


def test_build_settings_merge_file_then_options(tmp_path):
    config_file = tmp_path / "benchgate.yml"
    config_file.write_text("build:\n  configure-flags: [--without-intl]\n  binary-path: out/Release/node\n")
    settings = build_settings(config_file, {"build-command": "make node"})
    assert settings.configure_flags == ("--without-intl",) and settings.build_argv() == ["sh", "-c", "make node"]
    (tmp_path / "bad.yml").write_text("build:\n  binary-path: /etc/passwd\n")
    with pytest.raises(InputError, match="binary path"):
        build_settings(tmp_path / "bad.yml", {})


def test_build_options_without_repo_are_bad_input(capsys, tmp_path):
    node = shutil.which("node")
    status = cli.main(
        ["run", "--base-binary", node, "--head-binary", node, "--configure-flag=--debug", "-o", str(tmp_path / "o")]
    )
    assert status == 2 and "only apply with --repo" in capsys.readouterr().err


def test_authorize_hands_the_base_config_build_settings_to_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_SHA", "ab" * 20)
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    config_file = tmp_path / "benchgate.yml"
    config_file.write_text("build:\n  configure-flags: [--without-intl]\n  jobs: 2\n")
    result = authorize(config_path=config_file, event_name="push", event={})
    handed = json.loads(result.settings["build"])
    assert handed == {"configure-flags": ["--without-intl"], "jobs": 2}
    # The run job writes it as the action does ({"build": ...}) and passes it with --config.
    run_config = tmp_path / "run-build.yml"
    run_config.write_text('{"build": ' + result.settings["build"] + "}\n")
    settings = build_settings(run_config, {})
    assert settings.configure_flags == ("--without-intl",) and settings.jobs == 2
    assert authorize(config_path=tmp_path / "absent.yml", event_name="push", event={}).settings["build"] == ""


# -- trust is part of the binary-cache key -------------------------------------------------------


def test_untrusted_binary_is_never_served_to_a_trusted_build(node_repo, tmp_path, monkeypatch):
    marker = tmp_path / "marker"
    monkeypatch.setenv("NODELIKE_BUILD_MARKER", str(marker))
    settings = BuildSettings(ninja=False)
    cache = tmp_path / "cache"
    untrusted = build_ref(node_repo.path, "v0.1.0", side="head", settings=settings, cache_dir=cache, trusted=False)
    trusted = build_ref(node_repo.path, "v0.1.0", side="base", settings=settings, cache_dir=cache, trusted=True)
    assert not trusted.cached and trusted.key != untrusted.key and trusted.binary != untrusted.binary
    entries = {
        key: json.loads((cache / "binaries" / key / "entry.json").read_text()) for key in (trusted.key, untrusted.key)
    }
    assert entries[trusted.key]["trusted"] is True and entries[untrusted.key]["trusted"] is False
    assert not untrusted.cached and untrusted.sandbox["used"] is True  # both were built, the PR's in the sandbox
    assert entries[untrusted.key]["sandbox"]["tool"] == "bwrap" and entries[trusted.key]["sandbox"] is None
    assert len([line for line in marker_lines(marker) if line.startswith("make ")]) == 1  # the trusted one
    # Each namespace still reuses its own entries.
    again = build_ref(node_repo.path, "v0.1.0", side="head", settings=settings, cache_dir=cache, trusted=False)
    assert again.cached and again.key == untrusted.key
    assert build_ref(node_repo.path, "v0.1.0", side="base", settings=settings, cache_dir=cache).key == trusted.key
