"""The history of main (docs/history.md): trusted runs in a store (``store``, ``runentry``, ``recording``,
``reading``), their series (``model``), change points, a PR row's context, releases as series, the static site.
"""
