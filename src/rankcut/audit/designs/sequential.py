"""The ``sequential`` design (§9, sequential audits; :mod:`rankcut.certify.sequential`), the design
for high-recall review and the default.

Every item of the cut is labelled (``F`` relevant), the whole excluded pool is put in one random
audit order, and certify may run after any number of its labels:
``Recall ≥ (F + x)/(F + min_{s ≤ t} max C_s)`` from the anytime-valid confidence sequence ``C_t``
and its running intersection (``sequential_recall_certificate``), met when that bound is at most
``m(x)`` — once met, met at every later prefix. Unlike the other designs it takes new labels after
an opening (never changed ones): the claim holds wherever the audit stops (Ville's inequality).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut.audit import labels as labels_mod
from rankcut.audit.designs.base import (
    MAX_SEQUENTIAL_POOL,
    STREAM_EXCLUDED,
    Findings,
    FixedSampleDesign,
    Opened,
    Plan,
    Row,
    Verdict,
    check_openings,
    draw_rows,
    joint,
    member_row,
    numbered,
    rng,
)
from rankcut.audit.folder import (
    CERTIFICATE_FILE,
    LABELS_FILE,
    OPENED_FILE,
    SAMPLE_ITEMS,
    Audit,
    AuditStepError,
    FrozenAudit,
    distinct_items,
    open_store,
    read_rows,
)
from rankcut.audit.manifest import now, read_json
from rankcut.audit.options import spelled as _o
from rankcut.audit.options import start_again
from rankcut.audit.pools import Item, Pools
from rankcut.audit.provenance import labels_hash
from rankcut.audit.sampling import draw_excluded

if TYPE_CHECKING:
    from rankcut.certify.report import JointReport
    from rankcut.certify.sequential import SequentialAudit

__all__ = ["Sequential", "engine", "labelled_prefix", "parts"]


def parts(rows: Sequence[Mapping[str, Any]]) -> tuple[list[Item], list[Item]]:
    """A sequential audit's sample: the cut (rank order) and the excluded pool (the audit order)."""
    items = [((r["query_id"], r["doc_id"]), r["pool"] == "included") for r in rows]
    return [i for i, inc in items if inc], [i for i, inc in items if not inc]


def labelled_prefix(order: Sequence[Item], labelled: Mapping[Item, int]) -> int:
    """How many items at the start of the audit order hold a label (the audit labels that count)."""
    return next((i for i, item in enumerate(order) if item not in labelled), len(order))


def prior_mean(audit: FrozenAudit, found: int) -> float:
    """The sequential audit's prior mean, from the scale frozen in the manifest."""
    from rankcut.certify.sequential import default_prior_mean

    return default_prior_mean(found, float(audit.target["recall"]), float(audit.manifest["prior_scale"]))


def engine(audit: FrozenAudit, found: int) -> SequentialAudit:
    """The frozen rule of a sequential audit whose cut holds ``found`` relevant items."""
    from rankcut.certify.sequential import SequentialAudit

    return SequentialAudit(pool=audit.sizes[0].n0, found=found, target=float(audit.target["recall"]),
                           delta=audit.delta, prior_mean=prior_mean(audit, found))


def _opened_hash(in_cut: Mapping[Item, int], audited: Mapping[Item, int], order: Sequence[Item], prefix: int
                 ) -> str:
    """The labels hash an opening at ``prefix`` records (the cut and the first ``prefix`` audit labels)."""
    return labels_hash({**in_cut, **{item: audited[item] for item in order[:prefix]}})


def check_opened(store: labels_mod.LabelStore, record: Mapping[str, Any] | None,
                 in_cut: Mapping[Item, int], audited: Mapping[Item, int], order: Sequence[Item]) -> None:
    """:func:`check_openings` for the cut and the labelled start of the audit order."""
    check_openings(store, record, labelled_prefix(order, audited),
                   lambda prefix: _opened_hash(in_cut, audited, order, prefix),
                   "the cut and the first {prefix} audit labels")


