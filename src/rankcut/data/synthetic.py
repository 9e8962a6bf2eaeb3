"""Deterministic synthetic ranked lists with judgements, for the offline demo and for tests.

Scores follow the classical score-distribution picture that Arampatzis, Kamps & Robertson (SIGIR
2009) fit: relevant documents score like a normal, non-relevant ones like a shifted exponential.
Each query gets its own prevalence and separation, so the best cut differs between queries, and
some relevant documents are judged but not retrieved (recall over all judged < recall in list).
Scores are rounded to 3 decimals, so lists carry ties, as real runs do.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from rankcut.data.lists import Posting

__all__ = ["synthetic_run", "write_synthetic"]


def synthetic_run(
    n_queries: int = 60, depth: int = 100, *, seed: int = 0
) -> tuple[dict[str, list[Posting]], dict[str, dict[str, int]]]:
    """Return ``(run, qrels)``: ``{qid: [Posting]}`` in rank order and ``{qid: {doc: rel}}``.

    :param n_queries: number of queries (ids ``"q001"``, ``"q002"``, ...).
    :param depth: documents retrieved per query.
    :param seed: seed of ``numpy.random.default_rng``; the same seed gives the same files.
    """
    if n_queries < 1 or depth < 2:
        raise ValueError(f"need n_queries >= 1 and depth >= 2, got {n_queries} and {depth}")
    rng = np.random.default_rng(seed)
    run: dict[str, list[Posting]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(1, n_queries + 1):
        qid = f"q{q:03d}"
        prevalence = rng.beta(1.2, 5.0)  # most queries have few relevant documents, some many
        relevant = rng.random(depth) < prevalence
        separation = rng.uniform(1.0, 4.0)
        scores = np.where(
            relevant,
            rng.normal(loc=2.0 + separation, scale=1.0, size=depth),
            2.0 + rng.exponential(scale=1.0, size=depth),
        ).round(3)
        order = np.argsort(-scores, kind="stable")
        docs = [f"{qid}-d{i:04d}" for i in range(depth)]
        run[qid] = [Posting(docs[i], float(scores[i]), r) for r, i in enumerate(order, start=1)]
        judged = {
            docs[i]: (2 if relevant[i] and scores[i] > 2.0 + separation else int(relevant[i]))
            for i in range(depth)
            if relevant[i] or rng.random() < 0.3
        }
        # relevant documents the retriever never returned
        for j in range(int(rng.poisson(relevant.sum() * 0.25))):
            judged[f"{qid}-x{j:04d}"] = 1
        qrels[qid] = judged
    return run, qrels


def write_synthetic(
    folder: str | os.PathLike[str], n_queries: int = 60, depth: int = 100, *, seed: int = 0
) -> tuple[Path, Path]:
    """Write :func:`synthetic_run` as TREC files ``synthetic.run`` and ``synthetic.qrels``."""
    folder = Path(folder)
    run, qrels = synthetic_run(n_queries, depth, seed=seed)
    run_path, qrels_path = folder / "synthetic.run", folder / "synthetic.qrels"
    with run_path.open("w", encoding="utf-8") as fh:
        for qid, postings in run.items():
            fh.writelines(f"{qid} Q0 {p.doc_id} {p.rank} {p.score!r} synthetic\n" for p in postings)
    with qrels_path.open("w", encoding="utf-8") as fh:
        for qid, judged in qrels.items():
            fh.writelines(f"{qid} 0 {doc} {rel}\n" for doc, rel in judged.items())
    return run_path, qrels_path
