"""``rankcut serve FOLDER``: a labelling page over an audit folder, in the browser (docs/serve.md).

::

    rankcut serve AUDIT [--port 8765] [--host 0.0.0.0]

It listens on 127.0.0.1 unless ``--host`` says otherwise, and prints its address once, with a
random access token in it (as Jupyter does). FastAPI and uvicorn (the extra ``serve``) are imported
only when the command runs.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path

import typer

from rankcut.cli._errors import fail, user_errors

LOOPBACK = "127.0.0.1"
LOCK_FILE = ".serve.lock"   # in the folder: the one server labelling it (its address, its pid)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@contextlib.contextmanager
def _only_server(folder: Path, address: str) -> Iterator[None]:
    """Refuse a second ``rankcut serve`` on one folder while this one runs: each server keeps in its
    memory which record each reviewer is being asked, so two servers would ask two reviewers the
    same one. An advisory lock (``flock``) on :data:`LOCK_FILE`, released when the server stops or
    dies; none where ``fcntl`` is missing (not POSIX) or the folder cannot be written (nothing can be
    recorded there then)."""
    try:
        import fcntl
        lock = open(folder / LOCK_FILE, "a+", encoding="utf-8")   # held while serving
    except (ImportError, OSError):
        yield
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.seek(0)
            held = lock.read().strip() or "its address is not known"
            raise ValueError(f"{folder} is being labelled by another rankcut serve ({held}): two servers "
                             "on one folder would ask two reviewers for the same record; open that page "
                             "(several reviewers can share it), or stop that server first") from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"{address}, pid {os.getpid()}\n")
        lock.flush()
        try:
            yield
        finally:
            lock.seek(0)
            lock.truncate()


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
    port: int = typer.Option(8765, "--port", min=0, max=65535,
                             help="The port to listen on (0: any free port)."),
    host: str = typer.Option(LOOPBACK, "--host", help="The address to listen on. Anything but 127.0.0.1 lets "
                             "other machines reach the page (the token still guards it)."),
) -> None:
    """Label an audit in the browser: the query, one document at a time, keys, progress, certificate."""
    try:
        import uvicorn

        from rankcut.serve.app import create_app
    except ImportError as err:
        fail(f"rankcut serve needs the extra 'serve' (pip install 'rankcut[serve]'): {err}")
    from rankcut.audit.manifest import MANIFEST_FILE
    from rankcut.cli.audit import spoken_as_options

    if not (folder / MANIFEST_FILE).is_file():   # neither kind of folder: name both ways to make one
        what = (f"holds no audit or review ({MANIFEST_FILE} is missing)" if folder.is_dir() else
                "is a file, not a folder" if folder.exists() else "does not exist")
        fail(f"{folder} {what}: serve the folder of rankcut review start (records to screen), or of "
             "rankcut audit freeze and sample (a ranked run to audit)")
    token = secrets.token_urlsafe(32)
    # the folder's refusals, warnings and notes name rankcut audit's steps, or rankcut review's
    options = _options(folder)
    shown = f"[{host}]" if ":" in host else host
    with contextlib.ExitStack() as serving:
        with user_errors(), spoken_as_options(options):
            app = create_app(folder, token, options=options)
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
            serving.callback(sock.close)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError as err:
                raise OSError(f"--host {host} --port {port}: cannot listen there ({err.strerror}); give "
                              "another --port (0 picks a free one)") from None
            address = f"http://{shown}:{sock.getsockname()[1]}/"
            serving.enter_context(_only_server(folder, address))
        if not _is_loopback(host):
            typer.echo(f"warning: --host {host}: the page is reachable from other machines; anyone who "
                       "learns the address with its token can record labels. The connection is plain HTTP.",
                       err=True)
        typer.echo(f"labelling {folder} — open this address (it holds the access token; it is printed "
                   f"once):\n    {address}?token={token}")
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
