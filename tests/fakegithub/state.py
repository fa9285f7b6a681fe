"""What the fake GitHub remembers, and how it renders it the way GitHub's REST API does.

Response bodies start from GitHub's own documented examples (taken from the
OpenAPI description), rewritten to this fake's host and repository, with the
fields benchgate reads replaced by the state below. That keeps every response
shaped like the real one (PyGithub builds its objects from them) without
hand-writing a hundred fields per object.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from fakegithub.spec import compact_spec

# GitHub's legacy "permission" for each repository role (role_name).
ROLE_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
EXAMPLE_HOST = "https://api.github.com"
EXAMPLE_REPO = "octocat/Hello-World"


@dataclass
class PullRequest:
    number: int
    head_sha: str
    base_sha: str
    head_ref: str = "feature"
    base_ref: str = "main"
    labels: list[str] = field(default_factory=list)
    author: str = "contributor"
    head_repo: str | None = None  # None: same repository as the base
    title: str = "A pull request"
    files: list[str] = field(default_factory=list)  # changed paths; "old -> new" for a rename


@dataclass
class Comment:
    id: int
    issue_number: int
    body: str
    author: str
    created_at: str
    updated_at: str


@dataclass
class IssueEvent:
    id: int
    issue_number: int
    event: str  # labeled, unlabeled, renamed, ...
    actor: str
    created_at: str
    label: str | None = None


@dataclass
class CheckRun:
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    output: dict[str, Any]
    details_url: str | None


@dataclass
class Issue:
    number: int
    title: str
    body: str
    author: str
    created_at: str
    labels: list[str] = field(default_factory=list)


@dataclass
class Repository:
    full_name: str
    collaborators: dict[str, str] = field(default_factory=dict)  # login -> role_name
    pulls: dict[int, PullRequest] = field(default_factory=dict)
    comments: list[Comment] = field(default_factory=list)
    events: list[IssueEvent] = field(default_factory=list)
    check_runs: list[CheckRun] = field(default_factory=list)
    issues: dict[int, Issue] = field(default_factory=dict)


def _timestamp(tick: int) -> str:
    # A deterministic clock: one second per state change, so ordering is visible and stable.
    return f"2026-01-01T{tick // 3600 % 24:02d}:{tick // 60 % 60:02d}:{tick % 60:02d}Z"


class Templates:
    """GitHub's documented example objects, ready to be filled in."""

    def __init__(self, spec: dict[str, Any] | None = None) -> None:
        examples = (spec or compact_spec())["components"]["examples"]
        self._raw = {
            "pull": examples["pull-request"]["value"],
            "comment": examples["issue-comment"]["value"],
            "event": examples["issue-event-for-issue-items"]["value"][0],
            "permission": examples["repository-collaborator-permission-response-if-user-has-admin-permissions"][
                "value"
            ],
            "check_run": examples["check-run-example-of-completed-conclusion"]["value"],
            "diff_entry": examples["diff-entry-items"]["value"][0],
            "private_user": examples["private-user-response-with-public-and-private-profile-information"]["value"],
            "issue": examples["issue"]["value"],
        }

    def get(self, name: str, api_url: str, web_url: str, repo: str) -> Any:
        text = json.dumps(self._raw[name])
        text = text.replace(EXAMPLE_HOST, api_url).replace("https://github.com", web_url)
        return json.loads(text.replace(EXAMPLE_REPO, repo))


