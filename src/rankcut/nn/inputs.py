"""The per-document input of the neural truncation models, and its standardisation.

AttnCut's encoding layer (Wu et al., AAAI 2021, §"Encoding Layer") reads one feature vector per
document, ``x_n = [r_n || s_n]``: the retrieval score ``r_n`` and document statistics ``s_n``
(BiCut's length, unique tokens and neighbour similarities; :mod:`rankcut.data.features`).
:class:`InputEncoder` fixes which columns make ``x_n`` and how each is standardised, from the
*training* lists only, and turns any ranked lists into the ``[B, L, F]`` tensor the networks read:

* ``score`` — the raw retrieval score;
* ``score_z`` — the score as a z-score within its own list (optional; "per-query score
  normalisation", :func:`rankcut.data.features.extract_features` makes the same column);
* every column of ``lists.features`` (e.g. Robust04's ``tfidf_sim`` and ``doc2vec_sim``), in
  the lists' order. Columns named ``score`` or ``score_z`` there are the same quantities as the
  first two and are not repeated.

Every column is then standardised, ``(value - mean) / std``, with mean and standard deviation
over the listed documents of the training lists (std 1 for a constant column), so that a
checkpoint carries the exact transformation it was trained with (:meth:`InputEncoder.to_dict`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from rankcut.data.features import _score_features
from rankcut.data.lists import RankedLists

__all__ = ["SCORE_COLUMNS", "SHIFT", "InputEncoder"]

#: how many training standard deviations a column's mean over the lists may move before the
#: encoder warns that the inputs are not like the training lists' (:meth:`InputEncoder.transform`)
SHIFT = 3.0

#: the columns computed from the scores themselves, not read from ``lists.features``
SCORE_COLUMNS: tuple[str, ...] = ("score", "score_z")


def _raw_columns(lists: RankedLists, columns: Sequence[str]) -> NDArray[np.float64]:
    """``[Q, L, len(columns)]`` unstandardised values (0 at padding); ValueError naming the first
    column the lists do not carry."""
    if not isinstance(lists, RankedLists):
        raise ValueError(f"lists must be a RankedLists, got {type(lists).__name__}")
    have = list(lists.feature_names)
    absent = [c for c in columns if c not in SCORE_COLUMNS and c not in have]
    if absent:
        carried = ", ".join(have) if have else "none"
        raise ValueError(
            f"the model reads feature column(s) {absent}, which these lists lack (they carry: "
            f"{carried}); attach the same feature columns the model was trained with (the command line's "
            "--features, and load_precomputed_features without columns=, read every column of a table)"
        )
    score = _score_features(lists) if any(c in SCORE_COLUMNS for c in columns) else None
    out = np.zeros((len(lists), lists.max_len, len(columns)))
    for j, c in enumerate(columns):
        if c in SCORE_COLUMNS:
            assert score is not None
            out[:, :, j] = score[:, :, SCORE_COLUMNS.index(c)]
        else:
            assert lists.features is not None
            out[:, :, j] = lists.features[:, :, have.index(c)]
    bad = ~np.isfinite(out) & lists.mask[..., None]
    if bad.any():
        q, n, j = (int(v) for v in np.argwhere(bad)[0])
        value = float(out[q, n, j])
        raise ValueError(f"feature column {columns[j]!r} is not a finite number ({value!r}) for query "
                         f"{lists.qids[q]!r}, document {lists.doc_ids[q, n]!r} (rank {n + 1})")
    return np.where(lists.mask[..., None], out, 0.0)


class InputEncoder:
    """Which feature columns the network reads and how each is standardised (module docstring).

    Build it with :meth:`fit` on training lists; :meth:`transform` then encodes any lists that
    carry the same feature columns.

    :param columns: the column names, in input order.
    :param mean: per column, the mean over the listed training documents.
    :param std: per column, the standard deviation there (> 0; 1 for a constant column).
    """

    def __init__(self, columns: Sequence[str], mean: Sequence[float] | NDArray[np.float64],
                 std: Sequence[float] | NDArray[np.float64]) -> None:
        columns = tuple(columns)
        if not columns or any(not isinstance(c, str) or not c for c in columns):
            raise ValueError(f"columns must be non-empty names, got {columns!r}")
        if len(set(columns)) != len(columns):
            raise ValueError(f"columns must be distinct, got {columns!r}")
        mean_a = np.asarray(mean, dtype=float)
        std_a = np.asarray(std, dtype=float)
        for name, arr in (("mean", mean_a), ("std", std_a)):
            if arr.shape != (len(columns),) or not np.isfinite(arr).all():
                raise ValueError(f"{name} must hold one finite number per column ({len(columns)}), "
                                 f"got {list(np.atleast_1d(arr))}")
        if np.any(std_a <= 0):
            raise ValueError(f"std must be > 0 for every column, got {std_a.tolist()}")
        self.columns = columns
        self.mean = mean_a
        self.std = std_a

    @classmethod
    def fit(cls, lists: RankedLists, *, score_z: bool = True) -> InputEncoder:
        """The encoder of ``lists``: columns ``score``, ``score_z`` (if ``score_z``) and every
        feature column of ``lists``, with mean and std over the listed documents.

        :param lists: the training lists (never the test lists: the statistics become part of
            the model).
        :param score_z: whether to add the per-list z-score of the score.
        """
        if not isinstance(score_z, bool | np.bool_):
            raise ValueError(f"score_z must be True or False, got {score_z!r}")
        if not isinstance(lists, RankedLists):
            raise ValueError(f"lists must be a RankedLists, got {type(lists).__name__}")
        columns = ["score", *(["score_z"] if score_z else [])]
        columns += [c for c in lists.feature_names if c not in SCORE_COLUMNS]
        listed = _raw_columns(lists, columns)[lists.mask]  # [n_listed, F]
        mean = listed.mean(axis=0)
        std = listed.std(axis=0)
        return cls(columns, mean, np.where(std > 0, std, 1.0))

    @property
    def n_features(self) -> int:
        """``F``, the width of the encoded input."""
        return len(self.columns)

    def transform(self, lists: RankedLists) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode ``lists`` for the networks.

        :param lists: ranked lists carrying every feature column in :attr:`columns` (besides
            ``score`` and ``score_z``, which come from the scores).
        :returns: ``x`` float32 ``[n_queries, max_len, F]`` (standardised, 0 at padding) and
            ``mask`` bool ``[n_queries, max_len]`` (True at listed documents, listed first).
        :raises ValueError: naming the feature columns the lists lack, or a column with a
            non-finite value.
        """
        raw = _raw_columns(lists, self.columns)
        x = np.where(lists.mask[..., None], (raw - self.mean) / self.std, 0.0)
        self._warn_shift(x[lists.mask], raw[lists.mask])
        return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(lists.mask.copy())

    def _warn_shift(self, z: NDArray[np.float64], raw: NDArray[np.float64]) -> None:
        """Warn when the lists' mean of a column is more than :data:`SHIFT` training standard
        deviations from its training mean: a model trained on one retriever's scores (BM25's, mean
        10.3) and given another's (DRMM's, −0.2 to 1.0) cuts at 243 where it cut at 27, without a
        word (a walk). The inputs are then not what the model learned from."""
        if not z.size:
            return
        shift = z.mean(axis=0)
        worst = int(np.argmax(np.abs(shift)))
        if abs(shift[worst]) > SHIFT:
            name = self.columns[worst]
            warnings.warn(f"the lists' {name} averages {raw[:, worst].mean():.4g}, {abs(shift[worst]):.1f} "
                          f"training standard deviations from the model's training mean "
                          f"({self.mean[worst]:.4g} ± {self.std[worst]:.4g}): are these another retriever's "
                          "scores, or another scale? The model learned its cuts from inputs like the "
                          "training lists'; its cuts here may mean nothing", UserWarning, stacklevel=3)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for a checkpoint's ``config.json``)."""
        return {"columns": list(self.columns), "mean": self.mean.tolist(), "std": self.std.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InputEncoder:
        """Rebuild from :meth:`to_dict`; ValueError naming what is missing or malformed."""
        if not isinstance(data, Mapping):
            raise ValueError(f"input encoder must be an object, got {type(data).__name__}")
        absent = [k for k in ("columns", "mean", "std") if k not in data]
        if absent:
            raise ValueError(f"input encoder lacks {absent}")
        for k in ("mean", "std"):
            values = data[k]
            if not isinstance(values, list) or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                    for v in values):
                raise ValueError(f"input encoder {k} must be a list of finite numbers, got {values!r}")
        if not isinstance(data["columns"], list):
            raise ValueError(f"input encoder columns must be a list of names, got {data['columns']!r}")
        return cls(data["columns"], data["mean"], data["std"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InputEncoder):
            return NotImplemented
        return (self.columns == other.columns and np.array_equal(self.mean, other.mean)
                and np.array_equal(self.std, other.std))

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    def __repr__(self) -> str:
        return f"InputEncoder(columns={list(self.columns)})"
