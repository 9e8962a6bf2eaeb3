"""The audit workflow: freeze → plan → sample → label → certify (→ report), each step guarded.

Every certificate of the audit paper holds under one discipline (Assumption 1, §2.3): the
candidate generator — here a cut run, or a nested family of cut runs — and the audit rule are
fixed before any certification label is examined. The steps below make that discipline hard to
break by accident. Each one refuses, with a message that names the step or file, when it is run
out of order or when something it depends on changed:

1. :func:`freeze` writes ``manifest.json`` (see :mod:`rankcut.audit.manifest`): the cut or the
   family, the pools and their sizes, the design, ``δ`` and its allocation, the target, the seed,
   and the sha256 of every input file. Its content hash is the audit id. An audit is frozen once.
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
   anywhere along the chain of reuses (§2.4: they are design data, never certification data).

What each design certifies (all finite-corpus versions draw without replacement; when a pool
exceeds :data:`~rankcut.certify.bounds.MAX_POPULATION` items, or on request, the draws are i.i.d.
with replacement and the binomial versions apply):

* ``excluded`` — Theorem 8 (``excluded_pool_finite_certificate``): ``M0 ≤ MU(K0, δ; N0, n0)``,
  the missed relevant count (and ``r ≤ MU/N``); binomially Theorem 7, ``r ≤ p0·U_{n0}(K0, δ)``.
* ``two-pool`` — Corollary 11 (``two_pool_recall_finite_certificate``):
  ``Recall ≥ ML(K1, δ1)/(ML + MU(K0, δ0))`` with ``δ0 + δ1 = δ`` (default ``δ/2`` each), reported
  jointly with Theorem 8's ``M0 ≤ MU(K0, δ0)``, which rests on the same excluded-pool bound and is
  charged once (:class:`~rankcut.certify.report.JointReport`); binomially Theorem 10.
* ``prefixes`` — a nested family ``g_1 ⊆ … ⊆ g_M``: simultaneous bounds on every member's
  ``M0`` at ``δ/M`` each, from one shared reference sample drawn from ``E_1`` (Corollary 18;
  Theorem 17 binomially) or from separate samples of each ``E_m`` (Corollary 16 with Theorem 8 per
  prefix); with a target, the least-burden member whose bound meets it (Eq. 1, ``choose_prefix``).
* ``fixed-sequence`` — Theorem 19 (``fixed_sequence_finite``): a target fixed at freeze, each
  member tested at the full ``δ`` from the largest candidate set down; one member or none.
* ``stratified`` — §9: rank bands below the cut partition the excluded pool,
  ``M0 ≤ Σ_s MU(K_s, δ/S; N_s, n_s)`` (``stratified_hypergeometric_certificate``).
* ``sequential`` — §9, sequential audits (:mod:`rankcut.certify.sequential`), the design for
  high-recall review: every item of the cut is labelled (``F`` relevant), the whole excluded pool is
  put in one random audit order, and certify may run after any number of its labels:
  ``Recall ≥ (F + x)/(F + min_{s ≤ t} max C_s)`` from the anytime-valid confidence sequence
  ``C_t`` and its running intersection (``sequential_recall_certificate``), met when that bound is
  at most ``m(x)`` — once met, met at every later prefix. Unlike the other designs it
  takes new labels after an opening (never changed ones): the claim holds wherever the audit stops.

How ``δ`` is spent is declared in the manifest as named events, the budget of the joint report:
``{"excluded audit": δ}``, ``{"excluded audit": δ0, "included audit": δ1}``, ``{"prefixes": δ}``,
``{"fixed-sequence": δ}``, ``{"strata": δ}`` or ``{"sequential audit": δ}``.
"""

from __future__ import annotations

import json
import math
import secrets
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut.audit import labels as labels_mod
from rankcut.audit.manifest import (
    MANIFEST_FILE,
    SCHEMA,
    SCHEMA_VERSION,
    Manifest,
    canonical_json,
    check_inputs,
    content_hash,
    describe_file,
    load_manifest,
    now,
    read_json,
    sha256_file,
    write_json_atomic,
    write_manifest,
    write_text_atomic,
)
from rankcut.audit.pools import Corpus, Item, Pools, cuts_from_run, depth_family, nested_family, offset_family
from rankcut.audit.sampling import draw_excluded, draw_included, draw_stratified, reference_membership
from rankcut.data.lists import ORDERINGS, RankedLists

if TYPE_CHECKING:  # rankcut.certify loads scipy: imported where it is used, so the audit package loads fast
    from rankcut.certify.report import JointReport
    from rankcut.certify.result import Certificate
    from rankcut.certify.sequential import SequentialAudit

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
    "sample",
    "status",
]

PLAN_FILE = "plan.json"
SAMPLE_FILE = "sample.json"
SAMPLE_ITEMS = "sample.jsonl"
LABELS_FILE = "labels.sqlite"
OPENED_FILE = "opened.json"
CERTIFICATE_FILE = "certificate.json"
TO_LABEL = "to_label"

SAMPLINGS = ("auto", "without-replacement", "with-replacement")
REFERENCES = ("shared", "separate")
DEFAULT_EXPECTED_PRECISION = 0.5
# A shared reference sample is planned so that each member's effective size reaches its need with
# at least this probability (the effective size is random: the draws that fall in the member's pool).
REFERENCE_PROBABILITY = 0.95
_REUSED = "reused from audit "

# Independent random streams per part of a sample (numpy SeedSequence keys [seed, stream]), so that
# changing one pool's, member's or band's size never changes another's draws. Samples drawn before
# the bands had their own streams (sample.json without "streams") drew every band from
# _STREAM_STRATA, one after the other; they are redrawn that way.
_STREAM_EXCLUDED, _STREAM_INCLUDED, _STREAM_STRATA, _STREAM_ORDER, _STREAM_MEMBER = 0, 1, 2, 3, 100
_STREAM_BAND = 200
STREAMS_VERSION = 2

SEQUENTIAL_THEOREM = "§9 sequential audit (mixture confidence sequence, Ville's inequality)"
# The sequential design lists its whole excluded pool in the audit order (sample.jsonl, to_label).
MAX_SEQUENTIAL_POOL = 2_000_000


class AuditStepError(ValueError):
    """A step was run out of order (an earlier step is missing, or a later one already happened)."""


class AuditWarning(UserWarning):
    """Something the audit allows but that the user should know (e.g. reused labels that cannot
    count)."""


# How messages name arguments and steps: Python names by default; the command line installs its
# option names (``--max-missed``) and commands (``rankcut audit plan``) while a command runs.
OPTION_NAMES: ContextVar[Mapping[str, str] | None] = ContextVar("OPTION_NAMES", default=None)


def _o(name: str) -> str:
    """``name`` as the caller spells it (an argument, an option or a step)."""
    names = OPTION_NAMES.get()
    return name if names is None else names.get(name, name)


# ---------------------------------------------------------------------------------------------
# the designs (a registry: one entry per design, the same keys in Python and the CLI)


@dataclass(frozen=True)
class _DesignSpec:
    name: str
    family: bool  # a nested family of cuts (prefix designs) rather than one cut
    targets: tuple[str, ...]  # "recall", "max_missed"
    needs_target: bool
    summary: str


DESIGNS: dict[str, _DesignSpec] = {
    d.name: d
    for d in (
        _DesignSpec("excluded", False, ("max_missed",), False,
                    "missed relevant count M0 of one cut, from an excluded-pool sample"),
        _DesignSpec("two-pool", False, ("recall",), False,
                    "recall of one cut (and its missed count), from excluded- and included-pool samples"),
        _DesignSpec("prefixes", True, ("max_missed",), False,
                    "simultaneous missed-count bounds for every member of a nested family"),
        _DesignSpec("fixed-sequence", True, ("max_missed",), True,
                    "the least-burden member meeting a target fixed in advance, no δ/M split"),
        _DesignSpec("stratified", False, ("max_missed",), False,
                    "missed count of one cut from samples of rank bands below the cut"),
        _DesignSpec("sequential", False, ("recall",), True,
                    "recall of a review — a cut read in full, then the rest labelled in a random order "
                    "until the target is certified (anytime-valid; the design for high-recall review)"),
    )
}


# ---------------------------------------------------------------------------------------------
# results


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
        return (f"drew {self.n_draws} items ({self.n_items} distinct): {_sizes_text(self.sizes)}\n"
                f"sample hash {self.sample_hash[:12]}; label the items listed in {self.to_label}")


