"""What an audit design is: the :class:`Design` protocol, the typed results of its hooks, and
:class:`FixedSampleDesign`, the behaviour the fixed-size designs share.

A design answers, for the steps of :mod:`rankcut.audit.workflow`: which result of the audit paper
it certifies with (:meth:`Design.theorem`), how ``δ`` is spent (its named δ events, the budget of
the joint report), what it refuses at freeze, how it plans and normalises sample sizes, how it
draws the sample and orders the items to label, what it counts from the labels, which
certificates it computes from those counts, the bound-against-labels curve, and what ``status``
says. Every design holds under Assumption 1 (§2.3): the cut and the rule are frozen before any
label is examined; the workflow's guards enforce that, the design never relaxes them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from rankcut.audit import labels as labels_mod
from rankcut.audit import provenance
from rankcut.audit.folder import (
    CERTIFICATE_FILE,
    LABELS_FILE,
    OPENED_FILE,
    SAMPLE_FILE,
    SAMPLE_ITEMS,
    Audit,
    FrozenAudit,
    MemberSize,
    distinct_items,
    open_store,
    read_rows,
    refuse_if_opened,
)
from rankcut.audit.manifest import Manifest, load_manifest, read_json
from rankcut.audit.options import check_count, check_int_list, start_again
from rankcut.audit.options import spelled as _o
from rankcut.audit.pools import Item, Pools
from rankcut.audit.sampling import Draws

if TYPE_CHECKING:  # rankcut.certify loads scipy: imported where it is used, so the audit package loads fast
    from rankcut.certify.report import JointReport
    from rankcut.certify.result import Certificate

__all__ = ["Design", "Findings", "FixedSampleDesign", "Opened", "Plan", "Verdict", "Words"]

Row = dict[str, Any]

# Independent random streams per part of a sample (numpy SeedSequence keys [seed, stream]), so that
# changing one pool's, member's or band's size never changes another's draws.
STREAM_EXCLUDED, STREAM_INCLUDED, STREAM_ORDER, STREAM_MEMBER = 0, 1, 3, 100
STREAM_BAND = 200
STREAM_PLACED = 300   # the qrels oracle's placement of relevant unretrieved documents (oracle.py; no seed)

#: the largest excluded pool the sequential design audits: it lists its whole pool in the audit
#: order (sample.jsonl, to_label), so a plan beyond labelling names it only for pools this size
MAX_SEQUENTIAL_POOL = 2_000_000

#: the most draws a plan may ask for before it says plainly that no one will label them: 10^5
#: labels keep a reviewer busy for months at a few hundred an hour
MAX_LABELS = 10**5


# ---------------------------------------------------------------------------------------------
# typed results


@dataclass(frozen=True)
class Words:
    """How the certificate, the verdict and the report name what an audit or a review reads
    (:meth:`Design.words`): a run's documents, unless the interleaved review's screener says
    otherwise (:data:`~rankcut.audit.designs.interleaved.SCREENER_WORDS`; a package that registers a
    screener may add its words, e.g. "record" for a review of records)."""

    item: str = "document"
    everything: str = "the ranked list"   # every item the review could read ("": all are listed)
    chooser: str = "whatever the ranking"   # what the guarantee holds for, in the plain words
    picker: str = "screener"   # who picks a screening move's item ("ranker" for a review of records)
    in_run: bool = True   # whether the title names the run file the items came in (and its query)
    screened_at: str = "rank {rank} of the ranking"   # where a screened item stands
    audited_at: str = "audit order position {position}, rank {rank}"   # where an audited one does
    first: str = ""   # what screening reads before the picker's picks (a review's prior knowledge)

    @property
    def items(self) -> str:
        return self.item + "s"

    def where(self, move: str, rank: int, position: int | None) -> str:
        """Where a step's item stands: its rank, and its audit order position for an audit move."""
        text = self.screened_at if move == "screen" else self.audited_at
        return text.format(rank=rank, position=position)


@dataclass(frozen=True)
class Verdict:
    """The certificate against the frozen target: met or not, in words, and (nested families) the
    member chosen or returned."""

    met: bool
    text: str
    chosen: str | None = None
    names_choice: bool = False  # nested families say which member (or none: chosen None)

    def to_dict(self) -> dict[str, Any]:
        if self.names_choice:
            return {"met": self.met, "chosen": self.chosen, "text": self.text}
        return {"met": self.met, "text": self.text}


