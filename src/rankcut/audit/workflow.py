"""The audit workflow: freeze → plan → sample → label → certify (→ report), each step guarded.

Every certificate of the audit paper holds under one discipline (Assumption 1, §2.3): the
candidate generator — here a cut run, or a nested family of cut runs — and the audit rule are
fixed before any certification label is examined. The steps below make that discipline hard to
break by accident. Each one loads the audit folder (:mod:`rankcut.audit.folder`), checks its
guards, calls the design's hook (:mod:`rankcut.audit.designs`) and writes atomically; it refuses,
with a message that names the step or file, when it is run out of order or when something it
depends on changed:

1. :func:`freeze` writes ``manifest.json`` (see :mod:`rankcut.audit.manifest`): the cut or the
   family, the pools and their sizes, the design, ``δ`` and its allocation, the target, the seed,
   and the sha256 of every input file and of ``snapshot.npz``, the pools as flat columns, which
   every later step reads instead of the input files (:mod:`rankcut.audit.snapshot`; the inputs
   are still checked). Its content hash is the audit id. An audit is frozen once.
2. :func:`plan` turns the target into sample sizes with the engine's planners
   (:mod:`rankcut.certify.planning`) and writes ``plan.json``, before any labelling.
3. :func:`sample` draws the audit items from the frozen manifest and seed (reproducibly; never a
   second time) and writes ``sample.jsonl``/``sample.json`` and a blinded, shuffled list to label.
4. :func:`label` records labels in ``labels.sqlite`` (:class:`~rankcut.audit.labels.LabelStore`):
   from a file, from qrels (simulation), interactively, or reused from an earlier audit.
5. :func:`certify` checks everything again, computes the certificates, opens the labels —
   marking the sample *used* (``opened.json``) — and writes ``certificate.json``. It refuses when
   the manifest, an input file or the sample changed, when labels cover items outside the sample,
   when the sample is incomplete (unless the design was frozen with ``allow_incomplete``), when
   the label store is not the one that was opened, and when reused labels had been seen before
   this audit was frozen — opened by their audit or seen through another audit that reused them,
   anywhere along the chain of reuses (§2.4: they are design data, never certification data;
   :mod:`rankcut.audit.provenance`).

What each design certifies is said in its module (all finite-corpus versions draw without
replacement; when a pool exceeds :data:`~rankcut.certify.bounds.MAX_POPULATION` items, or on
request, the draws are i.i.d. with replacement and the binomial versions apply):
``excluded`` and ``two-pool`` in :mod:`rankcut.audit.designs.single` (Theorem 8, Corollary 11),
``prefixes`` and ``fixed-sequence`` in :mod:`rankcut.audit.designs.nested` (Corollary 16/18,
Theorem 17, Eq. 1, Theorem 19), ``stratified`` in :mod:`rankcut.audit.designs.stratified` (§9) and
``sequential`` in :mod:`rankcut.audit.designs.sequential` (§9, anytime-valid; the default) and
``interleaved`` in :mod:`rankcut.audit.designs.interleaved` (issue 16: no cut, each step screened or
audited as a frozen policy chooses; the label step asks for one item at a time).

How ``δ`` is spent is declared in the manifest as named events, the budget of the joint report:
``{"excluded audit": δ}``, ``{"excluded audit": δ0, "included audit": δ1}``, ``{"prefixes": δ}``,
``{"fixed-sequence": δ}``, ``{"strata": δ}``, ``{"sequential audit": δ}`` or
``{"interleaved review": δ}``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut.audit import labels as labels_mod
from rankcut.audit import provenance
from rankcut.audit.designs import DESIGNS, design_of
from rankcut.audit.designs.base import beyond_labelling
from rankcut.audit.folder import (
    CERTIFICATE_FILE,
    LABELS_FILE,
    OPENED_FILE,
    PLAN_FILE,
    SAMPLE_FILE,
    SAMPLE_ITEMS,
    Audit,
    AuditStepError,
    FrozenAudit,
    build_pools,
    deleted_store_text,
    distinct_items,
    load_audit,
    load_sample,
    open_store,
    opened_record,
    refuse_if_opened_file,
    refuse_repeated,
    sizes_text,
)
from rankcut.audit.interactive import label_interactively
from rankcut.audit.manifest import (
    MANIFEST_FILE,
    SCHEMA,
    SCHEMA_VERSION,
    Manifest,
    check_file,
    check_inputs,
    check_unchanged,
    content_hash,
    describe_file,
    json_text,
    load_manifest,
    now,
    read_json,
    resolve_inputs,
    sha256_file,
    write_json_atomic,
    write_manifest,
    write_text_atomic,
)
from rankcut.audit.options import check_count, check_delta, start_again
from rankcut.audit.options import spelled as _o
from rankcut.audit.oracle import (
    check_one_oracle,
    check_qrels_cover,
    place_unretrieved,
    qrels_oracle,
    qrels_source,
    simulated_text,
    unjudged_items,
)
from rankcut.audit.pools import Item, Pools
from rankcut.audit.power import check_power
from rankcut.audit.provenance import AuditWarning
from rankcut.audit.sampling import Draws, write_draws
from rankcut.audit.snapshot import SNAPSHOT_FILE, snapshot_bytes, snapshot_entry, write_snapshot
from rankcut.audit.to_label import texts_and_queries, write_to_label
from rankcut.data.lists import ORDERINGS

if TYPE_CHECKING:  # rankcut.certify loads scipy: imported where it is used, so the audit package loads fast
    from rankcut.certify.report import JointReport

__all__ = [
    "DESIGNS",
    "AuditStepError",
    "AuditWarning",
    "CertifyResult",
    "LabelResult",
    "PlanResult",
    "SampleResult",
    "certify",
    "freeze",
    "label",
    "plan",
    "read_on",
    "sample",
    "status",
]

SAMPLINGS = ("auto", "without-replacement", "with-replacement")
DEFAULT_EXPECTED_PRECISION = 0.5


@dataclass(frozen=True)
class PlanResult:
    """Sample sizes planned for an audit (``plan.json``).

    :param sizes: ``{"excluded": int | [int, ...], "included": int}`` or None when the audit has
        no target (sizes are then given at :func:`sample`).
    :param lines: readable lines that say how the sizes were found.
    :param content: everything written to ``plan.json``.
    """

    sizes: dict[str, Any] | None
    lines: tuple[str, ...]
    content: dict[str, Any]

    def render(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class SampleResult:
    """What :func:`sample` drew: sizes per pool, the sample hash and the file to label."""

    sizes: dict[str, Any]
    n_draws: int
    n_items: int
    sample_hash: str
    to_label: Path

    def render(self) -> str:
        return (f"drew {self.n_draws} items ({self.n_items} distinct): {sizes_text(self.sizes)}\n"
                f"sample hash {self.sample_hash[:12]}; label the items listed in {self.to_label}")


@dataclass(frozen=True)
class LabelResult:
    """What one :func:`label` call recorded."""

    source: str
    recorded: int
    labelled: int
    total: int
    progress: str | None = None  # the sequential design: the cut and the labelled start of the audit order
    unjudged: int | None = None  # the qrels oracle: labels recorded as 0 for want of a judgement
    placed: int = 0  # the qrels oracle: relevant documents outside the run placed at #u (size-only corpus)
    waiting: int = 0  # a label file, interleaved design: its labels of documents not asked for yet

    @property
    def missing(self) -> int:
        return self.total - self.labelled

    def render(self) -> str:
        where = (self.progress if self.progress is not None else
                 f"{self.labelled} of {self.total} sampled items labelled, {self.missing} to go")
        text = f"recorded {self.recorded} label{'s' * (self.recorded != 1)} ({self.source}); {where}"
        if self.unjudged == 0 and self.recorded:   # (none given: nothing to say)
            text += "\nthe qrels judge every item given to the qrels oracle"
        elif self.unjudged:
            text += (f"\n{self.unjudged} of the items given to the qrels oracle have no judgement in the "
                     "qrels and were labelled not relevant")
        if self.waiting:
            one = self.waiting == 1
            then = ("the review asks for no further document" if self.labelled == self.total else
                    "give the file again once it asks for them (each label counts only when its document "
                    "is asked for)")
            text += (f"\n{self.waiting} label{'' if one else 's'} of the file "
                     f"{'is for a document' if one else 'are for documents'} the review has not asked for "
                     f"yet: not recorded; {then}")
        if self.placed:
            text += (f"\nthe qrels grade relevant {self.placed} documents that the run does not list: in "
                     "this simulation they stand at unretrieved places (#u) of their queries drawn at "
                     "random, seeded by the query id")
        return text


def _check_texts_cover(pools: Pools, text_of: Mapping[Item, str], texts: str | Path) -> None:
    """``--texts`` against the run's listed documents: refused when it holds the text of none of
    them (another run's or topic set's texts: every item would be labelled by id alone, and the
    file's hash frozen), warned of when it lacks some (they are shown by id)."""
    listed = [(q, d) for q in pools.qids for d in pools.listed(q)]
    missing = [item for item in listed if item not in text_of]
    if not missing:
        return
    q, d = missing[0]
    what = (f"{_o('texts')} {texts} holds no text for {len(missing)} of the {len(listed)} documents the run "
            f"lists (e.g. query {q!r}, document {d!r})")
    if len(missing) == len(listed):
        raise ValueError(f"{what}: the texts of another run or topic set? Give the texts of this run "
                         f"(JSON lines with query_id, doc_id and text), or leave out {_o('texts')}")
    warnings.warn(f"{what}: they are shown by their ids alone when labelled", AuditWarning, stacklevel=3)


def _qrels_judged(audit: Audit, qrels: str | Path, items: Sequence[Item], threshold: float,
                  unjudged_nonrelevant: bool, file_source: str | None
                  ) -> tuple[dict[str, dict[str, int]], int, str]:
    """The qrels oracle's judgements, for every design: the qrels read, checked to cover the
    queries of ``items`` (:func:`check_qrels_cover`, unless ``unjudged_nonrelevant``), with the
    relevant documents outside the run placed among the unretrieved ones
    (:func:`place_unretrieved`); how many were placed, and the labels' source."""
    from rankcut.data.trec import read_qrels

    judged = read_qrels(qrels)
    if not unjudged_nonrelevant:
        check_qrels_cover(audit, judged, items, qrels)
    judged, places = place_unretrieved(audit.base, judged, threshold)
    placed = sum(places.values())
    return judged, placed, file_source or qrels_source(qrels, threshold, placed)


def target_met(content: dict[str, Any]) -> bool:
    """Whether a certificate's content (``certificate.json``) meets its frozen target; ``True`` when
    none was frozen. What ``rankcut audit certify``'s exit status says (1 when not met)."""
    verdict = content.get("verdict")
    return verdict is None or bool(verdict["met"])


@dataclass(frozen=True)
class CertifyResult:
    """The certificates of an audit (``certificate.json``).

    :param report: the joint report (every certificate with the δ event it is charged to).
    :param content: the JSON written to ``certificate.json`` (report, verdict, members, curve).
    """

    report: JointReport
    content: dict[str, Any]

    @property
    def verdict(self) -> str | None:
        v = self.content.get("verdict")
        return None if v is None else str(v["text"])

    @property
    def met(self) -> bool:
        """Whether the frozen target is met; ``True`` when none was frozen (nothing to miss)."""
        return target_met(self.content)

    def render(self, plain_first: bool = False) -> str:
        """The certificates, then the verdict and the notes; ``plain_first``: the verdict and the
        notes (the plain words) first, then the certificates "in full:" (a reviewer's reading)."""
        simulated = simulated_text(self.content.get("label_sources") or {})
        plain = [*([self.verdict] if self.verdict else []), *([simulated] if simulated else []),
                 *self.content.get("notes", [])]
        if plain_first:
            return "\n".join([*plain, "", "in full:", self.report.render()])
        return "\n".join([self.report.render(), *plain])

    def to_json(self) -> str:
        return json.dumps(self.content, indent=2, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# freeze


def freeze(
    audit_dir: str | Path,
    *,
    run: str | Path,
    design: str,
    cut: str | Path | None = None,
    family: Sequence[str | Path] | None = None,
    offsets: Sequence[int] | None = None,
    depths: Sequence[int] | None = None,
    delta: float = 0.05,
    allocation: Mapping[str, float] | None = None,
    target_recall: float | None = None,
    max_missed: int | None = None,
    seed: int | None = None,
    corpus_size: int | None = None,
    corpus_ids: str | Path | None = None,
    ordering: str = "rank",
    sampling: str = "auto",
    reference: str | None = None,
    bands: Sequence[int] | None = None,
    allow_incomplete: bool = False,
    allow_missing_queries: bool = False,
    texts: str | Path | None = None,
    reuse_labels: str | Path | None = None,
    design_data: bool = False,
    prior_scale: float | None = None,
    prior_basis: str | None = None,
    policy: str | None = None,
    screener: Mapping[str, Any] | None = None,
) -> Manifest:
    """Freeze an audit: write ``audit_dir/snapshot.npz`` and ``audit_dir/manifest.json`` (step 1;
    Assumption 1). The input files are read here, once.

    :param audit_dir: the audit folder; created when missing; must not hold a frozen audit.
    :param run: the full ranked lists (TREC run) the cut was taken from.
    :param design: one of :data:`DESIGNS`.
    :param cut: the cut run (a prefix of every list; see :func:`~rankcut.audit.pools.cuts_from_run`);
        with ``offsets``, the model's cut the offsets are added to.
    :param family: cut runs of a nested family, smallest candidate set first (prefix designs).
    :param offsets: fixed depth offsets added to ``cut`` per query (prefix designs).
    :param depths: fixed depths (prefix designs).
    :param delta: the joint error probability ``δ``.
    :param allocation: two-pool only: ``{"excluded": δ0, "included": δ1}`` (default ``δ/2`` each).
    :param target_recall: two-pool target ``ρ``: the verdict is ``Recall ≥ ρ``; the plan sizes for it.
    :param max_missed: target ``t`` on the missed count ``M0`` (other designs; required by
        fixed-sequence). With i.i.d. sampling it is read as ``r ≤ t/N``.
    :param seed: the random seed of every draw (default: a fresh random one, recorded).
    :param corpus_size: the collection size ``C``: the unretrieved rest joins the excluded pool.
    :param corpus_ids: a file of the collection's document ids (one a line), instead of ``corpus_size``.
    :param ordering: how the lists are sorted (``"rank"`` or ``"trec_eval"``).
    :param sampling: ``"without-replacement"`` (finite-corpus certificates), ``"with-replacement"``
        (binomial ones), or ``"auto"``: without replacement unless a pool exceeds
        :data:`~rankcut.certify.bounds.MAX_POPULATION` items.
    :param reference: prefix designs: ``"shared"`` (one reference sample from ``E_1``, default) or
        ``"separate"`` (one sample per member).
    :param bands: stratified design: offsets below the cut where bands end, e.g. ``[10, 100]`` for
        ranks ``k+1..k+10``, ``k+11..k+100`` and the rest; with a corpus, a query's unretrieved
        documents continue its list (after its last rank), so they fall in the band where its list
        ends and in the bands below (see :meth:`~rankcut.audit.pools.Pools.band_sizes`).
    :param allow_incomplete: let :func:`certify` run on an incomplete sample, counting every
        unlabelled excluded-pool draw as relevant and every unlabelled included-pool draw as not
        relevant — the unfavourable completion, so the bounds stay valid whatever the missing
        labels are (the bounds are monotone in the counts).
    :param allow_missing_queries: take a query of ``run`` that a cut run (or family member) does
        not hold as cut at 0 (nothing kept; all of its list goes to the excluded pool). Without it
        such a query is refused: a cut of 0 writes no line, so an absent query may be a mistake.
    :param texts: a JSON-lines file of document texts (``query_id, doc_id, text``) for labelling.
    :param reuse_labels: an earlier audit folder whose labels may be reused for this sample.
    :param design_data: with ``reuse_labels``: those labels informed the design of this cut and are
        recorded as design data only, never counted (§2.4).
    :param prior_scale: sequential and interleaved designs: the confidence sequence's prior mean as
        a share of its basis — the misses the target allows (default
        :data:`~rankcut.certify.sequential.PRIOR_SCALE`), or, interleaved with ``prior_basis``
        ``tail``, the ranking's projected unread relevant count (default 1); any positive value keeps
        the guarantee, it moves only the labels needed (``benchmarks/bench_review_stops.py``).
    :param prior_basis: interleaved design: ``misses`` (default) or ``tail``
        (:class:`~rankcut.certify.interleaved.InterleavedRule`).
    :param policy: interleaved design: the policy that chooses each move, ``NAME[:key=value,...]``
        (:data:`~rankcut.audit.designs.interleaved.POLICIES`; default ``projected-cost``), frozen
        with every constant.
    :param screener: interleaved design: the screener of the screening moves, ``{"name", "config"}``
        (a name of :data:`~rankcut.audit.designs.interleaved.SCREENERS`; default ``frontier``, the
        ranking top down), frozen with its config.
    :returns: the frozen :class:`~rankcut.audit.manifest.Manifest` (``audit_id`` is its hash).
    :raises ValueError: for options the design does not take or cannot use, and bad input files.
    :raises FileExistsError: when ``audit_dir`` already holds a frozen audit.
    """
    if design not in DESIGNS:
        raise ValueError(f"{_o('design')} must be one of {', '.join(DESIGNS)}, got {design!r}")
    spec = DESIGNS[design]
    d = check_delta(delta, "delta")
    target = spec.target(target_recall, max_missed)
    budget = spec.events(d, allocation)
    fam = spec.family_spec(cut, family, offsets, depths)
    if ordering not in ORDERINGS:
        raise ValueError(f"{_o('ordering')} must be one of {', '.join(ORDERINGS)}, got {ordering!r}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"{_o('sampling')} must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
    reference = spec.freeze_reference(reference)
    band_offsets = spec.freeze_bands(bands)
    spec.freeze_review(sampling, allow_incomplete, reuse_labels, prior_scale, prior_basis)
    policy_extras = spec.freeze_policy(policy, screener)
    if corpus_size is not None and corpus_ids is not None:
        raise ValueError(f"give the corpus once: {_o('corpus_size')} or {_o('corpus_ids')}")
    given_seed = None if seed is None else check_count(seed, "seed")
    folder = Path(audit_dir)
    if (folder / MANIFEST_FILE).exists():
        raise FileExistsError(f"{folder} already holds a frozen audit ({folder / MANIFEST_FILE}); an audit "
                              "is frozen once — freeze into a new folder")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"audit folder {folder} is a file")
    leftovers = [n for n in (SNAPSHOT_FILE, PLAN_FILE, SAMPLE_FILE, SAMPLE_ITEMS, LABELS_FILE,
                             CERTIFICATE_FILE) if (folder / n).exists()]
    if leftovers:
        raise ValueError(f"{folder} holds {', '.join(leftovers)} but no manifest: freeze into a new folder")
    reuse, chain = provenance.reuse_spec(reuse_labels, design_data, folder)
    seed = provenance.reuse_seed(given_seed, reuse, chain)

    inputs: dict[str, Any] = {"run": describe_file(run, "--run", folder)}
    if cut is not None:
        inputs["cut"] = describe_file(cut, "--cut", folder)
    if fam is not None and fam["kind"] == "runs":
        assert family is not None
        inputs["family"] = [describe_file(f, f"--family member {m + 1}", folder)
                            for m, f in enumerate(family)]
    corpus_spec: dict[str, Any] | None = None
    if corpus_ids is not None:
        inputs["corpus_ids"] = describe_file(corpus_ids, "--corpus-ids", folder)
        corpus_spec = {"kind": "ids"}
    elif corpus_size is not None:
        corpus_spec = {"kind": "size", "documents": check_count(corpus_size, "corpus_size", 1)}
    if texts is not None:
        from rankcut.data.texts import read_texts_and_queries

        inputs["texts"] = describe_file(texts, "--texts", folder)
        # parsed in full now, as every later step reads it: a file that fails later, once its hash
        # is frozen, would leave an audit that can never be completed
        text_of, _ = read_texts_and_queries(texts, by="pair", name=f"{_o('texts')} {texts}")
    # the files as given (the manifest's paths are relative to the folder, which may not exist yet)
    located = resolve_inputs(inputs, lambda e: Path(e["given"]))
    members, names = build_pools(located, ordering, fam, corpus_spec, bool(allow_missing_queries))
    if fam is not None and getattr(spec, "simultaneous", False):   # δ/M per member (prefixes)
        refuse_repeated(members, names, fam["kind"])
    resolve_inputs(inputs, check_unchanged)  # the pools are of the bytes hashed
    if corpus_spec is not None and corpus_spec["kind"] == "ids":
        corpus_spec["documents"] = members[0].corpus.n_documents if members[0].corpus else None
    base = members[0]
    if texts is not None:
        _check_texts_cover(base, text_of, texts)
    band_sizes = spec.freeze_pools(base, names, band_offsets)
    from rankcut.certify.bounds import MAX_POPULATION

    largest = spec.largest_pool(base)
    resolved = sampling
    if sampling == "auto":
        resolved = "without-replacement" if largest <= MAX_POPULATION else "with-replacement"
    elif sampling == "without-replacement" and largest > MAX_POPULATION:
        raise ValueError(f"a pool of {largest} items exceeds {MAX_POPULATION:.0e}, beyond the exact "
                         f"hypergeometric inversion: use {_o('sampling')} with-replacement (binomial "
                         "certificates)")
    if resolved == "with-replacement" and target is not None and target.get("max_missed") == 0:
        why = "" if sampling != "auto" else (f" (chosen by {_o('sampling')} auto: a pool of {largest} items "
                                             f"exceeds {MAX_POPULATION:.0e})")
        raise ValueError(f"{_o('max_missed')} 0 cannot be certified with i.i.d. draws with replacement{why}: "
                         "the binomial bound on the missed mass is never 0; give "
                         f"{_o('max_missed')} >= 1, or sample without replacement")
    if fam is not None:
        fam = {**fam, "names": names}
    content: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "frozen_at": now(),
        "design": design,
        "theorem": spec.theorem(reference, resolved == "without-replacement"),
        "sampling": resolved,
        "delta": d,
        "allocation": budget,
        "target": target,
        "seed": seed,
        "ordering": ordering,
        "inputs": inputs,
        "family": fam,
        "reference": reference,
        "bands": band_offsets,
        "band_sizes": band_sizes,
        "corpus": corpus_spec,
        "allow_incomplete": bool(allow_incomplete),
        "allow_missing_queries": bool(allow_missing_queries),
        "reuse_labels": reuse,
        "pools": {"members": [{"name": n, "n1": p.n1, "n0": p.n0}
                              for n, p in zip(names, members, strict=True)],
                  **base.to_dict()},
        **spec.frozen_extras(prior_scale, prior_basis),
        **policy_extras,
    }
    # what the later steps read instead of the inputs, hashed into the manifest
    snapshot = snapshot_bytes(members)
    content["snapshot"] = snapshot_entry(folder, snapshot)
    folder.mkdir(parents=True, exist_ok=True)
    write_snapshot(folder, snapshot)
    try:
        if reuse is not None and reuse["role"] == "design-data":
            # taking labels as design data says they were seen (§2.4): no audit frozen after this one may
            # count them. Marked before the manifest is written, so that a crash between the two leaves at
            # worst labels marked seen by an audit that was never frozen (too cautious), never a frozen
            # design-data audit whose sources are not marked.
            provenance.mark_seen(chain, str(content["frozen_at"]), content_hash(content))
        manifest = write_manifest(folder, content)
    except BaseException:
        (folder / SNAPSHOT_FILE).unlink(missing_ok=True)  # written exclusively above: this freeze's own
        raise
    if reuse is not None and reuse["role"] == "certification" and reuse["opened_before_freeze"]:
        first = reuse["opened_before_freeze"]
        whose = "" if first["audit_id"] == reuse["audit_id"] else \
            f" (reused from audit {first['audit_id'][:12]})"
        how = "opened for certification" if first["how"] == "opened" else first["how"]
        warnings.warn(
            f"the labels of audit {reuse['audit_id'][:12]}{whose} were {how} at {first['at']}, before this "
            "audit was frozen: a cut designed after seeing them cannot be certified by them (§2.4), so "
            "certify will refuse to count them",
            AuditWarning, stacklevel=2)
    return manifest


# ---------------------------------------------------------------------------------------------
# plan


def plan(audit_dir: str | Path, *, expected_precision: float | None = None, tolerated: int = 0) -> PlanResult:
    """Plan the sample sizes of a frozen audit and write ``plan.json`` (step 2, before labelling).

    * missed-count targets ``t`` (excluded, prefixes, fixed-sequence, stratified): the smallest
      size with ``MU(c, δ'; N0, n) ≤ t`` (``plan_hypergeometric``, Theorem 8), or i.i.d. with
      ``p0·U_n(c, δ') ≤ t/N`` (``plan_missed_mass``, §4.6); ``δ' = δ/M`` for simultaneous prefix
      bounds (Corollary 16/18), ``δ`` for fixed-sequence tests (Theorem 19). A shared reference
      sample of ``Q`` draws from ``E_1`` gives member ``m`` a random effective size ``n_eff_m``
      (hypergeometric without replacement, binomial with it, of mean ``Q·N0(g_m)/N0(g_1)``); ``Q``
      is the least size with ``P(n_eff_m ≥ n_m) ≥ 0.95`` for every member ``m`` with need ``n_m``
      (:data:`REFERENCE_PROBABILITY`), for each member separately — not the chance that all
      members reach their needs at once. Stratified: the tolerance is split over the bands in
      proportion to their sizes, ``δ/S`` each.
    * recall target ``ρ`` (two-pool): see :func:`~rankcut.audit.designs.single.plan_recall` — the
      target becomes the missed-count tolerance ``⌊ML(1 − ρ)/ρ⌋`` for an included sample at the
      expected precision.

    The expected precision and ``tolerated`` are planning guesses: they change the sizes, never the
    validity of the certificate, which is computed from the labels actually found.

    :param expected_precision: two-pool only: the share of relevant items expected in the included
        pool (default 0.5).
    :param tolerated: relevant items the excluded-pool audit may find and still meet the target.
    :raises AuditStepError: when the sample was already drawn with another plan.
    """
    audit = load_audit(audit_dir)
    tol = check_count(tolerated, "tolerated")
    target = audit.target
    spec = design_of(audit)
    if expected_precision is not None and not spec.plans_precision:
        raise ValueError(f"{_o('expected_precision')} is a planning guess for the two-pool design's "
                         "included pool")
    precision = DEFAULT_EXPECTED_PRECISION if expected_precision is None else expected_precision
    if isinstance(precision, bool) or not isinstance(precision, int | float) or not 0 < precision <= 1:
        raise ValueError(f"{_o('expected_precision')} must lie in (0, 1], got {precision!r}")
    lines = [f"audit {audit.manifest.short_id}: {audit.design} design, δ = {audit.delta:g}, "
             f"{'without' if audit.finite else 'with'} replacement"]
    plans: list[Any] = []
    sizes: dict[str, Any] | None
    assumptions: dict[str, Any] = {"tolerated": tol}
    if not target:
        sizes = None
        lines.append(f"no target was frozen: give the sample sizes to {_o('sample')} ({_o('excluded')}, and "
                     f"{_o('included')} for two-pool)")
    else:
        planned = spec.plan(audit, target, tol, float(precision), expected_precision is not None)
        sizes, plans = planned.sizes, planned.certificates
        assumptions.update(planned.assumptions)
        lines.extend(planned.lines)
    too_many = beyond_labelling(audit, sizes, anytime=spec.anytime)
    lines += [too_many] if too_many else []
    content = {"schema": "rankcut.audit_plan", "schema_version": 1, "audit_id": audit.manifest.audit_id,
               "planned_at": now(), "sizes": sizes, "assumptions": assumptions, "lines": lines,
               "beyond_labelling": too_many, "planners": [c.to_dict() for c in plans]}
    path = audit.folder / PLAN_FILE
    if (audit.folder / SAMPLE_FILE).exists():
        old = read_json(path, "written by plan") if path.exists() else None
        if old is None or old.get("sizes") != sizes or old.get("assumptions") != assumptions:
            raise AuditStepError(f"a new plan for {audit.folder} is refused: its sample was already drawn "
                                 f"({audit.folder / SAMPLE_FILE}), and sizes changed after the draw could "
                                 "be fitted to it (Assumption 1: the audit rule is fixed before the labels); "
                                 f"keep the plan the sample was drawn with, or {start_again()}")
        return PlanResult(sizes, tuple(old["lines"]), old)
    write_json_atomic(path, content)
    return PlanResult(sizes, tuple(lines), content)


# ---------------------------------------------------------------------------------------------
# sample


def sample(audit_dir: str | Path, *, excluded: int | Sequence[int] | None = None,
           included: int | None = None, label_format: str = "csv",
           allow_underpowered: bool = False) -> SampleResult:
    """Draw the audit sample from the frozen manifest and seed (step 3), once.

    Sizes default to ``plan.json``; given sizes replace them (recorded in ``sample.json``). Writes
    ``sample.jsonl`` (one draw a line: pool, member or band, query, document), ``sample.json``
    (audit id, sizes, sample hash = sha256 of ``sample.jsonl``) and ``to_label.csv`` (or
    ``.jsonl``): the distinct items in a shuffled order without their pool, with a ``label`` column
    to fill and the text when the audit has texts.

    :param excluded: excluded-pool size; one per member for separate prefix samples, one per band
        (or one for every band) for the stratified design; the shared reference size ``Q``.
    :param included: two-pool included-pool size.
    :param label_format: ``"csv"`` or ``"jsonl"`` for the list to label.
    :param allow_underpowered: draw sizes that cannot meet the frozen target even if no
        excluded-side draw is relevant (or, without a target, that draw nothing from the excluded
        pool). Without it they are refused, naming the least size that can: the audit has one
        sample, and such sizes would use it up for nothing.
    :raises AuditStepError: without a plan, or when a sample was already drawn (a second draw would
        let the sample be chosen after seeing the first).
    :raises ValueError: for sizes that cannot certify the frozen target (see ``allow_underpowered``).
    """
    if label_format not in ("csv", "jsonl"):
        raise ValueError(f"{_o('label_format')} must be csv or jsonl, got {label_format!r}")
    audit = load_audit(audit_dir)
    spec = design_of(audit)
    folder = audit.folder
    if (folder / SAMPLE_FILE).exists():
        raise AuditStepError(f"a second sample of {folder} is refused: it was already drawn "
                             f"({folder / SAMPLE_FILE}), and it is drawn once, so that it cannot be chosen "
                             f"after seeing it (Assumption 1); label the sample drawn, or {start_again()} "
                             "for another one")
    refuse_if_opened_file(audit, "drawing a sample")
    plan_path = folder / PLAN_FILE
    if not plan_path.exists():
        raise AuditStepError(f"no plan yet ({plan_path} missing): run {_o('plan')} first, so that the sizes "
                             "are fixed and shown before any labelling")
    planned = read_json(plan_path, "written by plan")
    if planned.get("audit_id") != audit.manifest.audit_id:
        raise AuditStepError(f"{plan_path} was made for audit {str(planned.get('audit_id'))[:12]}, not "
                             f"{audit.manifest.short_id}: run {_o('plan')} again")
    defaults = planned.get("sizes") or {}
    ex_given = defaults.get("excluded") if excluded is None else excluded
    in_given = defaults.get("included") if included is None else included
    sizes = spec.sizes(audit, ex_given, in_given)
    rows, underpowered = check_power(audit, sizes, ex_given, in_given, defaults, allow_underpowered)
    sample_hash = write_draws(folder / SAMPLE_ITEMS, rows)  # a chunk of draws at a time
    n_items = rows.n_distinct() if isinstance(rows, Draws) else len(distinct_items(rows))
    order = spec.label_order(audit, rows)   # all of them, or (an adaptive design) the first asked for
    to_label = write_to_label(audit, order, label_format)
    info = {"schema": "rankcut.audit_sample", "schema_version": 1, "audit_id": audit.manifest.audit_id,
            "drawn_at": now(), "sizes": sizes, "planned": planned.get("sizes"), "draws": len(rows),
            "items": n_items, "sample_hash": sample_hash, "to_label": to_label.name,
            "numpy": np.__version__, "underpowered": bool(underpowered)}
    # sample.json last: it is what marks the sample as drawn
    write_json_atomic(folder / SAMPLE_FILE, info)
    return SampleResult(sizes, len(rows), n_items, sample_hash, to_label)


# ---------------------------------------------------------------------------------------------
# label


def label(
    audit_dir: str | Path,
    *,
    from_file: str | Path | None = None,
    qrels: str | Path | None = None,
    threshold: float = 1,
    unjudged_nonrelevant: bool = False,
    interactive: bool = False,
    reuse: bool = False,
    overwrite: bool = False,
    limit: int | None = None,
    file_source: str | None = None,
    item_sources: Mapping[Item, str] | None = None,
    input: Callable[[str], str] = input,
    output: Callable[[str], Any] = print,
) -> LabelResult:
    """Record labels for the sampled items (step 4), from exactly one source.

    The label store ``labels.sqlite`` is made by the first call that records a label: a refused
    call, or one that records nothing, leaves no store behind.

    :param from_file: a CSV/TSV/JSONL label file (``query_id, doc_id, label``); every row must be
        a sampled item (a label for another item is refused, naming it); a row whose label cell is
        blank leaves its item unlabelled.
    :param qrels: TREC qrels as the oracle, for simulation (``--oracle qrels``): an unjudged item is
        labelled 0, and the result counts them (:attr:`LabelResult.unjudged`). A sampled query none
        of whose listed documents the qrels judge is named in a warning; when such queries hold most
        of the sampled items, the call is refused (qrels of another topic set or collection would
        label everything 0: a falsely tight certificate), unless ``unjudged_nonrelevant``.
    :param threshold: relevance grade at or above which a qrels judgement counts as relevant.
    :param unjudged_nonrelevant: with ``qrels``: label the items of such queries 0 all the same,
        without the check (e.g. positives-only qrels of queries without relevant documents).
    :param interactive: ask in the terminal, item by item, in the order of ``to_label``, showing the
        query and document texts frozen with ``texts``; resumable (labelled items are not asked
        again); ``u`` undoes the last answer (see :func:`~rankcut.audit.interactive.label_interactively`).
    :param reuse: copy the labels of sampled items from the audit named by ``reuse_labels`` at freeze.
    :param overwrite: replace a different earlier label (kept in the store's history).
    :param limit: with ``qrels``: label only the first ``limit`` unlabelled items of the to-label
        order (a simulated reviewer labelling in batches, for the sequential design).
    :param file_source: with ``from_file`` or ``qrels``: the source recorded with its labels, when the
        file was made from the caller's own (default: the file's name and sha256); with
        ``interactive`` (the interleaved design), the source of the answers typed (default
        ``interactive``: ``rankcut review label --reviewer`` adds the reviewer's name).
    :param item_sources: with ``from_file``, for the interleaved design: the source recorded with
        the label of each item it names, in place of ``file_source`` (a file that gathers answers
        given by several people, each recorded as given).
    :raises AuditStepError: without a sample, in a read-only audit folder, or after the labels were
        opened by :func:`certify` (recorded in the store or in ``opened.json``). The sequential
        design takes new labels after an opening — its certificate holds wherever the audit stops —
        but never changes one. The interleaved design asks for the items one at a time, in the order
        its frozen policy chooses them from the labels so far (:func:`_record_steps`).
    """
    sources = [n for n, v in (("from_file", from_file), ("qrels", qrels), ("interactive", interactive),
                              ("reuse", reuse)) if v]
    if len(sources) != 1:
        raise ValueError(f"give exactly one label source ({_o('from_file')}, {_o('qrels')}, "
                         f"{_o('interactive')} or {_o('reuse')}), got "
                         f"{', '.join(_o(x) for x in sources) or 'none'}")
    if limit is not None:
        if qrels is None:
            raise ValueError(f"{_o('limit')} is for {_o('qrels')}: it labels the next items of the to-label "
                             "order from the qrels")
        check_count(limit, "limit", 1)
    if unjudged_nonrelevant and qrels is None:
        raise ValueError(f"{_o('unjudged_nonrelevant')} is for {_o('qrels')}: it says how the qrels oracle "
                         "labels items it has no judgement for")
    for given, option in ((from_file, _o("from_file")), (qrels, _o("qrels_file", "qrels"))):
        if isinstance(given, str | Path):
            check_file(given, option)
    audit = load_audit(audit_dir)
    spec = design_of(audit)
    if item_sources is not None and (from_file is None or not spec.adaptive):
        raise ValueError("item_sources is for a label file of the interleaved design (its labels are "
                         "recorded one step at a time)")
    info, rows = load_sample(audit)
    record = opened_record(audit)
    spec.guard_labelling(audit, record)
    store_path = audit.folder / LABELS_FILE
    if (what := _read_only(audit)) is not None:
        raise AuditStepError(f"{what}: labels are recorded in {store_path}, which cannot be written; label a "
                             f"writable copy of the folder ({_o('certify')}, {_o('report')} and "
                             f"{_o('status')} work on a read-only one)")
    order = [] if spec.adaptive else spec.label_order(audit, rows)   # adaptive: chosen step by step
    created = not store_path.exists()
    store = open_store(audit, info, create=True)
    try:
        result = _record_labels(audit, store, order, rows, from_file=from_file, file_source=file_source,
                                item_sources=item_sources, qrels=qrels, threshold=threshold,
                                unjudged_nonrelevant=unjudged_nonrelevant, interactive=interactive,
                                overwrite=overwrite, limit=limit, record=record, input=input, output=output)
    finally:
        # a sample with nothing to label (a cut that keeps every item) keeps the store it made:
        # certify reads it as this sample's, with no label
        empty = created and store.count() == 0 and (spec.adaptive or bool(order))
        store.close()
        if empty:  # this call made the store and recorded nothing: leave none behind
            labels_mod.remove_store(store_path)
    return result


def _read_only(audit: Audit) -> str | None:
    """What keeps the label store from being written (the folder, or the store itself), or None."""
    store_path = audit.folder / LABELS_FILE
    if labels_mod.writable(store_path):
        return None
    folder_ro = not labels_mod.writable(audit.folder / "_")  # a name not there: the folder's own right
    return (f"the {design_of(audit).noun} folder {audit.folder} is read-only" if folder_ro
            else f"the label store {store_path} is read-only")


def read_on(audit_dir: str | Path) -> tuple[int, bool]:
    """An interleaved review reads on after its target was met: the choice is recorded in the label
    store (:meth:`rankcut.audit.designs.interleaved.Interleaved.read_on`, where the guarantee is
    argued), and the to-label file names the document asked for next.

    :returns: the steps read when the review began to read on, and whether it began now (``False``:
        it read on already, and nothing is changed).
    :raises ValueError: for another design, a frozen input that changed, no sample or no label yet,
        a target not met yet, everything read, or a read-only folder.
    """
    audit = load_audit(audit_dir)
    spec = design_of(audit)
    if not spec.adaptive:
        raise ValueError(f"reading on is for an interleaved review; audit {audit.manifest.short_id} has the "
                         f"{audit.design} design, whose sample is fixed when it is drawn")
    _, rows = load_sample(audit)
    store_path = audit.folder / LABELS_FILE
    if not store_path.exists():
        raise AuditStepError(f"nothing is read yet ({store_path} missing): the target is not met, and "
                             f"reading on is for after it is — run {_o('label')}")
    if (what := _read_only(audit)) is not None:
        raise AuditStepError(f"{what}: reading on records the choice in {store_path} — nothing was changed")
    since, now, asked = spec.read_on(audit, rows)
    fmt = Path(str(read_json(audit.folder / SAMPLE_FILE, "written by sample")["to_label"])).suffix[1:]
    write_to_label(audit, [] if asked is None else [asked], fmt)   # the item asked for next
    return since, now


def _record_labels(audit: Audit, store: labels_mod.LabelStore, order: list[Item],
                   rows: Sequence[Mapping[str, Any]], *, from_file: str | Path | None,
                   file_source: str | None, item_sources: Mapping[Item, str] | None,
                   qrels: str | Path | None, threshold: float,
                   unjudged_nonrelevant: bool, interactive: bool, overwrite: bool, limit: int | None,
                   record: Mapping[str, Any] | None, input: Callable[[str], str],
                   output: Callable[[str], Any]) -> LabelResult:
    """The body of :func:`label`, on the opened store."""
    spec = design_of(audit)
    sampled = set(order)
    spec.guard_store(store, record, overwrite)
    if spec.adaptive:
        return _record_steps(audit, store, rows, from_file=from_file, file_source=file_source,
                             item_sources=item_sources, qrels=qrels, threshold=threshold,
                             unjudged_nonrelevant=unjudged_nonrelevant, interactive=interactive, limit=limit,
                             input=input, output=output)
    seen = store.get_meta("seen_at")
    if overwrite and seen is not None:
        raise AuditStepError(
            f"changing labels ({_o('overwrite')}) is refused: the labels of this audit were seen at "
            f"{seen} through audit {str(store.get_meta('seen_by'))[:12]}, which reused them (or took "
            "them as design data), and a label changed now would let a certificate depend on what was "
            f"seen (Assumption 1, §2.4); record only missing labels (without {_o('overwrite')}), or "
            f"{start_again()}")
    unjudged: int | None = None
    placed = 0
    if from_file is not None:
        file_rows = labels_mod.read_label_file(from_file)
        outside = [(q, d) for q, d, _ in file_rows if (q, d) not in sampled]
        if outside:
            q, d = outside[0]
            more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
            raise ValueError(f"{from_file}: query {q!r}, document {d!r} is not in the sample of this "
                             f"audit{more}; only sampled items are labelled — nothing was recorded")
        source = file_source or f"file {Path(from_file).name} sha256:{sha256_file(from_file)[:12]}"
        recorded = store.record([(q, d) for q, d, _ in file_rows], [y for _, _, y in file_rows], source,
                                overwrite=overwrite, refusal_hint=spec.refusal_hint(store))
    elif qrels is not None and order and not overwrite and not store.missing(order):
        source, recorded = "none asked: every sampled item is labelled already; the qrels were not read", 0
    elif qrels is not None:
        judged, placed, source = _qrels_judged(audit, qrels, order, threshold, unjudged_nonrelevant,
                                               file_source)
        if not overwrite or limit is not None:   # a full overwrite relabels every item
            check_one_oracle(store, source, judged, threshold,
                             f"relabel every item with {_o('overwrite')} and no {_o('limit')}")
        todo = order if overwrite else store.missing(order)
        todo = todo if limit is None else todo[:limit]
        recorded = store.record(todo, qrels_oracle(judged, todo, threshold), source,
                                overwrite=overwrite, refusal_hint=spec.refusal_hint(store))
        unjudged = len(unjudged_items(judged, todo))
    elif interactive:
        texts, queries = texts_and_queries(audit)
        if texts is None:
            output(f"this audit was frozen without {_o('texts')}: only query and document ids are shown "
                   f"(freeze with {_o('texts')} FILE to see the query and document texts)")
        summary = label_interactively(store, order, texts=texts, queries=queries, input=input,
                                                 output=output, place=spec.place(audit, order))
        source, recorded = "interactive", summary.labelled
    else:
        source, recorded = provenance.reuse_into(audit, store, order, overwrite)
    labelled = len(order) - len(store.missing(order))
    progress = spec.progress(rows, store)
    return LabelResult(source, recorded, labelled, len(order), progress, unjudged, placed)


def _record_steps(audit: Audit, store: labels_mod.LabelStore, rows: Sequence[Mapping[str, Any]], *,
                  from_file: str | Path | None, file_source: str | None,
                  item_sources: Mapping[Item, str] | None, qrels: str | Path | None,
                  threshold: float, unjudged_nonrelevant: bool, interactive: bool, limit: int | None,
                  input: Callable[[str], str], output: Callable[[str], Any]) -> LabelResult:
    """The label step of an adaptive design (the interleaved review): each label decides the next
    item, so the items are asked for one at a time, in the order the review chooses them, and each
    is recorded at once. From a file: the labels it holds for the items asked for, as far as it
    holds them (labels of items not asked for yet are left for a later call); from qrels: the
    next ``limit`` steps, or until certified; interactively: until quit or certified."""
    spec = design_of(audit)
    words = spec.words(audit.manifest)   # a review of records speaks of records, not queries
    collection = {(r["query_id"], r["doc_id"]) for r in rows}
    unjudged: int | None = None
    placed = 0
    asked: list[Item] = []
    answer: Callable[[Any, Any], int | None]   # (the step asked for, the review so far) -> its label
    if from_file is not None:
        file_rows = labels_mod.read_label_file(from_file)
        outside = [(q, d) for q, d, _ in file_rows if (q, d) not in collection]
        if outside:
            q, d = outside[0]
            more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
            raise ValueError(f"{from_file}: query {q!r}, document {d!r} is not in the collection of this "
                             f"audit{more}; only its documents are labelled — nothing was recorded")
        given = {(q, d): y for q, d, y in file_rows}
        held = store.get(list(given))
        changed = next((item for item, y in held.items() if y != given[item]), None)
        if changed is not None:
            raise ValueError(f"{from_file}: query {changed[0]!r}, document {changed[1]!r} is labelled "
                             f"{given[changed]}, but the review recorded {held[changed]} for it: "
                             f"{spec.refusal_hint(store)} — nothing was recorded")
        source = file_source or f"file {Path(from_file).name} sha256:{sha256_file(from_file)[:12]}"
        answer = lambda step, _: given.get(step.item)  # noqa: E731
    elif qrels is not None:
        judged, placed, source = _qrels_judged(audit, qrels, sorted(collection), threshold,
                                               unjudged_nonrelevant, file_source)
        check_one_oracle(store, source, judged, threshold, start_again(), words)

        def answer(step: Any, _: Any) -> int | None:
            asked.append(step.item)
            return int(qrels_oracle(judged, [step.item], threshold)[0])
    elif interactive:
        texts, queries = texts_and_queries(audit)
        source = file_source or "interactive"

        def answer(step: Any, review: Any) -> int | None:
            q, d = step.item
            output("")
            if review.steps:   # where the review stands, as the labelling page's header says it
                output("so far: " + review.verdict(float(audit.target["recall"])))
            output(f"[step {step.number}: {step.move}, {words.where(step.move, step.rank, step.position)}] "
                   f"{step.why}")
            if words.in_run:
                output(f"query {q}" + (f": {queries[q]}" if queries and queries.get(q) else ""))
            output(f"{words.item} {d}")
            text = None if texts is None else texts.get(step.item, texts.get(d))
            if text is not None:
                output(text)
            while True:
                try:
                    reply = input("relevant? [y]es / [n]o / [q]uit: ").strip().lower()
                except EOFError:
                    return None
                if reply in ("y", "yes", "1", "n", "no", "0"):   # 1/0 as a label file says them
                    return int(reply in ("y", "yes", "1"))
                if reply in ("q", "quit"):
                    return None
                output(f"please answer y (or 1), n (or 0) or q (not {reply!r})")
    else:
        raise ValueError(f"{_o('reuse')} is not offered for the {audit.design} design: its steps are chosen "
                         "from its own labels")
    recorded, review = spec.label_steps(audit, store, rows, answer, source, limit, item_sources)
    waiting = 0 if from_file is None else len(given) - len(store.get(list(given)))
    if qrels is not None:
        unjudged = len(unjudged_items(judged, asked))
    step = review.next()
    rev = review.state.review
    progress = (f"{len(review.steps)} of {len(rows)} {words.items} read ({review.state.screened} screened, "
                f"{rev.audit_labels} audited, {rev.found} relevant); {review.next_line(step)}")
    fmt = Path(str(read_json(audit.folder / SAMPLE_FILE, "written by sample")["to_label"])).suffix[1:]
    write_to_label(audit, [] if step is None else [step.item], fmt)   # the item asked for next
    return LabelResult(source, recorded, len(review.steps) if step is not None else len(rows), len(rows),
                       progress, unjudged, placed, waiting)


# ---------------------------------------------------------------------------------------------
# certify


def certify(audit_dir: str | Path) -> CertifyResult:
    """Compute the certificates of the audit (step 5) and write ``certificate.json``.

    Checks, in order: the manifest and input files are unchanged; the sample is the one the frozen
    manifest and seed draw; the label store belongs to this audit and sample; no label covers an
    item outside the sample; every sampled item is labelled (unless frozen with
    ``allow_incomplete``); reused labels were not opened before this audit was frozen; after an
    earlier opening, the store still holds the labels that were opened (its meta and
    ``opened.json`` agree with them). Then the certificates are computed, in memory; only when that
    succeeded are the labels recorded as opened: the first time, the time, sample hash and labels
    hash go to the store's meta (one transaction) and to ``opened.json`` — the sample is now
    *used*, no label can be added, and a later audit that wants these labels must have been frozen
    before this moment. Certifying again recomputes the same certificates from the same labels (a
    changed label, or a replaced or deleted store, is refused).

    :returns: :class:`CertifyResult` with the joint report (what is certified, each certificate's
        theorem and δ event) and the verdict against the frozen target.
    """
    audit = load_audit(audit_dir)
    spec = design_of(audit)
    info, rows = load_sample(audit, redraw=lambda sizes: spec.draw(audit, sizes))
    try:
        opened = spec.open(audit, info, rows, opened_record(audit))
    except labels_mod.ReadOnlyStoreError:
        if labels_mod.writable(audit.folder / CERTIFICATE_FILE):
            raise  # another store (its own file, or that of an audit whose labels it reused): it names it
        raise AuditStepError(f"the {spec.noun} folder {audit.folder} is read-only, and this certify has to "
                             "record in it the labels it opens (the first certify, or new labels of a "
                             "sequential audit): certify a writable copy; a read-only copy can be certified "
                             "again, unchanged, once it was certified") from None
    readonly = not labels_mod.writable(audit.folder / CERTIFICATE_FILE)
    with labels_mod.LabelStore(audit.folder / LABELS_FILE, create=False, readonly=True) as store:
        sources = store.source_counts()   # who gave the labels: the report says it (a simulation or not)
    content = {
        "schema": "rankcut.audit_certificate", "schema_version": 1,
        "audit_id": audit.manifest.audit_id, "design": audit.design, "theorem": audit.manifest["theorem"],
        "sampling": audit.manifest["sampling"], "delta": audit.delta, "target": audit.target or None,
        "sample_hash": info["sample_hash"], "labels_hash": opened.digest, "opened_at": opened.opened_at,
        "certified_at": now(), "labels": dict(opened.spent),
        "pools": {"queries": audit.queries, "items": audit.n_items},
        "counts": opened.stats, "report": opened.report.to_dict(), **opened.findings.to_dict(),
        "label_sources": sources,
    }
    if opened.curve is not None:
        content["curve"] = opened.curve
    if readonly:  # the labels were opened before: the certificates are those already written
        content["notes"] = [*content.get("notes", []), f"the {spec.noun} folder {audit.folder} is read-only: "
                            f"{CERTIFICATE_FILE} was checked and recomputed, not rewritten"]
    else:
        # both files as text first: a value JSON cannot hold refuses certify before either is written,
        # never between the two
        files: list[tuple[str, Any]] = [(OPENED_FILE, opened.record)] if opened.record is not None else []
        texts = [(name, json_text(obj)) for name, obj in [*files, (CERTIFICATE_FILE, content)]]
        for name, text in texts:
            write_text_atomic(audit.folder / name, text)
    return CertifyResult(opened.report, content)


# ---------------------------------------------------------------------------------------------
# status


def status(audit_dir: str | Path, *, check_certificate: bool = True, check_files: bool = True
           ) -> dict[str, Any]:
    """Which steps an audit has done, read from its folder; each input file is checked as certify
    checks it (by its file status, hashed in full where that moved or was not recorded).

    The opening is read as :func:`certify` reads it: ``opened.json`` first, so that deleting or
    replacing ``labels.sqlite`` cannot make an opened audit look unopened (Assumption 1, §2.3).

    :returns: ``{"audit_id", "design", "steps": {step: done?}, "next": the next step or None,
        "opened_at", ...}``.
    :raises ValueError: as certify, when ``certificate.json`` exists without ``opened.json`` or
        ``opened.json`` is another audit's. What certify or report would refuse is not refused here
        but said: ``labels_changed`` (labels opened by a certify and edited, removed or replaced
        since), ``inputs_changed`` (an input file changed or missing since freeze) and
        ``certificate_refused`` (a certificate report does not take, edited since; certify is
        then not done; not checked without ``check_certificate``, for report, which checks it).
        ``check_files=False``: the caller checked the inputs already (a review's status, whose
        inputs are hashed in full at every check).
    """
    manifest = load_manifest(audit_dir)
    folder = manifest.folder
    record = opened_record(FrozenAudit(manifest))
    out: dict[str, Any] = {"audit_id": manifest.audit_id, "design": manifest["design"],
                           "frozen_at": manifest["frozen_at"]}
    steps = {"freeze": True, "plan": (folder / PLAN_FILE).exists(), "sample": (folder / SAMPLE_FILE).exists(),
             "label": False, "certify": (folder / CERTIFICATE_FILE).exists()}
    if steps["plan"] and not steps["sample"]:  # the plan's warning and sizes, while they are still to draw
        planned = read_json(folder / PLAN_FILE, "written by plan")
        out["beyond_labelling"] = planned.get("beyond_labelling")
        out["planned_sizes"] = planned.get("sizes")   # None: no target was frozen, the sizes are the user's
    if steps["sample"]:
        info = read_json(folder / SAMPLE_FILE, "written by sample")
        try:
            out["sample"] = {"sizes": info["sizes"], "items": info["items"], "hash": info["sample_hash"],
                             "to_label": info["to_label"]}
        except (KeyError, TypeError) as err:   # edited by hand: said by name, as every step says it
            raise ValueError(f"{folder / SAMPLE_FILE} lacks {err}: it is not as sample wrote it — restore "
                             f"it, or {start_again()}") from None
        if labels_mod.holds_store(folder / LABELS_FILE):
            with labels_mod.LabelStore(folder / LABELS_FILE, readonly=True) as store:
                out["labelled"] = store.count()
                out["opened_at"] = store.get_meta("opened_at")
            steps["label"] = out["labelled"] >= info["items"] or bool(manifest["allow_incomplete"])
            if manifest["allow_incomplete"] and out["labelled"] < info["items"] and record is None:
                out["incomplete"] = info["items"] - out["labelled"]   # certify counts them against the cut
    if record is not None:  # opened: whatever labels.sqlite says now, the labels were seen
        out["opened_at"] = record.get("opened_at")
        steps["label"] = True
    if steps["sample"]:
        if record is not None and not labels_mod.holds_store(folder / LABELS_FILE):   # certify refuses it
            out["labels_changed"] = deleted_store_text(FrozenAudit(manifest), record)
        DESIGNS[manifest["design"]].status(folder, out, steps, record)
    if check_files:   # as certify and report check them: by file status, hashed only where it moved
        try:
            check_inputs(manifest)
        except ValueError as err:
            out["inputs_changed"] = str(err)
    if check_certificate and (folder / CERTIFICATE_FILE).exists():   # done only with one report takes
        from rankcut.audit.report import checked_certificate

        try:
            checked_certificate(folder)
        except (KeyError, TypeError, AttributeError, ValueError) as err:   # edited: said, never a traceback
            out["certificate_refused"] = (str(err) if isinstance(err, ValueError) else
                                          f"{folder / CERTIFICATE_FILE} is not as certify wrote it "
                                          f"({type(err).__name__}: {err}); certify again to rewrite it")
            steps["certify"] = False
    out["steps"] = steps
    out["next"] = next((s for s, done in steps.items() if not done), None)
    return out
