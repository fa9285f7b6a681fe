"""GitHub: the retried REST client (``client``, the only place that imports PyGithub), the trusted jobs' checks
(``approval``), the Actions runner's files (``actions_env``) and the mode guard (``events``)."""
