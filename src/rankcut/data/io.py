"""Opening text inputs and writing outputs atomically: the file handling every reader and writer
of rankcut shares.

A *source* is a path (``.gz`` read transparently) or an open text stream; an output is written
to a temporary file in its folder and moved into place with :func:`os.replace`, so that readers
see the old file or the new one, never half of one.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["Source", "open_text", "write_atomic"]

Source = str | os.PathLike[str] | IO[str]


@contextmanager
def open_text(source: Source, name: str | None = None, *, encoding: str = "utf-8",
              newline: str | None = None) -> Iterator[tuple[str, IO[str]]]:
    """Yield ``(display name, text stream)`` for a path — gzip-decompressed when its name ends in
    ``.gz`` — or an open text stream (left open). ``name`` overrides the display name;
    ``encoding`` and ``newline`` are :func:`open`'s (``newline=""`` for the csv module)."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        with opener(path, "rt", encoding=encoding, newline=newline) as f:
            yield name or str(path), f
    else:
        yield name or str(getattr(source, "name", "<stream>")), source


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, readable by all (mode 0644).

    :raises FileNotFoundError: when the folder of ``path`` does not exist (it is not created).
    :raises OSError: when the folder cannot be written; the message names ``path``, not the
        temporary file.
    """
    out = Path(path)
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise FileNotFoundError(f"cannot write {out}: output folder {out.parent} {what}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:  # the errno message would name the temporary file
        raise type(exc)(exc.errno, exc.strerror, str(out)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; rankcut's outputs are not secret
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
