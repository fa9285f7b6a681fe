"""The history of main (docs/history.md): trusted runs recorded (``recording``) into a store read as series
(``store``, ``model``), change points, a PR row's context (``model``), releases as series, the static site."""
