"""One module per subcommand: ``register(subparsers)`` plus a function tests call directly."""
