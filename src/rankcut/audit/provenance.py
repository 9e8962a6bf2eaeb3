"""Where labels come from and when they were seen: label reuse and openings (§2.4 of the audit paper).

Labels seen before an audit was frozen may have shaped its cut: they are *design data*, never
certification data (Assumption 1, §2.3–2.4). An audit may reuse the labels of an earlier audit
(``reuse_labels`` at freeze); this module follows the chain of such reuses back to the audit that
first drew each label (:func:`reuse_chain`), finds the earliest moment any of them was seen
(:func:`first_opening`), marks them seen when an audit opens or takes them (:func:`mark_seen`),
chooses a seed that cannot redraw seen items (:func:`reuse_seed`), and refuses at certify what
was seen before the freeze (:func:`check_reuse`) or changed since its own opening
(:func:`check_opening`).
"""

from __future__ import annotations

import json
import os
import secrets
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankcut.audit import labels as labels_mod
from rankcut.audit.folder import CERTIFICATE_FILE, LABELS_FILE, OPENED_FILE, Audit, FrozenAudit
from rankcut.audit.manifest import MANIFEST_FILE, Manifest, canonical_json, load_manifest, now
from rankcut.audit.options import spelled as _o
from rankcut.audit.options import start_again
from rankcut.audit.pools import Item

__all__ = [
    "REUSED",
    "AuditWarning",
    "Source",
    "check_opening",
    "check_reuse",
    "first_opening",
    "has_reused_labels",
    "labels_hash",
    "mark_seen",
    "reuse_chain",
    "reuse_into",
    "reuse_seed",
    "reuse_spec",
]

REUSED = "reused from audit "


class AuditWarning(UserWarning):
    """Something the audit allows but that the user should know (e.g. reused labels that cannot
    count)."""


@dataclass(frozen=True)
class Source:
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
        f"{path}, or {start_again()} without {_o('reuse_labels')} and label a fresh sample")


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
        with labels_mod.LabelStore(path, readonly=True) as store:
            owner = store.get_meta("audit_id")
    except ValueError as exc:
        raise _broken_link(path, audit_id, f"it is not a label store any more ({exc})") from None
    if owner != audit_id:
        raise _broken_link(path, audit_id, f"it holds the labels of audit {str(owner)[:12]} now")
    return path


def _link(spec: Mapping[str, Any], base: Path) -> tuple[Path, Manifest]:
    """The folder and manifest of the audit a ``reuse_labels`` entry names: its path relative to
    ``base`` (the folder of the audit holding the entry), then its path as given at freeze — the
    first holding the named audit (its id is its identity), so audits moved together keep their
    chain.

    :raises ValueError: naming the folder looked at when neither holds it.
    """
    audit_id = str(spec["audit_id"])
    places = list(dict.fromkeys([Path(os.path.normpath(base.resolve() / str(spec["audit"]))),
                                 Path(str(spec["given"]))]))
    problems = []
    for folder in places:
        try:
            old = load_manifest(folder)
        except (OSError, ValueError) as exc:
            problems.append(f"its manifest cannot be read ({exc})")
            continue
        if old.audit_id == audit_id:
            return folder, old
        problems.append(f"the folder holds audit {old.short_id} now")
    raise _broken_link(places[0] / MANIFEST_FILE, audit_id, problems[0]
                       + ("" if len(places) == 1 else f"; nor does {places[1]}, where it was frozen"))


