"""Pools of a cut run: exact sizes, the index → item bijection (checked against materialised
pools), corpus handling, cuts from runs and nested families."""

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.audit.pools import (
    Corpus,
    Pools,
    check_nested,
    cuts_from_run,
    depth_family,
    nested_family,
    offset_family,
)
from rankcut.data.lists import Posting, RankedLists
from rankcut.data.trec import read_run, write_run

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"

QIDS = ("q1", "q2", "q3")
LISTS = (("b", "d"), (), ("e", "a", "c"))
CORPUS = ("a", "b", "c", "d", "e")  # corpus order, used for the unretrieved documents


# ---------------------------------------------------------------------------------------------
# brute force: materialise the pools


def unretrieved(docs, corpus):
    if corpus is None:
        return []
    if isinstance(corpus, int):
        return [f"#{u}" for u in range(corpus - len(docs))]
    return [d for d in corpus if d not in docs]


def make_corpus(corpus):
    if corpus is None:
        return None
    return Corpus.size(corpus) if isinstance(corpus, int) else Corpus.ids(corpus)


def brute(qids, lists, cuts, corpus):
    inc, exc = [], []
    for q, docs, k in zip(qids, lists, cuts, strict=True):
        line = [(q, d) for d in list(docs) + unretrieved(docs, corpus)]
        inc += line[:k]
        exc += line[k:]
    return inc, exc


# ---------------------------------------------------------------------------------------------
# sizes


@pytest.mark.parametrize("corpus, n0_q", [(None, [1, 0, 0]), (5, [4, 5, 2]), (CORPUS, [4, 5, 2])])
def test_sizes_per_query_and_overall(corpus, n0_q):
    p = Pools(QIDS, LISTS, [1, 0, 3], make_corpus(corpus))
    assert p.n1_q.tolist() == [1, 0, 3]
    assert p.n0_q.tolist() == n0_q
    assert p.n1 == p.burden == 4
    assert p.n0 == sum(n0_q)
    assert p.n_items == p.n1 + p.n0 == (5 if corpus is None else 15)
    assert p.lengths.tolist() == [2, 0, 3]
    assert isinstance(p.n0, int) and isinstance(p.n1, int)


def test_whole_list_kept_and_nothing_kept():
    full = Pools(QIDS, LISTS, [2, 0, 3])  # k = L everywhere: nothing excluded without a corpus
    assert (full.n1, full.n0) == (5, 0)
    none = full.with_cuts([0, 0, 0])
    assert (none.n1, none.n0) == (0, 5)
    everything = [(q, d) for q, docs in zip(QIDS, LISTS, strict=True) for d in docs]
    assert none.excluded_items(range(5)) == everything
    with_corpus = Pools(QIDS, LISTS, [2, 0, 3], Corpus.size(5))
    assert with_corpus.n0_q.tolist() == [3, 5, 2]  # only the unretrieved documents remain


def test_huge_corpus_sizes_are_exact():
    p = Pools([f"q{i}" for i in range(10_000)], [("x",)] * 10_000, np.ones(10_000, dtype=int),
              Corpus.size(10**7))
    assert p.n0 == 10_000 * (10**7 - 1)
    assert p.excluded_item(p.n0 - 1) == ("q9999", f"#{10**7 - 2}")


def test_to_dict_is_json_sizes():
    d = Pools(QIDS, LISTS, [1, 0, 3], Corpus.size(5)).to_dict()
    assert json.loads(json.dumps(d)) == d
    assert (d["n1"], d["n0"], d["burden"], d["items"]) == (4, 11, 4, 15)
    assert d["corpus"] == {"kind": "size", "documents": 5}
    assert d["per_query"]["n0"] == [4, 5, 2]


def test_cuts_are_read_only_and_not_the_callers_array():
    k = np.array([1, 0, 3])
    p = Pools(QIDS, LISTS, k)
    k[0] = 2
    assert p.cuts.tolist() == [1, 0, 3]
    with pytest.raises(ValueError):
        p.cuts[0] = 0


# ---------------------------------------------------------------------------------------------
# the global index -> item mapping is a bijection onto the materialised pool