@dataclass(frozen=True)
class LabelResult:
    """What one :func:`label` call recorded."""

    source: str
    recorded: int
    labelled: int
    total: int
    progress: str | None = None  # the sequential design: the cut and the labelled start of the audit order

    @property
    def missing(self) -> int:
        return self.total - self.labelled

    def render(self) -> str:
        if self.progress is not None:
            return f"recorded {self.recorded} labels ({self.source}); {self.progress}"
        return (f"recorded {self.recorded} labels ({self.source}); {self.labelled} of {self.total} sampled "
                f"items labelled, {self.missing} to go")


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

    def render(self) -> str:
        lines = [self.report.render()]
        if self.verdict:
            lines.append(self.verdict)
        lines.extend(self.content.get("notes", []))
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(self.content, indent=2, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# small checks, phrased with the argument names of freeze/sample


def _delta(x: Any, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not 0.0 < float(x) < 1.0:
        raise ValueError(f"{_o(name)} must lie in (0, 1), got {x!r}")
    return float(x)


def _count(x: Any, name: str, minimum: int = 0) -> int:
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer) or x < minimum:
        raise ValueError(f"{_o(name)} must be an integer >= {minimum}, got {x!r}")
    return int(x)


def _int_list(x: Any, name: str) -> list[int]:
    if isinstance(x, str | bytes) or not isinstance(x, Sequence) or not x:
        raise ValueError(f"{_o(name)} must be a non-empty list of integers, got {x!r}")
    out = []
    for i, v in enumerate(x):
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise ValueError(f"{_o(name)}[{i}] must be an integer, got {v!r}")
        out.append(int(v))
    return out


def _sizes_text(sizes: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sizes.items() if v is not None)


def _member_names(kind: str, values: Sequence[Any]) -> list[str]:
    if kind == "offsets":
        return [f"cut{int(o):+d}" for o in values]
    if kind == "depths":
        return [f"depth{int(d)}" for d in values]
    stems = [Path(str(v)).name for v in values]
    return stems if len(set(stems)) == len(stems) else [f"g{m + 1}" for m in range(len(values))]


# ---------------------------------------------------------------------------------------------
# the frozen audit, loaded


@dataclass(frozen=True)
class _Size:
    """One member's (or the single cut's) pool sizes, as frozen in the manifest."""

    name: str
    n1: int
    n0: int


@dataclass
class _Frozen:
    """What the manifest alone says about a frozen audit (no input file is read): enough to
    compute its certificates from the sample's counts, as certify does and the report checks."""

    manifest: Manifest

    @property
    def folder(self) -> Path:
        return self.manifest.folder

    @property
    def design(self) -> str:
        return str(self.manifest["design"])

    @property
    def finite(self) -> bool:
        return bool(self.manifest["sampling"] == "without-replacement")

    @property
    def delta(self) -> float:
        return float(self.manifest["delta"])

    @property
    def budget(self) -> dict[str, float]:
        return {str(k): float(v) for k, v in self.manifest["allocation"].items()}

    @property
    def target(self) -> dict[str, Any]:
        return dict(self.manifest.get("target") or {})

    @property
    def bands(self) -> list[int]:
        return [int(b) for b in self.manifest["bands"]]

    @property
    def names(self) -> list[str]:
        return [str(m["name"]) for m in self.manifest["pools"]["members"]]

    @property
    def sizes(self) -> list[_Size]:
        """Per member (one for a single cut): its name, N1 and N0."""
        return [_Size(str(m["name"]), int(m["n1"]), int(m["n0"])) for m in self.manifest["pools"]["members"]]

    @property
    def queries(self) -> int:
        return int(self.manifest["pools"]["queries"])

    @property
    def n_items(self) -> int:
        return int(self.manifest["pools"]["items"])


@dataclass
class _Audit(_Frozen):
    """A frozen audit with its lists and pools rebuilt from the (checked) input files."""

    lists: RankedLists
    members: list[Pools]  # one per member; a single cut is a family of one

    @property
    def base(self) -> Pools:
        return self.members[0]


def _build(inputs: Mapping[str, Any], ordering: str, family_spec: Mapping[str, Any] | None,
           corpus_spec: Mapping[str, Any] | None) -> tuple[RankedLists, list[Pools], list[str]]:
    """Lists and pools from the input files (read, not checked: hashes are checked elsewhere)."""
    from rankcut.data.trec import load_trec, read_run

    lists = load_trec(inputs["run"]["path"], ordering=ordering)
    corpus: Corpus | None = None
    if corpus_spec is not None:
        corpus = (Corpus.size(int(corpus_spec["documents"])) if corpus_spec["kind"] == "size"
                  else Corpus.ids(inputs["corpus_ids"]["path"]))
    def cut_of(entry: Mapping[str, Any]) -> Any:
        run = read_run(entry["path"])  # its errors name the file and line
        try:
            return cuts_from_run(lists, run)
        except ValueError as err:
            raise ValueError(f"{entry.get('option', '--cut')} {entry['path']}: {err}") from None

    if family_spec is None:
        return lists, [Pools.from_lists(lists, cut_of(inputs["cut"]), corpus)], ["cut"]
    kind = family_spec["kind"]
    if kind == "runs":
        paths = [f["path"] for f in inputs["family"]]
        names = _member_names("runs", paths)
        family = nested_family(lists, [read_run(p) for p in paths], names=names)
    elif kind == "offsets":
        names = _member_names("offsets", family_spec["offsets"])
        base_cuts = cut_of(inputs["cut"])
        family = offset_family(base_cuts, lists.lengths, family_spec["offsets"])
    else:
        names = _member_names("depths", family_spec["depths"])
        family = depth_family(lists.lengths, family_spec["depths"])
    base = Pools.from_lists(lists, family[:, 0], corpus)
    return lists, [base, *(base.with_cuts(family[:, m]) for m in range(1, family.shape[1]))], names


def _check_pools(manifest: Manifest, members: Sequence[Pools], names: Sequence[str]) -> None:
    """The pools rebuilt from the input files must be the ones frozen: per query (``N1``, ``N0``
    and depth of the first member, as ``pools.per_query`` records them) and per member (``N1``,
    ``N0``). The certificates use the frozen sizes, so a mismatch is refused naming the query or
    member (Assumption 1: the generator certified is the one fixed at freeze)."""
    path = manifest.folder / MANIFEST_FILE

    def refuse(what: str, frozen: Any, rebuilt: Any) -> ValueError:
        return ValueError(
            f"{path} records {what} = {frozen}, but the frozen input files give {rebuilt}: the pools are "
            "not those that were frozen (the manifest was not written by this freeze, or by a rankcut "
            "that builds pools otherwise), and certificates from its sizes would not be about this cut "
            "(Assumption 1) — refused; freeze a new audit from the same files")

    pools = manifest["pools"]
    per_query = pools.get("per_query")
    if per_query is not None:
        base = members[0]
        rebuilt = {"depth": base.lengths.tolist(), "n1": base.cuts.tolist(), "n0": base.n0_q.tolist()}
        if list(per_query["qids"]) != list(base.qids):
            raise refuse("the queries", len(per_query["qids"]), f"{len(base.qids)} other queries")
        for key, values in rebuilt.items():
            for q, frozen, now_ in zip(base.qids, per_query[key], values, strict=True):
                if int(frozen) != int(now_):
                    raise refuse(f"{key.upper() if key != 'depth' else 'the depth'} of query {q!r} "
                                 f"({names[0]})", frozen, now_)
    frozen_members = pools["members"]
    if [str(m["name"]) for m in frozen_members] != list(names):
        raise refuse("the members", [m["name"] for m in frozen_members], list(names))
    for m, p in zip(frozen_members, members, strict=True):
        for key, value in (("n1", p.n1), ("n0", p.n0)):
            if int(m[key]) != int(value):
                raise refuse(f"{key.upper()} of member {m['name']}", m[key], value)


def _load(audit_dir: str | Path) -> _Audit:
    """The frozen audit, after checking that the manifest and every input file are unchanged and
    that the pools they give are the frozen ones (:func:`_check_pools`)."""
    manifest = load_manifest(audit_dir)
    check_inputs(manifest)
    lists, members, names = _build(manifest["inputs"], manifest["ordering"], manifest.get("family"),
                                   manifest.get("corpus"))
    _check_pools(manifest, members, names)
    return _Audit(manifest, lists, members)


# ---------------------------------------------------------------------------------------------
# freeze


def _theorem(design: str, reference: str | None, finite: bool) -> str:
    """The result of the audit paper the frozen design certifies with."""
    if design == "excluded":
        return "Theorem 8" if finite else "Theorem 7"
    if design == "two-pool":
        return "Corollary 11 with Theorem 8" if finite else "Theorem 10 with Theorem 7"
    if design == "stratified":
        return "Section 9 (Theorem 8 per band)" if finite else "Section 9 (binomial per band)"
    if design == "fixed-sequence":
        return "Theorem 19 (Theorem 8 tests)" if finite else "Theorem 19 (Theorem 7 tests)"
    if design == "sequential":
        return SEQUENTIAL_THEOREM
    if reference == "shared":
        return "Corollary 18 and Eq. 1" if finite else "Theorem 17 and Eq. 1"
    return "Corollary 16 with Theorem 8 per prefix, and Eq. 1" if finite else "Corollary 16 and Eq. 1"


def _target(design: _DesignSpec, target_recall: float | None, max_missed: int | None
            ) -> dict[str, Any] | None:
    if target_recall is not None and max_missed is not None:
        takes = " or ".join(_o(t) for t in ("target_recall", "max_missed")
                            if t.replace("target_", "") in design.targets)
        raise ValueError(f"give one target: {_o('target_recall')} or {_o('max_missed')}, not both (the "
                         f"{design.name} design takes {takes})")
    if target_recall is not None:
        if "recall" not in design.targets:
            raise ValueError(f"{_o('target_recall')} is a target of the two-pool and sequential designs "
                             "(recall needs the included pool's relevant count); the "
                             f"{design.name} design certifies the missed count: use {_o('max_missed')}")
        if isinstance(target_recall, bool) or not isinstance(target_recall, int | float) \
                or not 0.0 < float(target_recall) < 1.0:
            raise ValueError(f"{_o('target_recall')} must lie in (0, 1), got {target_recall!r}")
        return {"recall": float(target_recall)}
    if max_missed is not None:
        if "max_missed" not in design.targets:
            raise ValueError(f"{_o('max_missed')} is not a target of the {design.name} design: it certifies "
                             f"recall (use {_o('target_recall')}), or use the excluded design for the missed "
                             "count")
        return {"max_missed": _count(max_missed, "max_missed")}
    if design.name == "sequential":
        raise ValueError(f"the sequential design needs its recall target fixed before the audit (it "
                         f"decides when the audit may stop): give {_o('target_recall')}")
    if design.needs_target:
        raise ValueError(f"the {design.name} design needs a target fixed before the audit (Theorem 19): "
                         f"give {_o('max_missed')}")
    return None


def _allocation(design: _DesignSpec, delta: float, allocation: Mapping[str, float] | None
                ) -> dict[str, float]:
    """The δ events of the design (the joint report's budget), summing to at most ``delta``."""
    if design.name != "two-pool":
        if allocation is not None:
            raise ValueError(f"{_o('allocation')} is for the two-pool design (δ0 + δ1); the {design.name} "
                             "design "
                             "spends δ on one event")
        event = {"excluded": "excluded audit", "prefixes": "prefixes", "fixed-sequence": "fixed-sequence",
                 "stratified": "strata", "sequential": "sequential audit"}[design.name]
        return {event: delta}
    if allocation is None:
        return {"excluded audit": delta / 2, "included audit": delta / 2}
    keys = {"excluded": "excluded audit", "included": "included audit",
            "excluded audit": "excluded audit", "included audit": "included audit"}
    out: dict[str, float] = {}
    for k, v in allocation.items():
        if k not in keys:
            raise ValueError(f"{_o('allocation')} keys are 'excluded' and 'included', got {k!r}")
        out[keys[k]] = _delta(v, f"{_o('allocation')} {k}")
    if set(out) != {"excluded audit", "included audit"}:
        raise ValueError(f"{_o('allocation')} must give both 'excluded' and 'included' shares")
    total = sum(out.values())
    if total > delta * (1 + 1e-12):
        raise ValueError(f"{_o('allocation')} shares sum to {total:g}, more than {_o('delta')} {delta:g}")
    return out


def _family_spec(design: _DesignSpec, cut: Any, family: Any, offsets: Any, depths: Any
                 ) -> dict[str, Any] | None:
    given = [n for n, v in (("family", family), ("offsets", offsets), ("depths", depths)) if v is not None]
    if not design.family:
        if given:
            raise ValueError(f"{_o(given[0])} describes a nested family, for the prefixes and fixed-sequence "
                             f"designs; the {design.name} design certifies one cut (give {_o('cut')})")
        if cut is None:
            raise ValueError(f"the {design.name} design needs the cut run ({_o('cut')})")
        return None
    if len(given) != 1:
        raise ValueError(f"the {design.name} design needs exactly one family: {_o('family')} (cut runs), "
                         f"{_o('offsets')} (with {_o('cut')}) or {_o('depths')}; got "
                         f"{', '.join(_o(g) for g in given) or 'none'}")
    if offsets is not None:
        if cut is None:
            raise ValueError(f"{_o('offsets')} are added to a model's per-query cut: give {_o('cut')} as "
                             "well")
        return {"kind": "offsets", "offsets": _int_list(offsets, "offsets")}
    if cut is not None:
        raise ValueError(f"{_o('cut')} is used with {_o('offsets')} only; with {_o('family')} or "
                         f"{_o('depths')} the members are the cuts")
    if depths is not None:
        return {"kind": "depths", "depths": _int_list(depths, "depths")}
    if isinstance(family, str | bytes) or not isinstance(family, Sequence) or not family:
        raise ValueError(f"{_o('family')} must be a non-empty list of cut-run files, got {family!r}")
    return {"kind": "runs", "members": len(family)}


@dataclass(frozen=True)
class _Source:
    """An earlier audit whose labels a reuse reaches."""

    audit_id: str
    folder: Path
    seed: int
    store: Path | None  # its label store; None while it has no labels yet


def _broken_link(path: Path, src_id: str, problem: str) -> ValueError:
    """The refusal for a missing or replaced link of the reuse chain (§2.4, Assumption 1)."""
    return ValueError(
        f"the chain of reused labels is broken at {path}: {problem}. The labels of audit {src_id[:12]} are "
        "reached through it, and without it nothing shows whether they were seen before this audit was "
        "frozen, so they cannot be checked against Assumption 1 (§2.4) — refused. Restore "
        f"{path}, or freeze a new audit without {_o('reuse_labels')} and label a fresh sample")


def _source_store(folder: Path, audit_id: str, needed: bool) -> Path | None:
    """The label store of source audit ``audit_id`` in ``folder``, checked: refused when it holds
    another audit's labels, or is missing although the audit had labels (it opened them:
    ``opened.json`` or ``certificate.json``; or ``needed``: labels were copied from it)."""
    path = folder / LABELS_FILE
    if not path.is_file():
        had = [n for n in (OPENED_FILE, CERTIFICATE_FILE) if (folder / n).exists()]
        if needed or had:
            why = (f"{folder / had[0]} shows that they were opened" if had else
                   "labels were copied from it by the next audit of the chain")
            raise _broken_link(path, audit_id,
                               f"the label store is missing, but the audit had labels ({why})")
        return None
    try:
        with labels_mod.LabelStore(path, create=False) as store:
            owner = store.get_meta("audit_id")
    except ValueError as exc:
        raise _broken_link(path, audit_id, f"it is not a label store any more ({exc})") from None
    if owner != audit_id:
        raise _broken_link(path, audit_id, f"it holds the labels of audit {str(owner)[:12]} now")
    return path


def _reuse_chain(spec: Mapping[str, Any] | None, reused: bool = False) -> list[_Source]:
    """The audits whose labels ``spec`` (a manifest's ``reuse_labels``) reaches: the audit it
    names and, as long as each of them reused labels for certification in turn, the audit that
    one names, and so on — labels copied from audit to audit are still the labels first drawn.

    Every link must still be there (§2.4: the guard has to see whether the labels were seen): a
    folder whose manifest is gone or holds another audit, or a label store that is replaced, or
    missing where the audit had labels, is refused, naming the path.

    :param reused: the audit holding ``spec`` holds labels copied from the first link (so the
        first link's store must exist).
    """
    out: list[_Source] = []
    while spec is not None and all(s.audit_id != spec["audit_id"] for s in out):
        folder, audit_id = Path(spec["audit"]), str(spec["audit_id"])
        try:
            old = load_manifest(folder)
        except (OSError, ValueError) as exc:
            raise _broken_link(folder / MANIFEST_FILE, audit_id,
                               f"its manifest cannot be read ({exc})") from None
        if old.audit_id != audit_id:
            raise _broken_link(folder / MANIFEST_FILE, audit_id, f"the folder holds audit {old.short_id} now")
        store = _source_store(folder, audit_id, reused)
        out.append(_Source(audit_id, folder, int(old["seed"]), store))
        nxt = old.get("reuse_labels")
        spec = nxt if nxt is not None and nxt["role"] == "certification" else None
        if spec is not None and store is not None:
            with labels_mod.LabelStore(store, create=False) as st:
                reused = _has_reused_labels(st)
        else:
            reused = False
    return out


def _first_opening(chain: Sequence[_Source]) -> dict[str, Any] | None:
    """The earliest moment any label of the chain's audits was seen: opened by their own certify
    (store meta or ``opened.json``), or seen through a later audit that reused them or took them
    as design data (``seen_at``). None when none was.

    :raises ValueError: naming ``opened.json`` of a link when it is unreadable or another audit's.
    """
    best: dict[str, Any] | None = None

    def consider(at: str | None, src: _Source, how: str, sample_hash: str | None) -> None:
        nonlocal best
        if at is not None and (best is None or at < best["at"]):
            best = {"at": at, "sample_hash": sample_hash, "audit_id": src.audit_id, "how": how}

    for src in chain:
        opened = src.folder / OPENED_FILE
        if opened.is_file():
            try:
                record = json.loads(opened.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise _broken_link(opened, src.audit_id, f"it cannot be read ({exc})") from None
            if not isinstance(record, dict) or record.get("audit_id") != src.audit_id:
                raise _broken_link(opened, src.audit_id, "it records the opening of another audit")
            consider(record.get("opened_at"), src, "opened", record.get("sample_hash"))
        if src.store is None:
            continue
        with labels_mod.LabelStore(src.store, create=False) as store:
            consider(store.get_meta("opened_at"), src, "opened", store.get_meta("opened_sample_hash"))
            by = str(store.get_meta("seen_by", "?"))[:12]
            consider(store.get_meta("seen_at"), src, f"seen through audit {by}", None)
    return best


def _mark_seen(chain: Sequence[_Source], at: str, by: str) -> None:
    """Record in the label store of every audit of ``chain`` that its labels were seen at ``at``
    through audit ``by`` (unless an earlier sight is recorded): a later audit frozen after that
    moment must not count them, whichever audit it reaches them through. (Each store was checked
    by :func:`_reuse_chain`; one without labels yet has nothing to mark.)"""
    for src in chain:
        if src.store is None:
            continue
        with labels_mod.LabelStore(src.store, create=False) as store:
            old = store.get_meta("seen_at")
            if old is None or at < old:
                store.set_meta_many({"seen_at": at, "seen_by": by})


def _reuse_spec(reuse_labels: Any, design_data: bool) -> tuple[dict[str, Any] | None, list[_Source]]:
    if reuse_labels is None:
        if design_data:
            raise ValueError(f"{_o('design_data')} says how reused labels may serve; give "
                             f"{_o('reuse_labels')} (the earlier audit folder) with it")
        return None, []
    old = load_manifest(reuse_labels)
    spec: dict[str, Any] = {"audit": str(old.folder.resolve()), "audit_id": old.audit_id,
                            "role": "design-data" if design_data else "certification"}
    chain = _reuse_chain(spec)
    spec["opened_before_freeze"] = _first_opening(chain)
    return spec, chain


def _reuse_seed(seed: int | None, reuse: Mapping[str, Any] | None, chain: Sequence[_Source]) -> int:
    """The seed of a new audit: a fresh random one by default, never one of the audits whose labels
    it reuses; a given seed equal to theirs is refused when those labels were seen before this
    freeze (design data, or opened): the same seed draws the same items from overlapping pools, so
    the labels that informed the cut would certify it."""
    seeds = {s.seed for s in chain}
    if seed is None:
        seed = secrets.randbits(63)
        while seed in seeds:
            seed = secrets.randbits(63)
        return seed
    seen = reuse is not None and (reuse["role"] == "design-data" or bool(reuse["opened_before_freeze"]))
    if reuse is not None and seen and seed in seeds:
        owner = next(s for s in chain if s.seed == seed)
        why = ("are design data for this cut" if reuse["role"] == "design-data" else
               f"were seen at {reuse['opened_before_freeze']['at']}, before this freeze")
        raise ValueError(
            f"{_o('seed')} {seed} is the seed of audit {owner.audit_id[:12]}, whose labels {why}: the same "
            "seed draws the same items from overlapping pools, so the labels that informed this cut would "
            f"certify it (§2.4); give another {_o('seed')}, or none (a fresh random one is drawn)")
    return seed


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
    texts: str | Path | None = None,
    reuse_labels: str | Path | None = None,
    design_data: bool = False,
    prior_scale: float | None = None,
) -> Manifest:
    """Freeze an audit: write ``audit_dir/manifest.json`` (step 1; Assumption 1).

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
    :param texts: a JSON-lines file of document texts (``query_id, doc_id, text``) for labelling.
    :param reuse_labels: an earlier audit folder whose labels may be reused for this sample.
    :param design_data: with ``reuse_labels``: those labels informed the design of this cut and are
        recorded as design data only, never counted (§2.4).
    :param prior_scale: sequential design: the confidence sequence's prior mean as a share of the
        misses the target allows (default
        :data:`~rankcut.certify.sequential.PRIOR_SCALE`); any positive value keeps the guarantee,
        it moves only the labels needed (``benchmarks/bench_review_stops.py``).
    :returns: the frozen :class:`~rankcut.audit.manifest.Manifest` (``audit_id`` is its hash).
    :raises ValueError: for options the design does not take or cannot use, and bad input files.
    :raises FileExistsError: when ``audit_dir`` already holds a frozen audit.
    """
    if design not in DESIGNS:
        raise ValueError(f"{_o('design')} must be one of {', '.join(DESIGNS)}, got {design!r}")
    spec = DESIGNS[design]
    d = _delta(delta, "delta")
    target = _target(spec, target_recall, max_missed)
    budget = _allocation(spec, d, allocation)
    fam = _family_spec(spec, cut, family, offsets, depths)
    if ordering not in ORDERINGS:
        raise ValueError(f"{_o('ordering')} must be one of {', '.join(ORDERINGS)}, got {ordering!r}")
    if sampling not in SAMPLINGS:
        raise ValueError(f"{_o('sampling')} must be one of {', '.join(SAMPLINGS)}, got {sampling!r}")
    if spec.family:
        reference = "shared" if reference is None else reference
        if reference not in REFERENCES:
            raise ValueError(f"{_o('reference')} must be one of {', '.join(REFERENCES)}, got {reference!r}")
    elif reference is not None:
        raise ValueError(f"{_o('reference')} (shared or separate samples) is for the prefix designs, not "
                         f"{design}")
    band_offsets: list[int] | None = None
    if design == "stratified":
        if bands is None:
            raise ValueError(f"the stratified design needs {_o('bands')}: offsets below the cut where bands "
                             "end, "
                             "e.g. [10, 100]")
        band_offsets = [0, *_int_list(bands, "bands")]
    elif bands is not None:
        raise ValueError(f"{_o('bands')} are for the stratified design, not {design}")
    if design == "sequential":
        if sampling == "with-replacement":
            raise ValueError(f"the sequential design labels the excluded pool in a random order, without "
                             f"replacement: {_o('sampling')} with-replacement is not for it")
        if allow_incomplete:
            raise ValueError(f"{_o('allow_incomplete')} is not for the sequential design: it certifies the "
                             "labelled start of its audit order, however long, and needs every item of the "
                             "cut labelled")
        if reuse_labels is not None:
            raise ValueError(f"{_o('reuse_labels')} is not offered for the sequential design: its audit "
                             "order is its own, so label it afresh")
        if prior_scale is not None:
            from rankcut.certify._validate import check_positive

            check_positive(prior_scale, _o("prior_scale"))
    elif prior_scale is not None:
        raise ValueError(f"{_o('prior_scale')} is for the sequential design, not {design}")
    if corpus_size is not None and corpus_ids is not None:
        raise ValueError(f"give the corpus once: {_o('corpus_size')} or {_o('corpus_ids')}")
    given_seed = None if seed is None else _count(seed, "seed")
    folder = Path(audit_dir)
    if (folder / MANIFEST_FILE).exists():
        raise FileExistsError(f"{folder} already holds a frozen audit ({folder / MANIFEST_FILE}); an audit "
                              "is frozen once — freeze into a new folder")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"audit folder {folder} is a file")
    leftovers = [n for n in (PLAN_FILE, SAMPLE_FILE, SAMPLE_ITEMS, LABELS_FILE, CERTIFICATE_FILE)
                 if (folder / n).exists()]
    if leftovers:
        raise ValueError(f"{folder} holds {', '.join(leftovers)} but no manifest: freeze into a new folder")
    reuse, chain = _reuse_spec(reuse_labels, design_data)
    seed = _reuse_seed(given_seed, reuse, chain)

    inputs: dict[str, Any] = {"run": describe_file(run, "--run")}
    if cut is not None:
        inputs["cut"] = describe_file(cut, "--cut")
    if fam is not None and fam["kind"] == "runs":
        assert family is not None
        inputs["family"] = [describe_file(f, f"--family member {m + 1}") for m, f in enumerate(family)]
    corpus_spec: dict[str, Any] | None = None
    if corpus_ids is not None:
        inputs["corpus_ids"] = describe_file(corpus_ids, "--corpus-ids")
        corpus_spec = {"kind": "ids"}
    elif corpus_size is not None:
        corpus_spec = {"kind": "size", "documents": _count(corpus_size, "corpus_size", 1)}
    if texts is not None:
        inputs["texts"] = describe_file(texts, "--texts")
    lists, members, names = _build(inputs, ordering, fam, corpus_spec)
    if corpus_spec is not None and corpus_spec["kind"] == "ids":
        corpus_spec["documents"] = members[0].corpus.n_documents if members[0].corpus else None
    base = members[0]
    if spec.family and base.n0 == 0:
        raise ValueError(f"the excluded pool of the shallowest member ({names[0]}) is empty: every member "
                         "keeps every item, there is nothing to certify")
    band_sizes = None
    if band_offsets is not None:
        band_sizes = [int(v) for v in base.band_sizes(band_offsets)]
    from rankcut.certify.bounds import MAX_POPULATION

    if design == "sequential" and base.n0 > MAX_SEQUENTIAL_POOL:
        raise ValueError(f"the excluded pool holds {base.n0} items: the sequential design lists its whole "
                         f"pool in the audit order, at most {MAX_SEQUENTIAL_POOL}; certify a deeper cut, or "
                         "use the two-pool design (a sample of fixed size)")
    if design == "stratified" and base.n0 == 0:
        raise ValueError("the excluded pool of the cut is empty (it keeps every item): there are no rank "
                         "bands below it to stratify, and nothing is missed")
    largest = max(base.n0, base.n1 if design == "two-pool" else 0)
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
        "theorem": _theorem(design, reference, resolved == "without-replacement"),
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
        "reuse_labels": reuse,
        "pools": {"members": [{"name": n, "n1": p.n1, "n0": p.n0}
                              for n, p in zip(names, members, strict=True)],
                  **base.to_dict()},
    }
    if design == "sequential":   # the confidence sequence's prior, frozen with the rule (any keeps validity)
        from rankcut.certify.sequential import PRIOR_SCALE

        content["prior_scale"] = PRIOR_SCALE if prior_scale is None else float(prior_scale)
    folder.mkdir(parents=True, exist_ok=True)
    if reuse is not None and reuse["role"] == "design-data":
        # taking labels as design data says they were seen (§2.4): no audit frozen after this one may
        # count them. Marked before the manifest is written, so that a crash between the two leaves at
        # worst labels marked seen by an audit that was never frozen (too cautious), never a frozen
        # design-data audit whose sources are not marked.
        _mark_seen(chain, str(content["frozen_at"]), content_hash(content))
    manifest = write_manifest(folder, content)
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