def reuse_chain(spec: Mapping[str, Any] | None, base: Path, reused: bool = False) -> list[Source]:
    """The audits whose labels ``spec`` (a manifest's ``reuse_labels``) reaches: the audit it
    names and, as long as each of them reused labels for certification in turn, the audit that
    one names, and so on — labels copied from audit to audit are still the labels first drawn.

    Every link must still be there (§2.4: the guard has to see whether the labels were seen): a
    folder whose manifest is gone or holds another audit, or a label store that is replaced, or
    missing where the audit had labels, is refused, naming the path.

    :param base: the folder of the audit holding ``spec`` (links are recorded relative to it).
    :param reused: the audit holding ``spec`` holds labels copied from the first link (so the
        first link's store must exist).
    """
    out: list[Source] = []
    while spec is not None and all(s.audit_id != spec["audit_id"] for s in out):
        audit_id = str(spec["audit_id"])
        folder, old = _link(spec, base)
        base = folder
        store = _source_store(folder, audit_id, reused)
        out.append(Source(audit_id, folder, int(old["seed"]), store))
        nxt = old.get("reuse_labels")
        spec = nxt if nxt is not None and nxt["role"] == "certification" else None
        if spec is not None and store is not None:
            with labels_mod.LabelStore(store, readonly=True) as st:
                reused = has_reused_labels(st)
        else:
            reused = False
    return out


def first_opening(chain: Sequence[Source]) -> dict[str, Any] | None:
    """The earliest moment any label of the chain's audits was seen: opened by their own certify
    (store meta or ``opened.json``), or seen through a later audit that reused them or took them
    as design data (``seen_at``). None when none was.

    :raises ValueError: naming ``opened.json`` of a link when it is unreadable or another audit's.
    """
    best: dict[str, Any] | None = None

    def consider(at: str | None, src: Source, how: str, sample_hash: str | None) -> None:
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
        with labels_mod.LabelStore(src.store, readonly=True) as store:
            consider(store.get_meta("opened_at"), src, "opened", store.get_meta("opened_sample_hash"))
            by = str(store.get_meta("seen_by", "?"))[:12]
            consider(store.get_meta("seen_at"), src, f"seen through audit {by}", None)
    return best


def mark_seen(chain: Sequence[Source], at: str, by: str) -> None:
    """Record in the label store of every audit of ``chain`` that its labels were seen at ``at``
    through audit ``by`` (unless an earlier sight is recorded): a later audit frozen after that
    moment must not count them, whichever audit it reaches them through. (Each store was checked
    by :func:`reuse_chain`; one without labels yet has nothing to mark.)"""
    for src in chain:
        if src.store is None:
            continue
        with labels_mod.LabelStore(src.store, create=False) as store:
            old = store.get_meta("seen_at")
            if old is None or at < old:
                store.set_meta_many({"seen_at": at, "seen_by": by})


def reuse_spec(reuse_labels: Any, design_data: bool, folder: Path
               ) -> tuple[dict[str, Any] | None, list[Source]]:
    """The ``reuse_labels`` entry of a new audit in ``folder``: the earlier audit's folder relative
    to it (and as given), its id and the labels' role; and the chain of audits it reaches."""
    if reuse_labels is None:
        if design_data:
            raise ValueError(f"{_o('design_data')} says how reused labels may serve; give "
                             f"{_o('reuse_labels')} (the earlier audit folder) with it")
        return None, []
    old = load_manifest(reuse_labels)
    given = old.folder.resolve()
    try:
        recorded = os.path.relpath(given, folder.resolve())
    except ValueError:  # no relative path between them (Windows drives)
        recorded = str(given)
    spec: dict[str, Any] = {"audit": recorded, "given": str(given), "audit_id": old.audit_id,
                            "role": "design-data" if design_data else "certification"}
    chain = reuse_chain(spec, folder)
    spec["opened_before_freeze"] = first_opening(chain)
    return spec, chain


def reuse_seed(seed: int | None, reuse: Mapping[str, Any] | None, chain: Sequence[Source]) -> int:
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