@pytest.mark.parametrize("corpus", [None, 5, CORPUS, ("e", "c", "a", "d", "b")])
@pytest.mark.parametrize("cuts", [[1, 0, 3], [0, 0, 0], [2, 0, 1]])
def test_enumeration_matches_materialised_pools(corpus, cuts):
    p = Pools(QIDS, LISTS, cuts, make_corpus(corpus))
    inc, exc = brute(QIDS, LISTS, cuts, corpus)
    assert p.excluded_items(np.arange(p.n0)) == exc
    assert p.included_items(np.arange(p.n1)) == inc
    assert [p.excluded_item(i) for i in range(p.n0)] == exc
    assert [p.included_item(i) for i in range(p.n1)] == inc


@st.composite
def pool_specs(draw):
    n_corpus = draw(st.integers(1, 8))
    corpus_docs = [f"d{i}" for i in range(n_corpus)]
    order = draw(st.permutations(corpus_docs))
    n_q = draw(st.integers(1, 4))
    lists = []
    for _ in range(n_q):
        depth = draw(st.integers(0, n_corpus))
        lists.append(tuple(draw(st.permutations(corpus_docs))[:depth]))
    cuts = [draw(st.integers(0, len(lst))) for lst in lists]
    kind = draw(st.sampled_from(["none", "size", "ids"]))
    corpus = {"none": None, "size": n_corpus + draw(st.integers(0, 3)), "ids": tuple(order)}[kind]
    qids = tuple(f"q{i}" for i in range(n_q))
    return qids, tuple(lists), cuts, corpus


@settings(max_examples=150, deadline=None)
@given(pool_specs())
def test_bijection_on_random_small_pools(spec):
    qids, lists, cuts, corpus = spec
    p = Pools(qids, lists, cuts, make_corpus(corpus))
    inc, exc = brute(qids, lists, cuts, corpus)
    assert (p.n1, p.n0) == (len(inc), len(exc))
    assert p.excluded_items(np.arange(p.n0)) == exc
    assert p.included_items(np.arange(p.n1)) == inc
    # excluded_mask agrees with membership in the materialised pools
    items = inc + exc
    assert p.excluded_mask(items).tolist() == [False] * len(inc) + [True] * len(exc)
    # rank bands partition the excluded pool, each query's band s is E_q[o_s:o_{s+1}]
    bands = [0, 1, 3]
    sizes = p.band_sizes(bands)
    assert sizes.sum() == p.n0
    for s in range(3):
        hi = bands[s + 1] if s < 2 else None
        want = [it for q in qids for it in [e for e in exc if e[0] == q][bands[s]:hi]]
        assert p.band_items(bands, s, np.arange(sizes[s])) == want


def test_indices_out_of_range_are_refused():
    p = Pools(QIDS, LISTS, [1, 0, 3])
    with pytest.raises(ValueError, match=r"index 1 is outside the excluded pool \[0, 1\)"):
        p.excluded_item(1)
    with pytest.raises(ValueError, match="outside the included pool"):
        p.included_items([-1])
    with pytest.raises(ValueError, match="must hold integers"):
        p.excluded_items([0.0])
    assert p.excluded_items([]) == []


def test_excluded_mask_refuses_items_in_no_pool():
    p = Pools(QIDS, LISTS, [1, 0, 3], Corpus.size(5))
    assert p.excluded_mask([("q1", "#2"), ("q1", "b"), ("q2", "#4")]).tolist() == [True, False, True]
    for item, match in [(("q9", "b"), "query 'q9' is not in the pools"),
                        (("q1", "#3"), "unretrieved documents #0..#2"),
                        (("q1", "#01"), "neither in the list"),
                        (("q1", "zz"), "neither in the list")]:
        with pytest.raises(ValueError, match=match):
            p.excluded_mask([item])
    with pytest.raises(ValueError, match="no corpus was given"):
        Pools(QIDS, LISTS, [1, 0, 3]).excluded_mask([("q1", "a")])
    with pytest.raises(ValueError, match="not in the corpus|neither in its list nor in the corpus"):
        Pools(QIDS, LISTS, [1, 0, 3], Corpus.ids(CORPUS)).excluded_mask([("q1", "zz")])


# ---------------------------------------------------------------------------------------------
# the corpus


def test_corpus_smaller_than_a_list_is_refused():
    with pytest.raises(ValueError, match="holds 2 documents but the list of query 'q1' holds 3"):
        Pools(["q1"], [("a", "b", "c")], [1], Corpus.size(2))


