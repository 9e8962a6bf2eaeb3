"""The audit folder: its files, the frozen manifest, the pools it names, the sample and the opening.

Every step of :mod:`rankcut.audit.workflow`, and the report, reads an audit through this module:

* the file names of the folder (``manifest.json`` is :data:`~rankcut.audit.manifest.MANIFEST_FILE`);
* :class:`FrozenAudit`: what the manifest alone says (design, sampling, δ and its events, target,
  pool sizes per member) — enough to recompute the certificates from the sample's counts;
* :class:`Audit` and :func:`load_audit`: the frozen audit with its pools read from the folder's
  snapshot (:mod:`rankcut.audit.snapshot`), after checking that the input files are unchanged,
  that the snapshot is the frozen one and that its pools are the frozen ones
  (:func:`check_pools`; Assumption 1, §2.3 of the audit paper: the generator certified is the one
  fixed at freeze); :func:`build_pools` builds them from the input files, at freeze;
* :func:`load_sample`: ``sample.json`` and ``sample.jsonl``, checked against the manifest (and
  against a fresh draw);
* the label store of the audit (:func:`open_store`) and the record of the opening
  (:func:`opened_record`, ``opened.json``), with the refusals that keep labels from being
  recorded after they were seen.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankcut._util import warnings_about
from rankcut.audit import labels as labels_mod
from rankcut.audit.manifest import (
    MANIFEST_FILE,
    Manifest,
    canonical_json,
    check_inputs,
    load_manifest,
    read_json,
)
from rankcut.audit.options import spelled as _o
from rankcut.audit.options import start_again
from rankcut.audit.pools import Corpus, Item, Pools, cuts_from_run, depth_family, nested_family, offset_family
from rankcut.audit.snapshot import SNAPSHOT_FILE, load_snapshot
from rankcut.data.io import open_text

__all__ = [
    "AUDIT_FILES",
    "CERTIFICATE_FILE",
    "LABELS_FILE",
    "OPENED_FILE",
    "PLAN_FILE",
    "SAMPLE_FILE",
    "SAMPLE_ITEMS",
    "TO_LABEL",
    "Audit",
    "AuditStepError",
    "FrozenAudit",
    "MemberSize",
    "build_pools",
    "check_pools",
    "deleted_store_text",
    "distinct_items",
    "load_audit",
    "load_sample",
    "member_names",
    "open_store",
    "opened_record",
    "read_rows",
    "refuse_if_opened",
    "refuse_if_opened_file",
    "sample_text",
    "sizes_text",
]

PLAN_FILE = "plan.json"
SAMPLE_FILE = "sample.json"
SAMPLE_ITEMS = "sample.jsonl"
LABELS_FILE = "labels.sqlite"
OPENED_FILE = "opened.json"
CERTIFICATE_FILE = "certificate.json"
TO_LABEL = "to_label"
# every file an audit folder may hold (a report never writes over one of them)
AUDIT_FILES = (MANIFEST_FILE, SNAPSHOT_FILE, PLAN_FILE, SAMPLE_FILE, SAMPLE_ITEMS, OPENED_FILE,
               CERTIFICATE_FILE, f"{TO_LABEL}.csv", f"{TO_LABEL}.jsonl",
               *(LABELS_FILE + end for end in ("", "-wal", "-shm", "-journal")))


class AuditStepError(ValueError):
    """A step was run out of order (an earlier step is missing, or a later one already happened)."""


def sizes_text(sizes: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sizes.items() if v is not None)


def member_names(kind: str, values: Sequence[Any]) -> list[str]:
    if kind == "offsets":
        return [f"cut{int(o):+d}" for o in values]
    if kind == "depths":
        return [f"depth{int(d)}" for d in values]
    stems = [Path(str(v)).name for v in values]
    return stems if len(set(stems)) == len(stems) else [f"g{m + 1}" for m in range(len(values))]

@dataclass(frozen=True)
class MemberSize:
    """One member's (or the single cut's) pool sizes, as frozen in the manifest."""

    name: str
    n1: int
    n0: int


@dataclass
class FrozenAudit:
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
    def sizes(self) -> list[MemberSize]:
        """Per member (one for a single cut): its name, N1 and N0."""
        return [MemberSize(str(m["name"]), int(m["n1"]), int(m["n0"]))
                for m in self.manifest["pools"]["members"]]

    @property
    def queries(self) -> int:
        return int(self.manifest["pools"]["queries"])

    @property
    def n_items(self) -> int:
        return int(self.manifest["pools"]["items"])


@dataclass
class Audit(FrozenAudit):
    """A frozen audit with its pools, read from its (checked) snapshot."""

    members: list[Pools]  # one per member; a single cut is a family of one
    inputs: dict[str, Any]  # the manifest's inputs, each path the file found (checked)

    @property
    def base(self) -> Pools:
        return self.members[0]


def build_pools(inputs: Mapping[str, Any], ordering: str, family_spec: Mapping[str, Any] | None,
                corpus_spec: Mapping[str, Any] | None, allow_missing_queries: bool
                ) -> tuple[list[Pools], list[str]]:
    """The pools of every member and their names, from the input files (read, not checked: hashes
    are checked elsewhere), at freeze; ``allow_missing_queries`` as for
    :func:`~rankcut.audit.pools.cuts_from_run`. The parsed lists are not kept."""
    from rankcut.data.trec import load_trec, read_run

    with warnings_about(str(inputs["run"]["path"])):   # said with the run's name, as evaluate says them
        lists = load_trec(inputs["run"]["path"], ordering=ordering)
    corpus: Corpus | None = None
    if corpus_spec is not None:
        corpus = (Corpus.size(int(corpus_spec["documents"])) if corpus_spec["kind"] == "size"
                  else Corpus.ids(inputs["corpus_ids"]["path"]))
    def cut_of(entry: Mapping[str, Any]) -> Any:
        # a cut of 0 writes no line: a cut run keeping nothing anywhere is an empty file, which the
        # reader refuses as no run; with allow_missing_queries it is every query cut at 0
        empty = False
        if allow_missing_queries:
            with open_text(entry["path"], None) as (_, f):
                empty = not any(line.strip() for line in f)   # stops at the first line
        run = {} if empty else read_run(entry["path"])  # its errors name the file and line
        try:
            return cuts_from_run(lists, run, allow_missing_queries=allow_missing_queries)
        except ValueError as err:
            raise ValueError(f"{entry.get('option', '--cut')} {entry['path']}: {err}") from None

    if family_spec is None:   # no cut (the interleaved review): every item is in the one pool
        cuts = cut_of(inputs["cut"]) if "cut" in inputs else np.zeros(len(lists.qids), dtype=np.int64)
        return [Pools.from_lists(lists, cuts, corpus)], ["cut"]
    kind = family_spec["kind"]
    if kind == "runs":
        paths = [f["path"] for f in inputs["family"]]
        names = member_names("runs", paths)
        family = nested_family(lists, [read_run(p) for p in paths], names=names,
                               allow_missing_queries=allow_missing_queries)
    elif kind == "offsets":
        names = member_names("offsets", family_spec["offsets"])
        base_cuts = cut_of(inputs["cut"])
        family = offset_family(base_cuts, lists.lengths, family_spec["offsets"])
    else:
        names = member_names("depths", family_spec["depths"])
        family = depth_family(lists.lengths, family_spec["depths"])
    base = Pools.from_lists(lists, family[:, 0], corpus)
    return [base, *(base.with_cuts(family[:, m]) for m in range(1, family.shape[1]))], names


def refuse_repeated(members: Sequence[Pools], names: Sequence[str], kind: str) -> None:
    """Refuse a family of a simultaneous design (``prefixes``: δ/M per member) with two members that
    keep the same documents on every query (offsets or depths past the lists' ends, clipped to them;
    or the same run twice): each member takes a share of δ, so a repeated one only loosens the
    others' bounds (Corollary 16/18). So is a deepest member whose excluded pool is empty (it keeps
    every list whole, and no corpus claim adds unretrieved documents): it misses nothing for sure,
    and its share of δ only loosens the others'. A family whose shallowest member keeps everything
    is left to the design, which refuses it as no audit; fixed-sequence tests each member at δ, and
    is not asked."""
    if (members[0].cuts == members[0].lengths).all():
        return
    m = next((m for m in range(1, len(members)) if (members[m].cuts == members[m - 1].cuts).all()), None)
    if m is not None:
        why = {"runs": "the two runs cut every list at the same depth",
               "offsets": "the offsets are clipped to the lists' ends", "depths": "the depths are clipped "
               "to the lists' ends"}[kind]
        raise ValueError(f"members {names[m - 1]} and {names[m]} of the family keep the same documents on "
                         f"every query ({why}): each member takes a share of δ, so a repeated one only "
                         f"loosens the others' bounds — drop {names[m]}")
    if members[-1].n0 == 0:
        raise ValueError(f"member {names[-1]} of the family keeps every list whole and its excluded pool is "
                         "empty: it misses nothing for sure, and its share of δ only loosens the others' "
                         f"bounds — drop {names[-1]}")


def check_pools(manifest: Manifest, members: Sequence[Pools], names: Sequence[str]) -> None:
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
            f"(Assumption 1) — refused; {start_again()} from the same files")

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


def load_audit(audit_dir: str | Path) -> Audit:
    """The frozen audit, after finding every input file (relative to the audit folder, then as
    recorded: :func:`~rankcut.audit.manifest.locate_input`), checking that the manifest and every
    input are unchanged (by file status, or hashed in full), reading the pools from the snapshot
    (hashed in full: :func:`~rankcut.audit.snapshot.load_snapshot`) and checking that they are the
    frozen ones (:func:`check_pools`). The input files themselves are not read."""
    manifest = load_manifest(audit_dir)
    inputs = check_inputs(manifest)
    family = manifest.get("family")
    names = ["cut"] if family is None else [str(n) for n in family["names"]]
    members = load_snapshot(manifest.folder, manifest.get("snapshot"), names, manifest.get("corpus"), inputs)
    check_pools(manifest, members, names)
    return Audit(manifest, members, inputs)

def sample_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """``sample.jsonl``'s text: one draw a line, canonical JSON."""
    return "".join(canonical_json(dict(r)).decode("utf-8") + "\n" for r in rows)