@dataclass(frozen=True)
class Findings:
    """What ``certificate.json`` says beside the joint report: the verdict, one row per member (one
    for a single cut), the chosen member's index (nested families), the band table (stratified)
    and notes."""

    verdict: Verdict | None
    members: list[Row]
    notes: list[str] = field(default_factory=list)
    chosen: int | None = None
    bands: list[Row] | None = None
    chooses: bool = False  # a nested family: "chosen" is part of the findings (None when none was)

    def with_notes(self, notes: Sequence[str]) -> Findings:
        return Findings(self.verdict, self.members, list(notes), self.chosen, self.bands, self.chooses)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": None if self.verdict is None else self.verdict.to_dict(),
                               "members": self.members}
        if self.chooses:
            out["chosen"] = self.chosen
        if self.bands is not None:
            out["bands"] = self.bands
        out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class Plan:
    """A design's plan for a frozen target: sizes, the lines that say how, the planners' certificates
    and the planning guesses they rest on (beside ``tolerated``)."""

    sizes: dict[str, Any] | None
    lines: list[str]
    certificates: list[Certificate] = field(default_factory=list)
    assumptions: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Opened:
    """What certify saw when it opened the labels: the counts and the 0/1 labels per draw, the hash
    of the labels seen, the opening time, the labels spent, and the ``opened.json`` record to write
    (None when it is already written in full)."""

    stats: dict[str, Any]
    digest: str
    opened_at: str
    spent: dict[str, int]
    record: dict[str, Any] | None
    report: JointReport
    findings: Findings
    curve: dict[str, Any] | None


# ---------------------------------------------------------------------------------------------
# the protocol


class Design(Protocol):
    """One audit design: its name, its summary and the hooks the workflow calls."""

    name: str
    family: bool  # a nested family of cuts rather than one cut
    targets: tuple[str, ...]  # "recall", "max_missed"
    needs_target: bool
    summary: str
    anytime: bool  # certify may run after any number of labels (the sequential audit)
    adaptive: bool  # the label step asks for the item the review chooses next (the interleaved review)
    plans_precision: bool  # the plan takes an expected precision of the included pool (two-pool)
    noun: str  # what the report calls it: an "audit", or a "review" (the interleaved design)
    total: str  # the key of the counts that is the sample's size: "draws", or "collection" (the review)

    def theorem(self, reference: str | None, finite: bool) -> str: ...
    def words(self, manifest: Manifest | Mapping[str, Any]) -> Words: ...
    def target(self, target_recall: float | None, max_missed: int | None) -> dict[str, Any] | None: ...
    def events(self, delta: float, allocation: Mapping[str, float] | None) -> dict[str, float]: ...
    def family_spec(self, cut: Any, family: Any, offsets: Any, depths: Any) -> dict[str, Any] | None: ...
    def freeze_reference(self, reference: str | None) -> str | None: ...
    def freeze_bands(self, bands: Sequence[int] | None) -> list[int] | None: ...
    def freeze_review(self, sampling: str, allow_incomplete: bool, reuse_labels: Any,
                      prior_scale: float | None, prior_basis: str | None) -> None: ...
    def freeze_pools(self, base: Pools, names: Sequence[str], bands: Sequence[int] | None
                     ) -> list[int] | None: ...
    def largest_pool(self, base: Pools) -> int: ...
    def frozen_extras(self, prior_scale: float | None, prior_basis: str | None) -> dict[str, Any]: ...
    def freeze_policy(self, policy: str | None, screener: Mapping[str, Any] | None) -> dict[str, Any]: ...
    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan: ...
    def sizes(self, audit: Audit, excluded: Any, included: Any) -> dict[str, Any]: ...
    def draw(self, audit: Audit, sizes: Mapping[str, Any]) -> Sequence[Row]: ...
    def label_order(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> list[Item]: ...
    def positions(self, audit: Audit, n: int) -> list[tuple[Any, ...]]: ...
    def guard_labelling(self, audit: Audit, record: Mapping[str, Any] | None) -> None: ...
    def guard_store(self, store: labels_mod.LabelStore, record: Mapping[str, Any] | None,
                    overwrite: bool) -> None: ...
    def refusal_hint(self, store: labels_mod.LabelStore) -> str: ...
    def label_steps(self, audit: Audit, store: labels_mod.LabelStore, rows: Sequence[Mapping[str, Any]],
                    answer: Callable[[Any, Any], int | None], source: str, limit: int | None,
                    sources: Mapping[Item, str] | None = None) -> tuple[int, Any]: ...
    def place(self, audit: Audit, order: Sequence[Item]) -> Callable[[int], str] | None: ...
    def read_on(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> tuple[int, bool, Item | None]: ...
    def progress(self, rows: Sequence[Mapping[str, Any]], store: labels_mod.LabelStore) -> str | None: ...
    def open(self, audit: Audit, info: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
             record: Mapping[str, Any] | None) -> Opened: ...
    def counts(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray,
               unlabelled: int) -> dict[str, Any]: ...
    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]: ...
    def curve(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray
              ) -> dict[str, Any] | None: ...
    def draw_counts(self, counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    folder: Path) -> tuple[dict[str, Any], dict[str, Any]]: ...
    def spent_text(self, counts: Mapping[str, Any], manifest: Mapping[str, Any]) -> str | None: ...
    def frozen_facts(self, manifest: Mapping[str, Any]) -> list[tuple[str, str]] | None: ...
    def validity(self, manifest: Mapping[str, Any], content: Mapping[str, Any]) -> list[str] | None: ...
    def status(self, folder: Path, out: dict[str, Any], steps: dict[str, bool],
               record: Mapping[str, Any] | None) -> None: ...


# ---------------------------------------------------------------------------------------------
# helpers the designs share


def rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, stream])


