"""Audit samples drawn from the pools of a cut run, uniformly and reproducibly (§2.3, §4, §9).

Every draw samples integers — global indices of a pool, see :mod:`rankcut.audit.pools` — and maps
them to ``(query_id, doc_id)`` items, so a pool is never built: drawing 1,000 items from
``10^4`` queries over a corpus of ``10^7`` documents (``N0 ≈ 10^11``) takes milliseconds.

* without replacement (``replace=False``, the default): a uniform random subset, returned in
  random order — the finite-corpus designs (Theorem 8, Corollary 11, Corollary 18, the
  hypergeometric strata of §9); numpy's ``Generator.choice`` uses Floyd's algorithm for a small
  sample from a large range, so the cost grows with ``n``, not ``N0``;
* with replacement (``replace=True``): i.i.d. uniform draws — the binomial designs (Theorems 7,
  10 and 17, the binomial strata of §9), since a uniform draw from a finite pool is a draw from
  ``P(· | g(X) = 0)`` under the uniform law on the corpus.

A draw is a function of the pools and the seed only (``numpy.random.default_rng(seed)``), so an
audit manifest that records both can reproduce it — under the same numpy generator streams, which
a later numpy may change (the audit's ``sample.json`` records the numpy version). The pools, the
sample sizes and the seed are fixed before any label is seen (Assumption 1).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.audit.pools import Item, Pools, check_nested

__all__ = [
    "DrawPart",
    "Draws",
    "draw_excluded",
    "draw_included",
    "draw_shared_reference",
    "draw_stratified",
    "excluded_part",
    "included_part",
    "reference_membership",
    "write_draws",
]

Seed = int | np.random.Generator


def _generator(seed_or_rng: Any) -> np.random.Generator:
    if isinstance(seed_or_rng, np.random.Generator):
        return seed_or_rng
    if isinstance(seed_or_rng, bool | np.bool_) or not isinstance(seed_or_rng, int | np.integer) \
            or seed_or_rng < 0:
        raise ValueError("seed_or_rng must be a non-negative integer seed or a numpy Generator "
                         f"(numpy.random.default_rng(seed)), got {seed_or_rng!r}")
    return np.random.default_rng(int(seed_or_rng))


def _size(n: Any, name: str = "n") -> int:
    if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {n!r}")
    return int(n)


def _indices(population: int, n: int, rng: np.random.Generator, replace: bool, pool: str
             ) -> NDArray[np.int64]:
    """``n`` uniform indices in ``[0, population)``: a uniform subset in random order, or i.i.d."""
    if not isinstance(replace, bool):
        raise ValueError(f"replace must be True or False, got {replace!r}")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if population == 0:
        raise ValueError(f"cannot draw {n} items from the {pool}: it is empty")
    if replace:
        return rng.integers(0, population, size=n, dtype=np.int64)
    if n > population:
        raise ValueError(f"cannot draw {n} items without replacement from the {pool}: it holds "
                         f"only {population}")
    return rng.choice(population, size=n, replace=False).astype(np.int64)


def _pools(pools: Any, name: str = "pools") -> Pools:
    if not isinstance(pools, Pools):
        raise ValueError(f"{name} must be a Pools object, got {type(pools).__name__}")
    return pools


def draw_excluded(pools: Pools, n: int, seed_or_rng: Seed, *, replace: bool = False) -> list[Item]:
    """``n`` items drawn uniformly from the excluded pool ``E = {g = 0}`` of ``N0`` items.

    The excluded-pool audit of Theorem 7 (``replace=True``, i.i.d.) and Theorem 8 (``replace=False``,
    without replacement); also the excluded half of the two-pool designs (Theorem 10,
    Corollary 11) and one separate audit per prefix (Corollary 16).

    :param pools: the pools of the cut.
    :param n: sample size ``n0``.
    :param seed_or_rng: an integer seed or a ``numpy.random.Generator``.
    :param replace: i.i.d. draws when True; a uniform subset, in random order, when False.
    :returns: ``n`` items ``(query_id, doc_id)``.
    :raises ValueError: for ``n > N0`` without replacement, or ``n > 0`` from an empty pool.
    """
    p = _pools(pools)
    idx = _indices(p.n0, _size(n), _generator(seed_or_rng), replace, "excluded pool")
    return p.excluded_items(idx)


def excluded_part(pools: Pools, n: int, seed_or_rng: Seed, *, replace: bool = False) -> DrawPart:
    """The draws of :func:`draw_excluded` (the same for the same generator) as indices, the
    items not built: a part of a :class:`Draws`."""
    p = _pools(pools)
    idx = _indices(p.n0, _size(n), _generator(seed_or_rng), replace, "excluded pool")
    return DrawPart("excluded", None, None, idx, p.excluded_items)


def included_part(pools: Pools, n: int, seed_or_rng: Seed, *, replace: bool = False) -> DrawPart:
    """The draws of :func:`draw_included` as indices (see :func:`excluded_part`)."""
    p = _pools(pools)
    idx = _indices(p.n1, _size(n), _generator(seed_or_rng), replace, "included pool")
    return DrawPart("included", None, None, idx, p.included_items)


def draw_included(pools: Pools, n: int, seed_or_rng: Seed, *, replace: bool = False) -> list[Item]:
    """``n`` items drawn uniformly from the included pool ``I = {g = 1}`` of ``N1`` items: the
    included half of the two-pool recall designs (Theorem 10 i.i.d., Corollary 11 without
    replacement). Arguments as for :func:`draw_excluded`."""
    p = _pools(pools)
    idx = _indices(p.n1, _size(n), _generator(seed_or_rng), replace, "included pool")
    return p.included_items(idx)


def draw_stratified(pools: Pools, bands: ArrayLike, n_per_band: int | Sequence[int],
                    seed_or_rng: Seed | Sequence[Seed], *, replace: bool = False) -> list[list[Item]]:
    """Draws from rank bands below the cut, one uniform sample per band (stratified audit, §9).

    The strata are the bands of :meth:`Pools.band_sizes`: offsets ``0 = o_1 < … < o_B``, band ``s``
    of query ``q`` holding positions ``k_q + 1 + o_s … k_q + o_{s+1}`` of its line of items (its
    ranks below the cut, then its unretrieved corpus documents, so a list that ends inside or
    above a band puts corpus documents in it), the last band everything beyond ``k_q + o_B``; they
    partition the excluded pool and are observable before any label. Certify with
    :func:`rankcut.certify.stratified.stratified_hypergeometric_certificate` (without replacement,
    stratum sizes ``N_s`` from :meth:`Pools.band_sizes`) or
    :func:`~rankcut.certify.stratified.stratified_binomial_certificate` (``replace=True``, weights
    ``w_s = N_s / N0``). Bands, sizes and ``δ_s`` are fixed before the labels (Assumption 1).

    :param bands: band offsets ``[B]``.
    :param n_per_band: one sample size for every band, or one per band.
    :param seed_or_rng: one seed or generator, drawn from band after band; or one per band, each
        band then drawn from its own stream (changing one band's size never changes another's
        draws).
    :returns: per band, its items (``B`` lists).
    :raises ValueError: for a band asked more items than it holds (without replacement) or any
        item from an empty band.
    """
    p = _pools(pools)
    sizes = p.band_sizes(bands)
    if isinstance(n_per_band, Sequence | np.ndarray):
        counts = [_size(v, f"n_per_band[{s}]") for s, v in enumerate(n_per_band)]
        if len(counts) != sizes.size:
            raise ValueError(f"n_per_band must give one size per band ({sizes.size}), got {len(counts)}")
    else:
        counts = [_size(n_per_band, "n_per_band")] * sizes.size
    if isinstance(seed_or_rng, Sequence | np.ndarray):
        if len(seed_or_rng) != sizes.size:
            raise ValueError(f"seed_or_rng must give one seed or generator per band ({sizes.size}), got "
                             f"{len(seed_or_rng)}")
        rngs = [_generator(r) for r in seed_or_rng]
    else:
        rngs = [_generator(seed_or_rng)] * sizes.size
    out = []
    for s, (size, n) in enumerate(zip(sizes.tolist(), counts, strict=True)):
        idx = _indices(size, n, rngs[s], replace, f"band {s} (offsets from {np.asarray(bands)[s]})")
        out.append(p.band_items(bands, s, idx))
    return out


def _family(pools_family: Any) -> list[Pools]:
    """A nested family of pools over the same lists, smallest candidate set first."""
    if isinstance(pools_family, Pools) or not isinstance(pools_family, Sequence) or not pools_family:
        raise ValueError("pools_family must be a non-empty sequence of Pools, smallest candidate set first")
    members = [_pools(p, f"pools_family[{m}]") for m, p in enumerate(pools_family)]
    for m, p in enumerate(members[1:], 1):
        if not members[0].same_lists(p):
            raise ValueError(f"pools_family[{m}] has other queries, lists or corpus than pools_family[0]: "
                             "a family cuts the same lists")
    check_nested(np.stack([p.cuts for p in members], axis=1), members[0].qids)
    return members


def draw_shared_reference(pools_family: Sequence[Pools], n: int, seed_or_rng: Seed, *,
                          replace: bool = False) -> list[Item]:
    """One reference sample shared by every member of a nested family (§4.7).

    Draws uniformly from ``R = E_1``, the excluded pool of the first (shallowest) member, which
    holds every ``E_m`` (``E_1 ⊇ … ⊇ E_M``). With ``replace=True`` the draws are i.i.d. from
    ``P(· | R)`` as in Theorem 17 (``R = E_1``, ``reference_mass = p0(g_1)``); without
    replacement they are the uniform subset of Corollary 18 (``reference_pool_size = N0(g_1)``).
    The same sample may feed fixed-sequence testing (Theorem 19). Count it per member with
    :func:`reference_membership` and
    :func:`rankcut.certify.prefixes.shared_reference_counts`.

    :param pools_family: pools of each member, smallest candidate set first, cutting the same
        lists (e.g. ``base.with_cuts(family[:, m])``).
    :raises ValueError: for a family that is not nested (query and members named) or mixes lists.
    """
    members = _family(pools_family)
    return draw_excluded(members[0], n, seed_or_rng, replace=replace)


def reference_membership(pools_family: Sequence[Pools], items: Sequence[Item]) -> NDArray[np.bool_]:
    """``[n, M]`` booleans, ``[i, m]`` true when item ``i`` lies in the excluded pool ``E_m``:
    the ``excluded`` argument of :func:`rankcut.certify.prefixes.shared_reference_counts`
    (``n_eff_m`` and ``K_m`` of Theorem 17 / Corollary 18)."""
    members = _family(pools_family)
    if not items:
        return np.zeros((0, len(members)), dtype=bool)
    # the members cut the same lists: locate each item once, compare with every member's cuts
    rows, pos = members[0].item_positions(items)
    return np.stack([pos >= p.cuts[rows] for p in members], axis=1)


# ---------------------------------------------------------------------------------------------
# a drawn sample, kept as indices and written a chunk at a time

#: draws turned into items (and lines of ``sample.jsonl``) at a time: a sample of millions of
#: draws never exists as millions of Python objects
CHUNK = 1 << 16


@dataclass(frozen=True)
class DrawPart:
    """The draws from one pool (a member's or a band's): its global indices ``[n]`` and the map
    from indices to items (:meth:`Pools.excluded_items`, :meth:`Pools.included_items`)."""

    pool: str
    member: int | None
    stratum: int | None
    indices: NDArray[np.int64]
    items: Callable[[NDArray[np.int64]], list[Item]]


class Draws(Sequence[dict[str, Any]]):
    """A drawn sample as index arrays, part after part: a sequence of the rows of ``sample.jsonl``
    (``pool``, ``member``, ``stratum``, ``query_id``, ``doc_id``, ``draw``, numbered in order),
    each built when it is read. :meth:`chunks`, :meth:`items` and :func:`write_draws` go through
    the sample :data:`CHUNK` draws at a time."""

    def __init__(self, parts: Sequence[DrawPart]) -> None:
        self.parts = tuple(parts)
        self._starts = np.cumsum([0, *(len(p.indices) for p in self.parts)])

    def __len__(self) -> int:
        return int(self._starts[-1])

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        j = i + len(self) if i < 0 else i
        if not 0 <= j < len(self):
            raise IndexError(f"draw {i} of a sample of {len(self)}")
        k = int(np.searchsorted(self._starts, j, side="right")) - 1
        part = self.parts[k]
        ((q, d),) = part.items(part.indices[j - self._starts[k]:j - self._starts[k] + 1])
        return _row(part, q, d, j)

    def chunks(self) -> Iterator[tuple[DrawPart, int, list[Item]]]:
        """``(part, number of its first draw, items)`` for each run of up to :data:`CHUNK` draws."""
        for part, start in zip(self.parts, self._starts.tolist(), strict=False):
            for lo in range(0, len(part.indices), CHUNK):
                yield part, start + lo, part.items(part.indices[lo:lo + CHUNK])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for part, first, items in self.chunks():
            for j, (q, d) in enumerate(items, first):
                yield _row(part, q, d, j)

    def items(self) -> Iterator[Item]:
        """The ``(query_id, doc_id)`` of every draw, in draw order."""
        for _, _, items in self.chunks():
            yield from items

    def n_distinct(self) -> int:
        """The distinct items drawn. The excluded and included pools are disjoint and each maps its
        indices one to one onto its items, so one part per pool is counted from its indices; parts
        of members or bands (whose pools may overlap) are counted by their items."""
        pools = [p.pool for p in self.parts]
        if len(set(pools)) < len(pools) or any(p.member is not None or p.stratum is not None
                                               for p in self.parts):
            return len(set(self.items()))
        return sum(int(np.unique(p.indices).size) for p in self.parts)

    def is_included(self) -> NDArray[np.bool_]:
        """``[n]``: whether each draw is from the included pool."""
        return np.concatenate([np.full(len(p.indices), p.pool == "included") for p in self.parts]
                              or [np.zeros(0, dtype=bool)])

    def lines(self) -> Iterator[str]:
        """The lines of ``sample.jsonl``: each row's canonical JSON (sorted keys, no spaces, UTF-8 as
        is; :func:`rankcut.audit.manifest.canonical_json`), written out field by field."""
        dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
        for part, first, items in self.chunks():
            pool = dumps(part.pool)
            member = "null" if part.member is None else str(int(part.member))
            stratum = "null" if part.stratum is None else str(int(part.stratum))
            yield "".join(f'{{"doc_id":{dumps(d)},"draw":{j},"member":{member},"pool":{pool},'
                          f'"query_id":{dumps(q)},"stratum":{stratum}}}\n'
                          for j, (q, d) in enumerate(items, first))


def _row(part: DrawPart, q: str, d: str, draw: int) -> dict[str, Any]:
    return {"pool": part.pool, "member": part.member, "stratum": part.stratum, "query_id": q,
            "doc_id": d, "draw": draw}


def write_draws(path: str | os.PathLike[str], rows: Sequence[dict[str, Any]]) -> str:
    """Write ``sample.jsonl`` — one draw a line, canonical JSON — atomically, a chunk of draws at a
    time, and return its sha256 (hex): a sample of :class:`Draws` is never held as text or rows."""
    from rankcut.audit.manifest import canonical_json
    from rankcut.data.io import write_atomic

    digest = hashlib.sha256()

    def blocks() -> Iterator[bytes]:
        if isinstance(rows, Draws):
            texts: Iterator[str] = rows.lines()
        else:
            texts = ("".join(canonical_json(dict(r)).decode("utf-8") + "\n" for r in rows[lo:lo + CHUNK])
                     for lo in range(0, len(rows), CHUNK))
        for text in texts:
            block = text.encode("utf-8")
            digest.update(block)
            yield block

    write_atomic(path, blocks())
    return digest.hexdigest()
