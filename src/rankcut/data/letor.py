"""LETOR / SVMlight learning-to-rank files as ranked lists.

One line per (query, document)::

    label qid:N 1:v1 2:v2 ... 46:v46 #docid = GX008-86-4444840 inc = 1 prob = 0.0809

The label is the graded relevance (0/1/2 in LETOR 4.0), used as the gain. A ranked list per query
comes from sorting its documents by one feature (MQ2007/MQ2008: feature 25 is BM25 on the whole
document). Features may be sparse (absent ones are 0); all of them are kept in
``RankedLists.features`` with names. ``inc`` and ``prob`` in the comment are not read.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np

from rankcut._util import check_int
from rankcut.data.io import Source, open_text, plain_int, plain_number
from rankcut.data.lists import Posting, RankedLists, warn_if_nothing_relevant
from rankcut.errors import ParamError

__all__ = ["LETOR4_FEATURES", "load_letor", "score_feature_of"]

_FIELDS = ("body", "anchor", "title", "url", "document")
# LETOR 4.0 (MQ2007, MQ2008) feature list, numbered from 1 (Qin & Liu, "Introducing LETOR 4.0
# Datasets", arXiv:1306.2597).
LETOR4_FEATURES: tuple[str, ...] = tuple(
    f"{stat}_{fld}"
    for stat in ("tf", "idf", "tfidf", "dl", "bm25", "lmir_abs", "lmir_dir", "lmir_jm")
    for fld in _FIELDS
) + ("pagerank", "inlinks", "outlinks", "url_slashes", "url_length", "child_pages")
_DOCID = re.compile(r"docid\s*=\s*(\S+)")


Row = tuple[str, int, list[int], list[float]]  # doc_id, label, feature indices, values


def _features(tokens: list[str], where: str) -> tuple[list[int], list[float]]:
    """Parse ``index:value`` tokens; a fast path for good lines, then one that names the bad token."""
    try:
        pairs = [tok.split(":") for tok in tokens]
        idx = [int(i) for i, _ in pairs]
        val = [float(v) for _, v in pairs]
        good = not idx or (min(idx) >= 1 and all(map(math.isfinite, val)) and plain_number("".join(tokens)))
    except ValueError:  # also a token without exactly one ':'
        good = False
    if not good:
        for tok in tokens:
            i_s, sep, v_s = tok.partition(":")
            try:
                ok = bool(sep) and plain_number(tok) and int(i_s) >= 1 and math.isfinite(float(v_s))
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"{where}: feature {tok!r} is not 'index:value' with index >= 1 "
                                 "and a finite value")
    if len(set(idx)) != len(idx):
        twice = next(i for n, i in enumerate(idx) if i in idx[:n])
        raise ValueError(f"{where}: feature {twice} is given twice")
    return idx, val


def _trec_hint(parts: list[str]) -> str:
    """What a line that is not LETOR reads like, as a hint ("" if nothing): a TREC run or qrels line
    given where the LETOR file goes (``rankcut evaluate --letor run.txt``): no ``index:value`` token,
    and ``Q0`` (a run) or ``0`` (qrels) second."""
    if any(":" in p for p in parts):   # a LETOR line gone wrong
        return ""
    if len(parts) == 6 and parts[1] in ("Q0", "0"):
        return " — it reads like a TREC run line ('qid Q0 docid rank score tag'), which goes to --run"
    if len(parts) == 4 and parts[1] in ("Q0", "0"):
        return " — it reads like a TREC qrels line ('qid 0 docid relevance'), which goes to --qrels"
    return ""


def _parse(source: Source, label: str, rows: dict[str, list[Row]],
           seen: dict[tuple[str, str], str]) -> None:
    """Append the rows of one file to ``rows[qid]``."""
    with open_text(source, label) as (_, f):
        for lineno, line in enumerate(f, 1):
            data, _, comment = line.partition("#")
            parts = data.split()
            if not parts:
                continue
            where = f"{label}, line {lineno}"
            if len(parts) < 2 or not parts[1].startswith("qid:") or len(parts[1]) == 4:
                raise ValueError(f"{where}: expected 'label qid:N index:value ...', got {line.rstrip()!r}"
                                 f"{_trec_hint(parts)}")
            grade = plain_int(parts[0], "label", where)
            qid = parts[1][4:]
            if not qid.isascii():   # ١٢ is not 12: another query, without a word
                raise ValueError(f"{where}: qid {qid!r} holds a character that is not ASCII")
            idx, val = _features(parts[2:], where)
            m = _DOCID.search(comment)
            doc = m.group(1) if m else f"line:{lineno}"
            first = seen.setdefault((qid, doc), where)
            if first != where:
                raise ValueError(f"{where}: document {doc!r} is listed twice for query {qid!r} "
                                 f"(first at {first})")
            rows.setdefault(qid, []).append((doc, grade, idx, val))


_SCORED_BY = "LETOR feature "   # a RankedLists' scored_by for lists ranked by a feature


def score_feature_of(scored_by: str) -> int | None:
    """The LETOR feature (``--score-feature``) a lists' ``scored_by`` names, or None for run scores."""
    return int(scored_by.removeprefix(_SCORED_BY)) if scored_by.startswith(_SCORED_BY) else None