def family_options(family: Any, offsets: Any, depths: Any) -> list[str]:
    """Which of the ways to give a nested family were given."""
    return [n for n, v in (("family", family), ("offsets", offsets), ("depths", depths)) if v is not None]


def draw_rows(items: Iterable[Item], pool: str, member: int | None = None, stratum: int | None = None
              ) -> list[Row]:
    """The lines of ``sample.jsonl`` for ``items`` drawn from ``pool`` (a member's or a band's)."""
    return [{"pool": pool, "member": member, "stratum": stratum, "query_id": q, "doc_id": d}
            for q, d in items]


def numbered(rows: list[Row]) -> list[Row]:
    """``rows`` with their draw numbers, in order."""
    for i, row in enumerate(rows):
        row["draw"] = i
    return rows


def check_size(n: int, pool: int, what: str, finite: bool) -> None:
    if finite and n > pool:
        raise ValueError(f"{what}: {n} draws without replacement exceed the pool of {pool} items")
    if n > 0 and pool == 0:
        raise ValueError(f"{what}: the pool is empty, nothing can be drawn")


def sizes_line(sizes: Mapping[str, Any]) -> str:
    from rankcut.audit.folder import sizes_text

    return f"planned sizes: {sizes_text(sizes)}"


def joint(audit: FrozenAudit) -> JointReport:
    """An empty joint report with the frozen δ events as its budget and the exact pool facts."""
    from rankcut.certify.report import JointReport

    return JointReport(delta=audit.delta, budget=audit.budget, title=title(audit), facts=facts(audit))


def facts(audit: FrozenAudit) -> dict[str, Any]:
    sizes = audit.sizes
    if len(sizes) > 1:
        return {"queries": audit.queries, "items N": audit.n_items,
                "burden N1 per member": ", ".join(f"{m.name} {m.n1}" for m in sizes)}
    return {"queries": audit.queries, "items N": audit.n_items, "burden N1": sizes[0].n1,
            "excluded pool N0": sizes[0].n0}


def title(audit: FrozenAudit) -> str:
    inputs = audit.manifest["inputs"]
    what = Path(inputs["cut"]["path"]).name if "cut" in inputs and audit.manifest.get("family") is None \
        else f"nested family {', '.join(audit.names)}"
    return (f"Audit {audit.manifest.short_id} of {what} ({audit.design} design, "
            f"{audit.manifest['theorem']})")


def member_row(audit: FrozenAudit, p: MemberSize, bound: Any, unit: str) -> Row:
    return {"name": p.name, "burden": p.n1, "mean_depth": p.n1 / audit.queries, "n0": p.n0, "bound": bound,
            "unit": unit}