def test_listed_document_missing_from_id_corpus_names_query_and_doc():
    with pytest.raises(ValueError,
                       match=r"query 'q3' lists document 'zz' \(rank 2\), which is not in the corpus"):
        Pools(QIDS, [("b",), (), ("e", "zz")], [0, 0, 0], Corpus.ids(CORPUS))


def test_numbered_names_clash_with_size_only_corpus():
    with pytest.raises(ValueError, match="'#3'.*use Corpus.ids"):
        Pools(["q"], [("#3",)], [0], Corpus.size(10))
    p = Pools(["q"], [("#3",)], [0], Corpus.ids(["#3", "x"]))
    assert p.excluded_items([0, 1]) == [("q", "#3"), ("q", "x")]


def test_corpus_ids_from_file(tmp_path):
    f = tmp_path / "corpus.txt"
    f.write_text("a\nb\n  c  \nd\ne\n\n\n")
    c = Corpus.ids(f)
    assert (c.kind, len(c), c.doc_ids) == ("ids", 5, CORPUS)
    assert c.position("c") == 2 and c.position("zz") is None
    f.write_text("a\n\nb\n")
    with pytest.raises(ValueError, match=r"corpus.txt, line 2: expected one document id"):
        Corpus.ids(f)
    f.write_text("a\nb c\n")
    with pytest.raises(ValueError, match="line 2: expected one document id"):
        Corpus.ids(f)
    f.write_text("a\nb\na\n")
    with pytest.raises(ValueError, match=r"corpus.txt, line 3: document 'a' is listed twice .*also line 1"):
        Corpus.ids(f)
    f.write_text("\n")
    with pytest.raises(ValueError, match="lists no document id"):
        Corpus.ids(f)
    # a byte-order mark (files saved by some editors) is no part of the first id, gzipped too
    f.write_text("\ufeffa\nb\nc\nd\ne\n", encoding="utf-8")
    assert Corpus.ids(f).doc_ids == CORPUS
    g = tmp_path / "corpus.txt.gz"
    g.write_bytes(gzip.compress("\ufeffa\nb\nc\nd\ne\n".encode()))
    assert Corpus.ids(g).doc_ids == CORPUS


def test_corpus_arguments_are_checked():
    for bad, match in [(lambda: Corpus.size(0), "corpus size must be >= 1"),
                       (lambda: Corpus.size(2.0), "must be an integer"),
                       (lambda: Corpus.ids([]), "empty"),
                       (lambda: Corpus.ids(["a", "a"]), "corpus entry 1: document 'a' is listed twice"),
                       (lambda: Corpus.ids(["a", ""]), "corpus entry 1: a document id must be a non-empty"),
                       (lambda: Corpus.ids(42), "sequence of ids or a file path"),
                       (lambda: Pools(QIDS, LISTS, [0, 0, 0], corpus=5), "corpus must be a Corpus")]:
        with pytest.raises(ValueError, match=match):
            bad()


# ---------------------------------------------------------------------------------------------
# lists and cuts


def test_bad_lists_and_cuts_name_the_query():
    cases = [
        (lambda: Pools(QIDS, LISTS, [1, 0, 4]), r"cut 4 for query 'q3' is outside \[0, 3\]"),
        (lambda: Pools(QIDS, LISTS, [1, 0, -1]), "cut -1 for query 'q3'"),
        (lambda: Pools(QIDS, LISTS, [1, 0]), "one cut per query"),
        (lambda: Pools(QIDS, LISTS, [1.0, 0, 3]), "must hold integers"),
        (lambda: Pools(QIDS, [("a", "b", "a"), (), ()], [0, 0, 0]),
         r"query 'q1': document 'a' is listed twice \(ranks 1 and 3\)"),
        (lambda: Pools(("q1", "q1"), [(), ()], [0, 0]), "query 'q1' appears more than once"),
        (lambda: Pools([], [], []), "no query"),
        (lambda: Pools(QIDS, LISTS[:2], [0, 0]), "one list of document ids per query"),
        (lambda: Pools(["q"], ["ab"], [0]), "query 'q': its documents must be a sequence"),
        (lambda: Pools(["q"], [("a", "")], [0]), "query 'q': a document id must be a non-empty string"),
    ]
    for make, match in cases:
        with pytest.raises(ValueError, match=match):
            make()


