"""`benchgate authorize` against the fake GitHub: only writers start runs, and the approved SHA is pinned."""

from __future__ import annotations

import pytest

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


def labeled(label="benchmark", sha=SHA):
    return {"action": "labeled", "label": {"name": label}, "pull_request": {"number": 5, "head": {"sha": sha}}}


def run(client, tmp_path, event_name="pull_request_target", event=None, **kwargs):
    return authorize(
        config_path=tmp_path / "absent.yml",
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
    output = (tmp_path / "output.txt").read_text()
    assert "approved<<" in output and f"\n{SHA}\n" in output


def test_read_only_labeller_is_refused(fake_github, client, tmp_path):
    fake_github.set_role(REPO, "reader", "triage")
    fake_github.add_event(REPO, 5, "labeled", "reader", "benchmark")
    with pytest.raises(InputError, match="@reader added 'benchmark' but lacks write"):
        run(client, tmp_path)


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
    event = {"inputs": {"pr": "5"}}
    result = run(client, tmp_path, event_name="workflow_dispatch", event=event, actor="maintainer")
    assert result.approved and result.head_sha == SHA
    with pytest.raises(InputError, match="@stranger started the workflow but lacks write"):
        run(client, tmp_path, event_name="workflow_dispatch", event=event, actor="stranger")
    with pytest.raises(InputError, match="PR #5 moved"):
        run(
            client,
            tmp_path,
            event_name="workflow_dispatch",
            event={"inputs": {"pr": "5", "sha": "abc"}},
            actor="maintainer",
        )


def test_other_events_are_refused(client, tmp_path):
    with pytest.raises(InputError, match="event 'issue_comment' cannot start a benchmark run"):
        run(client, tmp_path, event_name="issue_comment", event={})