def verdict_missed(audit: FrozenAudit, bound: float, unit: str, t: int | None) -> Verdict | None:
    if t is None:
        return None
    limit = t if audit.finite else t / audit.n_items
    met = bound <= limit
    shown = f"{t}" if audit.finite else f"{limit:.4g} (= {t}/N)"
    return Verdict(bool(met), f"target {unit} ≤ {shown}: {'met' if met else 'NOT met'}")


def method(audit: FrozenAudit) -> str:
    """The certificates' ``method=``: ``"finite"`` without replacement, ``"binomial"`` with it."""
    return "finite" if audit.finite else "binomial"


def unfavourable_counts(rows: Sequence[Mapping[str, Any]], labels: Mapping[Item, int]
                        ) -> tuple[np.ndarray, int]:
    """Per draw 0/1, the unlabelled ones completed unfavourably (excluded-side 1, included 0)."""
    y = np.empty(len(rows), dtype=np.int64)
    missing = 0
    for i, r in enumerate(rows):
        v = labels.get((r["query_id"], r["doc_id"]))
        if v is None:
            missing += 1
            v = 0 if r["pool"] == "included" else 1
        y[i] = v
    return y, missing


def plan_count(t: int, delta: float, population: int, tolerated: int, n_prefixes: int = 1
               ) -> tuple[int, Certificate | None]:
    """Smallest without-replacement size with ``MU(c, δ/M; N, n) ≤ t`` (0 when ``t ≥ N``; Theorem 8)."""
    from rankcut.certify.planning import plan_hypergeometric

    if population == 0 or t >= population:
        return 0, None
    cert = plan_hypergeometric(t, delta, population=population, tolerated=tolerated, n_prefixes=n_prefixes)
    return int(cert.value), cert


def plan_mass(t: float, delta: float, n0: int, n_items: int, tolerated: int, n_prefixes: int = 1
              ) -> tuple[int, Certificate | None]:
    """i.i.d. size for ``r ≤ t/N`` from a pool of mass ``p0 = N0/N`` (Section 4.6)."""
    from rankcut.certify.planning import plan_missed_mass

    if n0 == 0 or t >= n0:
        return 0, None
    if t <= 0:
        raise ValueError("i.i.d. (with-replacement) sampling cannot certify that nothing is missed "
                         f"(a missed mass of 0); give {_o('max_missed')} >= 1")
    cert = plan_missed_mass(t / n_items, delta, p0=n0 / n_items, tolerated=tolerated, n_prefixes=n_prefixes)
    return int(cert.value), cert


def plan_missed(audit: Audit, t: float, delta: float, pool: int, tolerated: int, n_prefixes: int = 1
                ) -> tuple[int, Certificate | None]:
    """``t`` missed items: a count (without replacement; rounded down) or ``r ≤ t/N`` (i.i.d.)."""
    if audit.finite:
        return plan_count(math.floor(t), delta, pool, tolerated, n_prefixes)
    return plan_mass(t, delta, pool, audit.n_items, tolerated, n_prefixes)


def planned_draws(sizes: Mapping[str, Any]) -> int:
    """The draws that ``sizes`` ask for in all (a size per pool, member or band, or a list of them)."""
    return sum(sum(v) if isinstance(v, list | tuple) else int(v) for v in sizes.values() if v is not None)


def beyond_labelling(audit: Audit, sizes: Mapping[str, Any] | None, *, anytime: bool) -> str | None:
    """A plain line when ``sizes`` ask for more than :data:`MAX_LABELS` draws, naming what would
    shrink them: a smaller corpus claim, a laxer target, the sequential design (which stops as
    soon as the labels found suffice); None otherwise. An ``anytime`` design's audit order lists
    its whole pool but is labelled only until the target is met: only its cut, read in full, counts
    (the e-discovery walk was told 2,000,000 labels where its plan showed 31,936 at F = 1000)."""
    if anytime and sizes is not None:
        sizes = {"included": sizes.get("included")}
    total = 0 if sizes is None else planned_draws(sizes)
    if total <= MAX_LABELS:
        return None
    ways = []
    corpus = audit.manifest.get("corpus")
    if corpus:
        claim = f"{_o('corpus_size')} {corpus['documents']}" if corpus["kind"] == "size" else _o("corpus_ids")
        queries = len(audit.base.lengths)
        ways.append(f"a smaller corpus claim ({claim} puts every unretrieved document of each query in the "
                    f"excluded pool: N0 = {audit.base.n0:,} query-document pairs over {queries:,} "
                    f"quer{'y' if queries == 1 else 'ies'})")
    target = audit.target or {}
    if "recall" in target:
        ways.append(f"a lower {_o('target_recall')} than {target['recall']:g}")
    if "max_missed" in target:
        ways.append(f"a larger {_o('max_missed')} than {target['max_missed']}")
    if audit.design != "sequential" and audit.base.n0 <= MAX_SEQUENTIAL_POOL:   # else it refuses the pool
        ways.append(f"{_o('design')} sequential, which stops as soon as the labels found suffice")
    return (f"this plan asks for {total:,} labels, more than people can label (over {MAX_LABELS:,}); "
            f"to shrink it, {start_again()} with {'; or '.join(ways)}")