class State:
    """All repositories of the fake, plus id and clock counters. Not thread-safe: the server holds a lock."""

    def __init__(self) -> None:
        self.repos: dict[str, Repository] = {}
        self.next_id = 1000
        self.tick = 0

    # -- setup and mutation ---------------------------------------------------------------------

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _now(self) -> str:
        self.tick += 1
        return _timestamp(self.tick)

    def repo(self, full_name: str) -> Repository:
        if full_name not in self.repos:
            self.repos[full_name] = Repository(full_name)
        return self.repos[full_name]

    def add_pull(self, repo: str, pull: PullRequest) -> PullRequest:
        self.repo(repo).pulls[pull.number] = pull
        return pull

    def add_issue(self, repo: str, title: str, body: str, author: str, labels: list[str]) -> Issue:
        """A new issue, numbered after every pull request and issue of the repository (they share numbers)."""
        held = self.repo(repo)
        number = max([0, *held.pulls, *held.issues]) + 1
        held.issues[number] = Issue(number, title, body, author, self._now(), list(labels))
        return held.issues[number]

    def add_comment(self, repo: str, number: int, body: str, author: str) -> Comment:
        now = self._now()
        comment = Comment(self._new_id(), number, body, author, now, now)
        self.repo(repo).comments.append(comment)
        return comment

    def add_event(self, repo: str, number: int, event: str, actor: str, label: str | None = None) -> IssueEvent:
        """Record an issue event; labeled/unlabeled also change the pull request's labels, as on GitHub."""
        record = IssueEvent(self._new_id(), number, event, actor, self._now(), label)
        target = self.repo(repo)
        target.events.append(record)
        pull = target.pulls.get(number)
        if pull is not None and label is not None:
            if event == "labeled" and label not in pull.labels:
                pull.labels.append(label)
            elif event == "unlabeled" and label in pull.labels:
                pull.labels.remove(label)
        return record

    def edit_comment(self, repo: str, comment_id: int, body: str) -> Comment | None:
        for comment in self.repo(repo).comments:
            if comment.id == comment_id:
                comment.body = body
                comment.updated_at = self._now()
                return comment
        return None

    def add_check_run(self, repo: str, payload: dict[str, Any]) -> CheckRun:
        status = "completed" if payload.get("conclusion") else payload.get("status", "queued")
        run = CheckRun(
            self._new_id(),
            payload["name"],
            payload["head_sha"],
            status,
            payload.get("conclusion"),
            dict(payload.get("output") or {}),
            payload.get("details_url"),
        )
        self.repo(repo).check_runs.append(run)
        return run

    # -- persistence (the standalone server reads and writes this) ------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "next_id": self.next_id,
            "tick": self.tick,
            "repos": {
                name: {
                    "collaborators": repo.collaborators,
                    "pulls": {str(number): asdict(pull) for number, pull in repo.pulls.items()},
                    "comments": [asdict(comment) for comment in repo.comments],
                    "events": [asdict(event) for event in repo.events],
                    "check_runs": [asdict(run) for run in repo.check_runs],
                    "issues": {str(number): asdict(issue) for number, issue in repo.issues.items()},
                }
                for name, repo in self.repos.items()
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> State:
        """Load a state file. Pull requests, collaborators, comments, events and check runs are all optional."""
        state = cls()
        state.next_id = int(data.get("next_id", state.next_id))
        state.tick = int(data.get("tick", 0))
        for name, raw in data.get("repos", {}).items():
            repo = state.repo(name)
            repo.collaborators = dict(raw.get("collaborators", {}))
            for number, pull in raw.get("pulls", {}).items():
                repo.pulls[int(number)] = PullRequest(**{"number": int(number), **pull})
            repo.comments = [Comment(**comment) for comment in raw.get("comments", [])]
            repo.events = [IssueEvent(**event) for event in raw.get("events", [])]
            repo.check_runs = [CheckRun(**run) for run in raw.get("check_runs", [])]
            repo.issues = {int(number): Issue(**issue) for number, issue in raw.get("issues", {}).items()}
        return state


class Renderer:
    """Turns state objects into GitHub-shaped JSON for one request's base URL."""

    def __init__(self, templates: Templates, api_url: str, web_url: str) -> None:
        self.templates = templates
        self.api_url = api_url
        self.web_url = web_url

    def _template(self, name: str, repo: str) -> Any:
        return self.templates.get(name, self.api_url, self.web_url, repo)

    def user(self, login: str) -> dict[str, Any]:
        user = copy.deepcopy(self._template("comment", EXAMPLE_REPO)["user"])
        for key, value in list(user.items()):
            if isinstance(value, str):
                user[key] = value.replace("octocat", login)
        user["login"] = login
        user["id"] = sum(ord(char) for char in login)  # stable per login
        user["type"] = "Bot" if login.endswith("[bot]") else "User"
        return user

    def authenticated_user(self, login: str) -> dict[str, Any]:
        """GET /user for a user token: GitHub's private-user example, as ``login``."""
        data = self._template("private_user", EXAMPLE_REPO)
        simple = self.user(login)
        data.update({key: value for key, value in simple.items() if key in data})
        data.update(login=login, id=simple["id"], name=login, email=f"{login}@example.com", user_view_type="private")
        return data

    def pull(self, repo: str, pull: PullRequest) -> dict[str, Any]:
        data = self._template("pull", repo)
        data.update(
            number=pull.number,
            title=pull.title,
            url=f"{self.api_url}/repos/{repo}/pulls/{pull.number}",
            html_url=f"{self.web_url}/{repo}/pull/{pull.number}",
            issue_url=f"{self.api_url}/repos/{repo}/issues/{pull.number}",
            user=self.user(pull.author),
            state="open",
            # The documented example lists a team without its required "type"; an empty list is valid.
            requested_teams=[],
        )
        data["labels"] = [
            {**data["labels"][0], "id": index + 1, "name": name, "url": f"{self.api_url}/repos/{repo}/labels/{name}"}
            for index, name in enumerate(pull.labels)
        ]
        head_repo = pull.head_repo or repo
        data["head"].update(ref=pull.head_ref, sha=pull.head_sha, label=f"{head_repo.split('/')[0]}:{pull.head_ref}")
        data["head"]["user"] = self.user(head_repo.split("/")[0])
        data["head"]["repo"] = self._repository(head_repo, fork=head_repo != repo)
        data["base"].update(ref=pull.base_ref, sha=pull.base_sha, label=f"{repo.split('/')[0]}:{pull.base_ref}")
        data["base"]["repo"] = self._repository(repo, fork=False)
        return data

    def _repository(self, full_name: str, *, fork: bool) -> dict[str, Any]:
        base = self._template("pull", full_name)["base"]["repo"]
        owner, name = full_name.split("/")
        base.update(full_name=full_name, name=name, fork=fork, owner=self.user(owner))
        base["html_url"] = f"{self.web_url}/{full_name}"
        base["url"] = f"{self.api_url}/repos/{full_name}"
        return base

    def comment(self, repo: str, comment: Comment) -> dict[str, Any]:
        data = self._template("comment", repo)
        data.update(
            id=comment.id,
            node_id=f"IC_{comment.id}",
            body=comment.body,
            user=self.user(comment.author),
            created_at=comment.created_at,
            updated_at=comment.updated_at,
            url=f"{self.api_url}/repos/{repo}/issues/comments/{comment.id}",
            html_url=f"{self.web_url}/{repo}/pull/{comment.issue_number}#issuecomment-{comment.id}",
            issue_url=f"{self.api_url}/repos/{repo}/issues/{comment.issue_number}",
        )
        return data

    def event(self, repo: str, event: IssueEvent) -> dict[str, Any]:
        data = self._template("event", repo)
        data.update(
            id=event.id,
            node_id=f"IE_{event.id}",
            url=f"{self.api_url}/repos/{repo}/issues/events/{event.id}",
            actor=self.user(event.actor),
            event=event.event,
            commit_id=None,
            commit_url=None,
            created_at=event.created_at,
        )
        if event.label is not None:
            data["label"] = {"name": event.label, "color": "ededed"}
        else:
            data.pop("label", None)
        return data

    def diff_entry(self, repo: str, pull: PullRequest, path: str) -> dict[str, Any]:
        """One changed file of a pull request; ``old -> new`` is a rename."""
        data = self._template("diff_entry", repo)
        previous, _, current = path.rpartition(" -> ")
        data.update(
            filename=current,
            status="renamed" if previous else "modified",
            blob_url=f"{self.web_url}/{repo}/blob/{pull.head_sha}/{current}",
            raw_url=f"{self.web_url}/{repo}/raw/{pull.head_sha}/{current}",
            contents_url=f"{self.api_url}/repos/{repo}/contents/{current}?ref={pull.head_sha}",
        )
        if previous:
            data["previous_filename"] = previous
        return data

    def permission(self, repo: str, login: str, role: str) -> dict[str, Any]:
        data = self._template("permission", repo)
        permission = ROLE_PERMISSION.get(role, "read")
        user = self.user(login)
        # The documented example omits the user's role_name, which the schema requires.
        user["role_name"] = role
        data.update(permission=permission, role_name=role, user=user)
        return data

    def issue(self, repo: str, issue: Issue) -> dict[str, Any]:
        data = self._template("issue", repo)
        data.update(
            id=issue.number + 5000,
            node_id=f"I_{issue.number}",
            number=issue.number,
            title=issue.title,
            body=issue.body,
            user=self.user(issue.author),
            labels=[],
            assignee=None,
            assignees=[],
            milestone=None,
            pull_request=None,
            created_at=issue.created_at,
            updated_at=issue.created_at,
            closed_at=None,
            closed_by=None,
            state="open",
            url=f"{self.api_url}/repos/{repo}/issues/{issue.number}",
            html_url=f"{self.web_url}/{repo}/issues/{issue.number}",
            comments_url=f"{self.api_url}/repos/{repo}/issues/{issue.number}/comments",
        )
        data.pop("pull_request")
        return data

    def check_run(self, repo: str, run: CheckRun) -> dict[str, Any]:
        data = self._template("check_run", repo)
        data.update(
            id=run.id,
            node_id=f"CR_{run.id}",
            name=run.name,
            head_sha=run.head_sha,
            status=run.status,
            conclusion=run.conclusion,
            details_url=run.details_url,
            url=f"{self.api_url}/repos/{repo}/check-runs/{run.id}",
            html_url=f"{self.web_url}/{repo}/runs/{run.id}",
        )
        data["output"] = {
            **data["output"],
            "title": run.output.get("title"),
            "summary": run.output.get("summary"),
            "text": run.output.get("text"),
            "annotations_count": 0,
        }
        return data