def load_letor(
    source: Source | Sequence[Source],
    *,
    score_feature: int = 25,
    threshold: float = 1,
    ordering: str = "rank",
) -> RankedLists:
    """Read LETOR / SVMlight files into :class:`RankedLists` ranked by one feature.

    :param source: a path or open text file, or a sequence of them (e.g. the partitions
        ``S1``–``S3`` of a LETOR fold); a query found in several is merged.
    :param score_feature: the feature (numbered from 1) whose value is the ranking score;
        25 is BM25 on the whole document in LETOR 4.0.
    :param threshold: label at or above which a document counts as relevant.
    :param ordering: ``"rank"`` breaks score ties by the order of the lines, ``"trec_eval"`` by
        doc_id descending (see :mod:`rankcut.data.lists`).
    :returns: lists with ``scored_by`` ``"LETOR feature <score_feature>"``, ``gains`` = labels,
        ``n_relevant`` = documents of the query with label at least ``threshold`` (every judged
        document is listed), ``features [Q, L, F]`` with F the largest feature index seen, and
        ``feature_names`` — :data:`LETOR4_FEATURES` when F is 46, ``f1 ... fF`` otherwise.
        Document ids come from ``#docid = X``; a line without one is called ``line:N``.
    :raises ValueError: naming file and line, for a malformed line, a non-integer label, a bad or
        repeated feature, a document listed twice for one query; or for a ``score_feature``
        beyond the largest feature index, or on no line.
    """
    score_feature = check_int(score_feature, "score_feature", low=1)   # 25.5 ranked by nothing
    single = isinstance(source, str | os.PathLike) or hasattr(source, "read")
    sources = cast("Sequence[Source]", [source] if single else source)
    rows: dict[str, list[Row]] = {}
    seen: dict[tuple[str, str], str] = {}
    labels = [str(src) if isinstance(src, str | os.PathLike) else str(getattr(src, "name", "<stream>"))
              for src in sources]
    for src, label in zip(sources, labels, strict=True):
        _parse(src, label, rows, seen)
    if not rows:
        raise ValueError(f"{', '.join(labels) or 'the input'}: no LETOR line ('label qid:Q 1:v 2:v ...')")
    n_feat = max((max(idx, default=0) for r in rows.values() for _, _, idx, _ in r), default=0)
    if not 1 <= score_feature <= n_feat:
        raise ParamError("score_feature",
                         f"score_feature must be in [1, {n_feat}] (features seen), got {score_feature}")
    if not any(score_feature in idx for r in rows.values() for _, _, idx, _ in r):
        raise ParamError("score_feature",
                         f"score_feature {score_feature} is on no line (a sparse LETOR line leaves out its "
                         "zeros, so every score would be 0 and the lists kept in file order): give one "
                         "of the features the lines hold")
    run = {q: [Posting(doc, dict(zip(idx, val, strict=True)).get(score_feature, 0.0), i)
               for i, (doc, _, idx, val) in enumerate(r, 1)] for q, r in rows.items()}
    qrels = {q: {doc: grade for doc, grade, _, _ in r} for q, r in rows.items()}
    lists = RankedLists.from_postings(run, qrels, threshold=threshold, ordering=ordering)
    features = np.zeros((len(lists), lists.max_len, n_feat))
    for i, q in enumerate(lists.qids):
        by_doc = {doc: (idx, val) for doc, _, idx, val in rows[q]}
        for j in range(int(lists.lengths[i])):
            idx, val = by_doc[lists.doc_ids[i, j]]
            features[i, j, np.asarray(idx, dtype=np.int64) - 1] = val
    generic = tuple(f"f{k}" for k in range(1, n_feat + 1))
    names = LETOR4_FEATURES if n_feat == len(LETOR4_FEATURES) else generic
    warn_if_nothing_relevant(lists, stacklevel=2)
    return replace(lists.with_features(features, names), scored_by=f"{_SCORED_BY}{score_feature}")

