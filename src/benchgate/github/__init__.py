"""GitHub: the REST client (the only place that imports PyGithub) and the Actions runner's files.

- ``client``: retried, schema-conformant REST calls: pull requests, comments, checks, label events.
- ``actions_env``: outputs, job summary, annotations and the event payload of a workflow run.
"""

from benchgate._lazy import exports

_MODULES = {
    "actions_env": (
        "STEP_SUMMARY_LIMIT",
        "MAX_EVENT_BYTES",
        "in_actions",
        "set_outputs",
        "fit_summary",
        "write_step_summary",
        "error_annotation",
        "read_event",
        "check_event",
        "pull_request_number",
        "workflow_run_url",
    ),
    "client": (
        "WRITE_ROLES",
        "ROLES",
        "CHECK_CONCLUSIONS",
        "COMMENT_LIMIT",
        "CHECK_OUTPUT_LIMIT",
        "MAX_BACKOFF_SECONDS",
        "ACTIONS_BOT_LOGIN",
        "COMMENT_AUTHOR_ENV",
        "PullRequestInfo",
        "LabelEvent",
        "GitHubRequestError",
        "GitHubClient",
        "check_api_url",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
