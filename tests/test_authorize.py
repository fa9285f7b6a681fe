"""`benchgate authorize` against the fake GitHub: only writers start runs, and the approved SHA is pinned."""

from __future__ import annotations

import json

import pytest
from fakegithub.faults import Fault

from benchgate.commands.authorize import authorize
from benchgate.errors import InputError
from benchgate.github.client import GitHubClient

REPO = "nodejs/node"
SHA = "1" * 40


@pytest.fixture
def client(fake_github, monkeypatch, tmp_path):
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))
    fake_github.add_pull(REPO, 5, head_sha=SHA)
    return GitHubClient(token="t", repository=REPO, api_url=fake_github.url, max_retries=1, sleep=lambda s: None)


def labeled(label="benchmark", sha=SHA, sender="maintainer"):
    return {
        "action": "labeled",
        "label": {"name": label},
        "pull_request": {"number": 5, "head": {"sha": sha}},
        "sender": {"login": sender},
    }


def run(client, tmp_path, event_name="pull_request_target", event=None, config_path=None, **kwargs):
    return authorize(
        config_path=config_path or tmp_path / "absent.yml",
        repository=REPO,
        event_name=event_name,
        event=event if event is not None else labeled(),
        client=client,
        **kwargs,
    )


def test_writer_label_approves_and_pins_sha_with_label_settings(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "write")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark:runs=12")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark:categories=url,buffers")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    result = run(client, tmp_path)
    assert result.approved and result.head_sha == SHA and result.pr == 5 and result.actor == "maintainer"
    assert result.settings["runs"] == "12" and result.settings["categories"] == "url,buffers"
    # One read of the issue events both finds the requester and says who added each label.
    assert len(fake_github.requests_to("GET", "/issues/5/events")) == 1
    output = (tmp_path / "output.txt").read_text()
    assert "approved<<" in output and f"\n{SHA}\n" in output


def test_read_only_labeller_is_refused(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "reader", "triage")
    fake_github.add_event(REPO, 5, "labeled", "reader", "benchmark")
    with pytest.raises(InputError, match="@reader added 'benchmark' but lacks write"):
        run(client, tmp_path, event=labeled(sender="reader"))


def test_pr_that_moved_since_the_label_is_refused(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "admin")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    with pytest.raises(InputError, match="PR #5 moved since @maintainer added 'benchmark'"):
        run(client, tmp_path, event=labeled(sha="2" * 40))


def test_other_label_is_not_a_request(fake_github, client, tmp_path):
    result = run(client, tmp_path, event=labeled("bug"))
    assert not result.approved and fake_github.requests_to("GET") == []


def test_workflow_dispatch_checks_the_actor(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "maintain")
    event = {"inputs": {"pr": "5", "sha": SHA}}
    result = run(client, tmp_path, event_name="workflow_dispatch", event=event, actor="maintainer")
    assert result.approved and result.head_sha == SHA
    with pytest.raises(InputError, match="@stranger started the workflow but lacks write"):
        run(client, tmp_path, event_name="workflow_dispatch", event=event, actor="stranger")
    with pytest.raises(InputError, match="PR #5 moved: its head is 111111111111, not the approved 222222222222"):
        moved = {"inputs": {"pr": "5", "sha": "2" * 40}}
        run(client, tmp_path, event_name="workflow_dispatch", event=moved, actor="maintainer")


@pytest.mark.parametrize("sha", ["", "1111111", SHA[:39], SHA + "1", "A" * 40, f" {SHA[:20]}g{SHA[21:]}"])
def test_workflow_dispatch_of_a_pr_needs_the_full_head_sha(fake_github, client, tmp_path, sha):
    # A prefix would approve whatever commit the PR's author pushes that starts with it.
    fake_github.set_role(REPO, "maintainer", "maintain")
    event = {"inputs": {"pr": "5", "sha": sha}}
    with pytest.raises(InputError, match="needs the sha input: the full 40-digit head commit"):
        run(client, tmp_path, event_name="workflow_dispatch", event=event, actor="maintainer")


def test_label_event_whose_sender_is_not_the_last_adder_is_refused(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "write")
    fake_github.set_role(REPO, "outsider", "read")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    for sender in ("outsider", ""):
        with pytest.raises(InputError, match=f"the event's sender @{sender or '[?]'} is not @maintainer"):
            run(client, tmp_path, event=labeled(sender=sender))
    assert run(client, tmp_path, event=labeled(sender="maintainer")).approved


def test_other_events_are_refused(client, tmp_path):
    with pytest.raises(InputError, match="event 'issue_comment' cannot start a benchmark run"):
        run(client, tmp_path, event_name="issue_comment", event={})


