"""benchgate.github.client.GitHubClient against the fake GitHub (every request checked against GitHub's OpenAPI)."""

from __future__ import annotations

import pytest
from fakegithub import FakeGitHub, Fault

from benchgate.errors import EXIT_BAD_INPUT, EXIT_GITHUB_UNREACHABLE, GitHubUnavailable, InputError
from benchgate.github.client import GitHubClient, GitHubRequestError, LabelEvent, PullRequestInfo

REPO = "nodejs/node"
MARKER = "<!-- benchgate -->"


class Sleeps(list):
    """An injectable sleep that records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def client(fake_github: FakeGitHub, sleeps: Sleeps) -> GitHubClient:
    fake_github.add_pull(REPO, 42, labels=["benchmark"], author="dave", head_repo="dave/node", head_ref="fast-url")
    return GitHubClient(token="t0ken", repository=REPO, api_url=fake_github.url, sleep=sleeps)


def test_pull_request_reads_shas_base_ref_and_labels(client: GitHubClient, fake_github: FakeGitHub) -> None:
    info = client.pull_request(42)
    pull = fake_github.state.repos[REPO].pulls[42]
    assert info == PullRequestInfo(
        number=42, head_sha=pull.head_sha, base_sha=pull.base_sha, base_ref="main", labels=("benchmark",)
    )
    assert fake_github.requests_to("GET")[0].authorization == "token t0ken"


def test_sticky_comment_is_created_once_then_edited_in_place(client: GitHubClient, fake_github: FakeGitHub) -> None:
    fake_github.add_comment(REPO, 42, "LGTM", author="reviewer")
    first = client.upsert_comment(42, "verdict: pass", MARKER)
    second = client.upsert_comment(42, "verdict: FAIL", MARKER)
    assert first == second
    assert fake_github.comments(REPO, 42) == ["LGTM", f"{MARKER}\nverdict: FAIL"]
    assert len(fake_github.requests_to("POST", "/comments")) == 1
    assert len(fake_github.requests_to("PATCH", "/issues/comments/")) == 1


def test_sticky_comment_found_on_a_later_page_of_a_busy_pr(client: GitHubClient, fake_github: FakeGitHub) -> None:
    for index in range(150):
        fake_github.add_comment(REPO, 42, f"discussion {index}", author="reviewer")
    fake_github.add_comment(REPO, 42, f"{MARKER}\nold table", author="github-actions[bot]")
    for index in range(80):
        fake_github.add_comment(REPO, 42, f"more discussion {index}", author="reviewer")
    client.upsert_comment(42, f"{MARKER}\nnew table", MARKER)
    bodies = fake_github.comments(REPO, 42)
    assert len(bodies) == 231
    assert [body for body in bodies if body.startswith(MARKER)] == [f"{MARKER}\nnew table"]
    assert bodies[150] == f"{MARKER}\nnew table"  # edited where it was, not re-posted at the end
    assert fake_github.requests_to("POST") == []
    pages = [dict(r.query).get("page", "1") for r in fake_github.requests_to("GET", "/comments")]
    assert pages == ["1", "2"]  # stopped at the page holding the marker, 100 per page


def test_a_quoted_marker_in_someone_elses_comment_is_not_ours(client: GitHubClient, fake_github: FakeGitHub) -> None:
    fake_github.add_comment(REPO, 42, f"> {MARKER}\n> quoting the bot", author="reviewer")
    client.upsert_comment(42, "table", MARKER)
    assert fake_github.comments(REPO, 42) == [f"> {MARKER}\n> quoting the bot", f"{MARKER}\ntable"]


def test_comment_over_githubs_limit_is_refused_before_sending(client: GitHubClient, fake_github: FakeGitHub) -> None:
    with pytest.raises(InputError, match="65536"):
        client.upsert_comment(42, "x" * 65536, MARKER)
    assert fake_github.requests == []


def test_label_events_across_pages_skip_other_events(client: GitHubClient, fake_github: FakeGitHub) -> None:
    expected = []
    for index in range(130):
        label = f"benchmark:runs={index}"
        actor = "alice" if index % 2 else "mallory"
        kind = "labeled" if index % 3 else "unlabeled"
        fake_github.add_event(REPO, 42, kind, actor, label)
        expected.append((label, actor, kind))
        if index % 10 == 0:
            fake_github.add_event(REPO, 42, "renamed", "dave")  # not a label event, must be skipped
    events = client.label_events(42)
    assert [(e.label, e.actor, e.event) for e in events] == expected
    assert all(isinstance(e, LabelEvent) for e in events)
    assert len(fake_github.requests_to("GET", "/events")) == 2  # 143 events, 100 per page


@pytest.mark.parametrize(
    ("role", "can_write"),
    [("admin", True), ("maintain", True), ("write", True), ("triage", False), ("read", False)],
)
def test_permission_reports_the_role_name(client: GitHubClient, fake_github: FakeGitHub, role, can_write) -> None:
    fake_github.set_role(REPO, "alice", role)
    assert client.permission("alice") == role
    assert client.can_write("alice") is can_write


def test_non_collaborator_has_no_permission(client: GitHubClient, fake_github: FakeGitHub) -> None:
    assert client.permission("mallory") == "none"
    assert client.can_write("mallory") is False


def test_custom_role_falls_back_to_its_base_permission(client: GitHubClient, fake_github: FakeGitHub) -> None:
    fake_github.set_role(REPO, "carol", "benchmark-runner")  # the fake reports custom roles as permission "read"
    assert client.permission("carol") == "read"
    assert client.can_write("carol") is False


def test_check_run_is_created_completed_with_output(client: GitHubClient, fake_github: FakeGitHub) -> None:
    sha = "c" * 40
    url = client.create_check_run(
        sha,
        conclusion="failure",
        title="2 regressions (***)",
        summary="| benchmark | improvement |",
        details_url="https://example.test/run/1",
    )
    [run] = fake_github.state.repos[REPO].check_runs
    assert url == f"{fake_github.url}/{REPO}/runs/{run.id}"
    assert (run.name, run.head_sha, run.status, run.conclusion) == ("benchgate", sha, "completed", "failure")
    assert run.output == {"title": "2 regressions (***)", "summary": "| benchmark | improvement |"}
    assert run.details_url == "https://example.test/run/1"


def test_check_run_summary_is_cut_to_githubs_limit(client: GitHubClient, fake_github: FakeGitHub) -> None:
    client.create_check_run("c" * 40, conclusion="neutral", title="t", summary="y" * 70000)
    [run] = fake_github.state.repos[REPO].check_runs
    assert len(run.output["summary"]) == 65535
    assert run.output["summary"].endswith("(truncated to GitHub's limit)")


def test_retries_after_502_with_exponential_backoff(client: GitHubClient, fake_github: FakeGitHub, sleeps) -> None:
    fake_github.queue(Fault(502), Fault(503, "Service Unavailable"), Fault(500))
    assert client.pull_request(42).number == 42
    assert sleeps == [1.0, 2.0, 4.0]
    assert [r.status for r in fake_github.requests] == [502, 503, 500, 200]


def test_retries_after_dropped_connection(client: GitHubClient, fake_github: FakeGitHub, sleeps) -> None:
    fake_github.queue(Fault(drop=True))
    fake_github.set_role(REPO, "alice", "write")
    assert client.can_write("alice") is True
    assert sleeps == [1.0]


def test_retries_after_primary_rate_limit_until_reset(fake_github: FakeGitHub, sleeps) -> None:
    fake_github.add_pull(REPO, 42)
    now = 1_900_000_000.0
    client = GitHubClient(token="t", repository=REPO, api_url=fake_github.url, sleep=sleeps, clock=lambda: now)
    fault = Fault.rate_limited()
    fault.headers["x-ratelimit-reset"] = str(int(now) + 7)
    fake_github.queue(fault)
    assert client.pull_request(42).number == 42
    assert sleeps == [8.0]  # until the reset second has passed


def test_retries_after_secondary_rate_limit_honouring_retry_after(client, fake_github: FakeGitHub, sleeps) -> None:
    fake_github.queue(Fault.secondary_rate_limited(13, status=403), Fault.secondary_rate_limited(2, status=429))
    assert client.permission("nobody") == "none"
    assert sleeps == [13.0, 2.0]


def test_gives_up_after_max_retries_with_github_unavailable(fake_github: FakeGitHub, sleeps) -> None:
    fake_github.add_pull(REPO, 42)
    client = GitHubClient(token="t", repository=REPO, api_url=fake_github.url, sleep=sleeps, max_retries=3)
    fake_github.queue(*[Fault(502, "Bad Gateway")] * 4, Fault(502))
    with pytest.raises(GitHubUnavailable) as raised:
        client.pull_request(42)
    assert raised.value.exit_status == EXIT_GITHUB_UNREACHABLE
    assert "after 4 attempts: 502 Bad Gateway" in raised.value.one_line()
    assert "\n" not in raised.value.one_line()
    assert sleeps == [1.0, 2.0, 4.0]
    assert len(fake_github.faults) == 1  # exactly 1 + max_retries requests were sent


def test_rate_limit_reset_too_far_away_gives_up_at_once(fake_github: FakeGitHub, sleeps) -> None:
    fake_github.add_pull(REPO, 42)
    client = GitHubClient(token="t", repository=REPO, api_url=fake_github.url, sleep=sleeps)
    fake_github.queue(Fault.rate_limited(reset_in=3000))
    with pytest.raises(GitHubUnavailable, match="resets at .* longer than the 300 s"):
        client.pull_request(42)
    assert sleeps == []


def test_comment_post_that_succeeded_unheard_is_not_duplicated(client, fake_github: FakeGitHub, sleeps) -> None:
    fake_github.queue(Fault(502, method="POST", after=True))  # GitHub stored it, the answer was lost
    client.upsert_comment(42, "table", MARKER)
    assert fake_github.comments(REPO, 42) == [f"{MARKER}\ntable"]
    assert sleeps == [1.0]


@pytest.mark.parametrize(
    ("setup", "status", "hint"),
    [
        (lambda fake: setattr(fake, "token", "other"), 401, "token is missing, expired or wrong"),
        (lambda fake: setattr(fake, "read_only", True), 403, "lacks a permission"),
        (lambda fake: None, 404, "no such repository"),
    ],
)
def test_permanent_refusals_are_one_line_input_errors(fake_github: FakeGitHub, sleeps, setup, status, hint) -> None:
    fake_github.add_pull(REPO, 42)
    setup(fake_github)
    client = GitHubClient(token="t0ken", repository=REPO, api_url=fake_github.url, sleep=sleeps)
    with pytest.raises(GitHubRequestError) as raised:
        client.upsert_comment(42 if status != 404 else 7, "table", MARKER)
    assert raised.value.status == status
    assert raised.value.exit_status == EXIT_BAD_INPUT
    assert hint in raised.value.one_line() and REPO in raised.value.one_line()
    assert sleeps == []  # not retried


def test_enterprise_server_base_url(fake_github: FakeGitHub, sleeps) -> None:
    fake_github.add_pull(REPO, 42)
    for index in range(120):
        fake_github.add_comment(REPO, 42, f"comment {index}")
    fake_github.add_event(REPO, 42, "labeled", "alice", "benchmark")
    fake_github.set_role(REPO, "alice", "maintain")
    client = GitHubClient(token="t", repository=REPO, api_url=fake_github.enterprise_url + "/", sleep=sleeps)
    assert client.pull_request(42).number == 42
    assert [e.label for e in client.label_events(42)] == ["benchmark"]
    assert client.can_write("alice")
    client.upsert_comment(42, "table", MARKER)
    client.upsert_comment(42, "table 2", MARKER)
    client.create_check_run("d" * 40, conclusion="success", title="ok", summary="ok")
    assert fake_github.comments(REPO, 42)[-1] == f"{MARKER}\ntable 2"
    assert fake_github.requests and all(r.enterprise for r in fake_github.requests)


def test_repository_must_be_owner_slash_name() -> None:
    with pytest.raises(InputError, match="owner/name"):
        GitHubClient(token=None, repository="not a repo")


# -- the sticky comment is ours only when this token wrote it ------------------------------------


def test_an_attackers_marker_comment_is_never_edited(client: GitHubClient, fake_github: FakeGitHub) -> None:
    # An installation token (Actions' GITHUB_TOKEN): GET /user is refused, we comment as github-actions[bot].
    planted = f"{MARKER}\n### ✅ benchgate: no regression fails the gate"
    fake_github.add_comment(REPO, 42, planted, author="mallory")
    first = client.upsert_comment(42, "verdict: FAIL", MARKER)
    second = client.upsert_comment(42, "verdict: FAIL, run 2", MARKER)
    assert first == second
    assert fake_github.comments(REPO, 42) == [planted, f"{MARKER}\nverdict: FAIL, run 2"]
    assert fake_github.comment_authors(REPO, 42) == ["mallory", "github-actions[bot]"]
    assert len(fake_github.requests_to("GET", "/user")) == 1  # asked once per client, answered 403
    assert fake_github.requests_to("GET", "/user")[0].status == 403


def test_a_user_token_edits_only_its_users_comment(fake_github: FakeGitHub, sleeps) -> None:
    fake_github.add_pull(REPO, 42)
    fake_github.add_identity("pat-of-benchbot", "benchbot")
    fake_github.add_comment(REPO, 42, f"{MARKER}\nfrom the Actions bot", author="github-actions[bot]")
    fake_github.add_comment(REPO, 42, f"{MARKER}\nold table", author="BenchBot")  # logins are case-insensitive
    client = GitHubClient(token="pat-of-benchbot", repository=REPO, api_url=fake_github.url, sleep=sleeps)
    assert client.own_login() == "benchbot"
    client.upsert_comment(42, "new table", MARKER)
    assert fake_github.comments(REPO, 42) == [f"{MARKER}\nfrom the Actions bot", f"{MARKER}\nnew table"]
    assert fake_github.requests_to("POST") == []


def test_attacker_comments_on_page_one_ours_on_page_two(client: GitHubClient, fake_github: FakeGitHub) -> None:
    for index in range(120):
        author = "mallory" if index % 10 == 0 else "reviewer"
        fake_github.add_comment(REPO, 42, f"{MARKER}\nfake table {index}", author=author)
    fake_github.add_comment(REPO, 42, f"{MARKER}\nold table", author="github-actions[bot]")
    client.upsert_comment(42, "new table", MARKER)
    bodies = fake_github.comments(REPO, 42)
    assert bodies[:120] == [f"{MARKER}\nfake table {index}" for index in range(120)]
    assert bodies[120:] == [f"{MARKER}\nnew table"]
    assert fake_github.requests_to("POST") == []
    pages = [dict(r.query).get("page", "1") for r in fake_github.requests_to("GET", "/comments")]
    assert pages == ["1", "2"]


def test_another_apps_bot_login_is_given_not_asked(fake_github: FakeGitHub, sleeps) -> None:
    fake_github.add_pull(REPO, 42)
    fake_github.add_identity("installation-token", "benchgate-app[bot]")
    fake_github.add_comment(REPO, 42, f"{MARKER}\nold", author="benchgate-app[bot]")
    fake_github.add_comment(REPO, 42, f"{MARKER}\nnot ours", author="github-actions[bot]")
    client = GitHubClient(
        token="installation-token",
        repository=REPO,
        api_url=fake_github.url,
        sleep=sleeps,
        comment_author="benchgate-app[bot]",
    )
    client.upsert_comment(42, "new", MARKER)
    assert fake_github.comments(REPO, 42) == [f"{MARKER}\nnew", f"{MARKER}\nnot ours"]
    assert fake_github.requests_to("GET", "/user") == []


def test_a_rate_limited_identity_lookup_is_retried_not_taken_for_an_app(fake_github: FakeGitHub, sleeps) -> None:
    fake_github.add_pull(REPO, 42)
    fake_github.add_identity("pat", "benchbot")
    fake_github.queue(Fault.secondary_rate_limited(retry_after=2, status=403, path_contains="/user"))
    client = GitHubClient(token="pat", repository=REPO, api_url=fake_github.url, sleep=sleeps)
    assert client.own_login() == "benchbot"
    assert sleeps == [2.0]


def test_the_runners_variables_stand_in_for_what_is_not_given(monkeypatch, fake_github: FakeGitHub) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
    monkeypatch.setenv("GITHUB_API_URL", fake_github.url)
    monkeypatch.setenv("BENCHGATE_COMMENT_AUTHOR", "benchgate-app[bot]")
    client = GitHubClient()
    assert (client.repository, client.api_url, client.own_login()) == (REPO, fake_github.url, "benchgate-app[bot]")
    assert fake_github.requests == []  # the comment author is not asked of GitHub


@pytest.mark.parametrize("author", ["", "two words", "x" * 60, "evil[bot]]", "-leading"])
def test_comment_author_must_be_a_login(author: str) -> None:
    with pytest.raises(InputError, match="comment author"):
        GitHubClient(token="t", repository=REPO, comment_author=author)


@pytest.mark.parametrize(
    "url", ["notaurl", "ftp://api.github.com", "https://", "http://host:port/api/v3", "api.github.com"]
)
def test_api_url_must_be_an_http_url(url: str) -> None:
    with pytest.raises(InputError, match="GitHub API URL") as raised:
        GitHubClient(token="t", repository=REPO, api_url=url)
    assert raised.value.exit_status == EXIT_BAD_INPUT


@pytest.mark.parametrize("url", ["http://api.github.com", "http://ghe.example.com/api/v3", "http://10.0.0.5:8080"])
def test_plain_http_to_a_remote_host_is_refused(url: str) -> None:
    with pytest.raises(InputError, match="plain http: the token would travel unencrypted") as raised:
        GitHubClient(token="t", repository=REPO, api_url=url)
    assert raised.value.exit_status == EXIT_BAD_INPUT


@pytest.mark.parametrize(
    "url", ["https://api.github.com", "https://ghe.example.com/api/v3/", "http://127.0.0.1:8080", "http://[::1]:9"]
)
def test_https_and_loopback_http_are_accepted(url: str) -> None:
    assert GitHubClient(token="t", repository=REPO, api_url=url).api_url == url.rstrip("/")


def test_changed_files_reads_every_page_and_both_paths_of_a_rename(fake_github):
    files = [f"lib/internal/file{index}.js" for index in range(230)] + ["lib/old.js -> lib/url.js"]
    fake_github.add_pull(REPO, 8, files=files)
    changed = GitHubClient(token="t", repository=REPO, api_url=fake_github.url, max_retries=0).changed_files(8)
    assert changed.complete
    assert changed.paths[:2] == ("lib/internal/file0.js", "lib/internal/file1.js")
    assert changed.paths[-2:] == ("lib/url.js", "lib/old.js") and len(changed.paths) == 232
    assert len(fake_github.requests_to("GET", "/pulls/8/files")) == 3  # 100 per page


def test_changed_files_past_githubs_3000_are_marked_incomplete(fake_github):
    fake_github.add_pull(REPO, 9, files=[f"src/f{index}.cc" for index in range(3005)])
    changed = GitHubClient(token="t", repository=REPO, api_url=fake_github.url, max_retries=0).changed_files(9)
    assert len(changed.paths) == 3000 and not changed.complete
