"""A stateful fake of the GitHub REST API endpoints benchgate uses, served on loopback.

Every request is checked against GitHub's OpenAPI description before it is
answered: a request the description does not allow is recorded in
``violations`` and answered like GitHub would (404 for an unknown route, 422
for an invalid body), so a client bug fails the test instead of passing
against a lenient fake. The fake's own responses are checked the same way.

It serves both ``http://127.0.0.1:PORT`` (api.github.com layout) and
``http://127.0.0.1:PORT/api/v3`` (GitHub Enterprise layout); URLs in responses
follow the layout the request used, as PyGithub follows them for pagination.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from fakegithub.faults import DOCS, Fault, RecordedRequest
from fakegithub.state import PullRequest, Renderer, State, Templates
from fakegithub.validation import GitHubSpecValidator, Violation

ENTERPRISE_PREFIX = "/api/v3"
# Who a token with no identity of its own acts as: Actions' GITHUB_TOKEN, an installation token.
ACTIONS_BOT = "github-actions[bot]"


class _Reply(Exception):
    """Raised by a route to answer with an error status, GitHub style."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (method, re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template) + "$"), handler)
    for method, template, handler in (
        ("GET", "/repos/{owner}/{repo}/pulls/{number}", "get_pull"),
        ("GET", "/repos/{owner}/{repo}/pulls/{number}/files", "list_files"),
        ("GET", "/repos/{owner}/{repo}/issues/{number}/events", "list_events"),
        ("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", "get_permission"),
        ("GET", "/repos/{owner}/{repo}/issues/{number}/comments", "list_comments"),
        ("POST", "/repos/{owner}/{repo}/issues/{number}/comments", "create_comment"),
        ("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "edit_comment"),
        ("POST", "/repos/{owner}/{repo}/check-runs", "create_check_run"),
        ("POST", "/repos/{owner}/{repo}/issues", "create_issue"),
        ("GET", "/user", "get_authenticated_user"),
    )
]


