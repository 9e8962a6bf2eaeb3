"""``python -m rankcut``: the ``rankcut`` command (:mod:`rankcut.cli.main`)."""

from rankcut.cli.main import app

app(prog_name="rankcut")
