"""Audit draws: exact uniformity on tiny pools (over many seeds), distinctness, reproducibility,
edge cases, strata and the shared reference sample of a nested family."""

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy import stats

from rankcut.audit.pools import Corpus, Pools, depth_family
from rankcut.audit.sampling import (
    draw_excluded,
    draw_included,
    draw_shared_reference,
    draw_stratified,
    reference_membership,
)
from rankcut.certify.prefixes import shared_reference_counts

QIDS = ("q1", "q2", "q3")
LISTS = (("b", "d"), (), ("e", "a", "c"))
CORPUS = ("a", "b", "c", "d", "e")
SEEDS = 3000
ALPHA = 1e-6  # family-wise chance that a correct sampler fails a frequency check


def tiny() -> Pools:
    """N1 = 4, N0 = 11: ranks below the cut and unretrieved corpus documents, an empty list."""
    return Pools(QIDS, LISTS, [1, 0, 3], Corpus.ids(CORPUS))


def check_frequencies(counts: Counter, population: list, draws: int, p: float) -> None:
    """Each item's count is Binomial(draws, p): all inside the two-sided ALPHA/|population|
    quantiles (Bonferroni), and no item outside the population."""
    assert set(counts) <= set(population)
    lo, hi = stats.binom.ppf(ALPHA / (2 * len(population)), draws, p), \
        stats.binom.isf(ALPHA / (2 * len(population)), draws, p)
    for item in population:
        assert lo <= counts[item] <= hi, (item, counts[item], lo, hi)


def chi_square_p(counts: Counter, cells: list) -> float:
    observed = np.array([counts[c] for c in cells], dtype=float)
    return float(stats.chisquare(observed).pvalue)


# ---------------------------------------------------------------------------------------------
# uniformity, exactly checked on a tiny pool


def test_without_replacement_every_subset_equally_likely():
    p = tiny()
    pool = p.excluded_items(range(p.n0))
    samples = [draw_excluded(p, 3, seed) for seed in range(SEEDS)]
    for s in samples:
        assert len(set(s)) == 3  # distinct
    items = Counter(it for s in samples for it in s)
    check_frequencies(items, pool, SEEDS, 3 / p.n0)  # inclusion probability n/N0 for each item
    subsets = Counter(frozenset(s) for s in samples)
    cells = [frozenset(c) for c in itertools.combinations(pool, 3)]
    assert set(subsets) <= set(cells)
    assert chi_square_p(subsets, cells) > 1e-4  # all C(11, 3) = 165 subsets equally likely


def test_with_replacement_draws_are_iid_uniform():
    p = tiny()
    pool = p.excluded_items(range(p.n0))
    samples = [draw_excluded(p, 2, seed, replace=True) for seed in range(SEEDS)]
    items = Counter(it for s in samples for it in s)
    check_frequencies(items, pool, 2 * SEEDS, 1 / p.n0)
    assert chi_square_p(items, pool) > 1e-4
    pairs = Counter(tuple(s) for s in samples)  # (first, second) uniform over N0^2: independent
    assert chi_square_p(pairs, list(itertools.product(pool, repeat=2))) > 1e-4
    assert any(s[0] == s[1] for s in samples)  # repeats happen with replacement


def test_included_draws_are_uniform():
    p = tiny()
    pool = p.included_items(range(p.n1))
    samples = [draw_included(p, 2, seed) for seed in range(SEEDS)]
    items = Counter(it for s in samples for it in s)
    check_frequencies(items, pool, SEEDS, 2 / p.n1)
    cells = [frozenset(c) for c in itertools.combinations(pool, 2)]
    assert chi_square_p(Counter(frozenset(s) for s in samples), cells) > 1e-4


def test_whole_pool_without_replacement_is_a_permutation():
    p = tiny()
    drawn = draw_excluded(p, p.n0, 7)
    assert sorted(drawn) == sorted(p.excluded_items(range(p.n0)))


