"""``rankcut serve FOLDER``: a labelling page over an audit folder, in the browser (docs/serve.md).

::

    rankcut serve AUDIT [--port 8765] [--host 0.0.0.0]

It listens on 127.0.0.1 unless ``--host`` says otherwise, and prints its address once, with a
random access token in it (as Jupyter does). FastAPI and uvicorn (the extra ``serve``) are imported
only when the command runs.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
from collections.abc import Mapping
from pathlib import Path

import typer

from rankcut.cli._errors import fail, user_errors

LOOPBACK = "127.0.0.1"


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _options(folder: Path) -> Mapping[str, str]:
    """The option names the folder's refusals, warnings and notes use: rankcut review's for a review
    folder, else rankcut audit's."""
    from rankcut.audit.manifest import MANIFEST_FILE, load_manifest
    from rankcut.cli import audit, review
    from rankcut.review.session import is_review

    try:
        reviewed = (folder / MANIFEST_FILE).is_file() and is_review(load_manifest(folder))
    except ValueError:
        reviewed = False   # the desk refuses the manifest, with its reason
    return review.OPTIONS if reviewed else audit.OPTIONS


def serve(
    folder: Path = typer.Argument(..., help="The audit folder (sampled: rankcut audit sample), or a review "
                                  "folder of rankcut review."),
    port: int = typer.Option(8765, "--port", help="The port to listen on (0: any free port)."),
    host: str = typer.Option(LOOPBACK, "--host", help="The address to listen on. Anything but 127.0.0.1 lets "
                             "other machines reach the page (the token still guards it)."),
) -> None:
    """Label an audit in the browser: the query, one document at a time, keys, progress, certificate."""
    try:
        import uvicorn

        from rankcut.serve.app import create_app
    except ImportError as err:
        fail(f"rankcut serve needs the extra 'serve' (pip install 'rankcut[serve]'): {err}")
    from rankcut.cli.audit import spoken_as_options

    token = secrets.token_urlsafe(32)
    # the folder's refusals, warnings and notes name rankcut audit's steps, or rankcut review's
    options = _options(folder)
    with user_errors(), spoken_as_options(options):
        app = create_app(folder, token, options=options)
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as err:
            sock.close()
            raise OSError(f"--host {host} --port {port}: cannot listen there ({err.strerror}); give another "
                          "--port (0 picks a free one)") from None
    if not _is_loopback(host):
        typer.echo(f"warning: --host {host}: the page is reachable from other machines; anyone who learns "
                   "the address with its token can record labels. The connection is plain HTTP.", err=True)
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"labelling {folder} — open this address (it holds the access token; it is printed once):\n"
               f"    http://{shown}:{sock.getsockname()[1]}/?token={token}")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    server.run(sockets=[sock])
