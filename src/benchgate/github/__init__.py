"""GitHub: the REST client (the only place that imports PyGithub) and the Actions runner's files.

- ``client``: retried, schema-conformant REST calls: pull requests, comments, checks, label events.
- ``retrying``: which failures are transient, how long to wait, and the errors a request ends in.
- ``pullfiles``: the benchmark categories a pull request touches, from the API's list of its files.
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
        "commands_stopped",
        "error_annotation",
        "read_event",
        "check_event",
        "pull_request_number",
        "workflow_run_url",
    ),
    "pullfiles": (
        "pull_request_categories",
        "default_benchmark_dir",
    ),
    "client": (
        "WRITE_ROLES",
        "ROLES",
        "CHECK_CONCLUSIONS",
        "MAX_LISTED_FILES",
        "COMMENT_LIMIT",
        "CHECK_OUTPUT_LIMIT",
        "ACTIONS_BOT_LOGIN",
        "COMMENT_AUTHOR_ENV",
        "PullRequestInfo",
        "ChangedFiles",
        "LabelEvent",
        "GitHubClient",
        "check_api_url",
    ),
    "retrying": (
        "MAX_BACKOFF_SECONDS",
        "GitHubRequestError",
        "RetryingClient",
        "message_of",
    ),
}
__all__ = [name for names in _MODULES.values() for name in names]
__getattr__, __dir__ = exports(__name__, _MODULES)
