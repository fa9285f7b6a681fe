"""The fake GitHub itself: OpenAPI validation catches bad requests, state and pagination, standalone process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import requests
from fakegithub import FakeGitHub, GitHubSpecValidator
from fakegithub.spec import OPERATIONS, extract, full_spec_path

from benchgate.github.client import GitHubClient

TESTS = Path(__file__).resolve().parent
REPO = "nodejs/node"
pytest_plugins = ["pytester"]  # for the test that runs a failing test through the fixture


def test_validator_catches_a_check_run_with_a_bogus_conclusion(fake_github: FakeGitHub) -> None:
    fake_github.add_pull(REPO, 1)
    answer = requests.post(
        f"{fake_github.url}/repos/{REPO}/check-runs",
        json={"name": "benchgate", "head_sha": "a" * 40, "conclusion": "bogus"},
        timeout=10,
    )
    assert answer.status_code == 422
    [violation] = fake_github.violations
    assert violation.direction == "request" and "conclusion" in violation.reason and "bogus" in violation.reason
    assert fake_github.state.repos[REPO].check_runs == []  # an invalid request changes nothing
    fake_github.violations.clear()  # provoked on purpose


@pytest.mark.parametrize(
    ("method", "path", "payload", "expected"),
    [
        ("POST", "/repos/nodejs/node/issues/1/comments", {}, "'body' is a required property"),
        ("PATCH", "/repos/nodejs/node/issues/comments/1", {"body": 7}, "7 is not of type 'string'"),
        ("GET", "/repos/nodejs/node/issues/1/comments?per_page=lots", None, "per_page"),
        ("GET", "/repos/nodejs/node/issues/1/labels", None, "Path not found"),
        ("DELETE", "/repos/nodejs/node/issues/comments/1", None, "Operation delete not found"),
    ],
)
def test_validator_catches_bad_requests(fake_github: FakeGitHub, method, path, payload, expected) -> None:
    fake_github.add_pull(REPO, 1)
    answer = requests.request(method, fake_github.url + path, json=payload, timeout=10)
    assert answer.status_code in (404, 422)
    assert [expected in str(violation) for violation in fake_github.violations] == [True], fake_github.violations
    fake_github.violations.clear()


def test_validator_catches_a_response_missing_required_fields(github_spec_validator: GitHubSpecValidator) -> None:
    body = json.dumps([{"id": 1, "body": "no url, user or timestamps"}]).encode()
    problem = github_spec_validator.check_response("get", "/repos/o/r/issues/1/comments", [], 200, body)
    assert problem is not None and "required property" in problem.reason


def test_fixture_fails_a_test_whose_client_sent_an_invalid_request(
    github_spec_validator: GitHubSpecValidator, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytester points HOME elsewhere; keep using the spec this session already found.
    monkeypatch.setenv("BENCHGATE_GITHUB_OPENAPI", str(full_spec_path()))
    pytester.makeconftest(f"import sys; sys.path.insert(0, {str(TESTS)!r}); pytest_plugins = ['fakegithub.plugin']")
    pytester.makepyfile(
        textwrap.dedent(
            """
            import requests

            def test_sends_garbage(fake_github):
                fake_github.add_pull("o/r", 1)
                requests.post(fake_github.url + "/repos/o/r/issues/1/comments", json={"text": "x"}, timeout=10)
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*request POST /repos/o/r/issues/1/comments*'body' is a required property*"])


def test_extract_keeps_transitive_references_only() -> None:
    full = {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/a": {"get": {"responses": {"200": {"$ref": "#/components/responses/ok"}}}, "post": {"responses": {}}},
            "/b": {"get": {"responses": {"200": {"$ref": "#/components/responses/unused"}}}},
        },
        "components": {
            "responses": {
                "ok": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/thing"}}}},
                "unused": {},
            },
            "schemas": {"thing": {"properties": {"part": {"$ref": "#/components/schemas/part"}}}, "part": {}},
        },
    }
    compact = extract(full, (("get", "/a"),))
    assert list(compact["paths"]) == ["/a"] and list(compact["paths"]["/a"]) == ["get"]
    assert compact["components"] == {
        "responses": {"ok": full["components"]["responses"]["ok"]},
        "schemas": {"thing": full["components"]["schemas"]["thing"], "part": {}},
    }


def test_compact_spec_holds_every_operation_the_client_uses(github_spec_validator: GitHubSpecValidator) -> None:
    paths = github_spec_validator.spec["paths"]
    assert sorted((m, p) for p, item in paths.items() for m in item if m != "parameters") == sorted(OPERATIONS)
    create = paths["/repos/{owner}/{repo}/check-runs"]["post"]
    assert create["operationId"] == "checks/create"


def test_standalone_process_serves_state_and_dumps_requests(tmp_path: Path) -> None:
    state = {
        "repos": {
            REPO: {
                "collaborators": {"alice": "maintain"},
                "pulls": {"5": {"head_sha": "1" * 40, "base_sha": "2" * 40, "labels": ["benchmark"]}},
                "events": [
                    {
                        "id": 1,
                        "issue_number": 5,
                        "event": "labeled",
                        "actor": "alice",
                        "created_at": "2026-01-01T00:00:00Z",
                        "label": "benchmark",
                    }  # noqa: E501
                ],
            }
        }
    }
    (tmp_path / "state.json").write_text(json.dumps(state))
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, "-m", "fakegithub", "--port", "0", "--state", "state.json", "--dump", "dump.json"]
        + ["--port-file", "port", "--token", "s3cret"],
        cwd=tmp_path,
        env=environment,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("fake GitHub listening on http://127.0.0.1:"), line
        url = line.split()[-1]
        assert url.endswith(":" + (tmp_path / "port").read_text())
        client = GitHubClient(token="s3cret", repository=REPO, api_url=url, sleep=lambda _: None)
        assert client.pull_request(5).labels == ("benchmark",)
        assert [(e.label, e.actor) for e in client.label_events(5)] == [("benchmark", "alice")]
        assert client.can_write("alice")
        client.upsert_comment(5, "table", "<!-- benchgate -->")
        requests.post(f"{url}/_fake/faults", json=[{"status": 503}], timeout=10)
        client.upsert_comment(5, "table v2", "<!-- benchgate -->")
        dump = json.loads((tmp_path / "dump.json").read_text())
        assert [c["body"] for c in dump["state"]["repos"][REPO]["comments"]] == ["<!-- benchgate -->\ntable v2"]
        assert [r["status"] for r in dump["requests"]][-3:] == [503, 200, 200]
        assert dump["violations"] == []
        assert requests.get(f"{url}/_fake/violations", timeout=10).json() == []
    finally:
        process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
