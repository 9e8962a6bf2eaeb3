"""Qrels from an ir_datasets dataset id (optional extra ``rankcut[irds]``).

ir_datasets fetches and caches public qrels on first use; this module only reads what its
``qrels_iter()`` yields (namedtuples with ``query_id``, ``doc_id``, ``relevance``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankcut.data.lists import Posting, RankedLists, default_threshold
from rankcut.data.trec import Source, load_trec

__all__ = ["load_irds", "read_irds_qrels"]


def read_irds_qrels(dataset_id: str) -> dict[str, dict[str, int]]:
    """``{query_id: {doc_id: relevance}}`` of the ir_datasets dataset ``dataset_id``.

    :raises ImportError: when ir_datasets is not installed (``pip install 'rankcut[irds]'``).
    :raises ValueError: for an id ir_datasets does not know, a dataset without qrels, or one that
        judges a (query, document) pair twice.
    """
    try:
        import ir_datasets  # optional, and slow to import: only when asked for
    except ImportError as exc:
        raise ImportError(
            "reading qrels by ir_datasets id needs the optional ir_datasets package: "
            "pip install 'rankcut[irds]'"
        ) from exc
    try:
        dataset: Any = ir_datasets.load(dataset_id)
    except KeyError:   # ir_datasets' word for an unknown id: a bare KeyError('no-such-dataset')
        raise ValueError(f"ir_datasets has no dataset {dataset_id!r} (its ids: ir_datasets.readthedocs.io, "
                         "e.g. 'msmarco-passage/trec-dl-2019/judged')") from None
    if not dataset.has_qrels():
        raise ValueError(f"ir_datasets dataset {dataset_id!r} has no qrels")
    qrels: dict[str, dict[str, int]] = {}
    for n, row in enumerate(dataset.qrels_iter(), 1):
        judged = qrels.setdefault(str(row.query_id), {})
        doc = str(row.doc_id)
        if doc in judged:
            if judged[doc] == int(row.relevance):   # the same judgement again: once, as read_qrels does
                continue
            raise ValueError(f"ir_datasets {dataset_id!r}, qrels record {n}: query {row.query_id!r}, "
                             f"document {doc!r} is judged twice, differently ({judged[doc]}, then "
                             f"{int(row.relevance)})")
        judged[doc] = int(row.relevance)
    return qrels


def load_irds(
    dataset_id: str,
    run: Source | Mapping[str, Sequence[Posting]],
    *,
    threshold: float | None = None,
    ordering: str = "rank",
    missing: str = "drop",
) -> RankedLists:
    """A run judged by the qrels of an ir_datasets dataset, as :class:`RankedLists`.

    :param dataset_id: e.g. ``"msmarco-passage/trec-dl-2019/judged"``.
    :param run: a TREC run file or ``{qid: [Posting]}``; the other arguments are those of
        :func:`rankcut.data.trec.load_trec` (for TREC DL, ``threshold=2`` is the usual binary cut).
    """
    qrels = read_irds_qrels(dataset_id)
    threshold = default_threshold(threshold, qrels)   # here: a warning names the caller's line
    return load_trec(run, qrels, threshold=threshold, ordering=ordering, missing=missing)
