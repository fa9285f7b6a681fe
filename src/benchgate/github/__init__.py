"""GitHub: the retried REST client (``client``, the only place that imports PyGithub), the categories a pull
request touches (``pullfiles``), the Actions runner's files (``actions_env``) and the mode guard (``events``).
"""
