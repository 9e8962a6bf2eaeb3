"""The ``rankcut`` command line: one module per subcommand group."""