def test_categories_come_from_the_apis_changed_files_when_none_are_configured(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "write")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    bench = tmp_path / "base" / "benchmark"
    for category in ("url", "fs", "misc"):
        (bench / category).mkdir(parents=True)
    fake_github.state.repo(REPO).pulls[5].files = ["lib/url.js", "doc/api/url.md", "benchmark/zlib/new.js"]
    result = run(client, tmp_path, benchmark_dir=bench)
    # lib/url.js -> url; a category the PR adds (zlib) counts though the base has none.
    assert result.settings["categories"] == "url,zlib" and not result.nothing_to_benchmark
    fake_github.state.repo(REPO).pulls[5].files = ["doc/api/url.md", "test/parallel/test-url.js"]
    result = run(client, tmp_path, benchmark_dir=bench)
    assert result.settings["categories"] == "" and result.nothing_to_benchmark
    assert "nothing-to-benchmark<<" in (tmp_path / "output.txt").read_text()
    # Configured categories are not overridden by the changed files.
    configured = run(client, tmp_path, benchmark_dir=bench, options={"categories": "fs"})
    assert configured.settings["categories"] == "fs" and not configured.nothing_to_benchmark


def test_changed_file_paths_are_printed_with_workflow_commands_stopped(
    fake_github, client, tmp_path, monkeypatch, capsys
):
    # A path in the PR is its author's text: printed at the start of a line it would be a command to the runner.
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    fake_github.set_role(REPO, "maintainer", "write")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    fake_github.state.repo(REPO).pulls[5].files = ["doc/a.md\n::add-mask::x\n::warning::hijacked", "lib/url.js"]
    run(client, tmp_path)
    lines = capsys.readouterr().err.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("::stop-commands::")]
    assert len(starts) == 1, lines
    end = lines.index(f"::{lines[starts[0]].removeprefix('::stop-commands::')}::")
    hostile = [i for i, line in enumerate(lines) if line.startswith(("::add-mask::", "::warning::"))]
    assert len(hostile) == 2 and all(starts[0] < i < end for i in hostile)


def test_a_change_list_github_cut_short_is_never_nothing_to_benchmark(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "write")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    fake_github.state.repo(REPO).pulls[5].files = [f"doc/api/page{index}.md" for index in range(3001)]
    result = run(client, tmp_path)
    assert result.settings["categories"] == "misc" and not result.nothing_to_benchmark


def test_runs_auto_reaches_the_run_job_with_its_bounds(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "write")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    default = run(client, tmp_path)  # auto is the default
    assert (default.settings["runs"], default.settings["min-runs"], default.settings["max-runs"]) == ("auto", "5", "60")
    config_file = tmp_path / "benchgate.yml"
    config_file.write_text("runs: 30\n")
    fixed = run(client, tmp_path, config_path=config_file)
    assert (fixed.settings["runs"], fixed.settings["min-runs"], fixed.settings["max-runs"]) == ("30", "", "")
    # a maintainer's label asks for auto where 30 runs are configured; max-runs caps its most
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark:runs=auto")
    config_file.write_text("runs: 30\nmax-runs: 40\n")
    labelled = run(client, tmp_path, config_path=config_file)
    assert (labelled.settings["runs"], labelled.settings["min-runs"], labelled.settings["max-runs"]) == (
        "auto",
        "5",
        "40",
    )


def test_run_settings_say_where_each_value_came_from(fake_github, client, tmp_path):
    # The run job applies the one precedence to them: a trusted label's value stays above its inputs.
    fake_github.set_role(REPO, "maintainer", "write")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark:runs=12")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark")
    config_file = tmp_path / "benchgate.yml"
    config_file.write_text("cpuset: 2-3\nmax-resolution: 30%\n")
    result = run(client, tmp_path, config_path=config_file, options={"shard": "1/2", "categories": "url"})
    sources = result.settings["sources"]
    assert (sources["runs"], sources["cpuset"], sources["shard"], sources["categories"]) == (
        "label",
        "file",
        "option",
        "option",
    )
    carried = json.loads(next(line for line in (tmp_path / "output.txt").read_text().splitlines() if '"runs"' in line))
    assert carried["sources"] == sources and carried["runs"] == "12" and "max-resolution" not in carried


def test_workflow_dispatch_reads_the_issue_events_only_for_benchmark_labels(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "maintainer", "maintain")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "bug")
    event = {"inputs": {"pr": "5", "sha": SHA}}
    assert run(client, tmp_path, event_name="workflow_dispatch", event=event, actor="maintainer").approved
    assert fake_github.requests_to("GET", "/issues/5/events") == []


def test_workflow_dispatch_ignores_labels_needing_trust_when_the_issue_events_fail(
    fake_github, client, tmp_path, capsys
):
    # Who added a label that loosens the gate cannot be checked: it is ignored, and the run still starts.
    fake_github.set_role(REPO, "maintainer", "maintain")
    fake_github.add_event(REPO, 5, "labeled", "maintainer", "benchmark:accept-regression")
    fake_github.queue(*[Fault(502, path_contains="/issues/5/events") for _ in range(5)])
    event = {"inputs": {"pr": "5", "sha": SHA}}
    result = run(client, tmp_path, event_name="workflow_dispatch", event=event, actor="maintainer")
    assert result.approved
    assert "label benchmark:accept-regression: ignored: " in capsys.readouterr().err
    assert fake_github.requests_to("GET", "/issues/5/events")
