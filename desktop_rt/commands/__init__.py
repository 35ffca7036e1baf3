"""One module per ``desktop-rt`` subcommand: ``add_parser(subparsers)`` and its ``run(args)``."""