# ---------------------------------------------------------------------------------------------
# the fixed-size designs


class FixedSampleDesign:
    """What the fixed-size designs share: a sample of sizes fixed before labelling, drawn once,
    labelled in a blinded shuffled order, opened once by certify (after which no label is taken)."""

    name = ""
    family = False
    targets: tuple[str, ...] = ("max_missed",)
    needs_target = False
    summary = ""
    anytime = False
    adaptive = False
    plans_precision = False  # the plan takes an expected precision of the included pool
    event = ""  # the one δ event of the design
    noun = "audit"
    total = "draws"

    # -- freeze

    def theorem(self, reference: str | None, finite: bool) -> str:
        raise NotImplementedError

    def words(self, manifest: Manifest | Mapping[str, Any]) -> Words:
        """How the audit names what it reads: a run's documents."""
        return Words()

    def target(self, target_recall: float | None, max_missed: int | None) -> dict[str, Any] | None:
        if target_recall is not None and max_missed is not None:
            takes = " or ".join(_o(t) for t in ("target_recall", "max_missed")
                                if t.replace("target_", "") in self.targets)
            raise ValueError(f"give one target: {_o('target_recall')} or {_o('max_missed')}, not both (the "
                             f"{self.name} design takes {takes})")
        if target_recall is not None:
            if "recall" not in self.targets:
                raise ValueError(f"{_o('target_recall')} is a target of the two-pool and sequential designs "
                                 "(recall needs the included pool's relevant count); the "
                                 f"{self.name} design certifies the missed count: use {_o('max_missed')}")
            if isinstance(target_recall, bool | np.bool_) \
                    or not isinstance(target_recall, int | float | np.integer | np.floating) \
                    or not 0.0 < float(target_recall) < 1.0:
                from rankcut.certify._validate import percent_hint

                raise ValueError(f"{_o('target_recall')} must lie in (0, 1), got {target_recall!r}"
                                 + percent_hint(target_recall))
            return {"recall": float(target_recall)}
        if max_missed is not None:
            if "max_missed" not in self.targets:
                raise ValueError(f"{_o('max_missed')} is not a target of the {self.name} design: it "
                                 f"certifies recall (use {_o('target_recall')}), or use the excluded design "
                                 "for the missed count")
            return {"max_missed": check_count(max_missed, "max_missed")}
        self.no_target()
        return None

    def no_target(self) -> None:
        """Refuse a freeze without a target when the design needs one."""
        if self.needs_target:
            from rankcut.certify.result import theorem_of

            raise ValueError(f"the {self.name} design needs a target fixed before the audit "
                             f"({theorem_of('fixed_sequence')}): give {_o('max_missed')}")

    def events(self, delta: float, allocation: Mapping[str, float] | None) -> dict[str, float]:
        """The δ events of the design (the joint report's budget), summing to at most ``delta``."""
        if allocation is not None:
            raise ValueError(f"{_o('allocation')} is for the two-pool design (δ0 + δ1); the {self.name} "
                             "design spends δ on one event")
        return {self.event: delta}

    def family_spec(self, cut: Any, family: Any, offsets: Any, depths: Any) -> dict[str, Any] | None:
        given = family_options(family, offsets, depths)
        if given:
            raise ValueError(f"{_o(given[0])} describes a nested family, for the prefixes and fixed-sequence "
                             f"designs; the {self.name} design certifies one cut (give {_o('cut')})")
        if cut is None:
            raise ValueError(f"the {self.name} design needs the cut run ({_o('cut')})")
        return None

    def freeze_reference(self, reference: str | None) -> str | None:
        if reference is not None:
            raise ValueError(f"{_o('reference')} (shared or separate samples) is for the prefix designs, not "
                             f"{self.name}")
        return None

    def freeze_bands(self, bands: Sequence[int] | None) -> list[int] | None:
        if bands is not None:
            raise ValueError(f"{_o('bands')} are for the stratified design, not {self.name}")
        return None

    def freeze_review(self, sampling: str, allow_incomplete: bool, reuse_labels: Any,
                      prior_scale: float | None, prior_basis: str | None) -> None:
        if prior_scale is not None:
            raise ValueError(f"{_o('prior_scale')} is for the sequential and interleaved designs, "
                             f"not {self.name}")
        if prior_basis is not None:
            raise ValueError(f"{_o('prior_basis')} is for the interleaved design, not {self.name}")

    def freeze_pools(self, base: Pools, names: Sequence[str], bands: Sequence[int] | None
                     ) -> list[int] | None:
        """Refuse pools the design cannot audit; the band sizes of a stratified design."""
        return None

    def largest_pool(self, base: Pools) -> int:
        """The largest pool the design samples (decides between the exact and binomial bounds)."""
        return base.n0

    def frozen_extras(self, prior_scale: float | None, prior_basis: str | None) -> dict[str, Any]:
        return {}

    def freeze_policy(self, policy: str | None, screener: Mapping[str, Any] | None) -> dict[str, Any]:
        if policy is not None or screener is not None:
            what = _o("policy") if policy is not None else "a screener"
            raise ValueError(f"{what} is for the interleaved design, not {self.name}")
        return {}

    # -- plan and sample

    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan:
        raise NotImplementedError

    def sizes(self, audit: Audit, excluded: Any, included: Any) -> dict[str, Any]:
        """Normalise the sample sizes (one excluded-pool size; the designs with parts override)."""
        if excluded is None:
            raise ValueError(f"no excluded-pool sample size: give {_o('excluded')} (no target was planned)")
        if isinstance(excluded, Sequence):
            raise ValueError(f"the {self.name} design takes one excluded sample size, got {list(excluded)}")
        return self.with_included(check_count(excluded, "excluded"), included)

    def part_sizes(self, excluded: Any, included: Any, parts: int, what: str) -> dict[str, Any]:
        """One excluded-pool size per part (member or band), or one for every part."""
        if excluded is None:
            raise ValueError(f"no excluded-pool sample size: give {_o('excluded')} (no target was planned)")
        ex: Any = [check_count(excluded, "excluded")] * parts if not isinstance(excluded, Sequence) \
            else check_int_list(excluded, "excluded")
        if len(ex) != parts:
            raise ValueError(f"{_o('excluded')} must give one size per {what} ({parts}), got {len(ex)}")
        return self.with_included(ex, included)

    def with_included(self, ex: Any, included: Any) -> dict[str, Any]:
        if included is not None:
            raise ValueError(f"{_o('included')} is for the two-pool design; the {self.name} design samples "
                             "the excluded pool")
        return {"excluded": ex}

    def draw(self, audit: Audit, sizes: Mapping[str, Any]) -> Sequence[Row]:
        raise NotImplementedError

    def label_order(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> list[Item]:
        """The distinct sampled items in a shuffled order that hides the pool each came from."""
        items = list(dict.fromkeys(rows.items())) if isinstance(rows, Draws) else distinct_items(rows)
        perm = rng(int(audit.manifest["seed"]), STREAM_ORDER).permutation(len(items))
        return [items[i] for i in perm]

    def positions(self, audit: Audit, n: int) -> list[tuple[Any, ...]]:
        """Where each item of the list to label stands (none: the list is blinded)."""
        return []

    # -- label

    def guard_labelling(self, audit: Audit, record: Mapping[str, Any] | None) -> None:
        from rankcut.audit.folder import refuse_if_opened_file

        refuse_if_opened_file(audit, "recording labels")

    def guard_store(self, store: labels_mod.LabelStore, record: Mapping[str, Any] | None,
                    overwrite: bool) -> None:
        refuse_if_opened(store)

    def refusal_hint(self, store: labels_mod.LabelStore) -> str:
        """What to do about a label that differs from the recorded one, in the caller's option names."""
        return f"give {_o('overwrite')} to replace it (the change is kept in the history)"

    def place(self, audit: Audit, order: Sequence[Item]) -> Callable[[int], str] | None:
        return None

    def label_steps(self, audit: Audit, store: labels_mod.LabelStore, rows: Sequence[Mapping[str, Any]],
                    answer: Callable[[Any, Any], int | None], source: str, limit: int | None,
                    sources: Mapping[Item, str] | None = None) -> tuple[int, Any]:
        """An adaptive design's label step (a fixed sample's order is labelled as it is): ``answer``
        is asked for each step, with the review so far; each label is recorded with ``source``, or
        its item's in ``sources``."""
        raise NotImplementedError

    def read_on(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> tuple[int, bool, Item | None]:
        """An adaptive design's reading on once its target is met: the step it began at, whether it
        began now, and the item asked for next (a fixed sample's size is fixed when it is drawn)."""
        raise NotImplementedError

    def progress(self, rows: Sequence[Mapping[str, Any]], store: labels_mod.LabelStore) -> str | None:
        return None

    # -- certify

    def open(self, audit: Audit, info: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
             record: Mapping[str, Any] | None) -> Opened:
        """Check the labels and open them (once): every sampled item labelled (unless frozen with
        ``allow_incomplete``), none outside the sample, reused labels not seen before the freeze,
        and after an earlier opening the same labels. The certificates are computed in memory first;
        only when that succeeded is the opening recorded."""
        from rankcut.audit.designs import certificates

        order = distinct_items(rows)
        sampled = set(order)
        with open_store(audit, info, create=False) as store:
            outside = [(q, d) for q, d, _ in store.items() if (q, d) not in sampled]
            if outside:
                q, d = outside[0]
                more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
                raise ValueError(f"{store.path} has a label for query {q!r}, document {d!r}, which is not in "
                                 f"the sample{more}: labels must cover exactly the sampled items")
            missing = store.missing(order)
            if missing and not audit.manifest["allow_incomplete"]:
                q, d = missing[0]
                raise ValueError(f"the sample is incomplete: {len(missing)} of {len(order)} sampled items "
                                 f"have no label (first: query {q!r}, document {d!r}); label them, or freeze "
                                 f"the audit with {_o('allow_incomplete')} to count them unfavourably")
            sources = provenance.check_reuse(audit, store)
            labels = store.get(order)
            digest = provenance.labels_hash(labels)
            to_write = provenance.check_opening(audit, store, record, info, digest)
            # the certificates first, in memory: a failure here records nothing, so it never leaves an
            # audit whose labels are opened but that has no certificate
            y, n_missing = unfavourable_counts(rows, labels)
            stats = self.counts(audit, rows, y, n_missing)
            report, findings = certificates(audit, stats)
            curve = self.curve(audit, rows, y)
            if to_write:  # the labels are opened here
                if "opened_at" in to_write:
                    # the reused labels are opened with them: their first store learns it first, so that
                    # an audit frozen after this moment cannot reuse them from there either
                    provenance.mark_seen(sources, to_write["opened_at"], audit.manifest.audit_id)
                store.set_meta_many(to_write)
            opened_at = str(store.get_meta("opened_at"))
        new = None if record is not None else {"audit_id": audit.manifest.audit_id, "opened_at": opened_at,
                                               "sample_hash": info["sample_hash"], "labels_hash": digest}
        spent = {"draws": len(rows), "items": len(order), "labelled": len(labels),
                 "relevant": int(sum(labels.values()))}
        return Opened(stats, digest, opened_at, spent, new, report, findings, curve)

    def counts(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray,
               unlabelled: int) -> dict[str, Any]:
        raise NotImplementedError

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        raise NotImplementedError

    def curve(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray) -> dict[str, Any] | None:
        return None

    # -- report and status

    def draw_counts(self, counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        """The counts of draws the certificate says, and those of ``sample.jsonl``, recounted."""
        expected = {"excluded": sum(r["pool"] != "included" for r in rows)}
        return {k: (counts.get(k) or {}).get("draws") for k in expected}, expected

    def spent_text(self, counts: Mapping[str, Any], manifest: Mapping[str, Any]) -> str | None:
        return None

    def frozen_facts(self, manifest: Mapping[str, Any]) -> list[tuple[str, str]] | None:
        """The report's "What was frozen" rows, where the design says them otherwise than the
        report's own (pools, burden, sampling); None: the report's."""
        return None

    def validity(self, manifest: Mapping[str, Any], content: Mapping[str, Any]) -> list[str] | None:
        """The report's "Validity" lines, where the design's assumptions are other than the
        report's own (Assumption 1, design before the labels are opened, and Assumption 2); None:
        the report's."""
        return None

    def status(self, folder: Path, out: dict[str, Any], steps: dict[str, bool],
               record: Mapping[str, Any] | None) -> None:
        """After an opening (``record``, from ``opened.json``) the store must hold the labels that
        were opened, as certify checks (:func:`provenance.check_opening`): for a store edited or
        replaced since, ``labels_changed`` says what certify would refuse (a deleted one:
        :func:`rankcut.audit.workflow.status`, for every design). The
        certificate written before stays what it was (the report is built from it); its verdict,
        when a target was frozen, is said (``verdict``), as the sequential designs say theirs."""
        if steps["certify"]:
            content = read_json(folder / CERTIFICATE_FILE, "written by certify")
            verdict = (content.get("verdict") or {}) if isinstance(content, dict) else {}
            out["verdict"], out["met"] = verdict.get("text"), verdict.get("met")
        path = folder / LABELS_FILE
        if record is None or not labels_mod.holds_store(path):
            return
        audit = FrozenAudit(load_manifest(folder))
        info = read_json(folder / SAMPLE_FILE, "written by sample")
        try:   # read-only, as status reads everything (a label call may hold the store's write lock)
            with labels_mod.LabelStore(path, readonly=True) as store:
                digest = provenance.labels_hash(store.get(distinct_items(read_rows(folder / SAMPLE_ITEMS))))
                provenance.check_opening(audit, store, record, info, digest)
        except ValueError as err:
            out["labels_changed"] = str(err)


def _openings(store: labels_mod.LabelStore, record: Mapping[str, Any] | None) -> list[tuple[str, int, str]]:
    """The openings recorded for an anytime audit (sequential, interleaved): ``(where, prefix,
    labels hash)`` from the store's meta and from ``opened.json``, each checked for completeness.
    Both are written at each certify (the store first), so after a crash between the two they hold
    consecutive openings."""
    out = []
    held = store.get_meta("opened_labels_hash")
    if store.get_meta("opened_at") is not None:
        prefix = store.get_meta("opened_prefix")
        if held is None or prefix is None:
            raise ValueError(f"{store.path} records an opening at {store.get_meta('opened_at')} without its "
                             "labels hash or audit prefix: it was not written by this rankcut, and nothing "
                             f"shows which labels were seen — refused; {start_again()}")
        out.append((str(store.path), int(prefix), str(held)))
    if record is not None:
        if store.get_meta("opened_at") is None or record.get("prefix") is None:
            raise ValueError(
                f"the labels of this audit were opened for certification at {record.get('opened_at')} "
                f"({OPENED_FILE}), but {store.path} does not record that opening: the label store was "
                f"replaced or deleted after the labels were seen — refused; restore it, or {start_again()}")
        out.append((OPENED_FILE, int(record["prefix"]), str(record.get("labels_hash"))))
    return out


def check_openings(store: labels_mod.LabelStore, record: Mapping[str, Any] | None, labelled: int,
                   hash_at: Callable[[int], str], opened: str) -> None:
    """Refuse when the labels of an earlier opening (:func:`_openings`) changed or were removed
    since (Assumption 1): its prefix must still be labelled (``labelled`` now) and hash as it did
    (``hash_at(prefix)``). ``opened`` says what a prefix holds, ``{prefix}`` in it (this design's:
    "the cut and the first {prefix} audit labels"; the interleaved one's: its first steps)."""
    for where, prefix, held in _openings(store, record):
        if prefix > labelled or hash_at(prefix) != held:
            raise ValueError(
                f"certifying is refused: the labels opened for certification ({where}: "
                f"{opened.format(prefix=prefix)}) changed or were removed since, and a certificate "
                "cannot follow labels edited after being seen (Assumption 1); restore them, or "
                f"{start_again()}")
