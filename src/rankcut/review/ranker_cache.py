"""The review folder's ranker cache (``ranker-cache/``): what a replay of the CAL ranker would
recompute at every ``next``, ``status`` and ``label`` call, kept so that a call on a large
collection does not tokenise every record and refit every batch again (14,717 records, 2,000 read:
``status`` 12.4 s without it, 3.7 s with it; docs/review.md).

* ``features.npz`` — the tf-idf features of the frozen texts (:func:`~rankcut.review.cal.query_features`),
  under a key of the texts' hash, the records' order, the configuration and the library versions;
  a file under another key is recomputed and replaced.
* ``fits.jsonl`` — one line per fit of the ranker, ``{"key", "batch"}``: the batch it chose, under
  the hash of everything that decides it (:mod:`rankcut.review.cal`); lines are only appended (the
  last for a key counts), and a line that does not read (a write cut short) is skipped.

**Who reads it.** The replay of ``next``, ``status``, ``label`` and the labelling page, which
already take the policy's recorded moves from ``review.jsonl``. When the cached replay does not
give the steps the labels answer (a damaged cache), it is replayed once more without the cache,
whose recomputed fits are appended (so a damaged cache mends itself). ``certify`` never reads it:
it recomputes the features and every fit, so the certificate is always the frozen ranker's own;
steps that a damaged cache chose, and that the labels follow, are refused there (the labels are
not the review's steps). Deleting the folder costs only time.

**Who writes it.** Any call that computes a feature matrix or a fit the file does not hold, certify
included (its fits are the recomputed ones), when the review folder can be written; a read-only
folder (a copy being certified) gets no cache, and nothing is written there.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankcut.audit import labels as labels_mod
from rankcut.data.io import write_atomic
from rankcut.review import cal
from rankcut.review.cal import CALConfig

__all__ = ["RANKER_CACHE", "FitsFile", "cache_folder", "features"]

RANKER_CACHE = "ranker-cache"
FEATURES_FILE = "features.npz"
FITS_FILE = "fits.jsonl"


def cache_folder(review: Path) -> Path | None:
    """The review's cache folder, made if missing; None when the review folder cannot be written."""
    out = review / RANKER_CACHE
    if not labels_mod.writable(out / FITS_FILE):
        if out.is_dir() or not labels_mod.writable(out):
            return None
        try:
            out.mkdir()
        except OSError:
            return None
    return out


def _features_key(texts_sha: str, items: Sequence[Any], config: CALConfig) -> str:
    spec = [texts_sha, [list(item) for item in items], config.ngrams, config.query, cal.library_versions()]
    return hashlib.sha256(json.dumps(spec).encode()).hexdigest()


def _csr(arrays: Any, name: str) -> Any:
    import scipy.sparse as sp

    return sp.csr_matrix((arrays[f"{name}_data"], arrays[f"{name}_indices"], arrays[f"{name}_indptr"]),
                         shape=tuple(arrays[f"{name}_shape"]))


def features(review: Path, texts_sha: str, items: Sequence[Any], config: CALConfig,
             compute: Callable[[], tuple[Any, Any]]) -> tuple[Any, Any]:
    """The features of the review's texts and its seed query's row: from ``features.npz`` when it
    is under this key, else ``compute()`` (:func:`~rankcut.review.cal.query_features`), written
    there when the folder can be."""
    key = _features_key(texts_sha, items, config)
    path = review / RANKER_CACHE / FEATURES_FILE
    try:
        with np.load(path, allow_pickle=False) as held:
            if str(held["key"]) == key and int(held["x_shape"][0]) == len(items):
                return _csr(held, "x"), (_csr(held, "q") if "q_data" in held else None)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):   # missing, cut short: recomputed
        pass
    matrix, query = compute()
    folder = cache_folder(review)
    if folder is not None:
        arrays: dict[str, Any] = {"key": np.array(key)}
        for name, m in (("x", matrix), ("q", query)):
            if m is not None:
                arrays.update({f"{name}_data": m.data, f"{name}_indices": m.indices,
                               f"{name}_indptr": m.indptr, f"{name}_shape": np.array(m.shape)})
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        try:
            write_atomic(folder / FEATURES_FILE, buf.getvalue())
        except OSError:
            pass
    return matrix, query


class FitsFile(dict[str, list[int]]):
    """The fits of ``fits.jsonl``: a mapping from a fit's key to its batch, for
    :class:`~rankcut.review.cal.CALScreener`'s ``fits``; of lines with the same key, the last.
    A fit put in is appended to the file (when the folder can be written, and unless the file's
    last line for its key holds the same batch).

    :param trusted: take the file's fits (``next``, ``status``, ``label``); False (certify, or a
        replay whose cached fits gave another review than the labels): start empty, so that every
        fit is recomputed, and append each recomputed fit the file does not hold, which mends it.
    """

    def __init__(self, review: Path, *, trusted: bool) -> None:
        super().__init__()
        self._review = review
        self._held: dict[str, list[int]] = {}
        try:
            text = (review / RANKER_CACHE / FITS_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        self._torn = bool(text) and not text.endswith("\n")   # a write cut short: end its line first
        for line in text.splitlines():
            try:
                entry = json.loads(line)
                self._held[str(entry["key"])] = [int(d) for d in entry["batch"]]
            except (ValueError, TypeError, KeyError):
                continue
        if trusted:
            self.update(self._held)

    def __setitem__(self, key: str, batch: list[int]) -> None:
        super().__setitem__(key, batch)
        if self._held.get(key) == batch:
            return
        folder = cache_folder(self._review)
        if folder is None:
            return
        line = "\n" * self._torn + json.dumps({"key": key, "batch": batch}, separators=(",", ":")) + "\n"
        try:   # one write of one line, appended: a concurrent writer's lines stay whole
            fd = os.open(folder / FITS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
        except OSError:
            return
        self._held[key], self._torn = batch, False
