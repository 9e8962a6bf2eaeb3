"""The CAL ranker (rankcut.review.cal): AutoTAR batches, seeded and deterministic, a valid screener."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from review_testdata import toy_records

from rankcut.certify.interleaved import SCREEN, InterleavedRule, interleaved_recall_certificate
from rankcut.certify.policies import ProjectedCostPolicy, ReviewState
from rankcut.certify.simulate import play
from rankcut.review.cal import CALConfig, CALScreener, tfidf_features
from rankcut.review.records import load_records


def _screen_all(screener: CALScreener, labels: np.ndarray, steps: int) -> list[int]:
    state = ReviewState(labels.size, InterleavedRule(0.99))
    order = []
    for _ in range(steps):
        doc = screener.next_screen(state)
        order.append(doc)
        state.record(SCREEN, doc, int(labels[doc]))
    return order


def test_the_same_labels_and_seed_give_the_same_order() -> None:
    r = toy_records()
    a = _screen_all(CALScreener(r.texts), r.labels, 60)
    b = _screen_all(CALScreener(r.texts), r.labels, 60)
    assert a == b and len(set(a)) == 60
    assert a != _screen_all(CALScreener(r.texts, CALConfig(seed=1)), r.labels, 60)


def test_batches_grow_by_a_tenth_rounded_up() -> None:
    r = toy_records()
    first = int(np.flatnonzero(r.labels)[0])
    screener = CALScreener(r.texts, prior=np.where(np.arange(len(r)) == first, 1, -1).astype(np.int8))
    sizes, b = [], 1
    while sum(sizes) + b <= 100:
        sizes.append(b)
        b += -(-b // 10)
    assert sizes[:12] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]
    _screen_all(screener, r.labels, 1 + sum(sizes))       # the prior record, then the batches
    assert screener.fits_ == len(sizes)


def test_it_learns_the_topic_from_one_relevant_record() -> None:
    r = toy_records()
    first = int(np.flatnonzero(r.labels)[0])
    prior = np.full(len(r), -1, dtype=np.int8)
    prior[first] = 1
    order = _screen_all(CALScreener(r.texts, prior=prior), r.labels, 20)
    assert order[0] == first
    assert r.labels[order].sum() == r.labels.sum()     # every relevant record within 20 reads


def test_without_prior_or_query_it_reads_at_random_or_in_run_order_until_a_find() -> None:
    r = toy_records()
    none = np.zeros(len(r), dtype=np.int8)              # no relevant record at all: never a fit
    random = _screen_all(CALScreener(r.texts), none, 30)
    assert random == np.random.default_rng(0).permutation(len(r))[:30].tolist()
    assert _screen_all(CALScreener(r.texts, ranked=True), none, 30) == list(range(30))


def test_a_seed_query_steers_the_first_batch() -> None:
    r = toy_records()
    order = _screen_all(CALScreener(r.texts, CALConfig(query="migraine triptan headache")), r.labels, 10)
    assert r.labels[order].sum() >= 8


def test_it_starts_afresh_on_a_new_review() -> None:
    r = toy_records()
    screener = CALScreener(r.texts)
    first = _screen_all(screener, r.labels, 40)
    assert _screen_all(screener, r.labels, 40) == first


def test_a_cal_review_certifies_and_the_certificate_recomputes_from_its_moves() -> None:
    r = toy_records(400, 30)
    run = play(r.labels, np.random.default_rng(5).permutation(400), ProjectedCostPolicy(batch=20, chunk=10),
               InterleavedRule(0.8), CALScreener(r.texts))
    assert run.certified and not run.false_claim and run.read < 400
    cert = interleaved_recall_certificate(400, run.moves, run.labels, target=0.8)
    assert cert.details["certified"] and cert.value >= 0.8


def test_audit_reads_train_the_model_too() -> None:
    r = toy_records()
    first = int(np.flatnonzero(r.labels)[0])
    state = ReviewState(len(r), InterleavedRule(0.99))
    state.record("a", first, 1)                        # an audit draw finds a relevant record
    screener = CALScreener(r.texts)
    order = [screener.next_screen(state)]
    state.record(SCREEN, order[0], int(r.labels[order[0]]))
    assert screener.fits_ == 1 and r.labels[order[0]] == 1


def test_config_round_trips_through_json_and_refuses_bad_values() -> None:
    c = CALConfig(model="svm", seed=3, query="q")
    assert CALConfig.from_json(c.to_json()) == c
    with pytest.raises(ValueError, match="missing: seed"):
        CALConfig.from_json({k: v for k, v in c.to_json().items() if k != "seed"})
    with pytest.raises(ValueError, match="model must be one of logistic, svm, got 'nb'"):
        CALConfig(model="nb")
    with pytest.raises(ValueError, match="first_batch must be an integer ≥ 1, got 0"):
        CALConfig(first_batch=0)
    with pytest.raises(ValueError, match="l2 must be a positive number"):
        CALConfig(l2=0.0)
    with pytest.raises(ValueError, match="ngrams must be 1 or 2, got 3"):
        CALConfig(ngrams=3)
    with pytest.raises(ValueError, match="balanced must be true or false, got 1"):
        CALConfig(balanced=1)  # type: ignore[arg-type]
    d = CALConfig(ngrams=2, balanced=True)
    assert CALConfig.from_json(d.to_json()) == d and d.to_json()["ngrams"] == 2


def test_bigrams_and_balanced_weights_change_the_ranker_and_stay_deterministic() -> None:
    r = toy_records()
    prior = np.full(len(r), -1, dtype=np.int8)
    prior[int(np.flatnonzero(r.labels)[0])] = 1
    words = CALScreener(r.texts, prior=prior)
    pairs = CALScreener(r.texts, CALConfig(ngrams=2, balanced=True), prior=prior)
    assert pairs.matrix_.shape[1] > words.matrix_.shape[1]          # the bigrams are features
    a = _screen_all(pairs, r.labels, 40)
    assert a == _screen_all(CALScreener(r.texts, CALConfig(ngrams=2, balanced=True), prior=prior),
                            r.labels, 40)
    assert r.labels[a].sum() >= 10                                   # of 12: it still learns


def test_an_svm_ranker_also_learns() -> None:
    r = toy_records()
    prior = np.full(len(r), -1, dtype=np.int8)
    prior[int(np.flatnonzero(r.labels)[0])] = 1
    order = _screen_all(CALScreener(r.texts, CALConfig(model="svm"), prior=prior), r.labels, 20)
    assert r.labels[order].sum() >= 10                 # of 12; reading at random finds 2


SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "screening"


@pytest.mark.parametrize("ngrams", [1, 2])
def test_the_features_are_the_vectorizers_bit_for_bit(ngrams: int) -> None:
    """One pass over the texts gives ``TfidfVectorizer``'s ``fit`` then ``transform`` values exactly
    (a review started with those replays the same), the query's too. Real abstracts where they are
    at hand: their vocabulary and lengths make the norms' order of addition matter."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = (load_records(SHARED / "cohen2006-ADHD.csv", label="label_included").texts if SHARED.is_dir()
             else toy_records(300, 20).texts)
    query = ["methylphenidate attention deficit children trial"]
    matrix, encode = tfidf_features(texts, ngrams)
    vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, ngrams), dtype=np.float64).fit(texts)
    for mine, theirs in ((matrix, vectorizer.transform(texts)), (encode(query), vectorizer.transform(query))):
        assert mine.dtype == theirs.dtype == np.float64
        assert np.array_equal(mine.indptr, theirs.indptr) and np.array_equal(mine.indices, theirs.indices)
        assert np.array_equal(mine.data, theirs.data)    # exactly, not approximately
