"""A seeded simulation of a screening review: known labels play the reviewer.

The review is the interleaved one of :mod:`rankcut.certify.interleaved`: at every step the
policy (:data:`rankcut.review.session.POLICY` by default) screens the document
the CAL ranker picks (:class:`~rankcut.review.cal.CALScreener`) or audits the next unread
document of a frozen random order; the review stops at the first step that certifies recall
≥ ``target`` at ``1 − delta``. Seed ``s`` draws the audit order with
``numpy.random.default_rng(s)``; the ranker's own randomness is its configuration's seed, so a
simulation is a function of the records, the labels, the configuration and the seeds. This is how
every TAR tool is benchmarked (and how ``benchmarks/bench_review.py`` measures this one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from rankcut._util import check_int
from rankcut.audit.designs.interleaved import build_policy, policy_spec
from rankcut.certify.interleaved import InterleavedRule
from rankcut.certify.policies import Policy
from rankcut.certify.simulate import InterleavedRun, play
from rankcut.review.cal import CALConfig, CALScreener
from rankcut.review.records import Records
from rankcut.review.session import POLICY, PRIOR_BASIS

__all__ = ["Simulation", "simulate_review"]


@dataclass(frozen=True)
class Simulation:
    """The reviews of one set of records, one per seed (:func:`simulate_review`)."""

    name: str
    target: float
    delta: float
    config: CALConfig
    seeds: tuple[int, ...]
    runs: tuple[InterleavedRun, ...]

    @property
    def read(self) -> NDArray[np.int64]:
        """Documents read per seed (all of them where a review never certified)."""
        return np.array([r.read for r in self.runs], dtype=np.int64)

    @property
    def false_claims(self) -> NDArray[np.bool_]:
        """Seeds whose review certified although its recall was below the target."""
        return np.array([r.false_claim for r in self.runs], dtype=bool)


def _truth(records: Records, labels: Mapping[str, int] | None) -> NDArray[np.int8]:
    if labels is None:
        if records.labels is None:
            raise ValueError(f"{records.name}: a simulation needs every record's label; give a label "
                             "column labelled on every record, or qrels (labels=)")
        return records.labels
    return np.array([int(labels.get(r, 0) > 0) for r in records.ids], dtype=np.int8)


def simulate_review(records: Records, *, target: float = 0.8, delta: float = 0.05,
                    policy: Policy | None = None, config: CALConfig | None = None,
                    seeds: Sequence[int] | range = range(1), labels: Mapping[str, int] | None = None,
                    progress: bool = False, prior_basis: str = PRIOR_BASIS) -> Simulation:
    """Simulate the review of ``records`` once per seed (module docstring).

    :param labels: record id → relevance (e.g. one query of qrels; an id it lacks is 0), instead
        of the records' own labels.
    :param progress: draw a tqdm bar over the seeds (the caller decides, :mod:`rankcut._progress`).
    :param prior_basis: the certificate's prior basis (:class:`~rankcut.certify.interleaved.InterleavedRule`).
    :raises ValueError: without labels for every record, with prior knowledge that contradicts
        them, or seeds that are not a non-empty sequence of integers ≥ 0.
    """
    if isinstance(seeds, np.ndarray) and seeds.ndim == 1:   # np.arange(5), as range(5)
        seeds = seeds.tolist()
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Sequence) or not seeds:
        raise ValueError(f"seeds must be a non-empty sequence of integers, e.g. range(5) or [0, 3], got "
                         f"{seeds!r}")
    seeds = tuple(check_int(s, "each seed", low=0) for s in seeds)   # 1.5 ran seed 1
    y = _truth(records, labels)
    known = records.prior >= 0
    if (records.prior[known] != y[known]).any():
        at = int(np.flatnonzero(known & (records.prior != y))[0])
        raise ValueError(f"{records.name}: the prior knowledge of record {records.ids[at]!r} "
                         f"({records.prior[at]}) contradicts its label ({y[at]})")
    config = CALConfig() if config is None else config
    policy = build_policy(policy_spec(POLICY)) if policy is None else policy
    rule = InterleavedRule(target, delta, prior_basis=prior_basis)
    screener = CALScreener(records.texts, config, prior=records.prior, ranked=records.ranked)
    runs = tuple(play(y, np.random.default_rng(s).permutation(y.size), policy, rule, screener)
                 for s in tqdm(seeds, desc=f"simulate {records.name}", unit="seed", disable=not progress))
    return Simulation(records.name, target, delta, config, seeds, runs)