def _plan_count(t: int, delta: float, population: int, tolerated: int, n_prefixes: int = 1
                ) -> tuple[int, Certificate | None]:
    """Smallest without-replacement size with ``MU(c, δ/M; N, n) ≤ t`` (0 when ``t ≥ N``)."""
    from rankcut.certify.planning import plan_hypergeometric

    if population == 0 or t >= population:
        return 0, None
    cert = plan_hypergeometric(t, delta, population=population, tolerated=tolerated, n_prefixes=n_prefixes)
    return int(cert.value), cert


def _plan_mass(t: float, delta: float, n0: int, n_items: int, tolerated: int, n_prefixes: int = 1
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


def _plan_missed(audit: _Audit, t: float, delta: float, pool: int, tolerated: int, n_prefixes: int = 1
                 ) -> tuple[int, Certificate | None]:
    """``t`` missed items: a count (without replacement; rounded down) or ``r ≤ t/N`` (i.i.d.)."""
    if audit.finite:
        return _plan_count(math.floor(t), delta, pool, tolerated, n_prefixes)
    return _plan_mass(t, delta, pool, audit.n_items, tolerated, n_prefixes)


def _reference_size(need: int, pool: int, reference: int, finite: bool) -> int:
    """Least shared-reference size ``Q`` whose effective size for a member with excluded pool
    ``pool ⊆ E_1`` (``|E_1| = reference``) reaches ``need`` with probability at least
    :data:`REFERENCE_PROBABILITY`: ``n_eff ~ Hypergeometric(reference, pool, Q)`` without
    replacement, ``Binomial(Q, pool/reference)`` with it."""
    from scipy.stats import binom, hypergeom

    if need <= 0:
        return 0

    def enough(q: int) -> bool:
        if finite:
            p = float(hypergeom.sf(need - 1, reference, pool, q))
        else:
            p = float(binom.sf(need - 1, q, pool / reference))
        return p >= REFERENCE_PROBABILITY

    lo = need  # n_eff never exceeds Q
    if finite:
        hi = reference  # Q = N0(g_1) draws all of E_1, so n_eff = N0(g_m) ≥ need
        if need > pool:
            return reference
    else:
        hi = max(lo, 1)
        while not enough(hi):
            hi *= 2
    if enough(lo):
        return lo
    while hi - lo > 1:  # enough(hi), not enough(lo)
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _plan_recall(audit: _Audit, rho: float, precision: float, tolerated: int
                 ) -> tuple[dict[str, int] | None, list[str], list[Certificate]]:
    """Two-pool sizes for ``Recall ≥ ρ`` (Corollary 11 / Theorem 10), by search over ``n1``.

    Recall ``≥ ρ`` holds on the certificate's event when ``MU ≤ ML·(1 − ρ)/ρ``. For an included
    sample of ``n1`` items showing the expected precision ``π̂`` (``K1 = ⌊π̂·n1⌋``), ``ML`` is
    known; that turns the recall target into a missed-count tolerance ``t = ⌊ML(1 − ρ)/ρ⌋`` for
    the excluded audit, which the Theorem 8 planner sizes (binomially: ``r ≤ p1·L·(1 − ρ)/ρ``,
    sized by ``plan_missed_mass``). The pair with the fewest labels in total is returned.
    """
    from rankcut.certify.bounds import cp_lower, hypergeom_lower
    from rankcut.certify.planning import plan_hypergeometric, plan_missed_mass

    p = audit.base
    d0, d1 = audit.budget["excluded audit"], audit.budget["included audit"]
    big0, big1, big_n = p.n0, p.n1, audit.n_items
    if big1 == 0:
        return None, ["the cut keeps no item (N1 = 0): its recall is 0, no sample can certify a target"], []

    def tolerance(n1: np.ndarray) -> np.ndarray:
        k1 = np.floor(precision * n1).astype(np.int64)
        if audit.finite:
            caught = np.asarray(hypergeom_lower(k1, d1, population=big1, draws=n1), dtype=float)
        else:
            caught = np.asarray(cp_lower(k1, n1, d1), dtype=float) * big1  # in items: N·p1·L
        return np.floor(caught * (1 - rho) / rho + 1e-9).astype(np.int64)

    def binomial_n0(tol: np.ndarray) -> np.ndarray:
        """i.i.d. sizes for ``r ≤ tol/N``: exact with replacement, a quick stand-in without (the
        exact hypergeometric search is slow for large pools; it runs on the best few only)."""
        out = np.zeros(tol.shape, dtype=np.int64)
        census = tol <= 0  # only without replacement: MU ≤ 0 needs the whole pool
        out[census] = big0
        part = (tol > 0) & (tol < big0)
        if np.any(part):
            out[part] = np.atleast_1d(plan_missed_mass((tol[part] / big_n).tolist(), d0, p0=big0 / big_n,
                                                       tolerated=tolerated).value)
        return out

    hi = big1 if audit.finite else max(big1, 100_000)
    grid = np.unique(np.round(np.geomspace(1, hi, 80)).astype(np.int64))
    found: dict[int, tuple[int, int]] = {}  # n1 -> (tolerance, i.i.d. n0)
    for _ in range(2):  # a coarse grid, then a fine one around the best point
        tol = tolerance(grid)
        ok = (tol >= tolerated) & ((tol > 0) | audit.finite)  # i.i.d.: r ≤ 0 is never certified
        for n1, t, n0 in zip(grid[ok].tolist(), tol[ok].tolist(), binomial_n0(tol[ok]).tolist(), strict=True):
            found[n1] = (t, n0)
        if not found:
            break
        best_n1 = min(found, key=lambda n: (found[n][1] + n, n))
        grid = np.linspace(max(1, best_n1 // 2), min(hi, best_n1 * 2), 120).round().astype(np.int64)
        grid = np.unique(grid)
    best: tuple[int, int, int] | None = None
    if found:
        shortlist = sorted(found, key=lambda n: (found[n][1] + n, n))[:5]
        tols = np.array([found[n][0] for n in shortlist], dtype=np.int64)
        n0s = np.array([found[n][1] for n in shortlist], dtype=np.int64)
        exact = audit.finite & (tols < big0)
        if np.any(exact):
            n0s[exact] = np.atleast_1d(plan_hypergeometric(tols[exact].tolist(), d0, population=big0,
                                                           tolerated=tolerated).value)
        n0s[tols >= big0] = 0
        best = min((int(n0) + n1, n1, int(n0)) for n1, n0 in zip(shortlist, n0s.tolist(), strict=True))
    if best is None:
        return None, [f"no sample size within the pools reaches recall ≥ {rho:g} at expected precision "
                      f"{precision:g}: lower the target or set {_o('expected_precision')}"], []
    _, n1, n0 = best
    k1 = math.floor(precision * n1)
    if audit.finite:
        ml: float = int(hypergeom_lower(k1, d1, population=big1, draws=n1))
        shown, law = f"M1 ≥ ML = {int(ml)}", "Theorem 8"
    else:
        ml = float(cp_lower(k1, n1, d1)) * big1
        shown, law = f"M1 ≥ N1·L = {ml:.1f} items", "Theorem 10"
    t = math.floor(ml * (1 - rho) / rho + 1e-9)
    cert = _plan_count(t, d0, big0, tolerated)[1] if audit.finite else \
        _plan_mass(t, d0, big0, big_n, tolerated)[1]
    why = (f"an included sample of {n1} at the expected precision {precision:g} (K1 = {k1}) certifies "
           f"{shown}; recall ≥ {rho:g} then needs at most ⌊ML(1 − ρ)/ρ⌋ = {t} missed items, which {n0} "
           f"excluded-pool draws certify when they find at most {tolerated} relevant ({law})")
    return {"excluded": n0, "included": n1}, [why], [c for c in (cert,) if c is not None]


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
    * recall target ``ρ`` (two-pool): see :func:`_plan_recall` — the target becomes the missed-count
      tolerance ``⌊ML(1 − ρ)/ρ⌋`` for an included sample at the expected precision.

    The expected precision and ``tolerated`` are planning guesses: they change the sizes, never the
    validity of the certificate, which is computed from the labels actually found.

    :param expected_precision: two-pool only: the share of relevant items expected in the included
        pool (default 0.5).
    :param tolerated: relevant items the excluded-pool audit may find and still meet the target.
    :raises AuditStepError: when the sample was already drawn with another plan.
    """
    audit = _load(audit_dir)
    tol = _count(tolerated, "tolerated")
    target = audit.target
    design = audit.design
    if expected_precision is not None and design != "two-pool":
        raise ValueError(f"{_o('expected_precision')} is a planning guess for the two-pool design's "
                         "included pool")
    precision = DEFAULT_EXPECTED_PRECISION if expected_precision is None else expected_precision
    if isinstance(precision, bool) or not isinstance(precision, int | float) or not 0 < precision <= 1:
        raise ValueError(f"{_o('expected_precision')} must lie in (0, 1], got {precision!r}")
    lines = [f"audit {audit.manifest.short_id}: {design} design, δ = {audit.delta:g}, "
             f"{'without' if audit.finite else 'with'} replacement"]
    plans: list[Certificate] = []
    sizes: dict[str, Any] | None
    assumptions: dict[str, Any] = {"tolerated": tol}
    if not target:
        sizes = None
        lines.append(f"no target was frozen: give the sample sizes to {_o('sample')} ({_o('excluded')}, and "
                     f"{_o('included')} for two-pool)")
    elif design == "sequential":
        sizes = {"excluded": audit.base.n0, "included": audit.base.n1}
        lines.extend(_plan_sequential(audit))
    elif design == "two-pool":
        assumptions["expected_precision"] = float(precision)
        sizes, why, plans = _plan_recall(audit, float(target["recall"]), float(precision), tol)
        lines.extend(why)
        if expected_precision is None:
            lines.append(f"(planning guess: expected precision {precision:g} of the cut; set "
                         f"{_o('expected_precision')} to change the sizes — never the validity)")
    else:
        sizes, why, plans = _plan_missed_design(audit, int(target["max_missed"]), tol)
        lines.extend(why)
    if design == "sequential":
        lines.append(f"{_o('sample')} lists every item: the cut ({audit.base.n1}), then the excluded pool "
                     f"({audit.base.n0}) in the audit order")
    elif sizes is not None:
        lines.append(f"planned sizes: {_sizes_text(sizes)}")
    content = {"schema": "rankcut.audit_plan", "schema_version": 1, "audit_id": audit.manifest.audit_id,
               "planned_at": now(), "sizes": sizes, "assumptions": assumptions, "lines": lines,
               "planners": [c.to_dict() for c in plans]}
    path = audit.folder / PLAN_FILE
    if (audit.folder / SAMPLE_FILE).exists():
        old = read_json(path, "written by plan") if path.exists() else None
        if old is None or old.get("sizes") != sizes or old.get("assumptions") != assumptions:
            raise AuditStepError(f"a new plan for {audit.folder} is refused: its sample was already drawn "
                                 f"({audit.folder / SAMPLE_FILE}), and sizes changed after the draw could "
                                 "be fitted to it (Assumption 1: the audit rule is fixed before the labels); "
                                 "keep the plan the sample was drawn with, or freeze a new audit")
        return PlanResult(sizes, tuple(old["lines"]), old)
    write_json_atomic(path, content)
    return PlanResult(sizes, tuple(lines), content)


def _plan_sequential(audit: _Audit) -> list[str]:
    """What the sequential design labels, and how many audit labels it needs when it finds nothing
    (:meth:`~rankcut.certify.sequential.SequentialAudit.zero_find_size`) for a few counts ``F`` of
    relevant items in the cut — unknown until the cut is labelled, so shown, not planned."""
    n1, n0, rho = audit.base.n1, audit.base.n0, float(audit.target["recall"])
    lines = [f"nothing to size: every item of the cut ({n1}) is labelled — they give F, the relevant items "
             f"the review found — and then the excluded pool's {n0} items in one random audit order, from "
             f"its start; {_o('certify')} may run after any number of audit labels and says whether recall "
             f"≥ {rho:g} holds (anytime-valid: stopping as soon as it holds keeps the guarantee)"]
    if n0:
        every = max(1, math.ceil(n0 / 1000))
        shown = []
        for f in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
            if f <= max(n1, 1):
                shown.append(f"F = {f}: {_sequential_engine(audit, f).zero_find_size(every)}")
        within = "" if every == 1 else f" (checked every {every} labels)"
        lines.append(f"audit labels to certify when the audit finds no relevant item{within}: "
                     f"{'; '.join(shown)} — each relevant item it finds adds labels")
    return lines


def _plan_missed_design(audit: _Audit, t: int, tol: int
                        ) -> tuple[dict[str, Any] | None, list[str], list[Certificate]]:
    design, d = audit.design, audit.delta
    unit = "M0" if audit.finite else "r·N"
    if design == "excluded":
        n, cert = _plan_missed(audit, t, d, audit.base.n0, tol)
        return {"excluded": n}, [f"{n} excluded-pool draws certify {unit} ≤ {t} when they find at most "
                                 f"{tol} relevant"], [c for c in (cert,) if c is not None]
    if design == "stratified":
        band = audit.manifest["band_sizes"]
        total = max(sum(band), 1)
        per: list[int] = []
        certs: list[Certificate] = []
        lines: list[str] = []
        for s, size in enumerate(band):
            ts = t * size / total if not audit.finite else math.floor(t * size / total)
            n, cert = _plan_missed(audit, ts, d, size, min(tol, math.floor(ts)), len(band))
            per.append(n)
            certs.extend(c for c in (cert,) if c is not None)
            lines.append(f"band {s + 1} ({size} items): tolerance {ts:g} of {t} (in proportion to its size), "
                         f"δ/{len(band)}: {n} draws")
        return {"excluded": per}, lines, certs
    simultaneous = design == "prefixes"
    m_count = len(audit.members) if simultaneous else 1
    needs, certs = [], []
    for p in audit.members:
        n, cert = _plan_missed(audit, t, d, p.n0, tol, m_count)
        needs.append(n)
        certs.extend(c for c in (cert,) if c is not None)
    level = f"δ/{m_count} each (Corollary 16/18)" if simultaneous else "δ each (Theorem 19)"
    lines = [f"{name}: {n} draws from its excluded pool of {p.n0} for {unit} ≤ {t} at {level}"
             for name, p, n in zip(audit.names, audit.members, needs, strict=True)]
    if audit.manifest["reference"] == "separate":
        return {"excluded": needs}, lines, certs
    q = max((_reference_size(n, p.n0, audit.base.n0, audit.finite)
             for n, p in zip(needs, audit.members, strict=True) if n > 0), default=0)
    law = "hypergeometric" if audit.finite else "binomial"
    lines.append(f"shared reference from {audit.names[0]}'s excluded pool: {q} draws give each member its "
                 f"need with probability ≥ {REFERENCE_PROBABILITY:g}, for each member separately (not for "
                 f"all at once; its effective size n_eff_m, the draws that fall in its pool, is {law}: Q "
                 "draws, a share N0(g_m)/N0(g_1) in its pool)")
    return {"excluded": q}, lines, certs


# ---------------------------------------------------------------------------------------------
# sample


def _sizes_for(audit: _Audit, excluded: Any, included: Any) -> dict[str, Any]:
    """Normalise the sample sizes of the design (``excluded`` int or per member/band list)."""
    design = audit.design
    if design == "sequential":
        full = {"excluded": audit.base.n0, "included": audit.base.n1}
        for name, given in (("excluded", excluded), ("included", included)):
            if given is not None and given != full[name]:
                raise ValueError(f"the sequential design labels the whole {name} pool ({full[name]} items), "
                                 f"in order: {_o(name)} {given!r} is not for it")
        return full
    per_part = (design in ("prefixes", "fixed-sequence") and audit.manifest["reference"] == "separate") \
        or design == "stratified"
    parts = len(audit.members) if design != "stratified" else len(audit.manifest["band_sizes"])
    if excluded is None:
        raise ValueError(f"no excluded-pool sample size: give {_o('excluded')} (no target was planned)")
    if per_part:
        ex: Any = [_count(excluded, "excluded")] * parts if not isinstance(excluded, Sequence) \
            else _int_list(excluded, "excluded")
        if len(ex) != parts:
            what = "member" if design != "stratified" else "band"
            raise ValueError(f"{_o('excluded')} must give one size per {what} ({parts}), got {len(ex)}")
    else:
        if isinstance(excluded, Sequence):
            raise ValueError(f"the {design} design takes one excluded sample size, got {list(excluded)}")
        ex = _count(excluded, "excluded")
    if design == "two-pool":
        if included is None:
            raise ValueError(f"no included-pool sample size: give {_o('included')} (no target was planned)")
        return {"excluded": ex, "included": _count(included, "included")}
    if included is not None:
        raise ValueError(f"{_o('included')} is for the two-pool design; the {design} design samples the "
                         "excluded pool")
    return {"excluded": ex}


def _check_size(n: int, pool: int, what: str, finite: bool) -> None:
    if finite and n > pool:
        raise ValueError(f"{what}: {n} draws without replacement exceed the pool of {pool} items")
    if n > 0 and pool == 0:
        raise ValueError(f"{what}: the pool is empty, nothing can be drawn")


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, stream])


def _draw(audit: _Audit, sizes: Mapping[str, Any], streams: int = STREAMS_VERSION) -> list[dict[str, Any]]:
    """The sample of the frozen audit: a function of the pools, the sizes and the seed only (and of
    how the parts take their random streams, ``streams``; and of numpy's generator streams)."""
    seed, replace = int(audit.manifest["seed"]), not audit.finite
    design = audit.design
    rows: list[dict[str, Any]] = []

    def add(items: list[Item], pool: str, member: int | None = None, stratum: int | None = None) -> None:
        rows.extend({"pool": pool, "member": member, "stratum": stratum, "query_id": q, "doc_id": d}
                    for q, d in items)

    if design in ("excluded", "two-pool"):
        _check_size(sizes["excluded"], audit.base.n0, "excluded", audit.finite)
        add(draw_excluded(audit.base, sizes["excluded"], _rng(seed, _STREAM_EXCLUDED), replace=replace),
            "excluded")
        if design == "two-pool":
            _check_size(sizes["included"], audit.base.n1, "included", audit.finite)
            add(draw_included(audit.base, sizes["included"], _rng(seed, _STREAM_INCLUDED), replace=replace),
                "included")
    elif design == "sequential":  # the cut in rank order, then the whole excluded pool in the audit order
        add(audit.base.included_items(np.arange(audit.base.n1)), "included")
        add(draw_excluded(audit.base, audit.base.n0, _rng(seed, _STREAM_EXCLUDED)), "excluded")
    elif design == "stratified":
        for s, (n, size) in enumerate(zip(sizes["excluded"], audit.manifest["band_sizes"], strict=True)):
            _check_size(n, size, f"excluded (band {s + 1})", audit.finite)
        rngs = _rng(seed, _STREAM_STRATA) if streams < 2 else \
            [_rng(seed, _STREAM_BAND + s) for s in range(len(sizes["excluded"]))]
        bands = draw_stratified(audit.base, audit.bands, sizes["excluded"], rngs, replace=replace)
        for s, items in enumerate(bands):
            add(items, "excluded", stratum=s)
    elif audit.manifest["reference"] == "shared":
        _check_size(sizes["excluded"], audit.base.n0, "excluded (shared reference)", audit.finite)
        add(draw_excluded(audit.base, sizes["excluded"], _rng(seed, _STREAM_EXCLUDED), replace=replace),
            "reference")
    else:
        for m, (n, p) in enumerate(zip(sizes["excluded"], audit.members, strict=True)):
            _check_size(n, p.n0, f"excluded ({audit.names[m]})", audit.finite)
            add(draw_excluded(p, n, _rng(seed, _STREAM_MEMBER + m), replace=replace), "excluded", member=m)
    for i, row in enumerate(rows):
        row["draw"] = i
    return rows


def _sample_text(rows: Sequence[Mapping[str, Any]]) -> str:
    return "".join(canonical_json(dict(r)).decode("utf-8") + "\n" for r in rows)


def _distinct(rows: Sequence[Mapping[str, Any]]) -> list[Item]:
    return list(dict.fromkeys((r["query_id"], r["doc_id"]) for r in rows))


def _label_order(audit: _Audit, rows: Sequence[Mapping[str, Any]]) -> list[Item]:
    """The distinct sampled items in a shuffled order that hides the pool each came from (the
    sequential design: the cut, then the audit order, which is the order the labels count in)."""
    items = _distinct(rows)
    if audit.design == "sequential":
        return items
    perm = _rng(int(audit.manifest["seed"]), _STREAM_ORDER).permutation(len(items))
    return [items[i] for i in perm]


def _texts(audit: _Audit) -> dict[Any, str] | None:
    from rankcut.data.texts import read_texts_jsonl

    entry = audit.manifest["inputs"].get("texts")
    return None if entry is None else read_texts_jsonl(entry["path"], by="pair")


def _write_to_label(audit: _Audit, order: list[Item], fmt: str) -> Path:
    import csv
    import io

    texts = _texts(audit)
    path = audit.folder / f"{TO_LABEL}.{fmt}"
    buf = io.StringIO(newline="")
    # the sequential design says where each item stands: the cut (rank order), then the audit order
    n1 = audit.base.n1 if audit.design == "sequential" else None
    where = [] if n1 is None else [("cut", i + 1) if i < n1 else ("audit", i + 1 - n1)
                                   for i in range(len(order))]
    if fmt == "jsonl":
        for i, (q, d) in enumerate(order):
            row: dict[str, Any] = {"query_id": q, "doc_id": d, "label": None}  # null: to fill in
            if where:
                row["part"], row["position"] = where[i]
            if texts is not None and (q, d) in texts:
                row["text"] = texts[q, d]
            buf.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["query_id", "doc_id", "label"] + (["part", "position"] if where else [])
                        + (["text"] if texts is not None else []))
        for i, (q, d) in enumerate(order):
            writer.writerow([q, d, ""] + (list(where[i]) if where else [])
                            + ([texts.get((q, d), "")] if texts is not None else []))
    write_text_atomic(path, buf.getvalue())
    return path


def sample(audit_dir: str | Path, *, excluded: int | Sequence[int] | None = None,
           included: int | None = None, label_format: str = "csv") -> SampleResult:
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
    :raises AuditStepError: without a plan, or when a sample was already drawn (a second draw would
        let the sample be chosen after seeing the first).
    """
    if label_format not in ("csv", "jsonl"):
        raise ValueError(f"{_o('label_format')} must be csv or jsonl, got {label_format!r}")
    audit = _load(audit_dir)
    folder = audit.folder
    if (folder / SAMPLE_FILE).exists():
        raise AuditStepError(f"a second sample of {folder} is refused: it was already drawn "
                             f"({folder / SAMPLE_FILE}), and it is drawn once, so that it cannot be chosen "
                             "after seeing it (Assumption 1); label the sample drawn, or freeze a new audit "
                             "for another one")
    _refuse_if_opened_file(audit, "drawing a sample")
    plan_path = folder / PLAN_FILE
    if not plan_path.exists():
        raise AuditStepError(f"no plan yet ({plan_path} missing): run {_o('plan')} first, so that the sizes "
                             "are fixed and shown before any labelling")
    planned = read_json(plan_path, "written by plan")
    if planned.get("audit_id") != audit.manifest.audit_id:
        raise AuditStepError(f"{plan_path} was made for audit {str(planned.get('audit_id'))[:12]}, not "
                             f"{audit.manifest.short_id}: run {_o('plan')} again")
    defaults = planned.get("sizes") or {}
    sizes = _sizes_for(audit, defaults.get("excluded") if excluded is None else excluded,
                       defaults.get("included") if included is None else included)
    rows = _draw(audit, sizes)
    text = _sample_text(rows)
    write_text_atomic(folder / SAMPLE_ITEMS, text)
    order = _label_order(audit, rows)
    to_label = _write_to_label(audit, order, label_format)
    sample_hash = sha256_file(folder / SAMPLE_ITEMS)
    info = {"schema": "rankcut.audit_sample", "schema_version": 1, "audit_id": audit.manifest.audit_id,
            "drawn_at": now(), "sizes": sizes, "planned": planned.get("sizes"), "draws": len(rows),
            "items": len(order), "sample_hash": sample_hash, "to_label": to_label.name,
            "streams": STREAMS_VERSION, "numpy": np.__version__}
    # sample.json last: it is what marks the sample as drawn
    write_json_atomic(folder / SAMPLE_FILE, info)
    return SampleResult(sizes, len(rows), len(order), sample_hash, to_label)


def _load_sample(audit: _Audit, *, redraw: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``sample.json`` and the draws, checked against the manifest (and, with ``redraw``, against a
    fresh draw from the manifest and seed)."""
    folder = audit.folder
    path = folder / SAMPLE_FILE
    if not path.exists():
        raise AuditStepError(f"no sample yet ({path} missing): run {_o('sample')} first")
    info = read_json(path, "written by sample")
    if info.get("audit_id") != audit.manifest.audit_id:
        raise ValueError(f"the sample was drawn from audit {str(info.get('audit_id'))[:12]}, but "
                         f"{folder / MANIFEST_FILE} is now audit {audit.manifest.short_id}: the manifest "
                         "changed after sampling, and the sample is not one of this audit rule "
                         "(Assumption 1) — refused; restore the manifest it was drawn from, or freeze a new "
                         "audit")
    items_path = folder / SAMPLE_ITEMS
    if not items_path.exists():
        raise ValueError(f"{items_path} is missing (written by sample)")
    if sha256_file(items_path) != info.get("sample_hash"):
        raise ValueError(f"{items_path} changed after sampling (its sha256 is not the sample hash "
                         f"{str(info.get('sample_hash'))[:12]} of {path})")
    rows = [json.loads(line) for line in items_path.read_text(encoding="utf-8").splitlines() if line]
    if redraw and _sample_text(_draw(audit, info["sizes"], int(info.get("streams", 1)))) \
            != items_path.read_text(encoding="utf-8"):
        drawn_with = info.get("numpy")
        if drawn_with is not None and drawn_with != np.__version__:
            why = (f"it was drawn under numpy {drawn_with} and is redrawn here under numpy {np.__version__}, "
                   f"whose random streams may differ: check it under numpy {drawn_with} (if it differs "
                   "there too, it was edited or drawn otherwise)")
        elif drawn_with is None:
            why = ("it was edited or drawn otherwise — or under another numpy version, whose random "
                   f"streams may differ ({path} does not record the numpy it was drawn with)")
        else:
            why = "it was edited or drawn otherwise"
        raise ValueError(f"{items_path} is not the sample that the frozen manifest and seed draw "
                         f"(sizes {_sizes_text(info['sizes'])}): {why}")
    return info, rows


# ---------------------------------------------------------------------------------------------
# label


def _open_store(audit: _Audit, info: Mapping[str, Any], *, create: bool) -> labels_mod.LabelStore:
    path = audit.folder / LABELS_FILE
    if not create and not path.exists():
        raise AuditStepError(f"no labels yet ({path} missing): run {_o('label')} first")
    store = labels_mod.LabelStore(path, create=create)
    try:
        owner = store.get_meta("audit_id")
        held = store.get_meta("sample_hash")
        if owner is None:
            store.set_meta_many({"audit_id": audit.manifest.audit_id,
                                 "sample_hash": str(info["sample_hash"])})
        elif owner != audit.manifest.audit_id:
            raise ValueError(f"{path} holds the labels of audit {owner[:12]}, not of this audit "
                             f"{audit.manifest.short_id}: copy labels between audits with "
                             f"{_o('reuse_labels')}")
        elif held is None and store.count() == 0:
            # an older rankcut wrote the two values one after the other and was stopped between them
            store.set_meta("sample_hash", str(info["sample_hash"]))
        elif held != info["sample_hash"]:
            raise ValueError(f"{path} is refused: it holds labels for sample {str(held)[:12]}, not for "
                             f"this audit's sample {str(info['sample_hash'])[:12]}, so they are not labels "
                             "of the items drawn; move it away and label the sample drawn")
    except BaseException:
        store.close()
        raise
    return store


def _refuse_if_opened(store: labels_mod.LabelStore) -> None:
    at = store.get_meta("opened_at")
    if at is not None:
        raise AuditStepError(f"recording labels is refused: the labels of this audit were opened for "
                             f"certification at {at}, and labels recorded now would let the certificate "
                             "depend on what was seen (Assumption 1) — freeze a new audit instead")


def _opened_record(audit: _Frozen) -> dict[str, Any] | None:
    """``opened.json``: the record certify wrote when it first opened the labels (None before).

    :raises ValueError: when ``certificate.json`` exists without it (certify writes ``opened.json``
        first, so it was deleted).
    """
    path = audit.folder / OPENED_FILE
    if path.exists():
        record = read_json(path, "written by certify")
        if not isinstance(record, dict) or record.get("audit_id") != audit.manifest.audit_id:
            raise ValueError(f"{path} records the opening of another audit "
                             f"({str(record.get('audit_id') if isinstance(record, dict) else None)[:12]}), "
                             f"not of {audit.manifest.short_id}")
        return record
    if (audit.folder / CERTIFICATE_FILE).exists():
        raise ValueError(f"{audit.folder / CERTIFICATE_FILE} exists but {path} is missing: the record of "
                         "when the labels were opened for certification was deleted, so nothing shows "
                         "what was seen when; this audit cannot go on (freeze a new one)")
    return None


def _refuse_if_opened_file(audit: _Frozen, step: str) -> None:
    """``label`` and ``sample`` after the labels were opened, even when ``labels.sqlite`` (or the
    sample) was deleted since: ``opened.json`` remembers the opening."""
    record = _opened_record(audit)
    if record is not None:
        raise AuditStepError(
            f"the labels of this audit were opened for certification at {record.get('opened_at')} "
            f"({audit.folder / OPENED_FILE}); {step} now would let the certificate depend on what was "
            "seen (Assumption 1) — freeze a new audit instead")


def label(
    audit_dir: str | Path,
    *,
    from_file: str | Path | None = None,
    qrels: str | Path | None = None,
    threshold: float = 1,
    interactive: bool = False,
    reuse: bool = False,
    overwrite: bool = False,
    limit: int | None = None,
    input: Callable[[str], str] = input,
    output: Callable[[str], Any] = print,
) -> LabelResult:
    """Record labels for the sampled items (step 4), from exactly one source.

    :param from_file: a CSV/TSV/JSONL label file (``query_id, doc_id, label``); every row must be
        a sampled item (a label for another item is refused, naming it); a row whose label cell is
        blank leaves its item unlabelled.
    :param qrels: TREC qrels as the oracle, for simulation (``--oracle qrels``): unjudged = 0.
    :param threshold: relevance grade at or above which a qrels judgement counts as relevant.
    :param interactive: ask in the terminal, item by item, in the blinded order of ``to_label``;
        resumable (labelled items are not asked again).
    :param reuse: copy the labels of sampled items from the audit named by ``reuse_labels`` at freeze.
    :param overwrite: replace a different earlier label (kept in the store's history).
    :param limit: with ``qrels``: label only the first ``limit`` unlabelled items of the to-label
        order (a simulated reviewer labelling in batches, for the sequential design).
    :raises AuditStepError: without a sample, or after the labels were opened by :func:`certify`
        (recorded in the store or in ``opened.json``). The sequential design takes new labels after
        an opening — its certificate holds wherever the audit stops — but never changes one.
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
        _count(limit, "limit", 1)
    audit = _load(audit_dir)
    info, rows = _load_sample(audit)
    sequential = audit.design == "sequential"
    record = _opened_record(audit)
    if not sequential:
        _refuse_if_opened_file(audit, "recording labels")
    elif record is not None and not (audit.folder / LABELS_FILE).exists():
        raise ValueError(f"{audit.folder / LABELS_FILE} is missing, but the labels of this audit were opened "
                         f"for certification at {record.get('opened_at')} ({OPENED_FILE}): a new label store "
                         "would not hold the labels that were seen (Assumption 1) — refused; restore it, or "
                         "freeze a new audit")
    order = _label_order(audit, rows)
    sampled = set(order)
    with _open_store(audit, info, create=True) as store:
        if not sequential:
            _refuse_if_opened(store)
        elif overwrite and (opened_at := (record or {}).get("opened_at") or store.get_meta("opened_at")):
            raise AuditStepError(f"changing labels ({_o('overwrite')}) is refused: the labels of this audit "
                                 f"were opened for certification at {opened_at}, and a label changed "
                                 "after being seen would let the certificate depend on it (Assumption 1); "
                                 f"new labels are taken without {_o('overwrite')}")
        seen = store.get_meta("seen_at")
        if overwrite and seen is not None:
            raise AuditStepError(
                f"changing labels ({_o('overwrite')}) is refused: the labels of this audit were seen at "
                f"{seen} through audit {str(store.get_meta('seen_by'))[:12]}, which reused them (or took "
                "them as design data), and a label changed now would let a certificate depend on what was "
                f"seen (Assumption 1, §2.4); record only missing labels (without {_o('overwrite')}), or "
                "freeze a new audit")
        if from_file is not None:
            file_rows = labels_mod.read_label_file(from_file)
            outside = [(q, d) for q, d, _ in file_rows if (q, d) not in sampled]
            if outside:
                q, d = outside[0]
                more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
                raise ValueError(f"{from_file}: query {q!r}, document {d!r} is not in the sample of this "
                                 f"audit{more}; only sampled items are labelled — nothing was recorded")
            source = f"file {Path(from_file).name} sha256:{sha256_file(from_file)[:12]}"
            recorded = store.record([(q, d) for q, d, _ in file_rows], [y for _, _, y in file_rows], source,
                                    overwrite=overwrite, refusal_hint=_refusal_hint(sequential, store))
        elif qrels is not None:
            from rankcut.data.trec import read_qrels

            judged = read_qrels(qrels)
            todo = order if overwrite else store.missing(order)
            todo = todo if limit is None else todo[:limit]
            source = f"qrels {Path(qrels).name} sha256:{sha256_file(qrels)[:12]}"
            recorded = store.record(todo, labels_mod.qrels_oracle(judged, todo, threshold), source,
                                    overwrite=overwrite, refusal_hint=_refusal_hint(sequential, store))
        elif interactive:
            n1 = audit.base.n1
            place = (lambda pos: f"cut {pos}/{n1}" if pos <= n1 else
                     f"audit order {pos - n1}/{len(order) - n1}") if sequential else None
            summary = labels_mod.label_interactively(store, order, texts=_texts(audit), input=input,
                                                     output=output, place=place)
            source, recorded = "interactive", summary.labelled
        else:
            source, recorded = _reuse_into(audit, store, order, overwrite)
        labelled = len(order) - len(store.missing(order))
        progress = _sequential_progress(rows, store) if sequential else None
    return LabelResult(source, recorded, labelled, len(order), progress)


def _refusal_hint(sequential: bool, store: labels_mod.LabelStore) -> str:
    """What to do about a label that differs from the recorded one, in the caller's option names."""
    if sequential and store.get_meta("opened_at") is not None:
        return ("the labels of this audit were opened for certification, and a recorded label is never "
                "changed after that (freeze a new audit)")
    return f"give {_o('overwrite')} to replace it"


def _sequential_parts(rows: Sequence[Mapping[str, Any]]) -> tuple[list[Item], list[Item]]:
    """A sequential audit's sample: the cut (rank order) and the excluded pool (the audit order)."""
    items = [((r["query_id"], r["doc_id"]), r["pool"] == "included") for r in rows]
    return [i for i, inc in items if inc], [i for i, inc in items if not inc]


def _labelled_prefix(order: Sequence[Item], labelled: Mapping[Item, int]) -> int:
    """How many items at the start of the audit order hold a label (the audit labels that count)."""
    return next((i for i, item in enumerate(order) if item not in labelled), len(order))


def _sequential_progress(rows: Sequence[Mapping[str, Any]], store: labels_mod.LabelStore) -> str:
    """Where the labelling of a sequential audit stands: nothing requires the whole pool."""
    cut, order = _sequential_parts(rows)
    cut_missing = len(store.missing(cut))
    got = store.get(order)
    t = _labelled_prefix(order, got)
    done = (f"the cut: {cut_missing} of {len(cut)} items still unlabelled (certify needs them all)"
            if cut_missing else f"the cut: all {len(cut)} items labelled")
    ahead = f" ({len(got) - t} more after it wait for it)" if len(got) > t else ""
    return (f"{done}; the audit order: positions 1–{t} of {len(order)} labelled{ahead} — label on as far "
            f"as needed and run {_o('certify')} whenever you like")


def _reuse_into(audit: _Audit, store: labels_mod.LabelStore, order: list[Item], overwrite: bool
                ) -> tuple[str, int]:
    spec = audit.manifest.get("reuse_labels")
    if spec is None:
        raise ValueError(f"this audit was frozen without {_o('reuse_labels')}: there is no earlier audit to "
                         "reuse labels from")
    if spec["role"] == "design-data":
        raise ValueError(f"the labels of audit {spec['audit_id'][:12]} are design data for this audit "
                         f"(frozen with {_o('design_data')}): they informed the cut and are never counted "
                         "(§2.4); "
                         "label the sample afresh")
    old = Path(spec["audit"]) / LABELS_FILE
    with labels_mod.LabelStore(old, create=False) as src:
        if src.get_meta("audit_id") != spec["audit_id"]:
            raise ValueError(f"{old} holds the labels of audit {str(src.get_meta('audit_id'))[:12]}, not of "
                             f"audit {spec['audit_id'][:12]} named at freeze")
        found = src.get(order)
    source = f"{_REUSED}{spec['audit_id'][:12]}"
    items = list(found)
    # the labels and the note of where they came from in one transaction: a kill between them must
    # not leave reused labels that certify cannot tell from fresh ones
    recorded = store.record(items, [found[i] for i in items], source, overwrite=overwrite,
                            meta={"reused_from": spec["audit_id"]} if items else None)
    first = spec["opened_before_freeze"]
    if first:
        how = "opened for certification" if first.get("how", "opened") == "opened" else first["how"]
        warnings.warn(f"these labels were {how} at {first['at']}, before this audit was frozen: certify will "
                      "refuse to count them (§2.4)", AuditWarning, stacklevel=3)
    return source, recorded


# ---------------------------------------------------------------------------------------------
# certify


def _labels_hash(labels: Mapping[Item, int]) -> str:
    import hashlib

    rows = sorted([q, d, int(y)] for (q, d), y in labels.items())
    return hashlib.sha256(canonical_json(rows)).hexdigest()


def _has_reused_labels(store: labels_mod.LabelStore) -> bool:
    """Whether the store holds labels copied from another audit: its ``reused_from`` note, or a
    label whose source says so (a store written before both went in one transaction)."""
    return store.get_meta("reused_from") is not None or any(s.startswith(_REUSED) for s in store.sources())


def _check_reuse(audit: _Audit, store: labels_mod.LabelStore) -> list[_Source]:
    """Refuse labels that were seen before this audit was frozen: reused labels (in this store),
    or — with the seed of an audit whose labels were seen — a fresh labelling of the very items
    they labelled. Returns the audits the reused labels came from (none when nothing was reused)."""
    spec = audit.manifest.get("reuse_labels")
    if spec is None:
        return []
    frozen_at = str(audit.manifest["frozen_at"])
    reused = spec["role"] == "certification" and _has_reused_labels(store)
    chain = _reuse_chain(spec, reused)
    first = spec["opened_before_freeze"]
    later = _first_opening(chain)  # an opening recorded after this freeze may be dated before it
    if later is not None and later["at"] < frozen_at and (first is None or later["at"] < first["at"]):
        first = later
    seed = int(audit.manifest["seed"])
    same = next((s for s in chain if s.seed == seed), None)
    if spec["role"] == "design-data" and same is not None:  # freeze refuses it; a manifest made otherwise
        raise ValueError(
            f"this audit draws with the seed of audit {same.audit_id[:12]} ({seed}), whose labels are its "
            "design data: the same seed draws the same items from overlapping pools, so the labels that "
            f"informed the cut would certify it (§2.4) — refused, whether or not they were opened; freeze a "
            f"new audit with another {_o('seed')}, or none (a fresh random one is drawn)")
    if first is not None:
        at = str(first["at"])
        if reused:
            raise ValueError(
                f"labels reused from audit {spec['audit_id'][:12]} were opened for certification at {at}, "
                f"before this audit was frozen at {frozen_at}: a cut frozen after seeing them may depend on "
                f"them, so they cannot certify it (§2.4, Assumption 1); freeze a new audit with "
                f"{_o('design_data')} (they are then design data only) and label a fresh sample"
            )
        if same is not None:
            raise ValueError(
                f"this audit draws with the seed of audit {same.audit_id[:12]} ({seed}), whose labels were "
                f"seen at {at}, before this audit was frozen at {frozen_at}: the same seed draws the same "
                "items from overlapping pools, so labels seen before the freeze would certify it (§2.4); "
                f"freeze a new audit with another {_o('seed')}"
            )
    return chain if reused else []


def _check_opening(audit: _Audit, store: labels_mod.LabelStore, record: Mapping[str, Any] | None,
                   info: Mapping[str, Any], digest: str) -> dict[str, str]:
    """Check the labels against an earlier opening (the store's meta and ``opened.json``) and
    return the meta values that still have to be written to record the opening (all of them the
    first time; none when it is recorded in full)."""
    opened_at = store.get_meta("opened_at")
    held = store.get_meta("opened_labels_hash")
    if opened_at is not None and held is not None and held != digest:
        raise ValueError(f"certifying is refused: the labels changed after they were opened for "
                         f"certification at {opened_at} ({store.path}), and a certificate cannot follow "
                         "labels edited after being seen (Assumption 1); restore the labels that were "
                         "opened, or freeze a new audit")
    if record is not None and (opened_at != record.get("opened_at") or record.get("labels_hash") != digest
                               or record.get("sample_hash") != info["sample_hash"]):
        raise ValueError(
            f"the labels of this audit were opened for certification at {record.get('opened_at')} "
            f"({audit.folder / OPENED_FILE}), but {store.path} does not hold the labels that were opened "
            f"(its opening: {opened_at or 'none'}; labels hash {digest[:12]}, opened "
            f"{str(record.get('labels_hash'))[:12]}): the label store was replaced, deleted or "
            "relabelled after the labels were seen, and a certificate cannot follow that (Assumption 1) "
            "— refused; restore the label store that was opened, or freeze a new audit")
    if opened_at is None:
        return {"opened_at": now(), "opened_sample_hash": str(info["sample_hash"]),
                "opened_labels_hash": digest}
    if held is None:
        # an older rankcut wrote the opening one value at a time and was stopped after the first:
        # no label could be recorded since (label refuses after opened_at), so these are the labels
        # that were opened
        return {"opened_sample_hash": str(info["sample_hash"]), "opened_labels_hash": digest}
    return {}


def _counts(rows: Sequence[Mapping[str, Any]], labels: Mapping[Item, int]) -> tuple[np.ndarray, int]:
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


def _stats(audit: _Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray, unlabelled: int
           ) -> dict[str, Any]:
    """What the certificates need from the labelled sample: draws and relevant draws per pool,
    member or band (``counts`` in ``certificate.json``; the report recomputes from them)."""
    out: dict[str, Any] = {"draws": len(rows), "unlabelled": int(unlabelled)}
    design = audit.design
    if design in ("excluded", "two-pool"):
        is_in = np.array([r["pool"] == "included" for r in rows], dtype=bool)
        out["excluded"] = {"draws": int((~is_in).sum()), "relevant": int(y[~is_in].sum())}
        if design == "two-pool":
            out["included"] = {"draws": int(is_in.sum()), "relevant": int(y[is_in].sum())}
    elif design == "stratified":
        stratum = np.array([r["stratum"] for r in rows], dtype=np.int64)
        bands = range(len(audit.manifest["band_sizes"]))
        out["bands"] = {"draws": [int((stratum == s).sum()) for s in bands],
                        "relevant": [int(y[stratum == s].sum()) for s in bands]}
    else:
        sizes, counts = _family_counts(audit, rows, y)
        out["members"] = {"draws": [int(v) for v in sizes], "relevant": [int(v) for v in counts]}
    return out


def _certificates(audit: _Frozen, stats: Mapping[str, Any]) -> tuple[JointReport, dict[str, Any]]:
    """The joint report and what certificate.json says beside it (verdict, members, chosen member,
    bands, notes), from the manifest and the sample's counts only."""
    report, extra = _CERTIFY[audit.design](audit, stats)
    notes = list(extra.pop("notes", []))
    if stats["unlabelled"]:
        notes.append(f"{stats['unlabelled']} draws had no label and were counted unfavourably "
                     "(allow_incomplete: excluded-pool draws as relevant, included-pool draws as not "
                     "relevant)")
    reuse = audit.manifest.get("reuse_labels")
    if reuse is not None and reuse["role"] == "design-data":
        notes.append(f"the labels of audit {reuse['audit_id'][:12]} were design data for this cut; none of "
                     "them is counted here (§2.4)")
    return report, {**extra, "notes": notes}


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
    audit = _load(audit_dir)
    info, rows = _load_sample(audit, redraw=True)
    record = _opened_record(audit)
    if audit.design == "sequential":
        return _certify_sequential_run(audit, info, rows, record)
    order = _distinct(rows)
    sampled = set(order)
    with _open_store(audit, info, create=False) as store:
        outside = [(q, d) for q, d, _ in store.items() if (q, d) not in sampled]
        if outside:
            q, d = outside[0]
            more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
            raise ValueError(f"{store.path} has a label for query {q!r}, document {d!r}, which is not in the "
                             f"sample{more}: labels must cover exactly the sampled items")
        missing = store.missing(order)
        if missing and not audit.manifest["allow_incomplete"]:
            q, d = missing[0]
            raise ValueError(f"the sample is incomplete: {len(missing)} of {len(order)} sampled items have "
                             f"no label (first: query {q!r}, document {d!r}); label them, or freeze the "
                             f"audit with {_o('allow_incomplete')} to count them unfavourably")
        sources = _check_reuse(audit, store)
        labels = store.get(order)
        digest = _labels_hash(labels)
        to_write = _check_opening(audit, store, record, info, digest)
        # the certificates first, in memory: a failure here records nothing, so it never leaves an
        # audit whose labels are opened but that has no certificate
        y, n_missing = _counts(rows, labels)
        stats = _stats(audit, rows, y, n_missing)
        report, extra = _certificates(audit, stats)
        curve = _curve(audit, rows, y)
        if to_write:  # the labels are opened here
            if "opened_at" in to_write:
                # the reused labels are opened with them: their first store learns it first, so that
                # an audit frozen after this moment cannot reuse them from there either
                _mark_seen(sources, to_write["opened_at"], audit.manifest.audit_id)
            store.set_meta_many(to_write)
        opened_at = str(store.get_meta("opened_at"))
    if record is None:
        write_json_atomic(audit.folder / OPENED_FILE,
                          {"audit_id": audit.manifest.audit_id, "opened_at": opened_at,
                           "sample_hash": info["sample_hash"], "labels_hash": digest})
    spent = {"draws": len(rows), "items": len(order), "labelled": len(labels),
             "relevant": int(sum(labels.values()))}
    return _write_certificate(audit, info, digest, opened_at, spent, stats, report, extra, curve)


def _write_certificate(audit: _Audit, info: Mapping[str, Any], digest: str, opened_at: str,
                       spent: Mapping[str, int], stats: Mapping[str, Any], report: JointReport,
                       extra: Mapping[str, Any], curve: dict[str, Any] | None) -> CertifyResult:
    """``certificate.json``: the frozen rule, the opening, the labels spent, counts and certificates."""
    content = {
        "schema": "rankcut.audit_certificate", "schema_version": 1,
        "audit_id": audit.manifest.audit_id, "design": audit.design, "theorem": audit.manifest["theorem"],
        "sampling": audit.manifest["sampling"], "delta": audit.delta, "target": audit.target or None,
        "sample_hash": info["sample_hash"], "labels_hash": digest, "opened_at": opened_at,
        "certified_at": now(), "labels": dict(spent),
        "pools": {"queries": audit.queries, "items": audit.n_items},
        "counts": stats, "report": report.to_dict(), **extra,
    }
    if curve is not None:
        content["curve"] = curve
    write_json_atomic(audit.folder / CERTIFICATE_FILE, content)
    return CertifyResult(report, content)


def _sequential_openings(store: labels_mod.LabelStore, record: Mapping[str, Any] | None
                         ) -> list[tuple[str, int, str]]:
    """The openings recorded for a sequential audit — ``(where, prefix, labels hash)`` from the
    store's meta and from ``opened.json`` — each checked for completeness. Both are written at each
    certify (the store first), so after a crash between the two they hold consecutive openings."""
    out = []
    held = store.get_meta("opened_labels_hash")
    if store.get_meta("opened_at") is not None:
        prefix = store.get_meta("opened_prefix")
        if held is None or prefix is None:
            raise ValueError(f"{store.path} records an opening at {store.get_meta('opened_at')} without its "
                             "labels hash or audit prefix: it was not written by this rankcut, and nothing "
                             "shows which labels were seen — refused; freeze a new audit")
        out.append((str(store.path), int(prefix), str(held)))
    if record is not None:
        if store.get_meta("opened_at") is None or record.get("prefix") is None:
            raise ValueError(
                f"the labels of this audit were opened for certification at {record.get('opened_at')} "
                f"({OPENED_FILE}), but {store.path} does not record that opening: the label store was "
                "replaced or deleted after the labels were seen — refused; restore it, or freeze a new audit")
        out.append((OPENED_FILE, int(record["prefix"]), str(record.get("labels_hash"))))
    return out


def _certify_sequential_run(audit: _Audit, info: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                            record: Mapping[str, Any] | None) -> CertifyResult:
    """Certify a sequential audit at the labelled start of its audit order (the prefix ``t``).

    Every item of the cut must be labelled. The audit labels count up to the first unlabelled
    position; labels after it wait until it is labelled. Each certify records the prefix it opened
    and the hash of the labels it saw (store meta, then ``opened.json``); a later certify refuses
    when any of those labels changed or the prefix shrank. Opening more labels later is allowed: the
    confidence sequence holds at every prefix at once (Ville's inequality), so the claim is valid
    wherever the audit stops, even after looking at it many times.
    """
    cut, order = _sequential_parts(rows)
    sampled = set(cut) | set(order)
    with _open_store(audit, info, create=False) as store:
        outside = next(((q, d) for q, d, _ in store.items() if (q, d) not in sampled), None)
        if outside is not None:
            raise ValueError(f"{store.path} has a label for query {outside[0]!r}, document "
                             f"{outside[1]!r}, which is not in the sample: labels must be of the audit's "
                             "items")
        missing = store.missing(cut)
        if missing:
            q, d = missing[0]
            raise ValueError(f"the cut is not fully labelled: {len(missing)} of its {len(cut)} items have no "
                             f"label (first: query {q!r}, document {d!r}); the sequential design needs every "
                             "item of the cut labelled — they are the relevant items the review found")
        in_cut = store.get(cut)
        audited = store.get(order)
        t = _labelled_prefix(order, audited)

        def digest(prefix: int) -> str:
            return _labels_hash({**in_cut, **{item: audited[item] for item in order[:prefix]}})

        openings = _sequential_openings(store, record)
        for where, prefix, held in openings:
            if prefix > t or digest(prefix) != held:
                raise ValueError(
                    f"certifying is refused: the labels opened for certification ({where}: the cut and the "
                    f"first {prefix} audit labels) changed or were removed since, and a certificate cannot "
                    "follow labels edited after being seen (Assumption 1); restore them, or freeze a new "
                    "audit")
        found = int(sum(in_cut.values()))
        y = np.array([audited[item] for item in order[:t]], dtype=np.int64)
        hits = int(y.sum())
        bound, reached = _sequential_engine(audit, found).running_upper(y)
        stats = {"draws": len(rows), "unlabelled": 0,
                 "included": {"draws": len(cut), "relevant": found},
                 "excluded": {"draws": len(order), "labelled": t, "relevant": hits,
                              "best_prefix": int(reached[t]), "best_prefix_hits": int(y[:reached[t]].sum())}}
        report, extra = _certificates(audit, stats)   # in memory first: a failure records nothing
        ahead = len(audited) - t
        if ahead:
            extra["notes"].append(f"{ahead} audit labels after position {t + 1} of the audit order (the "
                                  "first unlabelled one) are not counted until it is labelled")
        curve = _curve_sequential(found, y, bound)
        now_digest = digest(t)
        opened_at = str(store.get_meta("opened_at") or now())
        store.set_meta_many({"opened_at": opened_at, "opened_sample_hash": str(info["sample_hash"]),
                             "opened_labels_hash": now_digest, "opened_prefix": str(t)})
    write_json_atomic(audit.folder / OPENED_FILE,
                      {"audit_id": audit.manifest.audit_id, "opened_at": opened_at,
                       "sample_hash": info["sample_hash"], "labels_hash": now_digest, "prefix": t})
    spent = {"draws": len(rows), "items": len(sampled), "labelled": len(cut) + t, "relevant": found + hits}
    return _write_certificate(audit, info, now_digest, opened_at, spent, stats, report, extra, curve)


def _sequential_engine(audit: _Frozen, found: int) -> SequentialAudit:
    """The frozen rule of a sequential audit whose cut holds ``found`` relevant items."""
    from rankcut.certify.sequential import SequentialAudit

    return SequentialAudit(audit.sizes[0].n0, found, float(audit.target["recall"]), audit.delta,
                           _prior_mean(audit, found))


def _curve_sequential(found: int, y: np.ndarray, upper: np.ndarray) -> dict[str, Any]:
    """The recall bound after the first ``j`` audit labels, from the running bound ``upper`` of
    :meth:`~rankcut.certify.sequential.SequentialAudit.running_upper` — each point a valid
    certificate (the confidence sequence holds at every ``j`` at once), unlike the fixed-size
    designs' curves, and the curve never falls."""
    j = np.concatenate(([0], _curve_points(y.size))).astype(np.int64)
    x = np.concatenate(([0], np.cumsum(y)))[j]
    total = found + upper[j]
    bound = np.where(total > 0, (found + x) / np.maximum(total, 1), 1.0)
    return {"quantity": "recall", "labels": j.tolist(), "bound": bound.tolist()}


def _joint(audit: _Frozen) -> JointReport:
    """An empty joint report with the frozen δ events as its budget and the exact pool facts."""
    from rankcut.certify.report import JointReport

    return JointReport(delta=audit.delta, budget=audit.budget, title=_title(audit), facts=_facts(audit))


def _facts(audit: _Frozen) -> dict[str, Any]:
    sizes = audit.sizes
    if len(sizes) > 1:
        return {"queries": audit.queries, "items N": audit.n_items,
                "burden N1 per member": ", ".join(f"{m.name} {m.n1}" for m in sizes)}
    return {"queries": audit.queries, "items N": audit.n_items, "burden N1": sizes[0].n1,
            "excluded pool N0": sizes[0].n0}


def _member_row(audit: _Frozen, p: _Size, bound: Any, unit: str) -> dict[str, Any]:
    return {"name": p.name, "burden": p.n1, "mean_depth": p.n1 / audit.queries, "n0": p.n0, "bound": bound,
            "unit": unit}


def _verdict_missed(audit: _Frozen, bound: float, unit: str, t: int | None) -> dict[str, Any] | None:
    if t is None:
        return None
    limit = t if audit.finite else t / audit.n_items
    met = bound <= limit
    shown = f"{t}" if audit.finite else f"{limit:.4g} (= {t}/N)"
    return {"met": bool(met), "text": f"target {unit} ≤ {shown}: {'met' if met else 'NOT met'}"}


def _certify_excluded(audit: _Frozen, stats: Mapping[str, Any]) -> tuple[JointReport, dict[str, Any]]:
    from rankcut.certify.excluded import excluded_pool_certificate, excluded_pool_finite_certificate

    p, d, big = audit.sizes[0], audit.delta, audit.n_items
    k0, n0 = int(stats["excluded"]["relevant"]), int(stats["excluded"]["draws"])
    if audit.finite:
        missed = excluded_pool_finite_certificate(k0, n0, p.n0, d, names=["cut"], corpus_size=big)
        bound, unit = float(missed.value), "M0"
    else:
        missed = excluded_pool_certificate(k0, n0, d, p0=p.n0 / big, names=["cut"])
        bound, unit = float(missed.value), "r"
    report = _joint(audit)
    report = report.attach("missed", missed, charge={"cut": "excluded audit"})
    t = audit.target.get("max_missed")
    return report, {"verdict": _verdict_missed(audit, bound, unit, t),
                    "members": [_member_row(audit, p, missed.value, unit)]}


def _certify_two_pool(audit: _Frozen, stats: Mapping[str, Any]) -> tuple[JointReport, dict[str, Any]]:
    from rankcut.certify.excluded import excluded_pool_certificate, excluded_pool_finite_certificate
    from rankcut.certify.recall import two_pool_recall_certificate, two_pool_recall_finite_certificate

    p, d = audit.sizes[0], audit.delta
    d0, d1 = audit.budget["excluded audit"], audit.budget["included audit"]
    k0, n0 = int(stats["excluded"]["relevant"]), int(stats["excluded"]["draws"])
    k1, n1 = int(stats["included"]["relevant"]), int(stats["included"]["draws"])
    big = audit.n_items
    if audit.finite:
        missed = excluded_pool_finite_certificate(k0, n0, p.n0, d0, names=["cut"], corpus_size=big)
        recall = two_pool_recall_finite_certificate(k0, n0, p.n0, k1, n1, p.n1, d, deltas=[d0, d1])
        unit = "M0"
    else:
        missed = excluded_pool_certificate(k0, n0, d0, p0=p.n0 / big, names=["cut"])
        recall = two_pool_recall_certificate(k0, n0, k1, n1, p.n0 / big, d, p1=p.n1 / big, deltas=[d0, d1])
        unit = "r"
    report = _joint(audit)
    report = report.attach("missed", missed, charge={"cut": "excluded audit"}).attach("recall", recall)
    verdict = None
    rho = audit.target.get("recall")
    if rho is not None:
        met = float(recall.value) >= rho
        verdict = {"met": met, "text": f"target recall ≥ {rho:g}: {'met' if met else 'NOT met'}"}
    row = _member_row(audit, p, missed.value, unit)
    row["recall"] = float(recall.value)
    return report, {"verdict": verdict, "members": [row]}


def _family_counts(audit: _Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray
                   ) -> tuple[list[int], list[int]]:
    """Per member ``(sizes, counts)``: effective sizes of the shared reference (Theorem 17), or the
    separate samples' sizes."""
    from rankcut.certify.prefixes import shared_reference_counts

    if audit.manifest["reference"] == "shared":
        items = [(r["query_id"], r["doc_id"]) for r in rows]
        inside = reference_membership(audit.members, items)
        n_eff, k = shared_reference_counts(inside, y.astype(bool))
        return n_eff.tolist(), k.tolist()
    member = np.array([r["member"] for r in rows], dtype=np.int64)
    sizes = [int((member == m).sum()) for m in range(len(audit.members))]
    counts = [int(y[member == m].sum()) for m in range(len(audit.members))]
    return sizes, counts


def _certify_prefixes(audit: _Frozen, stats: Mapping[str, Any]) -> tuple[JointReport, dict[str, Any]]:
    from rankcut.certify import prefixes as pf

    names, d, big = audit.names, audit.delta, audit.n_items
    members = audit.sizes
    n0s = [p.n0 for p in members]
    sizes, counts = list(stats["members"]["draws"]), list(stats["members"]["relevant"])
    draws = int(stats["draws"])
    shared = audit.manifest["reference"] == "shared"
    if audit.finite:
        unit = "M0"
        bounds = (pf.prefix_bounds_shared_finite(counts, sizes, n0s, d, reference_size=draws,
                                                 reference_pool_size=n0s[0], names=names, corpus_size=big)
                  if shared else pf.prefix_bounds_separate_finite(counts, sizes, n0s, d, names=names,
                                                                   corpus_size=big))
    else:
        unit = "r"
        p0s = [n / big for n in n0s]
        bounds = (pf.prefix_bounds_shared(counts, sizes, p0s, d, reference_size=draws,
                                          reference_mass=p0s[0], names=names)
                  if shared else pf.prefix_bounds_separate(counts, sizes, p0s, d, names=names))
    charge = {n: "prefixes" for n in names}
    report = _joint(audit)
    report = report.attach("bounds", bounds, charge=charge)
    verdict = None
    t = audit.target.get("max_missed")
    chosen_index = None
    if t is not None:
        target = t if audit.finite else t / big
        choice = pf.choose_prefix(bounds, [p.n1 for p in members], target)
        report = report.attach("choice", choice, charge=charge)
        chosen_index = choice.details["index"]
        verdict = {"met": choice.value is not None, "chosen": choice.value,
                   "text": f"chosen: {choice.value} (least burden with {unit} bound ≤ {t})"
                   if choice.value is not None else f"no member meets {unit} ≤ {t}"}
    rows = [_member_row(audit, p, b, unit) | {"sample": s, "relevant": k}
            for p, b, s, k in zip(members, bounds.value, sizes, counts, strict=True)]
    return report, {"verdict": verdict, "members": rows, "chosen": chosen_index}


def _certify_fixed_sequence(audit: _Frozen, stats: Mapping[str, Any]) -> tuple[JointReport, dict[str, Any]]:
    from rankcut.certify import prefixes as pf

    names, d, big = audit.names, audit.delta, audit.n_items
    members = audit.sizes
    n0s = [p.n0 for p in members]
    sizes, counts = list(stats["members"]["draws"]), list(stats["members"]["relevant"])
    t = int(audit.target["max_missed"])
    if audit.finite:
        cert = pf.fixed_sequence_finite(counts, sizes, n0s, t, d, names=names)
        unit = "M0"
    else:
        cert = pf.fixed_sequence(counts, sizes, [n / big for n in n0s], t / big, d, names=names)
        unit = "r"
    report = _joint(audit)
    report = report.attach("fixed-sequence", cert, charge={"each_test": "fixed-sequence"})
    tested = {row["name"]: row for row in cert.details["tests"]}
    rows = [_member_row(audit, p, tested[p.name]["upper"] if p.name in tested else None, unit)
            | {"sample": s, "relevant": k, "tested": p.name in tested,
               "passed": tested[p.name]["passed"] if p.name in tested else None}
            for p, s, k in zip(members, sizes, counts, strict=True)]
    chosen = None if cert.value is None else names.index(cert.value)
    text = (f"returned: {cert.value} (fixed-sequence test of {unit} ≤ {t} at level {d:g})"
            if cert.value is not None else f"no member returned: {names[-1]} fails {unit} ≤ {t}")
    return report, {"verdict": {"met": cert.value is not None, "chosen": cert.value, "text": text},
                    "members": rows, "chosen": chosen,
                    "notes": ["fixed-sequence testing certifies only the returned member, only against this "
                              "target (Remark 21); the bounds of untested members are not certificates"]}


def _certify_stratified(audit: _Frozen, stats: Mapping[str, Any]) -> tuple[JointReport, dict[str, Any]]:
    from rankcut.certify.stratified import (
        stratified_binomial_certificate,
        stratified_hypergeometric_certificate,
    )

    p, d = audit.sizes[0], audit.delta
    band_sizes = [int(v) for v in audit.manifest["band_sizes"]]
    sampled, relevant = list(stats["bands"]["draws"]), list(stats["bands"]["relevant"])
    if audit.finite:
        cert = stratified_hypergeometric_certificate(band_sizes, sampled, relevant, d)
        unit = "M0"
    else:
        cert = stratified_binomial_certificate([n / p.n0 for n in band_sizes], sampled, relevant, d,
                                               excluded_mass=p.n0 / audit.n_items)
        unit = "r"
    report = _joint(audit)
    report = report.attach("missed", cert, charge={k: "strata" for k in cert.allocation})
    offsets = audit.bands
    bands = [{"band": s + 1, "ranks": _band_text(offsets, s), "size": n, "sample": ns, "relevant": ks,
              "bound": cert.details["stratum_upper"][s]}
             for s, (n, ns, ks) in enumerate(zip(band_sizes, sampled, relevant, strict=True))]
    verdict = _verdict_missed(audit, float(cert.value), unit, audit.target.get("max_missed"))
    return report, {"verdict": verdict, "members": [_member_row(audit, p, cert.value, unit)],
                    "bands": bands}


def _prior_mean(audit: _Frozen, found: int) -> float:
    """The sequential audit's prior mean, from the scale frozen in the manifest."""
    from rankcut.certify.sequential import default_prior_mean

    return default_prior_mean(found, float(audit.target["recall"]), float(audit.manifest["prior_scale"]))


def _certify_sequential(audit: _Frozen, stats: Mapping[str, Any]) -> tuple[JointReport, dict[str, Any]]:
    from rankcut.certify.sequential import sequential_recall_certificate

    p, d, rho = audit.sizes[0], audit.delta, float(audit.target["recall"])
    found = int(stats["included"]["relevant"])
    audited = stats["excluded"]
    t, x = int(audited["labelled"]), int(audited["relevant"])
    prior = _prior_mean(audit, found)
    best = audited.get("best_prefix")   # absent from the counts of certificates written before it existed
    cert = sequential_recall_certificate(found, p.n0, t, x, rho, d, prior,
                                         None if best is None else int(best),
                                         None if best is None else int(audited["best_prefix_hits"]))
    report = _joint(audit).attach("recall", cert, charge={"audit": "sequential audit"})
    met = bool(cert.details["certified"])
    unfound = int(cert.details["missed_upper"]) - x
    text = (f"target recall ≥ {rho:g}: {'met' if met else 'NOT met yet'} after {t} of {p.n0} audit labels "
            f"({x} relevant found by the audit, at most {unfound} unfound)")
    notes = [f"In plain words: whatever the ranking, and whichever documents are truly relevant, the chance "
             f"that this audit ever says 'met' while the review's recall is below {rho:g} is at most {d:g} — "
             "however often certify is run and wherever the audit stops (anytime-valid; the bound is the "
             "tightest of the audit so far, so a 'met' stays met). The review's recall counts the "
             "relevant items of the cut and those the audit found, out of all relevant items of the "
             "run's lists (and the corpus, when one was given)"
             + (f", over all {audit.queries} queries together, not per query" if audit.queries > 1 else "")
             + ". It assumes the labels are right and are taken in the listed audit order."]
    if not met:
        more = _sequential_engine(audit, found).zero_find_stop(t, x) - t
        notes.append(f"next: label on from position {t + 1} of the audit order; if positions "
                     f"{t + 1}–{t + more} hold no relevant item, the target is certified"
                     if t + more < p.n0 else
                     f"next: label on from position {t + 1}; only the whole pool ({p.n0}) can certify it now")
    row = _member_row(audit, p, int(cert.details["missed_upper"]), "M0") | {
        "recall": float(cert.value), "labelled": t, "relevant": x}
    return report, {"verdict": {"met": met, "text": text}, "members": [row], "notes": notes}


def _band_text(offsets: Sequence[int], s: int) -> str:
    lo = offsets[s] + 1
    return f"k+{lo}..k+{offsets[s + 1]}" if s + 1 < len(offsets) else f"k+{lo}.. (and the rest)"


_CERTIFY: dict[str, Callable[[_Frozen, Mapping[str, Any]], tuple[JointReport, dict[str, Any]]]] = {
    "excluded": _certify_excluded,
    "two-pool": _certify_two_pool,
    "prefixes": _certify_prefixes,
    "fixed-sequence": _certify_fixed_sequence,
    "stratified": _certify_stratified,
    "sequential": _certify_sequential,
}


def _title(audit: _Frozen) -> str:
    inputs = audit.manifest["inputs"]
    what = Path(inputs["cut"]["path"]).name if "cut" in inputs and audit.manifest.get("family") is None \
        else f"nested family {', '.join(audit.names)}"
    return (f"Audit {audit.manifest.short_id} of {what} ({audit.design} design, "
            f"{audit.manifest['theorem']})")


# Labels spent against the bound: the bound from the first j draws of the sample, for display.
# A uniform sample's first j draws are themselves a uniform sample, but stopping at a point of this
# curve because of what it shows is not covered by the certificate (Remark 20).
_CURVE_POINTS = 25


def _curve(audit: _Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray) -> dict[str, Any] | None:
    if audit.design == "excluded":
        return _curve_excluded(audit, y)
    if audit.design == "two-pool":
        return _curve_two_pool(audit, y, np.array([r["pool"] == "included" for r in rows], dtype=bool))
    return None


def _curve_points(n: int) -> np.ndarray:
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.round(np.linspace(0, n, min(n, _CURVE_POINTS) + 1)).astype(np.int64))[1:]


def _curve_excluded(audit: _Audit, y: np.ndarray) -> dict[str, Any]:
    from rankcut.certify.bounds import cp_upper, hypergeom_upper

    j = _curve_points(len(y))
    k = np.cumsum(y)[j - 1] if j.size else j
    if audit.finite:
        b = np.atleast_1d(hypergeom_upper(k, audit.delta, population=audit.base.n0, draws=j)).astype(float)
        quantity = "M0"
    else:
        b = np.atleast_1d(cp_upper(k, j, audit.delta)) * audit.base.n0 / audit.n_items
        quantity = "r"
    return {"quantity": quantity, "labels": j.tolist(), "bound": b.tolist()}


def _curve_two_pool(audit: _Audit, y: np.ndarray, is_in: np.ndarray) -> dict[str, Any]:
    from rankcut.certify.bounds import cp_lower, cp_upper, hypergeom_lower, hypergeom_upper

    y0, y1 = y[~is_in], y[is_in]
    p = audit.base
    d0, d1 = audit.budget["excluded audit"], audit.budget["included audit"]
    frac = _curve_points(_CURVE_POINTS) / _CURVE_POINTS
    j0 = np.round(frac * y0.size).astype(np.int64)
    j1 = np.round(frac * y1.size).astype(np.int64)
    k0 = np.array([int(y0[:j].sum()) for j in j0], dtype=np.int64)
    k1 = np.array([int(y1[:j].sum()) for j in j1], dtype=np.int64)
    if audit.finite:
        mu = np.atleast_1d(hypergeom_upper(k0, d0, population=p.n0, draws=j0)).astype(float)
        ml = np.atleast_1d(hypergeom_lower(k1, d1, population=p.n1, draws=j1)).astype(float)
    else:
        mu = np.atleast_1d(cp_upper(k0, j0, d0)) * p.n0
        ml = np.atleast_1d(cp_lower(k1, j1, d1)) * p.n1
    recall = np.where(ml + mu > 0, ml / np.maximum(ml + mu, 1e-300), 0.0)
    return {"quantity": "recall", "labels": (j0 + j1).tolist(), "bound": recall.tolist()}


# ---------------------------------------------------------------------------------------------
# status


def _sequential_status(folder: Path, out: dict[str, Any], steps: dict[str, bool]) -> None:
    """A sequential audit is labelled once its cut is (the audit labels come as they come), and its
    certify step is done only when the target was met: until then the next step is to label on."""
    rows = [json.loads(line) for line in (folder / SAMPLE_ITEMS).read_text(encoding="utf-8").splitlines()
            if line]
    cut, order = _sequential_parts(rows)
    steps["label"], prefix = False, 0
    if (folder / LABELS_FILE).exists():
        with labels_mod.LabelStore(folder / LABELS_FILE, create=False) as store:
            steps["label"] = not store.missing(cut)
            prefix = _labelled_prefix(order, store.get(order))
    out["audit_labels"] = prefix   # the labelled start of the audit order
    if steps["certify"]:
        content = read_json(folder / CERTIFICATE_FILE, "written by certify")
        verdict = content.get("verdict") or {}
        audited = (content.get("counts") or {}).get("excluded") or {}
        out["verdict"] = verdict.get("text")
        if prefix > int(audited.get("labelled", 0)):   # labels came in since: certify them
            since = prefix - int(audited.get("labelled", 0))
            out["verdict"] = f"{verdict.get('text')}; {since} audit labels since, not certified yet"
            steps["certify"] = False
        else:
            steps["certify"] = bool(verdict.get("met")) or audited.get("labelled") == audited.get("draws")
            steps["label"] = steps["label"] and steps["certify"]


def status(audit_dir: str | Path) -> dict[str, Any]:
    """Which steps an audit has done, read from its folder (no input file is re-read).

    The opening is read as :func:`certify` reads it: ``opened.json`` first, so that deleting or
    replacing ``labels.sqlite`` cannot make an opened audit look unopened (Assumption 1, §2.3).

    :returns: ``{"audit_id", "design", "steps": {step: done?}, "next": the next step or None,
        "opened_at", ...}``.
    :raises ValueError: as certify, when ``certificate.json`` exists without ``opened.json`` or
        ``opened.json`` is another audit's.
    """
    manifest = load_manifest(audit_dir)
    folder = manifest.folder
    record = _opened_record(_Frozen(manifest))
    out: dict[str, Any] = {"audit_id": manifest.audit_id, "design": manifest["design"],
                           "frozen_at": manifest["frozen_at"]}
    steps = {"freeze": True, "plan": (folder / PLAN_FILE).exists(), "sample": (folder / SAMPLE_FILE).exists(),
             "label": False, "certify": (folder / CERTIFICATE_FILE).exists()}
    if steps["sample"]:
        info = read_json(folder / SAMPLE_FILE, "written by sample")
        out["sample"] = {"sizes": info["sizes"], "items": info["items"], "hash": info["sample_hash"]}
        if (folder / LABELS_FILE).exists():
            with labels_mod.LabelStore(folder / LABELS_FILE, create=False) as store:
                out["labelled"] = store.count()
                out["opened_at"] = store.get_meta("opened_at")
            steps["label"] = out["labelled"] >= info["items"] or bool(manifest["allow_incomplete"])
    if record is not None:  # opened: whatever labels.sqlite says now, the labels were seen
        out["opened_at"] = record.get("opened_at")
        steps["label"] = True
    if manifest["design"] == "sequential" and steps["sample"]:
        _sequential_status(folder, out, steps)
    out["steps"] = steps
    out["next"] = next((s for s, done in steps.items() if not done), None)
    return out
