"""Opening text inputs and writing outputs atomically: the file handling every reader and writer
of rankcut shares.

A *source* is a path (``.gz`` read transparently) or an open text stream; an output is written
to a temporary file in its folder and moved into place with :func:`os.replace`, so that readers
see the old file or the new one, never half of one.

Every text input is UTF-8. A byte-order mark at its start is dropped (else it would become part
of the first query id), and a file that is not UTF-8 text (Latin-1, UTF-16, binary) is refused
with a :class:`ValueError` naming the file and the line of the first offending byte.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import os
import re
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO

__all__ = ["Source", "json_objects", "open_text", "plain_number", "write_atomic", "write_exclusive",
           "writes_through"]

Source = str | os.PathLike[str] | IO[str]

_BOM = "\ufeff"


class _Utf8Checked(io.RawIOBase):
    """The bytes of ``raw``, passed on only once they are known to be UTF-8 text.

    The check runs on the bytes, before any decoding, so the line of a bad byte is exact (a
    text stream decodes ahead by blocks and cannot tell which line it was reading).
    """

    def __init__(self, raw: BinaryIO, name: str) -> None:
        super().__init__()
        self._raw, self._name = raw, name
        self._line = 1  # line of the first byte not yet checked
        self._column = 1  # its byte column
        self._pending = b""  # the start of a multi-byte character cut by a block boundary

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        try:
            data = self._raw.read(len(buffer))
        except (zlib.error, gzip.BadGzipFile, EOFError) as exc:   # a .gz that is not gzip, or cut short
            raise ValueError(f"{self._name}, line {self._line}: not a readable gzip file ({exc}); a name "
                             "ending .gz is read as gzip-compressed") from None
        self._check(data)
        buffer[: len(data)] = data
        return len(data)

    def _check(self, data: bytes) -> None:
        block = self._pending + data
        zero = block.find(b"\0")   # valid UTF-8, but no text: UTF-16 without its mark, or binary
        try:
            _, done = codecs.utf_8_decode(block, "strict", not data)
        except UnicodeDecodeError as exc:
            if not 0 <= zero < exc.start:   # a NUL before it says UTF-16 (accents there are no UTF-8)
                self._fail(block, exc.start, f"0x{block[exc.start]:02x}: {exc.reason}")
            done = zero + 1
        if 0 <= zero < done:
            self._fail(block, zero, "0x00, a NUL: UTF-16 text, or a binary file")
        self._advance(block[:done])
        self._pending = block[done:]

    def _advance(self, checked: bytes) -> None:
        breaks = checked.count(b"\n")
        self._line += breaks
        self._column = (len(checked) - checked.rfind(b"\n") if breaks
                        else self._column + len(checked))

    def _fail(self, block: bytes, at: int, why: str) -> None:
        if self._line == 1 and self._column == 1 and block.startswith(b"\x1f\x8b"):   # gzip's magic
            raise ValueError(f"{self._name}: a gzip-compressed file (it starts with gzip's magic bytes "
                             "1f 8b), which is read as gzip only under a name ending .gz: rename it *.gz, "
                             "or decompress it (gunzip -c)")
        if self._line == 1 and self._column == 1 and block.startswith((b"\xff\xfe", b"\xfe\xff",
                                                                       b"\x00\x00\xfe\xff")):
            wide = "utf-32" if block.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")) else "utf-16"
            raise ValueError(f"{self._name}: {wide.upper()} text (by its byte-order mark); rankcut reads "
                             f"UTF-8: convert the file (iconv -f {wide} -t utf-8)")
        if self._line == 1 and self._column == 1 and block.startswith(b"PAR1") and b"\0" in block:
            raise ValueError(f"{self._name}: a Parquet file (it starts with Parquet's magic bytes PAR1), "
                             + _parquet_advice(self._name))
        packed = next((name for magic, name in _PACKED if block.startswith(magic)), None)
        if self._line == 1 and self._column == 1 and packed is not None:
            raise ValueError(f"{self._name}: {packed} (by its first bytes), which rankcut does not read: "
                             "decompress it, or recompress it with gzip (*.gz)")
        self._advance(block[:at])
        source = "utf-16" if block[at] == 0 else "latin1"
        raise ValueError(f"{self._name}, line {self._line}: not UTF-8 text (byte {self._column} of "
                         f"the line, {why}); rankcut reads UTF-8: convert the file (e.g. iconv "
                         f"-f {source} -t utf-8)")


def _parquet_advice(name: str) -> str:
    """What to do with a Parquet file that was read as text, by its name."""
    if name.endswith(".gz"):
        return ("compressed: rankcut reads a Parquet run uncompressed, under a name ending .parquet "
                "(gunzip it)")
    if name.endswith(".parquet"):
        return ("read here as text: rankcut reads Parquet for runs (--run) only; convert this file to TREC "
                "text")
    return ("which is read as Parquet only as a run (--run) under a name ending .parquet (rename it); "
            "qrels and the other inputs are read as text only")


#: the first bytes of compressed or archive formats rankcut does not read, and their names
_PACKED = ((b"BZh", "a bzip2-compressed file"), (b"\xfd7zXZ\x00", "an xz-compressed file"),
           (b"\x28\xb5\x2f\xfd", "a zstd-compressed file"), (b"PK\x03\x04", "a zip archive or workbook"))


class _BomDropped(io.TextIOBase):
    """An open text stream, read without the byte-order mark at its start (the stream's own
    decoding stays the caller's choice)."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self._stream, self._start = stream, True

    def readable(self) -> bool:
        return True

    def _drop(self, text: str) -> str:
        if self._start and text:
            self._start = False
            return text.removeprefix(_BOM)
        return text

    def read(self, size: int | None = -1) -> str:
        return self._drop(self._stream.read(-1 if size is None else size))

    def readline(self, size: int = -1) -> str:  # type: ignore[override]
        return self._drop(self._stream.readline(size))


def stream_name(source: Source, name: str | None) -> str | None:
    """The display name :func:`open_text` is given for a source whose ``name`` names what is read
    (a review, a screening set), not the file: a path is named by itself in messages, a stream by
    ``name``."""
    return None if isinstance(source, str | os.PathLike) else name


@contextmanager
def open_text(source: Source, name: str | None = None, *,
              newline: str | None = None) -> Iterator[tuple[str, io.TextIOBase]]:
    """Yield ``(display name, text stream)`` for a path — gzip-decompressed when its name ends in
    ``.gz`` — or an open text stream (left open), without a leading byte-order mark. ``name``
    overrides the display name; ``newline`` is :func:`open`'s (``newline=""`` for the csv
    module).

    :raises ValueError: while reading a path, at the first byte that is not UTF-8 text, naming
        the file, the line and the byte.
    """
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        label = name or str(path)
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        with opener(path, "rb") as raw:
            checked = io.BufferedReader(_Utf8Checked(raw, label))  # type: ignore[arg-type]
            with io.TextIOWrapper(checked, encoding="utf-8-sig", newline=newline) as f:
                yield label, f
    else:
        yield name or str(getattr(source, "name", "<stream>")), _BomDropped(source)


def write_atomic(path: str | os.PathLike[str], data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or blocks of bytes written as they come) to ``path`` atomically,
    readable by all (mode 0644): a complete temporary file beside it replaces it, so readers see
    the old file or the new one (a symbolic link there is replaced too, as ``sed -i`` does: the
    file it named is never written). ``-`` (stdout), ``/dev/stdout``, ``/dev/stderr`` and
    ``/dev/fd/N`` are written to their open descriptor, and a device or pipe (a link to one
    included) to itself, as a shell's ``>`` does: a temporary file renamed there replaced the link
    ``/dev/stdout``, or the file the process's output was redirected to.

    :raises FileNotFoundError: when the folder of ``path`` does not exist (it is not created).
    :raises OSError: when the folder cannot be written; the message names ``path``, not the
        temporary file.
    """
    out = Path(path)
    blocks = [data] if isinstance(data, bytes) else data
    fd = _descriptor(out)
    if fd is not None:
        sys.stdout.flush()   # what was printed before comes first
        sys.stderr.flush()
        try:
            with os.fdopen(os.dup(fd), "wb") as f:   # at its offset: a file appended to stays whole
                for block in blocks:
                    f.write(block)
        except BrokenPipeError:
            raise   # its reader stopped (| head): the command ends quietly
        except OSError as exc:   # e.g. a descriptor that is not open: the path named
            raise type(exc)(exc.errno, exc.strerror, str(out)) from None
        return
    if _is_stream(out):
        with open(out, "wb") as f:
            for block in blocks:
                f.write(block)
        return
    tmp = _written_beside(out, blocks)
    try:
        os.replace(tmp, out)
    except OSError as exc:  # the message names the file written, not the temporary one
        tmp.unlink(missing_ok=True)
        if exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, str(out)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_exclusive(path: str | os.PathLike[str], data: bytes, taken: str) -> None:
    """Write ``data`` to ``path`` atomically and only if no file is there, even when another writer
    races for it (an exclusive link of a complete temporary file).

    :param taken: the message of the :class:`FileExistsError` raised when ``path`` exists.
    """
    out = Path(path)
    if out.exists():
        raise FileExistsError(taken)
    tmp = _written_beside(out, data)
    try:
        os.link(tmp, out)  # fails if the target exists
    except FileExistsError:
        raise FileExistsError(taken) from None
    finally:
        tmp.unlink(missing_ok=True)


#: a path that names an open descriptor of this process: stdout, stderr or ``fd/N``
_DESCRIPTOR = re.compile(r"/(?:dev/std(out|err)|dev/fd/(\d+)|proc/self/fd/(\d+))")


def _descriptor(path: Path) -> int | None:
    """The descriptor ``path`` names, itself or through its links (``/dev/stdout`` →
    ``/proc/self/fd/1``; ``-``, the command line's name for stdout), or None."""
    if str(path) == "-":
        return 1
    for _ in range(40):   # the kernel's own bound on a chain of links
        found = _DESCRIPTOR.fullmatch(os.path.normpath(os.path.abspath(path)))
        if found:
            return 1 if found[1] == "out" else 2 if found[1] == "err" else int(found[2] or found[3])
        if not path.is_symlink():
            return None
        path = path.parent / os.readlink(path)
    return None


def writes_through(path: str | os.PathLike[str]) -> bool:
    """Whether :func:`write_atomic` writes ``path`` as a stream (a descriptor, device or pipe), not
    as a file: a command then says what it wrote elsewhere than on stdout."""
    return _descriptor(Path(path)) is not None or _is_stream(Path(path))


def _is_stream(path: Path) -> bool:
    """Whether ``path`` (its link followed) is a character device, pipe or socket."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _written_beside(out: Path, data: bytes | Iterable[bytes]) -> Path:
    """A temporary file in ``out``'s folder holding ``data``, synced, mode 0644; errors name ``out``
    and leave no temporary file."""
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise FileNotFoundError(f"cannot write {out}: output folder {out.parent} {what}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:  # the errno message would name the temporary file
        raise type(exc)(exc.errno, exc.strerror, str(out)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            for block in [data] if isinstance(data, bytes) else data:
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; rankcut's outputs are not secret
    except OSError as exc:  # e.g. a full disk: the message names the file written, not the temporary one
        Path(tmp).unlink(missing_ok=True)
        if exc.errno is None:
            raise
        raise type(exc)(exc.errno, exc.strerror, str(out)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def plain_number(token: str) -> bool:
    """Whether a number is written as trec_eval and LETOR tools read it: ASCII, no ``_`` (Python's
    int and float take ``1_000`` and other scripts' digits, which those tools read otherwise or
    not at all)."""
    return token.isascii() and "_" not in token


def plain_int(token: str, what: str, where: str) -> int:
    """``token`` as an integer written plainly (:func:`plain_number`), else refused naming
    ``where`` and ``what`` (``run.txt, line 3: rank must be an integer, got '1_000'``)."""
    try:
        if not plain_number(token):
            raise ValueError
        return int(token)
    except ValueError:
        raise ValueError(f"{where}: {what} must be an integer, got {token!r}") from None


def json_objects(lines: Iterator[str], label: str) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """``(where, line number, object)`` for each non-blank line of a JSON-lines text, ``where``
    naming ``label`` and the line; a line that is not a JSON object is refused, naming it."""
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{label}, line {lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        yield where, lineno, obj
