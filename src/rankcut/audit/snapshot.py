"""The audit folder's snapshot of its pools (``snapshot.npz``), so that no step after freeze reads the run.

Freeze parses the run, the cut (or the family) and an id-list corpus once, and writes what every
later step needs of them as a few flat numpy arrays — the query ids and list depths, every listed
document query after query (UTF-8 bytes and their sizes: an Arrow-style string column), the cuts
of every member ``[Q, M]`` and, with an id-list corpus, its ids and where the unretrieved
documents fall (:meth:`~rankcut.audit.pools.Pools.columns`). The manifest records the snapshot's
sha256, so it is part of the frozen audit rule (Assumption 1, §2.3 of the audit paper): a later
step hashes it in full and refuses it when it is not the one frozen (edited, or half-written).

It is a plain ``.npz`` (numpy, no optional dependency), read with ``allow_pickle=False``. The
pools it gives are those of the input files (:func:`~rankcut.audit.folder.check_pools` still
compares them with the manifest's sizes), while the inputs are only checked, not read
(:func:`~rankcut.audit.manifest.locate_input`).
"""

from __future__ import annotations

import hashlib
import io
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankcut.audit.manifest import candidates
from rankcut.audit.options import start_again
from rankcut.audit.pools import Corpus, IdColumn, Pools
from rankcut.data.io import write_exclusive

__all__ = ["SNAPSHOT_FILE", "load_snapshot", "snapshot_bytes", "snapshot_entry", "write_snapshot"]

SNAPSHOT_FILE = "snapshot.npz"


def _sizes(column: IdColumn) -> NDArray[np.unsignedinteger[Any]]:
    """Each id's byte size, in the narrowest unsigned type that holds them (1 byte for most ids)."""
    sizes = np.diff(column.offsets)
    top = int(sizes.max()) if sizes.size else 0
    kind = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if top <= np.iinfo(t).max)
    return sizes.astype(kind)


def _column(arrays: dict[str, NDArray[Any]], name: str) -> IdColumn:
    """The column ``name``, taken out of ``arrays`` (so that its buffer is freed once copied)."""
    data = arrays.pop(name).tobytes()
    sizes = arrays.pop(f"{name}_sizes")
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, dtype=np.int64, out=offsets[1:])
    return IdColumn(data, offsets)


def snapshot_bytes(members: Sequence[Pools]) -> bytes:
    """The snapshot of a family's pools (a single cut is a family of one), as ``.npz`` bytes."""
    base = members[0]
    qids, lengths, docs, gaps = base.columns()
    arrays: dict[str, NDArray[Any]] = {}
    for name, column in (("qids", IdColumn.encode(qids)), ("docs", docs)):
        arrays[name] = np.frombuffer(column.data, dtype=np.uint8)
        arrays[f"{name}_sizes"] = _sizes(column)
    arrays["lengths"] = lengths
    arrays["cuts"] = np.stack([p.cuts for p in members], axis=1)
    corpus = base.corpus
    if corpus is not None and corpus.doc_ids is not None:
        assert gaps is not None
        ids = IdColumn.encode(corpus.doc_ids)
        arrays["corpus"] = np.frombuffer(ids.data, dtype=np.uint8)
        arrays["corpus_sizes"] = _sizes(ids)
        arrays["gaps"] = gaps
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)
    return buf.getvalue()


def snapshot_entry(folder: Path, data: bytes) -> dict[str, Any]:
    """The manifest's record of the snapshot ``data`` of the audit folder ``folder``."""
    return {"path": SNAPSHOT_FILE, "given": str(folder.resolve() / SNAPSHOT_FILE),
            "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def write_snapshot(folder: Path, data: bytes) -> None:
    """Write the snapshot into ``folder``, atomically and only where none is (a freeze running at
    the same moment into the same folder fails here, before either writes its manifest)."""
    path = folder / SNAPSHOT_FILE
    write_exclusive(path, data, f"{folder} already holds {SNAPSHOT_FILE}, from another freeze (running, or "
                    f"stopped before it wrote its manifest): freeze into a new folder")


def _read(path: Path, frozen: str) -> dict[str, NDArray[Any]] | None:
    """The arrays of the snapshot at ``path`` if its bytes hash to ``frozen`` (one open file: what is
    read is what was hashed), else None."""
    with open(path, "rb") as f:
        h = hashlib.sha256()
        while chunk := f.read(1 << 20):
            h.update(chunk)
        if h.hexdigest() != frozen:
            return None
        f.seek(0)
        with np.load(f, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}


def load_snapshot(folder: Path, entry: Mapping[str, Any] | None, names: Sequence[str],
                  corpus_spec: Mapping[str, Any] | None, inputs: Mapping[str, Any]) -> list[Pools]:
    """The pools of every member, from the snapshot the manifest of ``folder`` records (``entry``):
    in the folder, else where it was written at freeze — the first whose sha256 is the frozen one.

    :param names: the members' names (one for a single cut).
    :param corpus_spec: the manifest's ``corpus``.
    :param inputs: the manifest's inputs, each path the file found (an id-list corpus names its file).
    :raises ValueError: naming the file when it is missing, not the frozen snapshot (changed or
        half-written), or does not hold pools of ``names``.
    """
    if entry is None:
        raise ValueError(f"{folder / 'manifest.json'} records no snapshot of the pools: it was not written "
                         f"by this rankcut's freeze — {start_again()}")
    frozen = str(entry["sha256"])
    places = candidates(folder, entry)
    found = [p for p in places if p.is_file()]
    arrays = None
    for p in found:
        arrays = _read(p, frozen)
        if arrays is not None:
            if p != places[0] and places[0] in found:   # a copied folder whose own copy was edited
                warnings.warn(f"{places[0]} changed after the audit was frozen, so it is not read: the "
                              f"frozen snapshot at {p} is read instead (restore the first to silence this)",
                              stacklevel=2)
            break
    if arrays is None:
        if not found:
            raise ValueError(f"{places[0]} is missing (written by freeze: the pools of this audit, sha256 "
                             f"{frozen[:12]}); restore it from a copy of the audit folder, or freeze a new "
                             "audit")
        raise ValueError(f"{found[0]} is not the snapshot frozen with this audit (its sha256 is not "
                         f"{frozen[:12]}): it was changed or only partly written — restore it from a copy of "
                         f"the audit folder, or {start_again()}")
    corpus: Corpus | None = None
    if corpus_spec is not None and corpus_spec["kind"] == "size":
        corpus = Corpus.size(int(corpus_spec["documents"]))
    elif corpus_spec is not None:
        ids = _column(arrays, "corpus")
        corpus = Corpus(len(ids), tuple(ids[:].tolist()), str(inputs["corpus_ids"]["path"]))
    cuts = arrays["cuts"]
    if cuts.ndim != 2 or cuts.shape[1] != len(names):
        raise ValueError(f"{found[0]} holds the cuts of {cuts.shape[-1]} members, but the manifest names "
                         f"{len(names)}: it is not this audit's snapshot — {start_again()}")
    qids = tuple(_column(arrays, "qids")[:].tolist())
    base = Pools.from_columns(qids, arrays["lengths"], _column(arrays, "docs"), cuts[:, 0], corpus,
                              arrays.get("gaps"))
    return [base, *(base.with_cuts(cuts[:, m]) for m in range(1, cuts.shape[1]))]