def test_reproducible_from_the_seed():
    p = tiny()
    assert draw_excluded(p, 5, 42) == draw_excluded(p, 5, 42)
    assert draw_excluded(p, 5, 42) == draw_excluded(p, 5, np.random.default_rng(42))
    assert len({tuple(draw_excluded(p, 5, s)) for s in range(20)}) > 1
    rng = np.random.default_rng(1)
    assert draw_excluded(p, 5, rng) != draw_excluded(p, 5, rng)  # a Generator advances


# ---------------------------------------------------------------------------------------------
# edge cases


def test_empty_pools_and_too_many_draws():
    full = Pools(QIDS, LISTS, [2, 0, 3])  # k = L, no corpus: N0 = 0
    assert full.n0 == 0
    assert draw_excluded(full, 0, 1) == []
    assert draw_excluded(full, 0, 1, replace=True) == []
    with pytest.raises(ValueError, match="cannot draw 1 items from the excluded pool: it is empty"):
        draw_excluded(full, 1, 1)
    with pytest.raises(ValueError, match="it is empty"):
        draw_excluded(full, 1, 1, replace=True)
    nothing_kept = full.with_cuts([0, 0, 0])
    with pytest.raises(ValueError, match="included pool: it is empty"):
        draw_included(nothing_kept, 1, 1)
    p = tiny()
    with pytest.raises(ValueError, match="cannot draw 12 items without replacement from the excluded pool: "
                                         "it holds only 11"):
        draw_excluded(p, 12, 1)
    assert len(draw_excluded(p, 12, 1, replace=True)) == 12


@pytest.mark.parametrize("seed", [-1, 1.5, True, None, "1"])
def test_bad_seeds_are_refused(seed):
    with pytest.raises(ValueError, match="seed_or_rng must be a non-negative integer seed or a numpy"):
        draw_excluded(tiny(), 1, seed)


def test_bad_arguments_are_refused():
    p = tiny()
    for make, match in [(lambda: draw_excluded(p, -1, 0), "n must be a non-negative integer"),
                        (lambda: draw_excluded(p, 2.0, 0), "n must be a non-negative integer"),
                        (lambda: draw_excluded(p, 1, 0, replace=1), "replace must be True or False"),
                        (lambda: draw_excluded("pools", 1, 0), "pools must be a Pools object")]:
        with pytest.raises(ValueError, match=match):
            make()


def test_large_pools_draw_without_building_them():
    q = 10_000
    p = Pools([f"q{i}" for i in range(q)], [tuple(f"d{i}-{r}" for r in range(10)) for i in range(q)],
              np.full(q, 5), Corpus.size(10**7))
    assert p.n0 == q * (10**7 - 5)
    drawn = draw_excluded(p, 1000, 3)
    assert len(set(drawn)) == 1000
    assert p.excluded_mask(drawn).all()
    beyond = sum(d.startswith("#") for _, d in drawn)
    assert beyond > 990  # the listed ranks 6..10 are 5 of 10^7 - 5 items per query
    assert len(draw_excluded(p, 1000, 3, replace=True)) == 1000


# ---------------------------------------------------------------------------------------------
# strata