def reuse_into(audit: Audit, store: labels_mod.LabelStore, order: list[Item], overwrite: bool
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
    old = _link(spec, audit.folder)[0] / LABELS_FILE
    with labels_mod.LabelStore(old, readonly=True) as src:
        if src.get_meta("audit_id") != spec["audit_id"]:
            raise ValueError(f"{old} holds the labels of audit {str(src.get_meta('audit_id'))[:12]}, not of "
                             f"audit {spec['audit_id'][:12]} named at freeze")
        found = src.get(order)
        given_by = src.sources_of(found)
    source = f"{REUSED}{spec['audit_id'][:12]}"
    items = list(found)
    # the labels and the note of where they came from in one transaction: a kill between them must
    # not leave reused labels that certify cannot tell from fresh ones. Each keeps who gave it, so a
    # simulation's labels say so in this audit too.
    recorded = store.record(items, [found[i] for i in items], [f"{source} ({given_by[i]})" for i in items],
                            overwrite=overwrite, meta={"reused_from": spec["audit_id"]} if items else None)
    first = spec["opened_before_freeze"]
    if first:
        how = "opened for certification" if first.get("how", "opened") == "opened" else first["how"]
        warnings.warn(f"these labels were {how} at {first['at']}, before this audit was frozen: certify will "
                      "refuse to count them (§2.4)", AuditWarning, stacklevel=3)
    return source, recorded


def labels_hash(labels: Mapping[Item, int]) -> str:
    import hashlib

    rows = sorted([q, d, int(y)] for (q, d), y in labels.items())
    return hashlib.sha256(canonical_json(rows)).hexdigest()


def has_reused_labels(store: labels_mod.LabelStore) -> bool:
    """Whether the store holds labels copied from another audit: its ``reused_from`` note (written
    in the transaction that copies them, :func:`reuse_into`)."""
    return store.get_meta("reused_from") is not None


def check_reuse(audit: Audit, store: labels_mod.LabelStore) -> list[Source]:
    """Refuse labels that were seen before this audit was frozen: reused labels (in this store),
    or — with the seed of an audit whose labels were seen — a fresh labelling of the very items
    they labelled. Returns the audits the reused labels came from (none when nothing was reused)."""
    spec = audit.manifest.get("reuse_labels")
    if spec is None:
        return []
    frozen_at = str(audit.manifest["frozen_at"])
    reused = spec["role"] == "certification" and has_reused_labels(store)
    chain = reuse_chain(spec, audit.folder, reused)
    first = spec["opened_before_freeze"]
    later = first_opening(chain)  # an opening recorded after this freeze may be dated before it
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
                f"them, so they cannot certify it (§2.4, Assumption 1); {start_again()} with "
                f"{_o('design_data')} (they are then design data only) and label a fresh sample"
            )
        if same is not None:
            raise ValueError(
                f"this audit draws with the seed of audit {same.audit_id[:12]} ({seed}), whose labels were "
                f"seen at {at}, before this audit was frozen at {frozen_at}: the same seed draws the same "
                "items from overlapping pools, so labels seen before the freeze would certify it (§2.4); "
                f"{start_again()} with another {_o('seed')}"
            )
    return chain if reused else []


def check_opening(audit: FrozenAudit, store: labels_mod.LabelStore, record: Mapping[str, Any] | None,
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
                         f"opened, or {start_again()}")
    if record is not None and (opened_at != record.get("opened_at") or record.get("labels_hash") != digest
                               or record.get("sample_hash") != info["sample_hash"]):
        raise ValueError(
            f"the labels of this audit were opened for certification at {record.get('opened_at')} "
            f"({audit.folder / OPENED_FILE}), but {store.path} does not hold the labels that were opened "
            f"(its opening: {opened_at or 'none'}; labels hash {digest[:12]}, opened "
            f"{str(record.get('labels_hash'))[:12]}): the label store was replaced, deleted or "
            "relabelled after the labels were seen, and a certificate cannot follow that (Assumption 1) "
            f"— refused; restore the label store that was opened, or {start_again()}")
    if opened_at is None:
        return {"opened_at": now(), "opened_sample_hash": str(info["sample_hash"]),
                "opened_labels_hash": digest}
    if held is None:  # the opening is written in one transaction (opened_at with its hashes)
        raise ValueError(f"{store.path} records an opening at {opened_at} without its labels hash: it was "
                         "not written by this rankcut, and nothing shows which labels were seen — refused; "
                         f"{start_again()}")
    return {}
