"""The audit manifest: what is certified and how, frozen before any label is seen.

Assumption 1 of the audit paper (§2.3) is the validity condition of every certificate: the
candidate generator (here a cut run, or a nested family of cut runs) and the audit rule (design,
pools, ``δ`` and its allocation, target, sample sizes' source, random seed) are fixed before the
certification labels are examined. ``freeze`` makes that fixing an artefact:

* ``manifest.json`` holds the whole audit rule as plain JSON, together with the sha256 of every
  input file (the full run, the cut run or family, a corpus id list, texts), so that a later step
  can tell whether any of them changed, and the sha256 of the folder's snapshot of the pools
  (:mod:`rankcut.audit.snapshot`), which the later steps read instead of the inputs;
* its **content hash** — the sha256 of the canonical JSON (sorted keys, no spaces, UTF-8) of
  everything but the hash itself — is the audit's id. The sample records the id it was drawn
  from, the label store records it, and every later step recomputes it, so an edited manifest is
  refused rather than silently certified.

A later step checks an input by its file status first (:func:`file_status`: device, inode, size,
modification and status-change times, recorded at freeze when they can vouch for the content) and
hashes it in full whenever the status differs or was not recorded (:func:`locate_input`), as
``git`` and ``make`` trust a file's status.

Files are written atomically (temporary file in the same folder, ``fsync``, then
``os.replace``), and the manifest itself with an exclusive link, so that a second freeze into the
same folder fails even when two run at once, and a crash never leaves half a file behind.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rankcut.audit.options import spelled, start_again
from rankcut.data.io import write_atomic, write_exclusive

__all__ = [
    "MANIFEST_FILE",
    "SCHEMA",
    "SCHEMA_VERSION",
    "Manifest",
    "candidates",
    "canonical_json",
    "check_file",
    "check_inputs",
    "check_unchanged",
    "content_hash",
    "describe_file",
    "file_status",
    "json_text",
    "load_manifest",
    "locate_input",
    "now",
    "read_json",
    "resolve_inputs",
    "sha256_file",
    "write_json_atomic",
    "write_manifest",
    "write_text_atomic",
]

SCHEMA = "rankcut.audit_manifest"
SCHEMA_VERSION = 1
MANIFEST_FILE = "manifest.json"
_ID_KEY = "audit_id"
_CHUNK = 1 << 20
# A file's status vouches for its content only when its times are older, by more than the coarsest
# timestamp a file system keeps (FAT: 2 s), than the moment the hash began: a change made later
# then moves them, even when it keeps the size.
SETTLED_NS = 2_000_000_000


def now() -> str:
    """The current time as an ISO-8601 UTC string with microseconds (sortable as text)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def canonical_json(obj: Any) -> bytes:
    """The one byte string that represents ``obj``: sorted keys, no spaces, UTF-8.

    :raises ValueError: for values JSON cannot hold exactly (NaN, infinities, other types).
    """
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the manifest must be plain JSON: {exc}") from None