class Sequential(FixedSampleDesign):
    """Recall of a review: a cut read in full, then the excluded pool labelled in one random order
    until the target is certified (§9, anytime-valid)."""

    name = "sequential"
    targets: tuple[str, ...] = ("recall",)
    needs_target = True
    summary = ("recall of a review — a cut read in full, then the rest labelled in a random order until the "
               "target is certified (anytime-valid; the design for high-recall review)")
    anytime = True
    event = "sequential audit"

    # -- freeze

    def theorem(self, reference: str | None, finite: bool) -> str:
        from rankcut.certify.result import theorem_of

        return (f"{theorem_of('sequential_recall')} (one-sided mixture confidence sequence, "
                "Ville's inequality)")

    def no_target(self) -> None:
        raise ValueError(f"the sequential design needs its recall target fixed before the audit (it "
                         f"decides when the audit may stop): give {_o('target_recall')}")

    def freeze_review(self, sampling: str, allow_incomplete: bool, reuse_labels: Any,
                      prior_scale: float | None, prior_basis: str | None) -> None:
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
        if prior_basis is not None:
            raise ValueError(f"{_o('prior_basis')} is for the interleaved design: the sequential audit's "
                             f"prior mean is a share of the misses allowed ({_o('prior_scale')})")

    def freeze_pools(self, base: Pools, names: Sequence[str], bands: Sequence[int] | None
                     ) -> list[int] | None:
        if base.n0 > MAX_SEQUENTIAL_POOL:
            raise ValueError(f"the excluded pool holds {base.n0} items: the sequential design lists its "
                             f"whole pool in the audit order, at most {MAX_SEQUENTIAL_POOL}; certify a "
                             "deeper cut, or use the two-pool design (a sample of fixed size)")
        return None

    def frozen_extras(self, prior_scale: float | None, prior_basis: str | None) -> dict[str, Any]:
        """The confidence sequence's prior, frozen with the rule (any keeps validity)."""
        from rankcut.certify.sequential import PRIOR_SCALE

        return {"prior_scale": PRIOR_SCALE if prior_scale is None else float(prior_scale)}

    # -- plan and sample

    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan:
        """What the design labels, and how many audit labels it needs when it finds nothing
        (:meth:`~rankcut.certify.sequential.SequentialAudit.zero_find_size`) for a few counts ``F`` of
        relevant items in the cut — unknown until the cut is labelled, so shown, not planned."""
        n1, n0, rho = audit.base.n1, audit.base.n0, float(audit.target["recall"])
        lines = [f"nothing to size: every item of the cut ({n1}) is labelled — they give F, the relevant "
                 f"items the review found — and then the excluded pool's {n0} items in one random audit "
                 f"order, from its start; {_o('certify')} may run after any number of audit labels and says "
                 f"whether recall ≥ {rho:g} holds (anytime-valid: stopping as soon as it holds keeps the "
                 "guarantee)"]
        if n0:
            every = max(1, math.ceil(n0 / 1000))
            shown = []
            for f in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
                if f <= max(n1, 1):
                    shown.append(f"F = {f}: {engine(audit, f).zero_find_size(every)}")
            within = "" if every == 1 else f" (checked every {every} labels)"
            lines.append(f"audit labels to certify when the audit finds no relevant item{within}: "
                         f"{'; '.join(shown)} — each relevant item it finds adds labels")
        lines.append(f"{_o('sample')} lists every item: the cut ({n1}), then the excluded pool ({n0}) in the "
                     "audit order")
        return Plan({"excluded": n0, "included": n1}, lines)

    def sizes(self, audit: Audit, excluded: Any, included: Any) -> dict[str, Any]:
        full = {"excluded": audit.base.n0, "included": audit.base.n1}
        for name, given in (("excluded", excluded), ("included", included)):
            if given is not None and given != full[name]:
                raise ValueError(f"the sequential design labels the whole {name} pool ({full[name]} items), "
                                 f"in order: {_o(name)} {given!r} is not for it")
        return full

    def draw(self, audit: Audit, sizes: Mapping[str, Any]) -> list[Row]:
        """The cut in rank order, then the whole excluded pool in the audit order."""
        base = audit.base
        rows = draw_rows(base.included_items(np.arange(base.n1)), "included")
        rows += draw_rows(draw_excluded(base, base.n0, rng(int(audit.manifest["seed"]), STREAM_EXCLUDED)),
                          "excluded")
        return numbered(rows)

    def label_order(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> list[Item]:
        """The cut, then the audit order: the order the labels count in."""
        return distinct_items(rows)

    def positions(self, audit: Audit, n: int) -> list[tuple[str, int]]:
        """Where each item stands: the cut (rank order), then the audit order."""
        n1 = audit.base.n1
        return [("cut", i + 1) if i < n1 else ("audit", i + 1 - n1) for i in range(n)]

    # -- label

    def guard_labelling(self, audit: Audit, record: Mapping[str, Any] | None) -> None:
        """New labels are taken after an opening, but not into a new store."""
        path = audit.folder / LABELS_FILE
        if record is not None and not labels_mod.holds_store(path):
            raise ValueError(f"{path} is {labels_mod.absence(path)}, but the labels of this audit were "
                             f"opened for certification at {record.get('opened_at')} ({OPENED_FILE}): a new "
                             "label store would not hold the labels that were seen (Assumption 1) — refused; "
                             f"restore it, or {start_again()}")

    def guard_store(self, store: labels_mod.LabelStore, record: Mapping[str, Any] | None,
                    overwrite: bool) -> None:
        """A label is never changed after an opening."""
        if overwrite and (opened_at := (record or {}).get("opened_at") or store.get_meta("opened_at")):
            raise AuditStepError(f"changing labels ({_o('overwrite')}) is refused: the labels of this audit "
                                 f"were opened for certification at {opened_at}, and a label changed "
                                 "after being seen would let the certificate depend on it (Assumption 1); "
                                 f"new labels are taken without {_o('overwrite')}")

    def refusal_hint(self, store: labels_mod.LabelStore) -> str:
        if store.get_meta("opened_at") is not None:
            return ("the labels of this audit were opened for certification, and a recorded label is never "
                    f"changed after that ({start_again()})")
        return super().refusal_hint(store)

    def place(self, audit: Audit, order: Sequence[Item]) -> Callable[[int], str] | None:
        n1 = audit.base.n1
        return lambda pos: f"cut {pos}/{n1}" if pos <= n1 else f"audit order {pos - n1}/{len(order) - n1}"

    def progress(self, rows: Sequence[Mapping[str, Any]], store: labels_mod.LabelStore) -> str | None:
        """Where the labelling stands: nothing requires the whole pool."""
        cut, order = parts(rows)
        cut_missing = len(store.missing(cut))
        got = store.get(order)
        t = labelled_prefix(order, got)
        done = (f"the cut: {cut_missing} of {len(cut)} items still unlabelled (certify needs them all)"
                if cut_missing else f"the cut: all {len(cut)} items labelled")
        ahead = ("" if len(got) <= t else f" ({len(got) - t} more after it wait for it)" if t else
                 f" ({len(got)} further on wait for position 1)")
        if t == len(order):   # nothing left to label: say so, not "label on"
            return f"{done}; the audit order: all {len(order)} positions labelled — run {_o('certify')}"
        labelled = (f"positions 1–{t} of {len(order)} labelled" if t else
                    f"none of its {len(order)} position{'s' * (len(order) != 1)} labelled")
        return (f"{done}; the audit order: {labelled}{ahead} — label on as far as needed and run "
                f"{_o('certify')} whenever you like")

    # -- certify

    def open(self, audit: Audit, info: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
             record: Mapping[str, Any] | None) -> Opened:
        """Certify at the labelled start of the audit order (the prefix ``t``).

        Every item of the cut must be labelled. The audit labels count up to the first unlabelled
        position; labels after it wait until it is labelled. Each certify records the prefix it opened
        and the hash of the labels it saw (store meta, then ``opened.json``); a later certify refuses
        when any of those labels changed or the prefix shrank. Opening more labels later is allowed:
        the confidence sequence holds at every prefix at once (Ville's inequality), so the claim is
        valid wherever the audit stops, even after looking at it many times.
        """
        from tqdm import tqdm

        from rankcut._progress import BARS
        from rankcut.audit.designs import certificates
        from rankcut.certify.curves import sequential_curve

        cut, order = parts(rows)
        sampled = set(cut) | set(order)
        with open_store(audit, info, create=False) as store:
            outside = next(((q, d) for q, d, _ in store.items() if (q, d) not in sampled), None)
            if outside is not None:
                raise ValueError(f"{store.path} has a label for query {outside[0]!r}, document "
                                 f"{outside[1]!r}, which is not in the sample: labels must be of the audit's "
                                 "items")
            missing = store.missing(cut)
            if missing:
                q, d = missing[0]
                raise ValueError(f"the cut is not fully labelled: {len(missing)} of its {len(cut)} items "
                                 f"have no label (first: query {q!r}, document {d!r}); the sequential design "
                                 "needs every item of the cut labelled — they are the relevant items the "
                                 "review found")
            in_cut = store.get(cut)
            audited = store.get(order)
            t = labelled_prefix(order, audited)
            check_opened(store, record, in_cut, audited, order)
            found = int(sum(in_cut.values()))
            y = np.array([audited[item] for item in order[:t]], dtype=np.int64)
            hits = int(y.sum())
            with tqdm(total=t + 1, desc="certify", unit="prefix", disable=not BARS.get(), file=sys.stderr,
                      dynamic_ncols=True) as bar:
                bound, reached = engine(audit, found).running_upper(
                    y, on_progress=lambda done, _: bar.update(done - bar.n))
            from rankcut.certify.sequential import allowed_misses

            met_at = bound <= allowed_misses(found, np.concatenate(([0], np.cumsum(y))),
                                             float(audit.target["recall"]))
            stats = {"draws": len(rows), "unlabelled": 0,
                     "included": {"draws": len(cut), "relevant": found},
                     "excluded": {"draws": len(order), "labelled": t, "relevant": hits,
                                  "best_prefix": int(reached[t]),
                                  "best_prefix_hits": int(y[:reached[t]].sum()),
                                  "first_met": int(np.argmax(met_at)) if met_at.any() else None}}
            report, findings = certificates(audit, stats)   # in memory first: a failure records nothing
            ahead = len(audited) - t
            if ahead:
                findings.notes.append(f"{ahead} audit labels after position {t + 1} of the audit order (the "
                                      "first unlabelled one) are not counted until it is labelled")
            curve = sequential_curve(found, y, bound)
            now_digest = _opened_hash(in_cut, audited, order, t)
            opened_at = str(store.get_meta("opened_at") or now())
            opening = {"opened_at": opened_at, "opened_sample_hash": str(info["sample_hash"]),
                       "opened_labels_hash": now_digest, "opened_prefix": str(t)}
            if any(store.get_meta(k) != v for k, v in opening.items()):  # a repeat writes nothing
                store.set_meta_many(opening)
        new = {"audit_id": audit.manifest.audit_id, "opened_at": opened_at,
               "sample_hash": info["sample_hash"], "labels_hash": now_digest, "prefix": t}
        spent = {"draws": len(rows), "items": len(sampled), "labelled": len(cut) + t,
                 "relevant": found + hits}
        return Opened(stats, now_digest, opened_at, spent, new, report, findings, curve)

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        from rankcut.certify.sequential import sequential_recall_certificate

        p, d, rho = audit.sizes[0], audit.delta, float(audit.target["recall"])
        found = int(stats["included"]["relevant"])
        audited = stats["excluded"]
        t, x = int(audited["labelled"]), int(audited["relevant"])
        prior = prior_mean(audit, found)
        cert = sequential_recall_certificate(found=found, pool=p.n0, labelled=t, hits=x, target=rho, delta=d,
                                             prior_mean=prior, best_prefix=int(audited["best_prefix"]),
                                             best_prefix_hits=int(audited["best_prefix_hits"]))
        report = joint(audit).attach("recall", cert, charge={"audit": "sequential audit"})
        met = bool(cert.details["certified"])
        unfound = int(cert.details["missed_upper"]) - x
        text = (f"target recall ≥ {rho:g}: met — the cut holds every item, so nothing is left to audit"
                if p.n0 == 0 else
                f"target recall ≥ {rho:g}: {'met' if met else 'NOT met yet'} after {t} of {p.n0} audit "
                f"labels ({x} relevant found by the audit, at most {unfound} unfound)")
        notes = [f"In plain words: whatever the ranking, and whichever documents are truly relevant, the "
                 f"chance that this audit ever says 'met' while the review's recall is below {rho:g} is at "
                 f"most {d:g} — however often certify is run and wherever the audit stops (anytime-valid; "
                 "the bound is the tightest of the audit so far, so a 'met' stays met). The review's recall "
                 "counts the relevant items of the cut and those the audit found, out of all relevant items "
                 + ("of the run's lists and of the corpus" if audit.manifest.get("corpus") else
                    "of the run's lists (no corpus was given: documents the run does not list are not "
                    "covered)")
                 + (f", over all {audit.queries} queries together, not per query"
                    if audit.queries > 1 else "")
                 + ". It assumes the labels are right and are taken in the listed audit order."]
        first = audited.get("first_met")
        if first is not None and not (isinstance(first, int) and 0 <= first <= t):
            raise ValueError(f"first_met {first!r} is not a count of audit labels in 0..{t}")
        if met and first is not None and first < t:   # labelled past the first "met" (a simulation)
            notes.append(f"the target was first met after {first} audit labels: the {t - first} after them "
                         "are counted in the bound, and a review could have stopped there")
        if not met:
            more = engine(audit, found).zero_find_stop(t, x) - t
            rate = (f" — the fewest labels that can certify it: at the audit's rate so far ({x} relevant in "
                    f"{t}) those positions would hold about {round(x / t * more)}" if x else "")
            notes.append(f"next: label on from position {t + 1} of the audit order; if positions "
                         f"{t + 1}–{t + more} hold no relevant item, the target is certified{rate}"
                         if t + more < p.n0 else
                         f"next: label on from position {t + 1}; only the whole pool ({p.n0}) can certify it "
                         "now")
        row = member_row(audit, p, int(cert.details["missed_upper"]), "M0") | {
            "recall": float(cert.value), "labelled": t, "relevant": x}
        return report, Findings(Verdict(met, text), [row], notes)

    # -- report and status

    def draw_counts(self, counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        expected = {"excluded": sum(r["pool"] != "included" for r in rows),
                    "included": sum(r["pool"] == "included" for r in rows)}
        return {k: (counts.get(k) or {}).get("draws") for k in expected}, expected

    def spent_text(self, counts: Mapping[str, Any], manifest: Mapping[str, Any]) -> str | None:
        cut, audited = counts["included"], counts["excluded"]
        return (f"Labels spent: {cut['draws'] + audited['labelled']} — the cut's {cut['draws']} and the "
                f"first {audited['labelled']} of the {audited['draws']} excluded items in the audit order; "
                f"{cut['relevant'] + audited['relevant']} relevant.")

    def status(self, folder: Path, out: dict[str, Any], steps: dict[str, bool],
               record: Mapping[str, Any] | None) -> None:
        """Labelled once its cut is (the audit labels come as they come); certify is done only when
        the target was met: until then the next step is to label on. For labels opened by a
        certify and edited or removed since, ``labels_changed`` says what certify would refuse."""
        cut, order = parts(read_rows(folder / SAMPLE_ITEMS))
        steps["label"], prefix = False, 0
        if labels_mod.holds_store(folder / LABELS_FILE):
            with labels_mod.LabelStore(folder / LABELS_FILE, readonly=True) as store:
                steps["label"] = not store.missing(cut)
                audited = store.get(order)
                prefix = labelled_prefix(order, audited)
                try:
                    check_opened(store, record, store.get(cut), audited, order)
                except ValueError as err:
                    out["labels_changed"] = str(err)
        out["audit_labels"] = prefix   # the labelled start of the audit order
        if steps["certify"]:
            content = read_json(folder / CERTIFICATE_FILE, "written by certify")
            verdict = content.get("verdict") or {}
            counted = (content.get("counts") or {}).get("excluded") or {}
            out["verdict"], out["met"] = verdict.get("text"), verdict.get("met")
            if prefix > int(counted.get("labelled", 0)):   # labels came in since: certify them
                since = prefix - int(counted.get("labelled", 0))
                out["since_certify"] = f"{since} audit label{'s' * (since != 1)}"
                out["verdict"] = (f"{verdict.get('text')} (certified at {counted.get('labelled', 0)} audit "
                                  f"labels; {since} labelled since are not: run certify again)")
                steps["certify"] = False
            else:
                steps["certify"] = bool(verdict.get("met")) or counted.get("labelled") == counted.get("draws")
                steps["label"] = steps["label"] and steps["certify"]
