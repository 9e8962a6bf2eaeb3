"""``rankcut serve``: a local labelling page over an audit folder (the optional extra ``serve``).

:mod:`rankcut.serve.desk` reads the audit and records answers through the label step's guards (a
design's own desk by name in :mod:`rankcut.serve.desks`);
:mod:`rankcut.serve.app` is the FastAPI application (token, CSRF, pages). FastAPI is imported only
by :mod:`rankcut.serve.app`, so importing this package costs nothing. See docs/serve.md.
"""