class FakeGitHub:
    """The fake API: state, fault queue, request log and violations, behind one lock."""

    def __init__(
        self,
        state: State | None = None,
        *,
        validator: GitHubSpecValidator | None = None,
        token: str | None = None,
        on_change: Callable[[FakeGitHub], None] | None = None,
    ) -> None:
        self.state = state or State()
        self.validator = validator or GitHubSpecValidator()
        self.templates = Templates(self.validator.spec)
        self.token = token  # when set, requests must carry it
        # token -> login it acts as. A login ending in [bot] is an installation token (GET /user
        # refuses it, as GitHub does); a token not listed here acts as ACTIONS_BOT.
        self.identities: dict[str, str] = {}
        self._identity = ACTIONS_BOT  # who the request being answered acts as
        self.read_only = False  # when set, writes answer 403 like a token without write scopes
        self.faults: list[Fault] = []
        self.requests: list[RecordedRequest] = []
        self.violations: list[Violation] = []
        self.lock = threading.RLock()
        self.on_change = on_change
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, port: int = 0) -> FakeGitHub:
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits for it, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-github", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None, "fake GitHub not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """Base URL in api.github.com layout (what GITHUB_API_URL would hold)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def enterprise_url(self) -> str:
        """Base URL in GitHub Enterprise Server layout (``https://HOST/api/v3``)."""
        return self.url + ENTERPRISE_PREFIX

    # -- setup helpers for tests ---------------------------------------------------------------

    def add_pull(self, repo: str, number: int, **fields: Any) -> PullRequest:
        fields.setdefault("head_sha", f"{number:x}".rjust(40, "a"))
        fields.setdefault("base_sha", f"{number:x}".rjust(40, "b"))
        with self.lock:
            return self.state.add_pull(repo, PullRequest(number=number, **fields))

    def set_role(self, repo: str, login: str, role: str) -> None:
        with self.lock:
            self.state.repo(repo).collaborators[login] = role

    def add_comment(self, repo: str, number: int, body: str, author: str = "someone") -> int:
        with self.lock:
            return self.state.add_comment(repo, number, body, author).id

    def add_event(self, repo: str, number: int, event: str, actor: str, label: str | None = None) -> None:
        with self.lock:
            self.state.add_event(repo, number, event, actor, label)

    def add_identity(self, token: str, login: str) -> None:
        """Requests carrying ``token`` act as ``login`` (a user's PAT, or ``slug[bot]`` for an app)."""
        with self.lock:
            self.identities[token] = login

    def comment_authors(self, repo: str, number: int) -> list[str]:
        """Authors of the comments on issue/PR ``number``, oldest first."""
        with self.lock:
            return [c.author for c in self.state.repo(repo).comments if c.issue_number == number]

    def issues(self, repo: str) -> list[tuple[str, str]]:
        """(title, body) of the issues opened in ``repo``, oldest first."""
        with self.lock:
            return [(issue.title, issue.body) for issue in self.state.repo(repo).issues.values()]

    def queue(self, *faults: Fault) -> None:
        with self.lock:
            self.faults.extend(faults)

    def comments(self, repo: str, number: int) -> list[str]:
        """Bodies of the comments on issue/PR ``number``, oldest first."""
        with self.lock:
            return [c.body for c in self.state.repo(repo).comments if c.issue_number == number]

    def requests_to(self, method: str, fragment: str = "") -> list[RecordedRequest]:
        with self.lock:
            return [r for r in self.requests if r.method == method and fragment in r.path]

    # -- request handling ----------------------------------------------------------------------

    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes | None]:
        """Answer one request: (status, headers, body); body None means drop the connection."""
        parts = urlsplit(raw_path)
        enterprise = parts.path.startswith(ENTERPRISE_PREFIX + "/")
        path = parts.path[len(ENTERPRISE_PREFIX) :] if enterprise else parts.path
        query = parse_qsl(parts.query, keep_blank_values=True)
        if path.startswith("/_fake/"):
            return self._control(method, path, body)
        with self.lock:
            status, reply_headers, payload = self._answer(method, path, query, headers, body, enterprise)
            try:
                parsed_body = json.loads(body) if body else None
            except ValueError:
                parsed_body = body.decode(errors="replace")
            self.requests.append(
                RecordedRequest(
                    method, path, tuple(query), parsed_body, status, enterprise, headers.get("authorization")
                )
            )
            if self.on_change is not None:
                self.on_change(self)
        return status, reply_headers, payload

    def _answer(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: bytes,
        enterprise: bool,
    ) -> tuple[int, dict[str, str], bytes | None]:
        host = headers.get("host", f"127.0.0.1:{self.port}")
        api_url = f"http://{host}{ENTERPRISE_PREFIX if enterprise else ''}"
        renderer = Renderer(self.templates, api_url, f"http://{host}")
        violation = self.validator.check_request(method.lower(), path, query, headers, body)
        if violation is not None:
            self.violations.append(violation)
        fault = next((f for f in self.faults if f.matches(method, path)), None)
        if fault is not None and not fault.after:
            self.faults.remove(fault)
            return self._fault_reply(fault)
        try:
            if violation is not None:
                route_known = any(m == method and p.match(path) for m, p, _ in ROUTES)
                raise _Reply(422 if route_known else 404, "Invalid request." if route_known else "Not Found")
            self._authorize(method, headers)
            self._identity = self._identity_of(headers)
            status, data, extra = self._route(method, path, query, body, renderer)
        except _Reply as reply:
            status, data, extra = reply.status, {"message": reply.message, "documentation_url": DOCS}, reply.headers
        encoded = json.dumps(data).encode()
        if 200 <= status < 300:
            problem = self.validator.check_response(method.lower(), path, query, status, encoded)
            if problem is not None:
                self.violations.append(problem)
        if fault is not None:  # an "after" fault: the change happened, the client hears a failure
            self.faults.remove(fault)
            return self._fault_reply(fault)
        reply_headers = {
            "content-type": "application/json; charset=utf-8",
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "4999",
            "x-ratelimit-reset": str(int(time.time()) + 3600),
            "x-github-api-version-selected": "2022-11-28",
            **extra,
        }
        return status, reply_headers, encoded

    @staticmethod
    def _fault_reply(fault: Fault) -> tuple[int, dict[str, str], bytes | None]:
        if fault.drop:
            return 0, {}, None
        body = json.dumps({"message": fault.message, "documentation_url": DOCS}).encode()
        return fault.status, {"content-type": "application/json; charset=utf-8", **fault.headers}, body

    def _authorize(self, method: str, headers: dict[str, str]) -> None:
        if self.token is not None:
            given = headers.get("authorization", "")
            if given not in (f"token {self.token}", f"Bearer {self.token}"):
                raise _Reply(401, "Bad credentials")
        if self.read_only and method != "GET":
            raise _Reply(403, "Resource not accessible by integration")

    def _identity_of(self, headers: dict[str, str]) -> str:
        """The login the request's token acts as (the lock is held for the whole request)."""
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() in ("token", "bearer") and token in self.identities:
            return self.identities[token]
        return ACTIONS_BOT

    def _route(
        self, method: str, path: str, query: list[tuple[str, str]], body: bytes, renderer: Renderer
    ) -> tuple[int, Any, dict[str, str]]:
        for route_method, pattern, name in ROUTES:
            match = pattern.match(path)
            if match and route_method == method:
                params = {key: unquote(value) for key, value in match.groupdict().items()}
                if "owner" not in params:  # not a repository route
                    return getattr(self, f"_{name}")(params, renderer)
                repo_name = f"{params.pop('owner')}/{params.pop('repo')}"
                if repo_name not in self.state.repos:
                    raise _Reply(404, "Not Found")
                payload = json.loads(body) if body else {}
                return getattr(self, f"_{name}")(repo_name, params, dict(query), payload, renderer, path, query)
        raise _Reply(404, "Not Found")

    def _pull_or_404(self, repo: str, number: str) -> PullRequest:
        pull = self.state.repos[repo].pulls.get(int(number))
        if pull is None:
            raise _Reply(404, "Not Found")
        return pull

    @staticmethod
    def _page(
        items: list[Any], query: dict[str, str], renderer: Renderer, path: str, all_query: list[tuple[str, str]]
    ) -> tuple[list[Any], dict[str, str]]:
        """Slice one page like GitHub: per_page (default 30, at most 100), page from 1, RFC 8288 Link header."""
        per_page = max(1, min(100, int(query.get("per_page", 30))))
        page = max(1, int(query.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        others = [(key, value) for key, value in all_query if key not in ("page", "per_page")]

        def link(number: int, rel: str) -> str:
            target = f"{renderer.api_url}{path}?{urlencode([*others, ('per_page', per_page), ('page', number)])}"
            return f'<{target}>; rel="{rel}"'

        links = []
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"link": ", ".join(links)} if links else {}
        return items[(page - 1) * per_page : page * per_page], headers

    # -- routes --------------------------------------------------------------------------------

    def _get_pull(self, repo, params, query, payload, renderer, path, all_query):
        return 200, renderer.pull(repo, self._pull_or_404(repo, params["number"])), {}

    def _list_files(self, repo, params, query, payload, renderer, path, all_query):
        pull = self._pull_or_404(repo, params["number"])
        # GitHub lists at most 3000 files of a pull request, however many it changes.
        page, headers = self._page(pull.files[:3000], query, renderer, path, all_query)
        return 200, [renderer.diff_entry(repo, pull, name) for name in page], headers

    def _list_events(self, repo, params, query, payload, renderer, path, all_query):
        self._pull_or_404(repo, params["number"])
        events = [e for e in self.state.repos[repo].events if e.issue_number == int(params["number"])]
        page, headers = self._page(events, query, renderer, path, all_query)
        return 200, [renderer.event(repo, event) for event in page], headers

    def _get_permission(self, repo, params, query, payload, renderer, path, all_query):
        role = self.state.repos[repo].collaborators.get(params["username"])
        if role is None:
            raise _Reply(404, f"{params['username']} is not a user")
        return 200, renderer.permission(repo, params["username"], role), {}

    def _issue_or_404(self, repo: str, number: str) -> None:
        """Comments live on pull requests and issues alike."""
        if int(number) not in self.state.repos[repo].issues:
            self._pull_or_404(repo, number)

    def _list_comments(self, repo, params, query, payload, renderer, path, all_query):
        self._issue_or_404(repo, params["number"])
        comments = [c for c in self.state.repos[repo].comments if c.issue_number == int(params["number"])]
        page, headers = self._page(comments, query, renderer, path, all_query)
        return 200, [renderer.comment(repo, comment) for comment in page], headers

    def _create_comment(self, repo, params, query, payload, renderer, path, all_query):
        self._issue_or_404(repo, params["number"])
        if len(payload["body"]) > 65536:
            raise _Reply(422, "Validation Failed: body is too long (maximum is 65536 characters)")
        comment = self.state.add_comment(repo, int(params["number"]), payload["body"], self._identity)
        location = f"{renderer.api_url}/repos/{repo}/issues/comments/{comment.id}"
        return 201, renderer.comment(repo, comment), {"location": location}

    def _edit_comment(self, repo, params, query, payload, renderer, path, all_query):
        if len(payload["body"]) > 65536:
            raise _Reply(422, "Validation Failed: body is too long (maximum is 65536 characters)")
        comment = self.state.edit_comment(repo, int(params["comment_id"]), payload["body"])
        if comment is None:
            raise _Reply(404, "Not Found")
        return 200, renderer.comment(repo, comment), {}

    def _get_authenticated_user(self, params, renderer):
        if self._identity.endswith("[bot]"):
            raise _Reply(403, "Resource not accessible by integration")
        return 200, renderer.authenticated_user(self._identity), {}

    def _create_issue(self, repo, params, query, payload, renderer, path, all_query):
        if len(payload.get("body") or "") > 65536:
            raise _Reply(422, "Validation Failed: body is too long (maximum is 65536 characters)")
        issue = self.state.add_issue(repo, str(payload["title"]), payload.get("body") or "", self._identity, [])
        return 201, renderer.issue(repo, issue), {"location": f"{renderer.api_url}/repos/{repo}/issues/{issue.number}"}

    def _create_check_run(self, repo, params, query, payload, renderer, path, all_query):
        if payload.get("status") == "completed" and not payload.get("conclusion"):
            raise _Reply(422, "Validation Failed: conclusion is required when status is completed")
        return 201, renderer.check_run(repo, self.state.add_check_run(repo, payload)), {}

    # -- control endpoints (not part of GitHub; used by tests driving a standalone fake) --------

    def _control(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
        with self.lock:
            if method == "GET" and path == "/_fake/state":
                data: Any = self.state.to_json()
            elif method == "GET" and path == "/_fake/requests":
                data = [asdict(request) for request in self.requests]
            elif method == "GET" and path == "/_fake/violations":
                data = [str(violation) for violation in self.violations]
            elif method == "POST" and path == "/_fake/faults":
                self.faults.extend(Fault(**fault) for fault in json.loads(body or b"[]"))
                data = {"queued": len(self.faults)}
            else:
                return 404, {"content-type": "application/json"}, b'{"message": "unknown control endpoint"}'
        return 200, {"content-type": "application/json"}, json.dumps(data).encode()


def _handler_for(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as PyGithub's requests session expects

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {key.lower(): value for key, value in self.headers.items()}
            status, reply_headers, payload = fake.handle(self.command, self.path, headers, body)
            if payload is None:
                self.close_connection = True
                self.connection.shutdown(2)  # drop: the client sees a reset, not an answer
                return
            self.send_response(status)
            for key, value in reply_headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature fixed by http.server
            pass  # the request log lives in FakeGitHub.requests

    return Handler
