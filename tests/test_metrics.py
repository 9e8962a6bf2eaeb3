"""Tests of rankcut.metrics: hand examples, a loop reference of Eq. 7–9, ir_measures, Robust04."""

from __future__ import annotations

import io
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.data import trec
from rankcut.data.lists import Posting, RankedLists
from rankcut.metrics import METRICS, clip_cuts, curves, mean_curve, oracle_cuts, pm1_dcg_measure, score_at

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
ROBUST04 = DATASETS / "robust04"
NAN = math.nan


def make_lists(labels: list[list[int]], extra_relevant: list[int] | None = None) -> RankedLists:
    """Lists ``q0, q1, …`` of documents ``d0, d1, …`` with strictly decreasing scores.

    ``extra_relevant[i]`` judged relevant documents of query i are not listed.
    """
    run, qrels = {}, {}
    for i, lab in enumerate(labels):
        q = f"q{i}"
        run[q] = [Posting(f"d{j}", float(len(lab) - j), j + 1) for j in range(len(lab))]
        qrels[q] = {f"d{j}": int(r) for j, r in enumerate(lab)}
        for e in range((extra_relevant or [0] * len(labels))[i]):
            qrels[q][f"unlisted{e}"] = 1
    return RankedLists.from_postings(run, qrels)


# --------------------------------------------------------------------------- hand examples
def test_curves_hand_example() -> None:
    # q0: R N R N (2 relevant listed, 1 more judged); q1: N N (nothing relevant), padded to 4.
    lists = make_lists([[1, 0, 1, 0], [0, 0]], extra_relevant=[1, 0])
    l2 = [1 / math.log2(n + 1) for n in range(1, 5)]
    expected = {
        "precision": [[NAN, 1, 1 / 2, 2 / 3, 1 / 2], [NAN, 0, 0, NAN, NAN]],
        "recall": [[NAN, 1 / 2, 1 / 2, 1, 1], [NAN, 0, 0, NAN, NAN]],
        "f1": [[NAN, 2 / 3, 1 / 2, 4 / 5, 2 / 3], [NAN, 0, 0, NAN, NAN]],
        "dcg": [
            [NAN, l2[0], l2[0] - l2[1], l2[0] - l2[1] + l2[2], l2[0] - l2[1] + l2[2] - l2[3]],
            [NAN, -l2[0], -l2[0] - l2[1], NAN, NAN],
        ],
    }
    for metric, want in expected.items():
        np.testing.assert_allclose(curves(lists, metric), want, rtol=1e-15, err_msg=metric)
    # recall over all judged relevant (3 for q0): R = 1/3, 1/3, 2/3, 2/3; F1 = 2 TP / (k + 3)
    judged_recall = curves(lists, "recall", recall_base="judged")[0, 1:]
    np.testing.assert_allclose(judged_recall, [1 / 3, 1 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(curves(lists, "f1", recall_base="judged")[0, 1:], [1 / 2, 2 / 5, 2 / 3, 4 / 7])


def test_first_dcg_term_is_undiscounted() -> None:
    # Eq. 9 divides by log2(n + 1): 1 at rank 1, so a single relevant document scores exactly 1.
    assert curves(make_lists([[1]]), "dcg")[0, 1] == 1.0
    assert curves(make_lists([[0]]), "dcg")[0, 1] == -1.0


def test_allow_zero_column() -> None:
    lists = make_lists([[1, 0, 1, 0], [0, 0]])
    for metric in METRICS:
        assert np.all(np.isnan(curves(lists, metric)[:, 0]))
        np.testing.assert_array_equal(curves(lists, metric, allow_zero=True)[:, 0], [0.0, 0.0])


def test_oracle_ties_go_to_smallest_k() -> None:
    # F1 with 2 relevant listed: k=1 → 2/3 and k=4 → 4/6, exactly equal fractions.
    lists = make_lists([[1, 0, 0, 1]])
    assert curves(lists, "f1")[0, 1] == curves(lists, "f1")[0, 4]
    assert oracle_cuts(lists, "f1").tolist() == [1]
    # nothing relevant: F1 is 0 everywhere → smallest allowed k
    none = make_lists([[0, 0, 0]])
    assert oracle_cuts(none, "f1").tolist() == [1]
    assert oracle_cuts(none, "f1", allow_zero=True).tolist() == [0]
    assert oracle_cuts(none, "dcg", allow_zero=True).tolist() == [0]
    # ±1-DCG peaks inside the list
    assert oracle_cuts(make_lists([[1, 1, 0, 1, 1, 0, 0]]), "dcg").tolist() == [5]


def test_oracle_and_score_at_agree_with_curves() -> None:
    lists = make_lists([[0, 1, 1, 0, 1], [1, 0], [0, 0, 1]])
    for metric in METRICS:
        c = curves(lists, metric)
        cuts = oracle_cuts(lists, metric)
        np.testing.assert_array_equal(score_at(lists, cuts, metric), np.nanmax(c, axis=1))
        assert oracle_cuts(lists, metric).dtype == np.int64


def test_score_at_validates_cuts() -> None:
    lists = make_lists([[1, 0, 1], [0, 1]])
    np.testing.assert_allclose(score_at(lists, np.array([3, 1]), "precision"), [2 / 3, 0.0])
    with pytest.raises(ValueError, match="outside"):
        score_at(lists, np.array([3, 3]), "f1")
    with pytest.raises(ValueError, match="outside"):
        score_at(lists, np.array([0, 1]), "f1")
    np.testing.assert_array_equal(score_at(lists, np.array([0, 1]), "f1", allow_zero=True), [0.0, 0.0])


def test_clip_cuts_and_mean_curve_keep_short_lists_whole() -> None:
    lists = make_lists([[1, 0, 1, 0, 0], [0, 1]])
    assert clip_cuts(lists, 3).tolist() == [3, 2]
    assert clip_cuts(lists, np.int64(1)).tolist() == [1, 1]
    # a k past every list, beyond what a C long holds (fixed-k:10**23 was a traceback, a walk)
    assert clip_cuts(lists, 10 ** 23).tolist() == clip_cuts(lists, 2 ** 63).tolist() == [5, 2]
    mc = mean_curve(lists, "f1")
    assert mc.shape == (6,) and math.isnan(mc[0])
    for k in range(1, 6):
        assert mc[k] == pytest.approx(score_at(lists, clip_cuts(lists, k), "f1").mean())
    # at k = 5 the short list contributes its whole-list F1 (2/3), the long one 2·2/(5+2)
    assert mc[5] == pytest.approx((4 / 7 + 2 / 3) / 2)
    assert mean_curve(lists, "dcg", allow_zero=True)[0] == 0.0


@pytest.mark.parametrize("k", [-1, 2.0, True, "3"])
def test_clip_cuts_rejects_bad_k(k: object) -> None:
    with pytest.raises(ValueError, match="k must"):
        clip_cuts(make_lists([[1]]), k)  # type: ignore[arg-type]


def test_bad_arguments() -> None:
    lists = make_lists([[1, 0]])
    with pytest.raises(ValueError, match="metric"):
        curves(lists, "ndcg")
    with pytest.raises(ValueError, match="recall_base"):
        curves(lists, "f1", recall_base="all")
    unjudged = RankedLists.from_postings({"q": [Posting("a", 1.0, 1)]})
    with pytest.raises(ValueError, match="no relevance"):
        curves(unjudged, "f1")
    # the same relevant document listed twice: judged recall would exceed 1
    dup = RankedLists.from_postings({"q": [Posting("a", 2.0, 1), Posting("a", 1.0, 2)]}, {"q": {"a": 1}})
    with pytest.raises(ValueError, match="'q' lists more relevant"):
        curves(dup, "recall", recall_base="judged")
    with pytest.raises(ValueError, match="cutoff"):
        pm1_dcg_measure(0)


# --------------------------------------------------------------------------- loop reference
def reference(labels: list[int], extra: int, metric: str, recall_base: str) -> list[float]:
    """Eq. 7–9 written out for one list, k = 1..len(labels), with the module's 0/0 = 0."""
    n_d = sum(labels) + (extra if recall_base == "judged" else 0)
    out = []
    for k in range(1, len(labels) + 1):
        tp = sum(labels[:k])
        p = tp / k
        r = tp / n_d if n_d else 0.0
        value = {
            "precision": p,
            "recall": r,
            "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "dcg": sum((1 if y else -1) / math.log2(n + 2) for n, y in enumerate(labels[:k])),
        }[metric]
        out.append(value)
    return out


lists_strategy = st.lists(
    st.tuples(st.lists(st.integers(0, 1), min_size=1, max_size=12), st.integers(0, 3)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(data=lists_strategy, recall_base=st.sampled_from(["list", "judged"]))
def test_curves_match_loop_reference(data: list[tuple[list[int], int]], recall_base: str) -> None:
    lists = make_lists([lab for lab, _ in data], extra_relevant=[e for _, e in data])
    for metric in METRICS:
        c = curves(lists, metric, recall_base=recall_base)
        assert c.shape == (len(data), lists.max_len + 1)
        for i, (lab, extra) in enumerate(data):
            np.testing.assert_allclose(c[i, 1 : len(lab) + 1], reference(lab, extra, metric, recall_base),
                                       rtol=1e-12, atol=1e-12, err_msg=metric)
            assert np.all(np.isnan(c[i, len(lab) + 1 :]))
            assert math.isnan(c[i, 0])


# --------------------------------------------------------------------------- ir_measures

INLINE_RUN = """\
1 Q0 a 1 5.0 t
1 Q0 b 2 4.0 t
1 Q0 c 3 4.0 t
1 Q0 d 4 3.0 t
1 Q0 e 5 2.0 t
2 Q0 a 1 9.0 t
2 Q0 f 2 8.0 t
2 Q0 g 3 8.0 t
3 Q0 x 1 1.0 t
3 Q0 y 2 0.5 t
5 Q0 v 1 1.0 t
"""
INLINE_QRELS = """\
1 0 a 2
1 0 c 1
1 0 e 2
1 0 z 1
2 0 g 0
3 0 y 2
3 0 w 2
"""


def truncated_run(lists: RankedLists, cuts: np.ndarray) -> list[object]:
    ir_measures = pytest.importorskip("ir_measures")
    return [
        ir_measures.ScoredDoc(q, lists.doc_ids[i, j], float(lists.scores[i, j]))
        for i, q in enumerate(lists.qids)
        for j in range(int(cuts[i]))
    ]


def check_against_ir_measures(run: object, qrels: object, ks: list[int], threshold: int) -> None:
    """SetP/SetR/SetF of the kept prefix and PM1DCG@k equal our judged-recall curves."""
    ir_measures = pytest.importorskip("ir_measures")
    with warnings.catch_warnings():
        # run queries absent from the qrels are dropped, as ir_measures does not evaluate them
        warnings.simplefilter("ignore", trec.MissingQueriesWarning)
        lists = trec.load_trec(run, qrels, threshold=threshold, ordering="trec_eval")
    judged_qrels = [j for j in ir_measures.read_trec_qrels(qrels_text(qrels)) if j.query_id in lists.qids]
    full = truncated_run(lists, lists.lengths)
    measures = {"precision": ir_measures.SetP(rel=threshold), "recall": ir_measures.SetR(rel=threshold),
                "f1": ir_measures.SetF(rel=threshold, beta=1.0)}
    for k in ks:
        cuts = clip_cuts(lists, k)
        at_cut = truncated_run(lists, cuts)
        dcg_k, dcg_all = pm1_dcg_measure(k, rel=threshold), pm1_dcg_measure(rel=threshold)
        got: dict[object, dict[str, float]] = {}
        for m in ir_measures.iter_calc([*measures.values(), dcg_all], judged_qrels, at_cut):
            got.setdefault(m.measure, {})[m.query_id] = m.value
        for m in ir_measures.iter_calc([dcg_k], judged_qrels, full):
            got.setdefault(m.measure, {})[m.query_id] = m.value
        for metric, measure in [*measures.items(), ("dcg", dcg_all), ("dcg", dcg_k)]:
            ours = score_at(lists, cuts, metric, recall_base="judged")
            theirs = [got[measure][q] for q in lists.qids]
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=f"{measure} k={k}")


def qrels_text(qrels: object) -> str:
    if isinstance(qrels, Path):
        return qrels.read_text()
    assert isinstance(qrels, io.StringIO)
    return qrels.getvalue()


@pytest.mark.parametrize("threshold", [1, 2])
def test_inline_trec_matches_ir_measures(threshold: int) -> None:
    # query 2 has no relevant document judged (recall 0 by convention, as in trec_eval)
    check_against_ir_measures(io.StringIO(INLINE_RUN), io.StringIO(INLINE_QRELS), [1, 2, 3, 4, 5], threshold)


def test_pm1_dcg_measure_hand_values() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = list(ir_measures.read_trec_qrels(INLINE_QRELS))
    run = list(ir_measures.read_trec_run(INLINE_RUN))
    got = {(str(m.measure), m.query_id): m.value
           for m in ir_measures.iter_calc([pm1_dcg_measure(3)], qrels, run)}
    # query 1, trec_eval order a (5.0), c, b (4.0 tied: doc_id descending), d, e: + + −
    assert got[("PM1DCG@3", "1")] == pytest.approx(1 + 1 / math.log2(3) - 1 / 2)
    assert got[("PM1DCG@3", "3")] == pytest.approx(-1 + 1 / math.log2(3))
    assert ("PM1DCG@3", "5") not in got  # only queries of the qrels are evaluated, as by SetP
    assert {q for _, q in got} == {"1", "2", "3"}


def test_pm1_dcg_measure_ties_scores_at_32_bit_precision_like_trec_eval() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = list(ir_measures.read_trec_qrels("q1 0 A 1\nq1 0 B 0\n"))
    run = list(ir_measures.read_trec_run("q1 Q0 A 1 1.00000001 t\nq1 Q0 B 2 1.0 t\n"))
    # as C floats the two scores tie, and B wins the doc_id-descending tie-break
    (m,) = ir_measures.iter_calc([pm1_dcg_measure(1)], qrels, run)
    assert m.value == -1.0


@pytest.fixture(scope="module")
def robust04_paths() -> tuple[Path, Path]:
    run, qrels = ROBUST04 / "runs" / "bm25.test.run", ROBUST04 / "qrels.robust04.positives.txt"
    if not (run.exists() and qrels.exists()):
        pytest.skip("../shared/datasets/robust04 is absent")
    return run, qrels


def test_robust04_subset_matches_ir_measures(robust04_paths: tuple[Path, Path], tmp_path: Path) -> None:
    run_path, qrels_path = robust04_paths
    keep = {"651", "652", "653", "672", "674", "680"}  # 672 has no relevant document: not evaluated
    lines = [ln for ln in run_path.read_text().splitlines(keepends=True) if ln.split()[0] in keep]
    subset = tmp_path / "subset.run"
    subset.write_text("".join(lines))
    check_against_ir_measures(subset, qrels_path, [1, 5, 10, 31, 100, 300], 1)


# --------------------------------------------------------------------------- known figures
def load_robust04(name: str, ordering: str) -> RankedLists:
    run, qrels = ROBUST04 / "runs" / f"{name}.test.run", ROBUST04 / "qrels.robust04.positives.txt"
    with warnings.catch_warnings():
        # query 672 has no relevant document, so it is absent from the positives-only qrels;
        # the known figures count it (F1 = 0), hence missing="keep"
        warnings.simplefilter("ignore", trec.MissingQueriesWarning)
        return trec.load_trec(run, qrels, ordering=ordering, missing="keep")


def test_robust04_bm25_known_figures(robust04_paths: tuple[Path, Path]) -> None:
    lists = load_robust04("bm25", "rank")
    assert len(lists) == 50 and lists.lengths.tolist() == [300] * 50
    assert score_at(lists, oracle_cuts(lists, "f1"), "f1").mean() == pytest.approx(0.4413, abs=5e-5)
    assert score_at(lists, oracle_cuts(lists, "dcg"), "dcg").mean() == pytest.approx(1.2862, abs=5e-5)
    f1 = mean_curve(lists, "f1")
    assert f1[5] == pytest.approx(0.2169, abs=5e-5)
    assert f1[10] == pytest.approx(0.2768, abs=5e-5)
    assert mean_curve(load_robust04("bm25", "trec_eval"), "f1")[10] == pytest.approx(0.2751, abs=5e-5)


def test_robust04_drmm_known_oracle(robust04_paths: tuple[Path, Path]) -> None:
    lists = load_robust04("drmm", "rank")
    assert score_at(lists, oracle_cuts(lists, "f1"), "f1").mean() == pytest.approx(0.4398, abs=5e-5)


def _ragged_lists(seed: int) -> RankedLists:
    rng = np.random.default_rng(seed)
    n, width = 57, 23
    sizes = rng.integers(1, width + 1, n)
    mask = np.arange(width)[None, :] < sizes[:, None]
    gains = np.where(mask, (rng.random((n, width)) < 0.3) * rng.integers(1, 3, (n, width)), 0).astype(float)
    return RankedLists(tuple(f"q{i}" for i in range(n)), np.where(mask, 0, -1).astype(np.int32),
                       np.array(["d"], dtype=object), np.where(mask, 1.0, np.nan), mask, gains, 1.0,
                       (gains >= 1).sum(axis=1) + rng.integers(0, 3, n))


@pytest.mark.parametrize("positions", [1, 24, 100, 1000])
@pytest.mark.parametrize("metric", METRICS)
def test_block_by_block_gives_the_bits_of_one_block(monkeypatch, positions, metric) -> None:
    """Curves are computed a block of rows at a time (bounded memory); per-query values and the
    mean over queries (Fixed-k's curve) are bit for bit those of the whole matrix at once."""
    import rankcut.metrics as m

    lists = _ragged_lists(positions)
    k = np.random.default_rng(1).integers(1, lists.lengths + 1)
    for recall_base in ("list", "judged"):
        for allow_zero in (False, True):
            opts = {"recall_base": recall_base, "allow_zero": allow_zero}
            monkeypatch.setattr(m, "BLOCK_POSITIONS", 1 << 40)
            whole = (mean_curve(lists, metric, **opts), oracle_cuts(lists, metric, **opts),
                     score_at(lists, k, metric, **opts))
            monkeypatch.setattr(m, "BLOCK_POSITIONS", positions)
            blocks = (mean_curve(lists, metric, **opts), oracle_cuts(lists, metric, **opts),
                      score_at(lists, k, metric, **opts))
            for a, b in zip(whole, blocks, strict=True):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_rows_are_views_of_full_width() -> None:
    lists = _ragged_lists(0)
    part = lists.rows(10, 20)
    assert part.qids == lists.qids[10:20] and part.max_len == lists.max_len
    for a, b in ((part.gains, lists.gains), (part.mask, lists.mask), (part.doc_codes, lists.doc_codes)):
        assert np.shares_memory(a, b)
    assert np.array_equal(part.lengths, lists.lengths[10:20])
