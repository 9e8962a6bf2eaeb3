"""data/features.py's tf-idf, now scikit-learn's, against the formula it replaced (the AttnCut tables')."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.data.features import _tfidf


def _formula(token_ids: list[np.ndarray]) -> np.ndarray:
    """Raw counts times ``ln((1 + n)/(1 + df)) + 1``, columns in term-id order (the replaced code)."""
    n = len(token_ids)
    terms = sorted({int(t) for ids in token_ids for t in ids})
    df = np.array([sum(t in set(ids.tolist()) for ids in token_ids) for t in terms])
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    counts = np.array([[int((ids == t).sum()) for t in terms] for ids in token_ids]).reshape(n, len(terms))
    return counts * idf[None, :]


def _sorted_columns(x: sp.csr_matrix) -> np.ndarray:
    """The dense matrix with columns sorted, so that two vocabularies' orders compare equal."""
    d = np.asarray(x.todense())
    return d[:, np.lexsort(d[::-1])] if d.size else d


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=7), min_size=1, max_size=6))
def test_tfidf_equals_the_formula(docs: list[list[int]]) -> None:
    ids = [np.array(d, dtype=np.int64) for d in docs]
    got, want = _sorted_columns(_tfidf(ids)), _formula(ids)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want[:, np.lexsort(want[::-1])] if want.size else want, rtol=1e-12)


def test_a_small_case_by_hand() -> None:
    x = _tfidf([np.array([0, 0, 1]), np.array([1])])
    # term 0: df 1, idf ln(3/2)+1; term 1: df 2, idf 1
    np.testing.assert_allclose(np.asarray(x.todense()), [[2 * (np.log(1.5) + 1), 1.0], [0.0, 1.0]])
