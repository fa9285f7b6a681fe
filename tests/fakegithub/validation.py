"""Check requests (and the fake's own responses) against GitHub's OpenAPI description.

openapi-core does the work: it finds the operation by method and path, checks
path and query parameters and the JSON body against their schemas, and for
responses checks the body against the documented schema for that status.
Each problem comes back as one readable line, so a test failure says which
request broke which rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from openapi_core import OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from werkzeug.datastructures import ImmutableMultiDict

from fakegithub.spec import SERVER_URL, compact_spec


@dataclass(frozen=True)
class Violation:
    """One request or response that GitHub's description does not allow."""

    direction: str  # "request" | "response"
    method: str
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.direction} {self.method.upper()} {self.path}: {self.reason}"


def _explain(error: BaseException) -> str:
    """Flatten openapi-core's exception chain into one line naming the failing fields."""
    parts: list[str] = []
    seen: BaseException | None = error
    while seen is not None:
        for schema_error in getattr(seen, "schema_errors", None) or ():
            where = "/".join(str(piece) for piece in schema_error.absolute_path) or "(body)"
            parts.append(f"{where}: {schema_error.message}")
        seen = seen.__cause__
    if not parts:
        parts.append(str(error))
    line = f"{type(error).__name__}: " + "; ".join(parts)
    return line if len(line) < 600 else line[:597] + "..."


class GitHubSpecValidator:
    """Validates one request or response at a time; build once per process (about 0.2 s)."""

    def __init__(self, spec: dict[str, Any] | None = None) -> None:
        self.spec = spec if spec is not None else compact_spec()
        self._openapi = OpenAPI.from_dict(self.spec)

    @staticmethod
    def _request(
        method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str], body: bytes | None
    ) -> MockRequest:
        request = MockRequest(
            SERVER_URL,
            method,
            path,
            headers=headers,
            data=body or None,
            content_type=headers.get("content-type", "application/json").split(";")[0].strip(),
        )
        # MockRequest flattens a dict; keep repeated query keys as GitHub would see them.
        request.parameters.query = ImmutableMultiDict(query)
        return request

    def check_request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        body: bytes | None,
    ) -> Violation | None:
        """Return what is wrong with this request, or None when the description allows it."""
        if body:
            try:
                json.loads(body)
            except ValueError as error:
                return Violation("request", method, path, f"body is not JSON: {error}")
        try:
            self._openapi.validate_request(self._request(method, path, query, headers, body))
        except Exception as error:  # openapi-core raises a family of exceptions; all mean "invalid"
            return Violation("request", method, path, _explain(error))
        return None

    def check_response(
        self, method: str, path: str, query: list[tuple[str, str]], status: int, body: bytes
    ) -> Violation | None:
        """Return what is wrong with the fake's own response, or None when it matches the description."""
        request = self._request(method, path, query, {}, None)
        response = MockResponse(body, status_code=status, content_type="application/json")
        try:
            self._openapi.validate_response(request, response)
        except Exception as error:
            return Violation("response", method, path, _explain(error))
        return None