def content_hash(obj: Mapping[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of ``obj`` without its ``audit_id`` key."""
    body = {k: v for k, v in obj.items() if k != _ID_KEY}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """sha256 (hex) of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def check_file(path: str | os.PathLike[str], option: str) -> Path:
    """``path``, refused naming ``option`` (``--from``) when it is a folder or does not exist."""
    p = Path(path)
    if not p.is_file():
        what = "is a folder" if p.is_dir() else "does not exist"
        raise FileNotFoundError(f"{option} {p}: the file {what}")
    return p


def describe_file(path: str | os.PathLike[str], option: str, folder: str | os.PathLike[str]
                  ) -> dict[str, Any]:
    """``{"path", "given", "sha256", "bytes", "option", "status"}`` of an input file, for the
    manifest of the audit folder ``folder`` (which need not exist yet).

    ``path`` is relative to ``folder`` wherever a relative path exists (absolute otherwise, e.g. on
    another drive), so that the folder can be moved or shipped together with its inputs; ``given``
    is the absolute path of the file as given, for a folder moved without them. The sha256 is the
    file's identity (:func:`locate_input`). ``status`` is :func:`file_status` when it can vouch
    for the bytes hashed (unchanged while they were read, and older than :data:`SETTLED_NS` when
    the hash began), None otherwise (a file written just before the freeze: always hashed).

    :param option: how the user named the file (``"--run"``), used in later error messages.
    :raises FileNotFoundError: naming ``option`` when the file does not exist.
    """
    p = check_file(path, option)
    given = p.resolve()
    try:
        recorded = os.path.relpath(given, Path(folder).resolve())
    except ValueError:  # no relative path between them (Windows drives)
        recorded = str(given)
    began = time.time_ns()
    before = file_status(p)
    digest = sha256_file(p)
    after = file_status(p)
    settled = before == after and max(after["mtime_ns"], after["ctime_ns"]) < began - SETTLED_NS
    return {"path": recorded, "given": str(given), "sha256": digest, "bytes": after["size"],
            "option": option, "status": after if settled else None}


def file_status(path: str | os.PathLike[str]) -> dict[str, int]:
    """What ``os.stat`` says of a file that any change to it moves: device, inode, size, and the
    modification and status-change times (the latter no user can set back), in nanoseconds."""
    st = os.stat(path)
    return {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "ctime_ns": st.st_ctime_ns}


def candidates(folder: Path, entry: Mapping[str, Any]) -> list[Path]:
    """Where an input (or the snapshot) may be: its path relative to the audit folder, then as given
    at freeze."""
    out = [Path(os.path.normpath(folder.resolve() / str(entry["path"]))), Path(str(entry["given"]))]
    return list(dict.fromkeys(out))


def locate_input(folder: str | os.PathLike[str], entry: Mapping[str, Any]) -> Path:
    """The file an input entry of the manifest names: its recorded path relative to the audit
    folder, then its path as given at freeze — the first whose status is the frozen one
    (:func:`file_status`: the same file, untouched since freeze) or, hashed in full, that holds the
    frozen sha256. When the file beside the folder changed and the one as given is read instead (a
    copied folder whose own copy was edited), a warning names both.

    :raises ValueError: naming the option, the file and its sha256 when it is missing or changed.
    """
    recorded, frozen = str(entry["path"]), str(entry["sha256"])
    option = spelled(entry.get("option", "input"))   # as the command running names that input
    places = candidates(Path(folder), entry)
    found = [c for c in places if c.is_file()]
    status = entry.get("status")
    for c in found:
        # the very file hashed and untouched since, or one with the same bytes
        if (status is not None and file_status(c) == status) or sha256_file(c) == frozen:
            if c != places[0] and places[0] in found:   # e.g. a copied folder whose own copy was edited
                warnings.warn(f"{option} {places[0]} changed after the audit was frozen, so it is not read: "
                              f"the frozen file at {c} is read instead (restore the first to silence this)",
                              stacklevel=2)
            return c
    if not found:
        looked = " or ".join(str(c) for c in places)
        raise ValueError(f"{option} {recorded} (sha256 {frozen[:12]}) is missing: no file at {looked}; put "
                         "it back where it was, or beside the audit folder as it was frozen (the folder and "
                         "its inputs move together), to continue this audit")
    raise ValueError(f"{option} {found[0]} changed after the audit was frozen (sha256 "
                     f"{sha256_file(found[0])[:12]}, frozen {frozen[:12]}); the certificate would not be "
                     f"about what was frozen — restore the file or {start_again()}")


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`rankcut.data.io.write_atomic`)."""
    write_atomic(path, text.encode("utf-8"))


def json_text(obj: Any) -> str:
    """``obj`` as the indented JSON text of an audit file.

    :raises ValueError: for a value JSON cannot hold (NaN, infinities).
    """
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically (see :func:`write_text_atomic`)."""
    write_text_atomic(path, json_text(obj))


def read_json(path: Path, what: str) -> Any:
    """Read a JSON file of the audit folder; errors name the file and say which step writes it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist ({what})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None


@dataclass(frozen=True)
class Manifest:
    """A frozen audit manifest.

    :param content: the manifest as plain JSON data (everything but the id).
    :param audit_id: the content hash of ``content`` (see :func:`content_hash`).
    :param folder: the audit folder it was read from or written to.
    """

    content: Mapping[str, Any]
    audit_id: str
    folder: Path

    def __getitem__(self, key: str) -> Any:
        return self.content[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.content.get(key, default)

    @property
    def short_id(self) -> str:
        """The first 12 hex digits of the id, for messages."""
        return self.audit_id[:12]

    def to_dict(self) -> dict[str, Any]:
        return {**self.content, _ID_KEY: self.audit_id}


def _check_plain(obj: Any, where: str = "manifest") -> None:
    """Refuse floats JSON would not round-trip (NaN, ±inf) with the key that holds them."""
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ValueError(f"{where} is {obj!r}; the manifest holds finite numbers only")
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            if not isinstance(k, str):
                raise ValueError(f"{where} has a non-string key {k!r}")
            _check_plain(v, f"{where}.{k}")
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            _check_plain(v, f"{where}[{i}]")


def write_manifest(folder: str | os.PathLike[str], content: Mapping[str, Any]) -> Manifest:
    """Freeze ``content`` into ``folder/manifest.json`` and return it with its id.

    ``content`` must carry ``schema``/``schema_version`` (:data:`SCHEMA`, :data:`SCHEMA_VERSION`).
    The file is created exclusively: an existing manifest is never replaced, even by a freeze
    running at the same moment.

    :raises FileExistsError: when ``folder`` already holds a manifest (a frozen audit).
    :raises FileNotFoundError: when ``folder`` does not exist.
    """
    out = Path(folder)
    if content.get("schema") != SCHEMA or content.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"content must carry schema {SCHEMA!r} version {SCHEMA_VERSION}")
    _check_plain(dict(content))
    body = json.loads(canonical_json(dict(content)))  # a plain, detached copy
    body.pop(_ID_KEY, None)
    audit_id = content_hash(body)
    target = out / MANIFEST_FILE
    text = json.dumps({**body, _ID_KEY: audit_id}, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    write_exclusive(target, text.encode("utf-8"), f"{out} already holds a frozen audit ({target}); an "
                    "audit is frozen once — freeze into a new folder")
    return Manifest(body, audit_id, out)


def load_manifest(folder: str | os.PathLike[str]) -> Manifest:
    """Read ``folder/manifest.json`` and check that its content still hashes to its id.

    :raises FileNotFoundError: when the folder holds no manifest (``rankcut audit freeze`` first).
    :raises ValueError: for another schema, or a manifest edited after freeze.
    """
    out = Path(folder)
    if out.is_file():
        raise FileNotFoundError(f"{out} is a file, not an audit folder: give the folder rankcut audit freeze "
                                "wrote (--out)")
    if not out.is_dir():
        raise FileNotFoundError(f"audit folder {out} does not exist (create it with rankcut audit freeze)")
    path = out / MANIFEST_FILE
    data = read_json(path, "no frozen audit here: run freeze first")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"{path} is not a rankcut audit manifest (schema {SCHEMA!r} expected)")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: manifest schema version {data.get('schema_version')!r} is not "
                         f"supported (expected {SCHEMA_VERSION})")
    recorded = data.get(_ID_KEY)
    actual = content_hash(data)
    if recorded != actual:
        raise ValueError(
            f"{path} changed after freeze: its content hashes to {actual[:12]}, not to the audit id "
            f"{str(recorded)[:12]} it was frozen with; an audit rule cannot change once frozen "
            f"(Assumption 1) — {start_again()} instead"
        )
    body = {k: v for k, v in data.items() if k != _ID_KEY}
    return Manifest(body, actual, out)


def check_unchanged(entry: Mapping[str, Any]) -> Path:
    """The file an input entry was just made from (:func:`describe_file`), checked to be the one it
    hashed — by its status, or hashed again when the status could not vouch — so that what freeze
    reads of it is what the manifest records.

    :raises ValueError: naming the option and file when it changed while the audit was frozen.
    """
    p = Path(str(entry["given"]))
    status = entry.get("status")
    if (file_status(p) != status) if status is not None else (sha256_file(p) != entry["sha256"]):
        raise ValueError(f"{entry.get('option', 'input')} {p} changed while the audit was being frozen: "
                         "freeze again once it is written")
    return p


def check_inputs(manifest: Manifest) -> dict[str, Any]:
    """Find every input file named in the manifest (:func:`locate_input`) and check that it still
    has its frozen sha256.

    :returns: the manifest's ``inputs`` with each ``path`` replaced by the file found.
    :raises ValueError: naming the option and file that changed or is missing.
    """
    return dict(resolve_inputs(manifest.get("inputs", {}), lambda e: locate_input(manifest.folder, e)))


def resolve_inputs(inputs: Any, where: Callable[[Mapping[str, Any]], Path]) -> Any:
    """``inputs`` (the manifest's, nested) with the ``path`` of every file entry replaced by
    ``where(entry)``."""
    if isinstance(inputs, Mapping):
        if "sha256" in inputs and "path" in inputs:
            return {**inputs, "path": str(where(inputs))}
        return {k: resolve_inputs(v, where) for k, v in inputs.items()}
    if isinstance(inputs, list):
        return [resolve_inputs(v, where) for v in inputs]
    return inputs
