"""GitHub: the REST client (the only place that imports PyGithub) and the Actions runner's files.

- ``client``: retried, schema-conformant REST calls: pull requests, comments, checks, label events.
- ``retrying``: which failures are transient, how long to wait, and the errors a request ends in.
- ``pullfiles``: the benchmark categories a pull request touches, from the API's list of its files.
- ``actions_env``: outputs, job summary, annotations and the event payload of a workflow run.
"""