def distinct_items(rows: Sequence[Mapping[str, Any]]) -> list[Item]:
    """The distinct ``(query, document)`` items of the draws, in draw order."""
    return list(dict.fromkeys((r["query_id"], r["doc_id"]) for r in rows))


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The draws of ``sample.jsonl`` (not checked: :func:`load_sample` checks them).

    :raises ValueError: naming the file when it is missing (as :func:`load_sample` says it).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path} is missing (written by sample)") from None
    return rows_of(text)


def rows_of(text: str) -> list[dict[str, Any]]:
    """The draws of the text of ``sample.jsonl``, one JSON object a line."""
    return [json.loads(line) for line in text.splitlines() if line]


def load_sample(audit: FrozenAudit, *,
                redraw: Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None
                ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
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
    data = items_path.read_bytes()     # read once: hashed, parsed and compared with a redraw
    if hashlib.sha256(data).hexdigest() != info.get("sample_hash"):
        raise ValueError(f"{items_path} changed after sampling (its sha256 is not the sample hash "
                         f"{str(info.get('sample_hash'))[:12]} of {path})")
    text = data.decode("utf-8")
    rows = rows_of(text)
    if redraw is not None and sample_text(redraw(info["sizes"])) != text:
        drawn_with = info["numpy"]
        if drawn_with != np.__version__:
            why = (f"it was drawn under numpy {drawn_with} and is redrawn here under numpy {np.__version__}, "
                   f"whose random streams may differ: check it under numpy {drawn_with} (if it differs "
                   "there too, it was edited or drawn otherwise)")
        else:
            why = "it was edited or drawn otherwise"
        raise ValueError(f"{items_path} is not the sample that the frozen manifest and seed draw "
                         f"(sizes {sizes_text(info['sizes'])}): {why}")
    return info, rows


def deleted_store_text(audit: FrozenAudit, record: Mapping[str, Any]) -> str:
    """What happened when the label store is missing (or empty) after an opening, and what to do."""
    path = audit.folder / LABELS_FILE
    return (f"{path} is {labels_mod.absence(path)}, but the labels of this audit were opened for "
            f"certification at {record.get('opened_at')} ({OPENED_FILE}): the label store was deleted after "
            "certify (or emptied). Labelling again cannot replace it (new labels would not be the ones that "
            "were seen, Assumption 1); restore it from a backup or from the copy the audit was shipped as, "
            f"or {start_again()} (the certificate already written can still be read: rankcut audit report "
            f"--audit {shlex.quote(str(audit.folder))})")


def open_store(audit: FrozenAudit, info: Mapping[str, Any], *, create: bool) -> labels_mod.LabelStore:
    """The audit's label store, checked to hold this audit's sample. Without ``create`` (certify)
    it is opened read-only where the folder cannot be written (an audit shipped to be checked)."""
    path = audit.folder / LABELS_FILE
    # an empty file is a store that a stopped label call created and never wrote: no labels either
    if not create and not labels_mod.holds_store(path):
        record = opened_record(audit)
        if record is not None:
            raise AuditStepError(deleted_store_text(audit, record))
        raise AuditStepError(f"no labels yet ({path} {labels_mod.absence(path)}): run {_o('label')} first")
    readonly = not create and not labels_mod.writable(path)
    store = labels_mod.LabelStore(path, create=create, readonly=readonly)
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
        elif held != info["sample_hash"]:
            raise ValueError(f"{path} is refused: it holds labels for sample {str(held)[:12]}, not for "
                             f"this audit's sample {str(info['sample_hash'])[:12]}, so they are not labels "
                             "of the items drawn; move it away and label the sample drawn")
    except BaseException:
        store.close()
        raise
    return store


def refuse_if_opened(store: labels_mod.LabelStore) -> None:
    at = store.get_meta("opened_at")
    if at is not None:
        raise AuditStepError(f"recording labels is refused: the labels of this audit were opened for "
                             f"certification at {at}, and labels recorded now would let the certificate "
                             f"depend on what was seen (Assumption 1) — {start_again()} instead")


def opened_record(audit: FrozenAudit) -> dict[str, Any] | None:
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


def refuse_if_opened_file(audit: FrozenAudit, step: str) -> None:
    """``label`` and ``sample`` after the labels were opened, even when ``labels.sqlite`` (or the
    sample) was deleted since: ``opened.json`` remembers the opening."""
    record = opened_record(audit)
    if record is not None and not labels_mod.holds_store(audit.folder / LABELS_FILE):
        raise AuditStepError(deleted_store_text(audit, record))
    if record is not None:
        raise AuditStepError(
            f"the labels of this audit were opened for certification at {record.get('opened_at')} "
            f"({audit.folder / OPENED_FILE}); {step} now would let the certificate depend on what was "
            f"seen (Assumption 1) — {start_again()} instead")
