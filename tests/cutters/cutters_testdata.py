"""Helpers for the cutter tests (imported by them): small hand-made lists and the Robust04 runs."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from rankcut.data import trec
from rankcut.data.lists import Posting, RankedLists

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"
ROBUST04 = DATASETS / "robust04"


def lists_from_labels(labels: list[list[int]], scores: list[list[float]] | None = None) -> RankedLists:
    """Lists ``q0, q1, …`` of documents ``d0, d1, …`` with the given labels (relevance 0/1).

    Scores default to strictly decreasing ``len, len − 1, …, 1``.
    """
    run, qrels = {}, {}
    for i, lab in enumerate(labels):
        sc = scores[i] if scores is not None else [float(len(lab) - j) for j in range(len(lab))]
        run[f"q{i}"] = [Posting(f"d{j}", float(sc[j]), j + 1) for j in range(len(lab))]
        qrels[f"q{i}"] = {f"d{j}": int(r) for j, r in enumerate(lab)}
    return RankedLists.from_postings(run, qrels)


def mixture_lists(
    rng: np.random.Generator, n_queries: int, n_docs: int, *, pi: float, mu: float, sigma: float,
    rate: float, origin: float = 0.0,
) -> RankedLists:
    """Lists whose scores are drawn from ``pi·N(mu, sigma²) + (1 − pi)·Exp(rate)``, shifted by
    ``origin``; the normal draws are the relevant documents."""
    rel = rng.random((n_queries, n_docs)) < pi
    s = origin + np.where(rel, rng.normal(mu, sigma, rel.shape), rng.exponential(1.0 / rate, rel.shape))
    return lists_from_labels(rel.astype(int).tolist(), s.tolist())


def load_robust04(model: str, split: str) -> RankedLists:
    """Robust04 top-300 lists (test skipped when the datasets are absent); query 672, which has
    no relevant document, is kept (it scores 0), as in the dataset's known figures."""
    if not ROBUST04.is_dir():
        pytest.skip(f"real datasets not found at {ROBUST04}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", trec.MissingQueriesWarning)
        return trec.load_trec(
            ROBUST04 / "runs" / f"{model}.{split}.run", ROBUST04 / "qrels.robust04.positives.txt",
            missing="keep",
        )