def test_stratified_draws_stay_in_their_band_and_are_uniform():
    p = tiny()
    bands = [0, 1, 3]
    sizes = p.band_sizes(bands)
    assert sizes.tolist() == [3, 5, 3]  # n0_q = [4, 5, 2]
    members = [p.band_items(bands, s, range(sizes[s])) for s in range(3)]
    counts = [Counter() for _ in range(3)]
    for seed in range(SEEDS // 3):
        out = draw_stratified(p, bands, [1, 2, 1], seed)
        assert [len(x) for x in out] == [1, 2, 1]
        for s, x in enumerate(out):
            counts[s].update(x)
            assert set(x) <= set(members[s])
        assert len(set(out[1])) == 2
    for s, n in enumerate([1, 2, 1]):
        check_frequencies(counts[s], members[s], SEEDS // 3, n / sizes[s])


def test_stratified_sizes_and_errors():
    p = tiny()
    out = draw_stratified(p, [0, 2], 2, 5)
    assert [len(x) for x in out] == [2, 2]
    assert draw_stratified(p, [0, 2], 2, 5) == out
    with pytest.raises(ValueError, match=r"cannot draw 5 items without replacement from the band 0 .*only 3"):
        draw_stratified(p, [0, 1], [5, 0], 0)
    with pytest.raises(ValueError, match="one size per band"):
        draw_stratified(p, [0, 1], [1], 0)
    with pytest.raises(ValueError, match="starting at 0"):
        draw_stratified(p, [1, 2], 1, 0)
    with pytest.raises(ValueError, match=r"bands must be strictly increasing, got 0 before 0"):
        draw_stratified(p, [0, 0], 1, 0)
    with pytest.raises(ValueError, match="band 1 .*it is empty"):
        draw_stratified(Pools(["q"], [("a", "b")], [0]), [0, 5], 1, 0)


def test_stratified_draws_from_one_stream_per_band():
    p = tiny()
    one = draw_stratified(p, [0, 1, 3], [1, 2, 1], [7, 8, 9])
    other = draw_stratified(p, [0, 1, 3], [3, 2, 1], [7, 8, 9])  # only band 0's size changed
    assert one[1:] == other[1:]
    assert one == draw_stratified(p, [0, 1, 3], [1, 2, 1], [np.random.default_rng(v) for v in (7, 8, 9)])
    with pytest.raises(ValueError, match="one seed or generator per band"):
        draw_stratified(p, [0, 1, 3], 1, [7, 8])


# ---------------------------------------------------------------------------------------------
# shared reference for a nested family


def family() -> list[Pools]:
    base = tiny()
    cuts = depth_family(base.lengths, [0, 1, 2])
    return [base.with_cuts(cuts[:, m]) for m in range(3)]


def test_shared_reference_draws_uniformly_from_the_largest_excluded_pool():
    fam = family()
    reference = fam[0].excluded_items(range(fam[0].n0))  # E_1, the shallowest member's pool
    assert fam[0].n0 == 15 and [f.n0 for f in fam] == [15, 13, 11]
    counts = Counter()
    for seed in range(SEEDS // 3):
        counts.update(draw_shared_reference(fam, 4, seed))
    check_frequencies(counts, reference, SEEDS // 3, 4 / 15)
    assert draw_shared_reference(fam, 4, 9, replace=True) == draw_excluded(fam[0], 4, 9, replace=True)


def test_reference_membership_counts_each_member():
    fam = family()
    drawn = draw_shared_reference(fam, 15, 0)  # the whole reference pool
    member = reference_membership(fam, drawn)
    assert member.shape == (15, 3)
    # located once, compared with every member's cuts: the same as asking each member
    assert np.array_equal(member, np.stack([f.excluded_mask(drawn) for f in fam], axis=1))
    rows, pos = fam[0].item_positions(drawn)
    assert np.array_equal(member, pos[:, None] >= np.stack([f.cuts[rows] for f in fam], axis=1))
    for m in range(3):
        assert member[:, m].sum() == fam[m].n0
        inside = {it for it, yes in zip(drawn, member[:, m], strict=True) if yes}
        assert inside == set(fam[m].excluded_items(range(fam[m].n0)))
    n_eff, k = shared_reference_counts(member, np.array([d == "c" for _, d in drawn]))
    assert n_eff.tolist() == [15, 13, 11]
    assert k.tolist() == [3, 3, 3]  # 'c': unretrieved by q1 and q2, rank 3 of q3 (below every cut)
    assert reference_membership(fam, []).shape == (0, 3)


def test_shared_reference_refuses_families_that_are_not_nested_or_mix_lists():
    fam = family()
    with pytest.raises(ValueError, match="query 'q1': member 2 keeps 1 documents but member 3 keeps only 0"):
        draw_shared_reference([fam[0], fam[1], fam[0]], 1, 0)
    other = Pools(QIDS, LISTS, [0, 0, 0], Corpus.size(5))
    with pytest.raises(ValueError, match=r"pools_family\[1\] has other queries, lists or corpus"):
        draw_shared_reference([fam[0], other], 1, 0)
    with pytest.raises(ValueError, match="non-empty sequence of Pools"):
        draw_shared_reference([], 1, 0)
    with pytest.raises(ValueError, match="non-empty sequence of Pools"):
        reference_membership(fam[0], [])