def test_numpy_string_arrays_give_plain_strings():
    p = Pools(["q"], [np.array(["b", "d"])], [1], Corpus.ids(np.array(CORPUS)))
    items = p.excluded_items(range(p.n0))
    assert items == [("q", "d"), ("q", "a"), ("q", "c"), ("q", "e")]
    assert all(type(d) is str for _, d in items)


def test_queries_with_empty_lists():
    p = Pools(["a", "b"], [(), ()], [0, 0])
    assert (p.n1, p.n0) == (0, 0)
    p = Pools(["a", "b"], [(), ()], [0, 0], Corpus.ids(["x", "y"]))
    assert p.excluded_items(range(4)) == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]


def _lists(run):
    return RankedLists.from_postings(run)


RUN = {
    "q1": [Posting("a", 3.0, 1), Posting("b", 2.0, 2), Posting("c", 2.0, 3), Posting("d", 1.0, 4)],
    "q2": [Posting("x", 5.0, 1), Posting("y", 4.0, 2)],
}


def test_cuts_from_run_prefixes_and_absent_queries():
    full = _lists(RUN)
    cut = {"q1": [Posting("b", 2.0, 2), Posting("a", 3.0, 1)]}  # order in the mapping does not matter
    assert cuts_from_run(full, cut, allow_missing_queries=True).tolist() == [2, 0]
    assert cuts_from_run(full, {}, allow_missing_queries=True).tolist() == [0, 0]
    assert cuts_from_run(full, RUN).tolist() == [4, 2]


def test_cuts_from_run_errors_name_query_and_rank():
    full = _lists(RUN)
    # b and c tie: a, c is the prefix trec_eval's order keeps (a cut written under it), which is said
    with pytest.raises(ValueError,
                       match=r"query 'q1', rank 2: the cut run has 'c' where the full list has 'b'; .*; "
                             r"it is one under ordering='trec_eval', which breaks ties otherwise: give that "
                             r"ordering$"):
        cuts_from_run(full, {"q1": [Posting("a", 3.0, 1), Posting("c", 2.0, 2)]})
    with pytest.raises(ValueError, match=r"query 'q2', rank 1: the cut run has 'zz'.*\(same documents, same "
                                         r"order under ordering='rank'\)$"):
        cuts_from_run(full, {"q2": [Posting("zz", 9.0, 1)]})
    with pytest.raises(ValueError, match="query 'q9' of the cut run is not in the full ranked lists"):
        cuts_from_run(full, {"q9": [Posting("a", 1.0, 1)]})
    with pytest.raises(ValueError, match="keeps 3 documents but the full list holds only 2"):
        cuts_from_run(full, {"q2": [Posting("x", 5.0, 1), Posting("y", 4.0, 2), Posting("z", 3.0, 3)]})


def test_cuts_from_run_round_trip_through_write_run(tmp_path):
    full = _lists(RUN)
    write_run(tmp_path / "cut.run", full, np.array([3, 0]))
    assert cuts_from_run(full, read_run(tmp_path / "cut.run"), allow_missing_queries=True).tolist() == [3, 0]


def test_bands_of_a_short_list_reach_into_its_unretrieved_documents():
    """As documented: bands count positions on the query's line (ranks, then corpus documents), so
    a list that ends inside a band puts corpus documents in that band, not only in the last one."""
    p = Pools(["q", "r"], [["a", "b", "c"], ["a", "b", "c", "d", "e", "f", "g"]], [1, 1],
              Corpus.ids(["a", "b", "c", "d", "e", "f", "g", "h"]))
    bands = [0, 4]
    assert p.band_sizes(bands).tolist() == [8, 6]
    first = p.band_items(bands, 0, np.arange(8))
    assert first[:4] == [("q", "b"), ("q", "c"), ("q", "d"), ("q", "e")]  # ranks 2-3, then corpus
    assert p.band_items(bands, 1, np.arange(6))[:3] == [("q", "f"), ("q", "g"), ("q", "h")]
    assert ("r", "h") in p.band_items(bands, 1, np.arange(6))  # r's list reaches the last band


def test_nested_family_and_its_errors():
    full = _lists(RUN)
    runs = [{"q1": RUN["q1"][:1]}, {"q1": RUN["q1"][:2], "q2": RUN["q2"][:1]}, RUN]
    fam = nested_family(full, runs, allow_missing_queries=True)
    assert fam.tolist() == [[1, 2, 4], [0, 1, 2]]
    with pytest.raises(ValueError, match=r"query 'q1': member 2 \('F2'\) keeps 2 documents but "
                                         r"member 3 \('F3'\) keeps only 1"):
        nested_family(full, [runs[0], runs[1], {"q1": RUN["q1"][:1]}], names=["F1", "F2", "F3"],
                      allow_missing_queries=True)
    with pytest.raises(ValueError, match=r"member 2: query 'q1', rank 1: the cut run has 'b'"):
        nested_family(full, [runs[0], {"q1": [RUN["q1"][1]]}], allow_missing_queries=True)
    with pytest.raises(ValueError, match="non-empty sequence of cut runs"):
        nested_family(full, [])
    with pytest.raises(ValueError, match="non-empty sequence of cut runs"):
        nested_family(full, RUN)


def test_check_nested_shape_and_order():
    assert check_nested([[0, 0], [1, 2]], ["a", "b"]).shape == (2, 2)
    with pytest.raises(ValueError, match="query 'b': member 1 keeps 2 documents but member 2 keeps only 1"):
        check_nested([[0, 0], [2, 1]], ["a", "b"])
    with pytest.raises(ValueError, match="shape"):
        check_nested([[0], [1], [2]], ["a", "b"])


def test_offset_and_depth_families():
    fam = offset_family([1, 0, 3], [2, 0, 3], [-1, 0, 5])
    assert fam.tolist() == [[0, 1, 2], [0, 0, 0], [2, 3, 3]]
    assert check_nested(fam, QIDS) is not None
    assert depth_family([2, 0, 5], [0, 1, 3]).tolist() == [[0, 1, 2], [0, 0, 0], [0, 1, 3]]
    for make, match in [
        (lambda: offset_family([1, 0, 3], [2, 0, 3], [0, 0]),
         r"offsets must be strictly increasing \(one member each\), got 0 before 0"),
        (lambda: offset_family([3, 0, 3], [2, 0, 3], [0]), r"cuts\[0\]=3 is outside \[0, lengths\[0\]=2\]"),
        (lambda: offset_family([1, 0], [2, 0, 3], [0]), "one entry per query"),
        (lambda: offset_family([1, 0, 3], [2, 0, 3], []), "at least one member"),
        (lambda: depth_family([2, 3], [5, 2]), r"depths must be strictly increasing"),
        (lambda: depth_family([2, 3], [-1, 2]), r"depths must be >= 0"),
        (lambda: depth_family([2, -3], [1]), "lengths must be >= 0"),
    ]:
        with pytest.raises(ValueError, match=match):
            make()


def test_from_lists_and_with_cuts_share_the_lists():
    full = _lists(RUN)
    p = Pools.from_lists(full, [1, 1], Corpus.ids(["a", "b", "c", "d", "x", "y", "z"]))
    assert p.qids == ("q1", "q2")
    assert p.n0_q.tolist() == [6, 6]
    q = p.with_cuts([4, 2])
    assert q.same_lists(p) and q.n0_q.tolist() == [3, 5]
    assert not q.same_lists(Pools.from_lists(full, [1, 1]))
    by_hand = Pools(("q1", "q2"), (("a", "b", "c", "d"), ("x", "y")), [0, 0])
    assert by_hand.same_lists(Pools.from_lists(full, [1, 1]))
    assert "N1=2" in repr(p) and "ids" in repr(p)


def test_real_robust04_run_cut_at_31(tmp_path):
    run_path = DATASETS / "robust04" / "runs" / "bm25.test.run"
    if not run_path.is_file():
        pytest.skip(f"real datasets not found at {DATASETS}")
    full = RankedLists.from_postings(read_run(run_path))
    write_run(tmp_path / "cut.run", full, np.full(len(full), 31))
    k = cuts_from_run(full, read_run(io.StringIO((tmp_path / "cut.run").read_text())))
    assert (k == 31).all()
    p = Pools.from_lists(full, k, Corpus.size(528_155))  # Robust04: 528,155 documents
    q = len(full)
    assert (p.n1, p.n0) == (31 * q, (528_155 - 31) * q)
    assert p.excluded_item(0) == (full.qids[0], full.doc_ids[0, 31])
    assert p.excluded_item(300 - 31) == (full.qids[0], "#0")
