"""The ``interleaved`` design (issue 16; :mod:`rankcut.certify.interleaved`): screening and auditing
under one anytime-valid bound on the collection's relevant count ``R``.

**The collection.** One topic's ranked list (a run of one query; several are refused: one audit
per topic), followed, with ``--corpus-size`` or ``--corpus-ids``, by the documents the list does
not hold, in the corpus' own fixed order. There is no cut: the review decides as it goes what it
reads. ``sample`` writes the whole collection in ranking order, each document with its place in
one frozen uniformly random *audit order* (seeded by the frozen seed; redrawn and compared at
every certify).

**The label step.** At every step the frozen policy (``--policy``, by name and constants, in the
manifest) chooses a move from the labels recorded so far, and the label step asks for that one
document:

* **screen** — the document the frozen screener names: ``frontier``, the top unread document of
  the ranking (the default), or one registered by a package above this layer — ``cal``, the
  continuous-active-learning ranker that :mod:`rankcut.review.session` registers for
  ``rankcut review`` (:data:`SCREENERS`: by name and config);
* **audit** — the next still-unread document of the frozen audit order.

The policy and the screener are deterministic functions of the recorded history, so the review is
replayed from the label store at every call: a killed session resumes at the same next item, and
the moves are recomputable from the folder. Label and status take the steps ``review.jsonl``
records as far as they match the store (the policy chose them on the same history, so its
decisions, the replay's cost, are not made again); certify takes only those the last certify had
the policy choose (their hash is in the store's opening) and has the policy choose the rest.
Each step is written to ``review.jsonl`` (move, document, label, why), and certify puts the moves
and labels into the certificate's inputs (``interleaved_recall_certificate``), which the report
recomputes. A recorded step is never changed (the moves after it were chosen from it), and the
review stops asking once certified, unless the reviewer chooses to read on
(:meth:`Interleaved.read_on`, recorded in the label store): it then asks for the screener's next
picks, and the certificate says at which step the target was first met.

**The guarantee** (the theorem of :mod:`rankcut.certify.interleaved`: the next unread document of a
frozen permutation is uniform on the unread set; for each ``r`` the one-sided predictable mixture of the
audit likelihoods (over the counts below ``r``) is a nonnegative martingale under ``R = r`` for *any*
predictable policy; Ville's inequality):
``R ≤ min_{s ≤ t} max C_s`` at every step at once with probability ``≥ 1 − δ``, so
``Recall ≥ F_t / min_s max C_s`` however the moves were chosen and wherever the review stops, and a
"met" stays met. The prior is fixed at the first audit step from the labels before it
(``default_prior_mean`` with the frozen ``--prior-scale``), as the theorem allows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut._words import id_list
from rankcut.audit import labels as labels_mod
from rankcut.audit.designs.base import (
    STREAM_ORDER,
    Findings,
    FixedSampleDesign,
    Opened,
    Plan,
    Row,
    Verdict,
    Words,
    check_openings,
    draw_rows,
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
    load_sample,
    open_store,
    read_rows,
)
from rankcut.audit.manifest import Manifest, canonical_json, load_manifest, now, read_json, write_text_atomic
from rankcut.audit.options import spelled as _o
from rankcut.audit.options import start_again
from rankcut.audit.pools import Item, Pools
from rankcut.audit.provenance import labels_hash

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rankcut.certify.interleaved import InterleavedRule
    from rankcut.certify.policies import Policy, ReviewState
    from rankcut.certify.report import JointReport

__all__ = ["MAX_COLLECTION", "POLICIES", "READ_ON_META", "REVIEW_FILE", "SCREENERS", "SCREENER_FACTS",
           "SCREENER_WORDS", "Interleaved", "Review", "Step", "build_policy", "lookahead",
           "one_replay", "policy_spec", "read_on_text", "reads_on", "replayed", "review_of", "screener_spec",
           "words_of"]

# The design lists its whole collection in sample.jsonl, and the engine keeps one number per R.
MAX_COLLECTION = 2_000_000
REVIEW_FILE = "review.jsonl"   # one line a step: move, document, label, why
# The label store's meta key that records the reviewer's choice to read on after the target was met
# (:meth:`Interleaved.read_on`): the step count then. The review then asks for the screener's picks.
READ_ON_META = "read_on_after_step"
DEFAULT_POLICY = "projected-cost"
MOVES = {"s": "screen", "a": "audit"}
# How the report says the prior's basis (InterleavedRule.prior_basis)
BASIS_WORDS = {"misses": "the misses the target allows",
               "tail": "the relevant count the screened tail projects"}


# The policies ``--policy`` names, and their classes in rankcut.certify.policies (imported when
# used: it loads scipy).
POLICIES = {"projected-cost": "ProjectedCostPolicy", "precision": "PrecisionPolicy",
            "marginal-cost": "MarginalCostPolicy", "screen-then-audit": "ScreenThenAudit"}


def _policy_class(name: str) -> type:
    from rankcut.certify import policies

    return getattr(policies, POLICIES[name])  # type: ignore[no-any-return]


def frontier(state: ReviewState) -> int:
    """The top unread document of the ranking (the default screener)."""
    return state.frontier


# Which document a screening step reads, by the name frozen in the manifest: each entry builds, from
# the frozen audit, the collection's items in ranking order and the config frozen beside the name,
# a function of what the policy sees that names an unread rank. A ranker retrained on the labels
# (continuous active learning: a ``Screener``'s ``next_screen``) is one more entry; it is rebuilt and
# replayed from the recorded labels at every call, so it must be deterministic, and it may be asked
# twice for the same step (it must name the same document). The audit order never depends on it.
# The audit layer imports no ranker: a package above it adds its entry when imported
# (:mod:`rankcut.review.session` adds ``cal``), and a folder whose screener is not registered is
# refused by name. ``cached``: the replay of status, next and label, which may take what the
# screener recomputes (a ranker's fits) from a cache in the folder; certify passes False, and
# recomputes everything.
ScreenerFactory = Callable[..., Callable[["ReviewState"], int]]
SCREENERS: dict[str, ScreenerFactory] = {"frontier": lambda audit, items, cached: frontier}
# How the report says a screener's frozen config, by the same names (a package that registers a
# screener may add its words; otherwise the report names it and points at the manifest).
SCREENER_FACTS: dict[str, Callable[[Mapping[str, Any]], list[tuple[str, str]]]] = {
    "frontier": lambda config: [("screener", "frontier: the top unread document of the ranking")]}


#: a screener's words, or a function of its frozen configuration that gives them (a review of a
#: run's documents places them by rank, one of a file's records by number)
SCREENER_WORDS: dict[str, Words | Callable[[Mapping[str, Any]], Words]] = {"frontier": Words()}


def words_of(manifest: Manifest | Mapping[str, Any]) -> Words:
    """The words for an interleaved manifest's screener (a document's, unless it registered its own)."""
    words = SCREENER_WORDS.get(str(manifest["screener"]["name"]), Words())
    return words if isinstance(words, Words) else words(manifest["screener"]["config"])


def screener_spec(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """A screener as frozen: its registered name and its config (plain JSON)."""
    if name not in SCREENERS:
        raise ValueError(f"the screener must be one of {', '.join(SCREENERS)}, got {name!r}")
    return {"name": name, "config": json.loads(json.dumps(dict(config), allow_nan=False))}


def _screener(audit: FrozenAudit, items: Sequence[Item], cached: bool) -> Callable[[ReviewState], int]:
    spec = audit.manifest["screener"]
    factory = SCREENERS.get(spec["name"])
    if factory is None:
        raise ValueError(f"{audit.folder}: its screener {spec['name']!r} is not registered in this process "
                         f"(registered: {', '.join(SCREENERS)}); a review folder of rankcut review is "
                         "driven by rankcut review (in Python: import rankcut.review.session)")
    return factory(audit, items, cached=cached, **spec["config"])


def policy_spec(text: str | None) -> dict[str, Any]:
    """``--policy NAME[:key=value,...]`` as frozen: the name and every constant of the policy."""
    name, _, given = (text or DEFAULT_POLICY).partition(":")
    if name not in POLICIES:
        raise ValueError(f"{_o('policy')} must be one of {', '.join(POLICIES)} (constants as "
                         f"NAME:key=value,...), got {name!r}")
    cls = _policy_class(name)
    fields = [f.name for f in dataclasses.fields(cls)]
    config: dict[str, Any] = {}
    for part in filter(None, given.split(",")):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in fields:
            raise ValueError(f"{_o('policy')} {name} takes {', '.join(fields)} as key=value, got {part!r}")
        try:
            config[key] = int(value) if value.strip().lstrip("-").isdigit() else float(value)
        except ValueError:
            raise ValueError(f"{_o('policy')} {name}: {key} must be a number, got {value!r}") from None
    try:
        policy = cls(**config)
    except TypeError:
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.default is dataclasses.MISSING and f.name not in config]
        raise ValueError(f"{_o('policy')} {name} needs {', '.join(missing)}, e.g. "
                         f"{name}:{missing[0]}=100") from None
    except ValueError as err:
        raise ValueError(f"{_o('policy')} {name}: {err}") from None
    if name == "screen-then-audit":
        from rankcut.certify._validate import check_count

        check_count(policy.depth, f"{_o('policy')} screen-then-audit depth")
    return {"name": name, "config": dataclasses.asdict(policy)}


def build_policy(spec: Mapping[str, Any]) -> Policy:
    """The policy of a frozen spec (:func:`policy_spec`'s name and constants)."""
    return _policy_class(spec["name"])(**spec["config"])  # type: ignore[no-any-return]


def _policy(audit: FrozenAudit) -> Policy:
    return build_policy(audit.manifest["policy"])


def review_rule(audit: FrozenAudit) -> InterleavedRule:
    from rankcut.certify.interleaved import InterleavedRule

    return InterleavedRule(float(audit.target["recall"]), audit.delta, float(audit.manifest["prior_scale"]),
                           prior_basis=str(audit.manifest["prior_basis"]))


@dataclass(frozen=True)
class Step:
    """One step of the review: the move, the document (its rank, and its place in the audit order
    for an audit move), why the policy chose it, and its label once read."""

    number: int
    move: str            # "screen" or "audit"
    rank: int            # 1-based place in the ranking
    position: int | None  # 1-based place in the audit order (audit moves)
    item: Item
    why: str
    label: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.number, "move": self.move, "query_id": self.item[0], "doc_id": self.item[1],
                "rank": self.rank, "audit_position": self.position, "label": self.label, "why": self.why}


def _audit_order(rows: Sequence[Mapping[str, Any]]) -> NDArray[np.int64]:
    """The ranks (from 0) in the frozen audit order: position → rank."""
    return np.argsort(np.array([r["audit"] for r in rows], dtype=np.int64))


class Review:
    """An interleaved review replayed from the frozen sample: the policy's state, the audit order's
    pointer and the steps so far. Pure replay: reads and writes no file (but the screener's cache,
    when ``cached``: :data:`SCREENERS`)."""

    def __init__(self, audit: FrozenAudit, rows: Sequence[Mapping[str, Any]], *, cached: bool = False,
                 read_on: bool = False) -> None:
        from rankcut.certify.policies import ReviewState

        self.items: list[Item] = [(r["query_id"], r["doc_id"]) for r in rows]
        self.order = _audit_order(rows)   # position → rank
        self.state = ReviewState(len(self.items), review_rule(audit))
        self.policy = _policy(audit)
        self.screener = _screener(audit, self.items, cached)
        self.screener_name = str(audit.manifest["screener"]["name"])
        self.words = words_of(audit.manifest)
        self.read = np.zeros(len(self.items), dtype=bool)
        self.pointer = 0
        self.steps: list[Step] = []
        self.bounds: list[float] = []   # the certified recall bound after each step
        self.found: list[int] = []      # the relevant documents read after each step
        self._asked: tuple[int, Step] | None = None   # the step next() gave, and after how many steps
        self.lines: list[str] = []   # review.jsonl's lines of the first steps, as last written
        self.read_on = read_on   # after the target is met, screen on (Interleaved.read_on), not stop
        self.audit_id, self.folder = audit.manifest.audit_id, audit.folder.resolve()
        self.unfinished = False   # a step (next or take) began and did not end: an exception cut it

    def replays(self, audit: FrozenAudit, rows: Sequence[Mapping[str, Any]], labels: Mapping[Item, int],
                read_on: bool) -> bool:
        """Whether a replay of ``audit``'s review from ``rows`` and ``labels`` (:func:`one_replay`)
        would take this review's steps: no step of it was cut short, the same folder, audit,
        documents, audit order and reading on, and every step's label is in ``labels``."""
        return (not self.unfinished and self.folder == audit.folder.resolve()
                and self.audit_id == audit.manifest.audit_id and self.read_on == read_on
                and self.items == [(r["query_id"], r["doc_id"]) for r in rows]
                and np.array_equal(self.order, _audit_order(rows))
                and all(labels.get(s.item) == s.label for s in self.steps))

    @property
    def can_read_on(self) -> bool:
        """Whether the reviewer may choose to read on now (:meth:`Interleaved.read_on`): met, not read on yet,
        documents unread."""
        rev = self.state.review
        return bool(rev.certified and not self.read_on and rev.unread)

    @property
    def done(self) -> bool:
        rev = self.state.review
        return bool((rev.certified and not self.read_on) or rev.unread == 0)

    def verdict(self, rho: float) -> str:
        """The verdict so far against target recall ``rho``, in words (:func:`verdict_text`), as the
        label step's prompt and the labelling page say it."""
        rev = self.state.review
        return verdict_text(rho, rev.certified, rev.read, len(self.items), self.state.screened,
                            rev.audit_labels, rev.found, rev.running_upper, self.words, rev.met_step)

    def next_line(self, step: Step | None) -> str:
        """What the review asks for next (``step``, from :meth:`next`), in words (:func:`next_text`)."""
        return next_text(step, self)

    def next(self) -> Step | None:
        """The step the policy asks for now (None once certified, unless reading on, or once
        everything is read). Reading on after the target is met (:meth:`Interleaved.read_on`), every step is a
        screening step: the screener's next pick."""
        self.unfinished = True   # the screener's work moves on: until it ends, this review is no replay's
        step = self._next()
        self.unfinished = False
        return step

    def _next(self) -> Step | None:
        from rankcut.certify.interleaved import SCREEN, audit_order_draw

        if self._asked is not None and self._asked[0] == len(self.steps):
            return self._asked[1]   # asked already at this step: the policy decides once a step
        if self.done:
            return None
        move = SCREEN if self.state.review.certified else self.policy(self.state)
        if move == SCREEN:
            rank = self.screener(self.state)
            if self.read[rank]:
                raise ValueError(f"the screener {self.screener_name} named rank {rank + 1}, which is "
                                 "already read")
            position = None
        else:   # the next unread document of the audit order; its 1-based place is the new pointer
            rank, position = audit_order_draw(self.order, self.pointer, self.read)
        step = Step(len(self.steps) + 1, MOVES[move], rank + 1, position, self.items[rank], self._why(move))
        self._asked = (len(self.steps), step)
        return step

    def resumed(self, entry: Mapping[str, Any], labels: Mapping[Item, int]) -> Step | None:
        """The step a line of ``review.jsonl`` records, when it is the one its move reads now and
        ``labels`` holds its recorded label (None otherwise, or once the review is done): the
        policy chose that move on this same history, so it is not asked again."""
        from rankcut.certify.interleaved import AUDIT, SCREEN, audit_order_draw

        move = {"screen": SCREEN, "audit": AUDIT}.get(entry.get("move"))  # type: ignore[arg-type]
        if move is None or self.done or (self.state.review.certified and move != SCREEN):
            return None
        if move == SCREEN:
            rank, position = self.screener(self.state), None
            if not 0 <= rank < len(self.items) or self.read[rank]:
                return None
        else:
            rank, position = audit_order_draw(self.order, self.pointer, self.read)
        item = self.items[rank]
        if (entry.get("query_id"), entry.get("doc_id")) != item or entry.get("label") != labels.get(item):
            return None
        return Step(len(self.steps) + 1, MOVES[move], rank + 1, position, item, self._why(move))

    def take(self, step: Step, label: int) -> None:
        """Record that ``step`` was read with ``label``."""
        from rankcut.certify.interleaved import AUDIT, SCREEN

        self.unfinished = True
        rank = step.rank - 1
        move = SCREEN if step.move == "screen" else AUDIT
        if move == AUDIT:
            assert step.position is not None
            self.pointer = step.position
        self.read[rank] = True
        self.state.record(move, rank, int(label))
        self.steps.append(dataclasses.replace(step, label=int(label)))
        self.bounds.append(self.state.review.recall_lower)
        self.found.append(self.state.review.found)
        self.unfinished = False

    def curve(self) -> dict[str, Any]:
        """The recall bound after the first ``j`` steps: each point a valid certificate (the
        confidence sequence holds at every step at once), never falling; and the relevant
        documents found by then."""
        from rankcut.certify.curves import curve_points

        j = curve_points(len(self.steps))
        return {"quantity": "recall", "labels": j.tolist(), "bound": [self.bounds[i - 1] for i in j],
                "found": [self.found[i - 1] for i in j]}

    def _why(self, move: str) -> str:
        """Why the policy chose ``move``, in words (the policy's rule, not a new decision)."""
        from rankcut.certify.interleaved import SCREEN

        st, rev, p, doc = self.state, self.state.review, self.policy, self.words.item
        name = type(p).__name__
        if rev.certified:
            return (f"the target was met at step {rev.met_step}, and the reviewer chose to read on: the "
                    f"{self.words.picker}'s next pick (the certificate stays met; each {doc} read is "
                    "counted)")
        if name == "ScreenThenAudit":
            depth = p.depth  # type: ignore[attr-defined]
            return (f"screen-then-audit: {st.screened} of the first {depth} ranks screened"
                    if move == SCREEN else f"screen-then-audit: the first {depth} ranks are screened; "
                    "only audit draws from now on")
        batch, chunk = p.batch, p.chunk  # type: ignore[attr-defined]
        if st.frontier >= st.rank_labels.size:
            return f"every ranked {doc} is read: only the audit order is left"
        if move == SCREEN and rev.found == 0:
            return f"no relevant {doc} found yet: screening goes on"
        if move == SCREEN and st.screened < batch:   # the first batch: at most the ranked documents
            return (f"screening comes first: {st.screened} of the first {min(batch, st.rank_labels.size)} "
                    f"screening reads done, the screener choosing each {doc} as it goes")
        if name == "MarginalCostPolicy" and p.probe_read(st):  # type: ignore[attr-defined]
            above, then = (("above", "the batch goes on") if move == SCREEN else
                           ("not above", "back to the audit"))
            return (f"the {st.run} screening reads since the audit's hit are {above} {p.ratio:g} times the "  # type: ignore[attr-defined]
                    f"audit's hit rate ({rev.audit_hits} relevant in {rev.audit_labels} draws): {then}")
        if move == SCREEN and st.last == SCREEN and st.run % batch:
            return (f"a run of {batch} screening reads is under way ({st.run % batch} done; the screener "
                    f"chooses each {doc} as it goes)")
        if move != SCREEN and st.last != SCREEN and st.run % chunk:
            return f"a run of {chunk} audit reads is under way ({st.run % chunk} done)"
        if name == "ProjectedCostPolicy":
            return (f"screening another batch first is projected to leave fewer {doc}s to read than "
                    "auditing from now on" if move == SCREEN else
                    f"auditing from now on is projected to read fewer {doc}s than screening another "
                    f"batch (the unread {doc}s' relevant count is estimated from the ranking's tail and "
                    f"{rev.audit_labels} audit draws)")
        if name == "MarginalCostPolicy" and st.last == SCREEN:
            if move == SCREEN and p.rich_batch(rev):  # type: ignore[attr-defined]
                return (f"the last screening batch's precision is above {p.ratio:g} times the audit's "  # type: ignore[attr-defined]
                        f"hit rate ({rev.audit_hits} relevant in {rev.audit_labels} draws): screening on")
            return ("one more screening batch, at the recent screened ranks' precision, is projected to "
                    "save more audit draws than it costs: screening on" if move == SCREEN else
                    "one more screening batch is projected to cost more than the audit draws it saves: "
                    "the audit goes on")
        if not rev.started:
            return (f"the ranking's projected unfound relevant {doc}s are still above the margin"
                    if move == SCREEN else f"the ranking's projected unfound relevant {doc}s fell to the "
                    "margin the target allows: the audit starts")
        if st.last != SCREEN:
            return (f"the last run of audit draws found a relevant {doc}: back to screening"
                    if move == SCREEN else "the last run of audit draws found none: auditing on")
        ratio = p.ratio  # type: ignore[attr-defined]
        return (f"the last screening batch's precision is above {ratio:g} times the unread prevalence "
                "the audit shows: screening on" if move == SCREEN else
                f"the last screening batch's precision fell to {ratio:g} times the unread prevalence the "
                "audit shows: back to the audit")


def review_of(audit: FrozenAudit, rows: Sequence[Mapping[str, Any]], labels: Mapping[Item, int],
              where: str, recorded: Sequence[Mapping[str, Any]] = (), *, cached: bool = False,
              read_on: bool = False, certified_steps: int | None = None) -> Review:
    """The review replayed from the recorded ``labels``: step after step while the item asked for
    has a label. A label of an item the review never asked for is refused (the store was edited,
    or is not this review's).

    ``recorded``: the steps of ``review.jsonl`` (:func:`recorded_steps`), whose moves the policy
    chose on this same history; while each names the document its move reads now and the store
    holds its label, the review takes it without asking the policy again (the policy's decision is
    the replay's cost). The first step that does not match ends their use: the policy decides from
    there, so a stale or shortened ``review.jsonl`` costs time, never a different review.
    ``cached``: the screener may take its recomputed work from the folder's cache (:data:`SCREENERS`;
    not for certify); when the labels are then not the review's steps, the review is replayed
    again without it (a cache that disagrees costs one replay, and that replay mends it) before
    the store is refused. ``read_on``: the reviewer chose to read on after the target was met
    (:meth:`Interleaved.read_on`; the store's meta says so). ``certified_steps``: the steps the last
    certify counted (the store's opening), whose engine the check of its certificate recomputes
    (:func:`~rankcut.certify.interleaved.remember`: kept on the way, not stepped again).

    A store missing (or empty) at ``where`` while ``review.jsonl`` records steps is refused: the
    labels of those steps are gone, and the replay would silently start the review again."""
    if recorded and not labels and not labels_mod.holds_store(where):
        raise ValueError(_lost_text(Path(where), len(recorded), audit.folder))
    review = _replay(audit, rows, labels, recorded, cached, read_on, certified_steps)
    taken = {s.item for s in review.steps}
    stray = [item for item in labels if item not in taken]
    if stray and cached:
        return review_of(audit, rows, labels, where, recorded, read_on=read_on,
                         certified_steps=certified_steps)
    if stray:
        q, d = stray[0]
        more = f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""
        drift = getattr(review.screener, "drift", None)   # the screener's libraries changed: not an edit
        if drift is not None:
            raise ValueError(f"the replay of the review in {audit.folder} does not ask for query {q!r}, "
                             f"document {d!r}, which {where} holds{more}: {drift} — refused (its labels are "
                             "kept as they are)")
        raise ValueError(f"{where} holds a label for query {q!r}, document {d!r} that the review never asked "
                         f"for{more}: its labels are not the steps of this review (it was edited"
                         f"{_first_edit(recorded, labels)}) — refused; restore it, or {start_again()}")
    return review


def _first_edit(recorded: Sequence[Mapping[str, Any]], labels: Mapping[Item, int]) -> str:
    """Where the store first disagrees with ``review.jsonl`` (the steps as they were read), in
    words: the label that sent the replay elsewhere, which the first stray label is not."""
    for i, entry in enumerate(recorded):
        item = (str(entry.get("query_id")), str(entry.get("doc_id")))
        if (held := labels.get(item)) != entry.get("label"):
            return (f": document {item[1]!r}, step {i + 1} in {REVIEW_FILE}, read as {entry.get('label')!r} "
                    f"there, is {'missing' if held is None else f'labelled {held}'} in the store")
    return ""


def check_store_kept(folder: Path) -> None:
    """Refuse a review whose label store is missing (or empty) while ``review.jsonl`` records steps
    (:func:`review_of` refuses it too; this is for a caller that writes labels before it replays)."""
    recorded = recorded_steps(folder)
    if recorded and not labels_mod.holds_store(folder / LABELS_FILE):
        raise ValueError(_lost_text(folder / LABELS_FILE, len(recorded), folder))


def _lost_text(path: Path, steps: int, folder: Path) -> str:
    return (f"{path} is {labels_mod.absence(path)}, but {folder / REVIEW_FILE} records {steps} "
            f"step{'s' * (steps != 1)} read: their labels are gone — refused; restore {LABELS_FILE} (from a "
            f"backup, or the copy the folder was shipped as), or {start_again()}")


#: seconds a replay runs before its bar shows (where bars are shown): a large review's is followed,
#: a small one's shows nothing
REPLAY_BAR_DELAY = 2.0

#: the last review replayed in the current :func:`one_replay` block, with the thread that replayed it
#: (a list of at most one); None outside a block, where every replay starts from the first step
_REPLAYS: ContextVar[list[tuple[int, Review]] | None] = ContextVar("rankcut_interleaved_replays",
                                                                   default=None)


@contextlib.contextmanager
def one_replay() -> Iterator[None]:
    """Within the block, a replay that may use the screener's cache (:func:`replayed`, the label
    step's) goes on from the last review replayed in the block where every step of that one has
    its label in the store now (the same audit, sample and reading on): the replay from the store
    would take those same steps, each chosen by the policy on the same history. So a command that
    labels and then says the status, or says the status and then lists a batch, replays the review
    once (a replay costs seconds at 100,000 records). The engines the replays step are kept too
    (:func:`~rankcut.certify.interleaved.keeping`), for the check of a certificate of the same steps.

    The review gone on from is the same object: within a block, a caller keeps no review from an
    earlier replay. It is gone on from only in the thread that replayed it (threads that copy the
    context share the block), and never after a step of it was cut short by an exception
    (:attr:`Review.unfinished`: the screener's work or the engine moved part of the way). A block
    inside a block is the outer one."""
    from rankcut.certify.interleaved import keeping

    if _REPLAYS.get() is not None:
        yield
        return
    token = _REPLAYS.set([])
    try:
        with keeping():
            yield
    finally:
        _REPLAYS.reset(token)


def _replay(audit: FrozenAudit, rows: Sequence[Mapping[str, Any]], labels: Mapping[Item, int],
            recorded: Sequence[Mapping[str, Any]], cached: bool, read_on: bool,
            certified_steps: int | None) -> Review:
    """The review after the steps ``labels`` answers (:func:`review_of`), gone on from the last one
    replayed in the :func:`one_replay` block where that one is a start of it (only where the
    screener's cache may be used: certify always replays from the first step)."""
    from tqdm.auto import tqdm

    from rankcut._progress import BARS
    from rankcut.certify.interleaved import remember

    slot, thread = _REPLAYS.get(), threading.get_ident()
    going_on = None
    if slot and cached and slot[0][0] == thread and slot[0][1].replays(audit, rows, labels, read_on):
        going_on = slot[0][1]
    review = going_on if going_on is not None else Review(audit, rows, cached=cached, read_on=read_on)
    bar = tqdm(total=len(labels), initial=len(review.steps), desc="replay", unit=review.words.item,
               disable=not BARS.get(), delay=REPLAY_BAR_DELAY, leave=False)

    def take(step: Step) -> None:
        review.take(step, labels[step.item])
        bar.update()
        if len(review.steps) == certified_steps:   # the last certificate's check recomputes these steps
            remember(review.state.review, certified=True)

    with bar:
        if going_on is None:
            for entry in recorded:
                if (step := review.resumed(entry, labels)) is None:
                    break
                take(step)
        while (step := review.next()) is not None and step.item in labels:
            take(step)
    remember(review.state.review)   # a certificate of these steps is recomputed from it
    if slot is not None:
        slot[:] = [(thread, review)]
    return review


def replayed(audit: FrozenAudit, rows: Sequence[Mapping[str, Any]] | None = None) -> Review:
    """The review of an interleaved audit, replayed from its label store (refused when the store
    was edited, :func:`stored_labels`) and ``review.jsonl``'s moves, the screener's cache used
    (status, next; certify replays without it). ``rows``: the audit order's draws, where the caller
    holds them; else read from ``sample.jsonl`` and checked against its hash (``load_sample``)."""
    if rows is None:
        rows = load_sample(audit)[1]
    path = audit.folder / LABELS_FILE
    labels: dict[Item, int] = {}
    reading_on, certified = False, None
    if labels_mod.holds_store(path):
        with labels_mod.LabelStore(path, readonly=True) as store:
            labels, reading_on = stored_labels(store), reads_on(store)
            certified = _opened_prefix(store)
    return review_of(audit, rows, labels, str(path), recorded_steps(audit.folder), cached=True,
                     read_on=reading_on, certified_steps=certified)


def _opened_prefix(store: labels_mod.LabelStore) -> int | None:
    """The steps the last certify counted (its opening in the store), if it recorded them."""
    prefix = store.get_meta("opened_prefix")
    return int(prefix) if prefix is not None and prefix.isdigit() else None


def reads_on(store: labels_mod.LabelStore) -> bool:
    """Whether the reviewer chose to read on after the target was met (:meth:`Interleaved.read_on`)."""
    return store.get_meta(READ_ON_META) is not None


def lookahead(review: Review, assumed: Mapping[Item, int]) -> Iterator[Step]:
    """The steps after the recorded ones, each answered as ``assumed`` says (0, not relevant, for
    an item it lacks), until the review would be done: what a reviewer can read as a batch before
    labelling it. The steps after an answer other than the assumed one can differ (the policy and
    the screener choose each move from the labels before it). Takes the steps on ``review`` (a
    replay not to use after; in a :func:`one_replay` block the next replay goes on from it only
    where the store holds those same labels, as the steps of a replay from the store would be);
    each step's ``label`` is the assumed one."""
    while (step := review.next()) is not None:
        y = int(assumed.get(step.item, 0))
        review.take(step, y)
        yield dataclasses.replace(step, label=y)


def _steps_hash(review: Review, prefix: int) -> str:
    """The labels hash an opening at ``prefix`` steps records (the labels of the first ``prefix``)."""
    return labels_hash({s.item: int(s.label or 0) for s in review.steps[:prefix]})


def check_opened(store: labels_mod.LabelStore, record: Mapping[str, Any] | None, review: Review) -> None:
    """:func:`~rankcut.audit.designs.base.check_openings` for the review's first steps."""
    check_openings(store, record, len(review.steps), lambda prefix: _steps_hash(review, prefix),
                   "the first {prefix} steps of the review")


def stored_labels(store: labels_mod.LabelStore) -> dict[Item, int]:
    """The labels of the review's store, refused when they are not what its history wrote (a row of
    the store edited or deleted by hand): the review is replayed from them, so an edited label would
    silently make another review."""
    labels = {(q, d): y for q, d, y in store.items()}
    logged = store.logged()
    if labels != logged:
        q, d = min(k for k in labels.keys() | logged.keys() if labels.get(k) != logged.get(k))
        have, wrote = (("no label" if y is None else f"label {y}")
                       for y in (labels.get((q, d)), logged.get((q, d))))
        raise ValueError(f"{store.path}: query {q!r}, document {d!r} holds {have}, but the store's history "
                         f"wrote {wrote}: it was edited outside rankcut — refused; restore it, or "
                         f"{start_again()}")
    return labels


def recorded_steps(folder: Path) -> list[dict[str, Any]]:
    """The steps ``review.jsonl`` holds (none when it is missing or unreadable: the review is then
    replayed through the policy from the start)."""
    path = folder / REVIEW_FILE
    try:
        steps = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):
        return []
    return steps if all(isinstance(s, dict) for s in steps) else []


def moves_hash(steps: Sequence[Mapping[str, Any]]) -> str:
    """The hash of steps' moves, documents and labels (``review.jsonl``'s lines, or ``Step.to_dict``)."""
    rows = [[s.get("move"), s.get("query_id"), s.get("doc_id"), s.get("label")] for s in steps]
    return hashlib.sha256(canonical_json(rows)).hexdigest()


def verified_steps(store: labels_mod.LabelStore, recorded: Sequence[Mapping[str, Any]]
                   ) -> Sequence[Mapping[str, Any]]:
    """The first ``review.jsonl`` steps that the last certify had the policy choose: as many as its
    opening counts (``opened_prefix``), when they hash to the moves it recorded
    (``opened_moves_hash``); none otherwise. Each certify checks every step after them with the
    policy, so by induction every step it takes as read was chosen by the policy."""
    prefix, held = store.get_meta("opened_prefix"), store.get_meta("opened_moves_hash")
    if prefix is None or held is None:
        return []
    head = recorded[:int(prefix)]
    return head if len(head) == int(prefix) and moves_hash(head) == held else []


def write_review(folder: Path, review: Review) -> None:
    """``review.jsonl``: every step so far (move, document, label, why), rewritten whole (each step's
    line made once per review: the page writes it after every answer)."""
    review.lines.extend(json.dumps(s.to_dict(), ensure_ascii=False) + "\n"
                        for s in review.steps[len(review.lines):])
    write_text_atomic(folder / REVIEW_FILE, "".join(review.lines))


def verdict_text(rho: float, met: bool, read: int, n: int, screened: int, audited: int, found: int,
                 upper: int, words: Words, met_step: int | None = None) -> str:
    """The verdict in words: met or not after ``read`` of ``n`` items, at most ``upper − found``
    relevant unfound (``upper``: the certificate's bound on ``R``); ``met_step``, the step at which
    the target was first met, when the review read on after it (:meth:`Interleaved.read_on`)."""
    past = met and met_step is not None and met_step < read   # read on after "met"
    when = (f"met at step {met_step}, read on to {read} of {n} {words.items}" if past else
            f"{'met' if met else 'NOT met yet'} after {read} of {n} {words.items} read")
    return (f"target recall ≥ {rho:g}: {when} ({screened} screened, {audited} audited; {found} relevant "
            f"found, at most {upper - found} unfound)")


def read_on_text(since: int, now: bool, words: Words) -> str:
    """What :meth:`Interleaved.read_on` did, in words: the step count it began at, and whether it
    began now."""
    return (f"reading on after {since} {words.items} read: the review asks for the {words.picker}'s next "
            f"picks, one at a time, until every {words.item} is read or you stop; certify counts them, and "
            "says at which step the target was first met" if now else
            f"this review reads on already, since {since} {words.items} were read: nothing was changed")


def next_text(step: Step | None, review: Review) -> str:
    if step is None:
        rev, doc = review.state.review, review.words.item
        return (f"the target is certified: the review asks for no further {doc}"
                if rev.certified and not review.read_on else
                f"every {doc} is read: the review asks for no further {doc}")
    q, d = step.item
    where = review.words.where(step.move, step.rank, step.position)
    return f"next: {step.move} query {q}, document {d} ({where}) — {step.why}"


class Interleaved(FixedSampleDesign):
    """Recall of an interleaved review: screen or audit at every step, chosen by a frozen policy,
    under one anytime-valid bound on ``R`` (issue 16)."""

    name = "interleaved"
    targets: tuple[str, ...] = ("recall",)
    needs_target = True
    summary = ("recall of an interleaved review — at every step a frozen policy screens the ranking's top "
               "unread document or audits the next unread one of a frozen random order, until the target "
               "is certified (anytime-valid for any policy)")
    anytime = True
    adaptive = True
    event = "interleaved review"
    noun = "review"
    total = "collection"   # it lists the whole collection; it draws nothing and leaves no label unread

    # -- freeze

    def theorem(self, reference: str | None, finite: bool) -> str:
        from rankcut.certify.result import theorem_of

        return theorem_of("interleaved_recall")

    def words(self, manifest: Manifest | Mapping[str, Any]) -> Words:
        """How the review names what it reads: its screener's words (:func:`words_of`)."""
        return words_of(manifest)

    def no_target(self) -> None:
        raise ValueError(f"the interleaved design needs its recall target fixed before the review (it "
                         f"decides when the review may stop): give {_o('target_recall')}")

    def family_spec(self, cut: Any, family: Any, offsets: Any, depths: Any) -> dict[str, Any] | None:
        for given, value in (("cut", cut), ("family", family), ("offsets", offsets), ("depths", depths)):
            if value is not None:
                raise ValueError(f"{_o(given)} is not for the interleaved design: it has no cut — the review "
                                 f"decides as it goes what it reads (give {_o('run')} and, for the "
                                 f"unretrieved documents, {_o('corpus_size')} or {_o('corpus_ids')})")
        return None

    def freeze_review(self, sampling: str, allow_incomplete: bool, reuse_labels: Any,
                      prior_scale: float | None, prior_basis: str | None) -> None:
        from rankcut.certify.interleaved import PRIOR_BASES

        if prior_basis is not None and prior_basis not in PRIOR_BASES:
            raise ValueError(f"{_o('prior_basis')} is one of {', '.join(PRIOR_BASES)}, got {prior_basis!r}")
        if sampling == "with-replacement":
            raise ValueError(f"the interleaved design reads each document once: {_o('sampling')} "
                             "with-replacement is not for it")
        if allow_incomplete:
            raise ValueError(f"{_o('allow_incomplete')} is not for the interleaved design: it certifies the "
                             "steps read, however many")
        if reuse_labels is not None:
            raise ValueError(f"{_o('reuse_labels')} is not offered for the interleaved design: its steps are "
                             "chosen from its own labels, so label it afresh")
        if prior_scale is not None:
            from rankcut.certify._validate import check_positive

            check_positive(prior_scale, _o("prior_scale"))

    def freeze_policy(self, policy: str | None, screener: Mapping[str, Any] | None) -> dict[str, Any]:
        return {"policy": policy_spec(policy),
                "screener": screener_spec("frontier", {}) if screener is None else
                screener_spec(str(screener["name"]), screener["config"])}

    def freeze_pools(self, base: Pools, names: Sequence[str], bands: Sequence[int] | None
                     ) -> list[int] | None:
        if len(base.qids) != 1:
            raise ValueError(f"the interleaved design reviews one topic's ranking, but {_o('run')} holds "
                             f"{len(base.qids)} queries ({id_list(base.qids, 3)}): give a run of one "
                             "query (one audit per topic)")
        if base.n0 > MAX_COLLECTION:
            raise ValueError(f"the collection holds {base.n0} documents: the interleaved design lists it "
                             f"whole, at most {MAX_COLLECTION}")
        return None

    def frozen_extras(self, prior_scale: float | None, prior_basis: str | None) -> dict[str, Any]:
        """The rule's prior: its basis and its scale, the basis' own unless given (any keeps validity)."""
        from rankcut.certify.interleaved import InterleavedRule

        rule = InterleavedRule(prior_scale=prior_scale, prior_basis=prior_basis or "misses")
        return {"prior_basis": rule.prior_basis, "prior_scale": rule.scale}

    # -- plan and sample

    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan:
        n, rho = audit.base.n0, float(audit.target["recall"])
        spec = audit.manifest["policy"]
        config = ", ".join(f"{k}={v}" for k, v in spec["config"].items())
        lines = [f"nothing to size: the collection's {n} documents are listed in ranking order and in one "
                 f"frozen random audit order; at every step the frozen policy {spec['name']} ({config}) "
                 "chooses to screen the top unread document of the ranking or to audit the next unread one "
                 f"of the audit order, until recall ≥ {rho:g} is certified (anytime-valid for any policy)",
                 f"{_o('label')} asks for the document each step chooses, one at a time; {_o('status')} says "
                 "which comes next and why"]
        return Plan({"excluded": n, "included": 0}, lines)

    def sizes(self, audit: Audit, excluded: Any, included: Any) -> dict[str, Any]:
        full = {"excluded": audit.base.n0, "included": 0}
        for name, given in (("excluded", excluded), ("included", included)):
            if given is not None and given != full[name]:
                raise ValueError(f"the interleaved design lists its whole collection ({audit.base.n0} "
                                 f"documents): {_o(name)} {given!r} is not for it")
        return full

    def draw(self, audit: Audit, sizes: Mapping[str, Any]) -> list[Row]:
        """The collection in ranking order, each document with its 1-based place in the audit order."""
        base = audit.base
        rows = draw_rows(base.excluded_items(np.arange(base.n0)), "excluded")
        perm = rng(int(audit.manifest["seed"]), STREAM_ORDER).permutation(base.n0)
        for j, rank in enumerate(perm):
            rows[int(rank)]["audit"] = j + 1
        return numbered(rows)

    def label_order(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> list[Item]:
        """The one item the review asks for next (none once it is certified)."""
        step = self._next(audit, rows)
        return [] if step is None else [step.item]

    def positions(self, audit: Audit, n: int) -> list[tuple[Any, ...]]:
        """The next item's move, place and why (``to_label`` holds that one item)."""
        step = self._next(audit, read_rows(audit.folder / SAMPLE_ITEMS))   # sample writes to_label first
        if step is None or n == 0:
            return []
        # in the screener's words: a review of records says where a record is in its file
        return [(step.move, words_of(audit.manifest).where(step.move, step.rank, step.position), step.why)]

    def _next(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> Step | None:
        return replayed(audit, rows).next()

    # -- label

    def guard_labelling(self, audit: Audit, record: Mapping[str, Any] | None) -> None:
        """New steps are taken after an opening (anytime-valid), but not into a new store."""
        path = audit.folder / LABELS_FILE
        if record is not None and not labels_mod.holds_store(path):
            raise AuditStepError(f"{path} is {labels_mod.absence(path)}, but the labels of this audit "
                                 f"were opened for certification at {record.get('opened_at')} "
                                 f"({OPENED_FILE}): a new label store would not hold the steps that were "
                                 f"seen (Assumption 1) — refused; restore it, or {start_again()}")

    def guard_store(self, store: labels_mod.LabelStore, record: Mapping[str, Any] | None,
                    overwrite: bool) -> None:
        if overwrite:
            raise AuditStepError(f"changing labels ({_o('overwrite')}) is refused for the interleaved "
                                 "design: every move after a step was chosen from its label, so a recorded "
                                 f"step is never changed — {start_again()} to review again")

    def refusal_hint(self, store: labels_mod.LabelStore) -> str:
        return "a recorded step is never changed (the moves after it were chosen from it)"

    def read_on(self, audit: Audit, rows: Sequence[Mapping[str, Any]]) -> tuple[int, bool, Item | None]:
        """Record in the label store that the reviewer reads on after the target was met (the
        review :func:`replayed` from the store reads on too from then on): from now on the review
        asks for the screener's next picks (screening moves), one at a time, as before the target
        was met, until everything is read or the reviewer stops. Returns the step count at which the
        review began to read on, whether it began now (``False``: it read on already, and nothing is
        changed), and the item it asks for next (None once everything is read).

        The guarantee is not touched: reading on is a policy's choice made from the labels recorded
        before it (the theorem of :mod:`rankcut.certify.interleaved` holds for any predictable
        policy), and a met target stays met (the running bound); each relevant record read on is
        counted, so the recall bound can only rise. The certificate says at which step the target
        was first met.

        :raises ValueError: when the target is not met yet (the review still asks for documents), or
            every document is read. (:func:`rankcut.audit.workflow.read_on` checks the folder first.)
        """
        review = replayed(audit, rows)
        path, words = audit.folder / LABELS_FILE, words_of(audit.manifest)
        if review.read_on:
            with labels_mod.LabelStore(path, readonly=True) as store:
                since = int(store.get_meta(READ_ON_META) or 0)
            step = review.next()
            return since, False, None if step is None else step.item
        if review.state.review.unread == 0:
            raise ValueError(f"every {words.item} is read: there is nothing to read on")
        if not review.state.review.certified:
            raise ValueError(f"the target is not met yet ({len(review.steps)} {words.items} read): the "
                             f"review still asks for {words.items}, and reading on is for after it is met")
        with labels_mod.LabelStore(path) as store:
            store.set_meta_many({READ_ON_META: str(len(review.steps))})
        review.read_on = True
        step = review.next()
        return len(review.steps), True, None if step is None else step.item

    def label_steps(self, audit: Audit, store: labels_mod.LabelStore, rows: Sequence[Mapping[str, Any]],
                    answer: Callable[[Step, Review], int | None], source: str, limit: int | None,
                    sources: Mapping[Item, str] | None = None) -> tuple[int, Review]:
        """Ask ``answer`` for each step the review chooses (with the review so far), recording each
        label at once (so a killed session loses nothing and resumes at the same item), until it has
        no answer, ``limit`` steps were taken, or the review is certified (or, reading on, everything
        is read). Each label is recorded with ``source``, or its item's in ``sources``. Writes
        ``review.jsonl``. Returns the labels written (a step that another label call running at the
        same time recorded first, with the same label, is taken but not counted) and the review."""
        from tqdm.auto import tqdm

        from rankcut._progress import BARS

        review = review_of(audit, rows, stored_labels(store), str(store.path), recorded_steps(audit.folder),
                           cached=True, read_on=reads_on(store), certified_steps=_opened_prefix(store))
        taken = recorded = 0   # steps taken; labels written (another label call may have written some)
        step = None
        # the unread documents are the most the review can still ask for (it stops once certified)
        bar = tqdm(total=len(rows) - len(review.steps), desc="label", unit=words_of(audit.manifest).item,
                   disable=not BARS.get())
        try:
            while (limit is None or taken < limit) and (step := review.next()) is not None:
                y = answer(step, review)
                if y is None:
                    break
                recorded += store.record([step.item], [y], (sources or {}).get(step.item, source),
                                         refusal_hint=self.refusal_hint(store))
                review.take(step, y)
                taken += 1
                bar.update()
            if step is None and taken:   # it asks for nothing more: certified (or all read)
                bar.total = bar.n
                bar.set_postfix_str("certified" if len(review.steps) < len(rows) else "all read")
        finally:
            bar.close()
            write_review(audit.folder, review)
        return recorded, review

    def progress(self, rows: Sequence[Mapping[str, Any]], store: labels_mod.LabelStore) -> str | None:
        return None

    # -- certify

    def open(self, audit: Audit, info: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
             record: Mapping[str, Any] | None) -> Opened:
        """Certify the steps read so far. The review is replayed from the label store; each certify
        records how many steps it opened and the hash of their labels (store meta, then
        ``opened.json``), and a later certify refuses when any of them changed or their number
        shrank. New steps after an opening are taken: the bound holds at every step at once.
        ``review.jsonl`` is taken as read only for the steps the last certify had the policy choose
        (:func:`verified_steps`); the policy chooses every later one, so the certificate names no move
        the frozen policy did not choose."""
        from rankcut.audit.designs import certificates

        with open_store(audit, info, create=False) as store:
            labels = stored_labels(store)
            review = review_of(audit, rows, labels, str(store.path),
                               verified_steps(store, recorded_steps(audit.folder)), read_on=reads_on(store))
            t = len(review.steps)
            check_opened(store, record, review)
            rev = review.state.review
            stats = {"collection": len(rows),
                     "moves": "".join(rev.moves), "labels": "".join(map(str, rev.labels)),
                     "steps": t, "screened": review.state.screened, "audited": rev.audit_labels,
                     "relevant": rev.found}
            report, findings = certificates(audit, stats)   # in memory first: a failure records nothing
            now_digest = _steps_hash(review, t)
            opened_at = str(store.get_meta("opened_at") or now())
            opening = {"opened_at": opened_at, "opened_sample_hash": str(info["sample_hash"]),
                       "opened_labels_hash": now_digest, "opened_prefix": str(t),
                       "opened_moves_hash": moves_hash([s.to_dict() for s in review.steps])}
            if any(store.get_meta(k) != v for k, v in opening.items()):
                store.set_meta_many(opening)
        if (audit.folder / LABELS_FILE).exists() and labels_mod.writable(audit.folder / REVIEW_FILE):
            write_review(audit.folder, review)
        new = {"audit_id": audit.manifest.audit_id, "opened_at": opened_at,
               "sample_hash": info["sample_hash"], "labels_hash": now_digest, "prefix": t}
        spent = {"collection": len(rows), "read": t, "relevant": rev.found}
        return Opened(stats, now_digest, opened_at, spent, new, report, findings, review.curve())

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        from rankcut.certify.interleaved import interleaved_recall_certificate
        from rankcut.certify.report import JointReport

        n, d, rho = int(stats["collection"]), audit.delta, float(audit.target["recall"])
        words = words_of(audit.manifest)
        cert = interleaved_recall_certificate(n, str(stats["moves"]), str(stats["labels"]), rho, d,
                                              float(audit.manifest["prior_scale"]), items=words.items,
                                              prior_basis=str(audit.manifest["prior_basis"]))
        topic = audit.manifest["pools"]["per_query"]["qids"][0]
        where = (f"in {Path(audit.manifest['inputs']['run']['path']).name}" if words.in_run else
                 f"{n} {words.items}")
        # the theorem is the certificate's headline and a row of what was frozen: not the title's
        title = f"Review {audit.manifest.short_id} of {topic}{' ' if words.in_run else ', '}{where} " \
                "(interleaved design)"
        fact = {"collection N": n}
        report = JointReport(delta=d, budget=audit.budget, title=title, facts=fact).attach(
            "recall", cert, charge={"audit": self.event})
        met = bool(cert.details["certified"])
        t, found = int(stats["steps"]), int(stats["relevant"])
        text = verdict_text(rho, met, t, n, int(stats["screened"]), int(stats["audited"]), found,
                            int(cert.details["relevant_upper"]), words, cert.details["met_step"])
        doc, docs = words.item, words.items
        corpus = " and the corpus' other documents" if audit.manifest.get("corpus") else ""
        among = (f"the collection's {n} (every {doc} the review could read: {words.everything}{corpus})"
                 if words.everything else f"the review's {n} {docs}")
        notes = [f"In plain words: {words.chooser}, whichever {docs} are truly relevant, and however "
                 f"each move was chosen, the chance that this review ever says 'met' while its recall is "
                 f"below {rho:g} is at most {d:g} — however often certify is run and wherever the review "
                 f"stops (anytime-valid; the bound is the tightest of the review so far, so a 'met' stays "
                 f"met). Recall counts the relevant {docs} read, by either move, out of all relevant "
                 f"{docs} among {among}. "
                 "It assumes the labels are right and that audit moves read the listed audit order."]
        if not met and t < n:
            notes.append(f"next: label on ({_o('label')}); {_o('status')} names the next {doc} and why")
        row = {"name": "review", "collection": n, "read": t, "screened": int(stats["screened"]),
               "audited": int(stats["audited"]), "relevant": found,
               "relevant_upper": int(cert.details["relevant_upper"]), "recall": float(cert.value)}
        return report, Findings(Verdict(met, text), [row], notes)

    # -- report and status

    def draw_counts(self, counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        return {}, {}   # nothing is drawn: the collection's size is the counts' total

    def spent_text(self, counts: Mapping[str, Any], manifest: Mapping[str, Any]) -> str | None:
        words = words_of(manifest)
        first = f"; {words.first} first" if words.first else ""
        return (f"Read: {counts['steps']} of the collection's {counts['collection']} {words.items} — "
                f"{counts['screened']} screened (the {words.picker}'s picks{first}), {counts['audited']} in "
                f"the frozen audit order; {counts['relevant']} relevant.")

    def frozen_facts(self, manifest: Mapping[str, Any]) -> list[tuple[str, str]] | None:
        """The collection, the policy and the screener, the seed, δ, the target and the prior's
        scale (no pools, burden or sample sizes: the review reads the collection as it goes)."""
        policy, screener = manifest["policy"], manifest["screener"]
        say = SCREENER_FACTS.get(screener["name"])
        words, path, n = words_of(manifest), manifest["inputs"]["run"]["path"], manifest["pools"]["items"]
        collection = (f"{path}: {n} {words.items}" if words.in_run else   # a review: its records file's order
                      f"{n} {words.items}, in the order of the records file (the folder's frozen copy: "
                      f"{path})")
        if manifest.get("corpus"):
            corpus = manifest["corpus"]
            collection += f" (corpus: {corpus['documents']} documents, {corpus['kind']})"
        constants = ", ".join(f"{k}={v}" for k, v in policy["config"].items())
        return [("review id", manifest["audit_id"]),
                ("design", f"{manifest['design']} — {manifest['theorem']}"),
                ("collection", collection),
                ("policy", f"{policy['name']} ({constants})"),
                *(say(screener["config"]) if say else
                  [("screener", f"{screener['name']} (its configuration is in manifest.json)")]),
                ("seed", f"{manifest['seed']} (the audit order)"), ("δ", f"{manifest['delta']:g}"),
                ("target", f"recall ≥ {manifest['target']['recall']:g}"),
                ("prior", f"{manifest['prior_scale']:g} × {BASIS_WORDS[manifest['prior_basis']]} (fixed "
                          "at the first audit step; it tunes how soon the bound tightens, any prior keeps "
                          "the guarantee)")]

    def validity(self, manifest: Mapping[str, Any], content: Mapping[str, Any]) -> list[str] | None:
        """A review reads its labels as it goes (every move may depend on them), so its assumption is
        not the fixed-sample audits' "design before the labels are opened" but that the moves are
        predictable: each chosen from the labels recorded before it (the theorem's condition)."""
        return [
            f"Design before the labels: the review (what it reads, the audit order its seed "
            f"{manifest['seed']} draws, how it screens, the policy and the target) was frozen at "
            f"{manifest['frozen_at']}, before its first label. Each move was chosen from the labels "
            "recorded before it, and the certificate recomputes every move from the folder (refused if "
            "anything frozen changed); the guarantee holds however the moves were chosen, so a ranker or "
            f"policy that learns from the labels does not weaken it. Certify was first run at "
            f"{content['opened_at']} (whether or not the target was met then).",
            "Noiseless labels: the bound holds if every recorded label is the true relevance (a wrong "
            "label means a new review, started again with the label corrected and the same seed).",
        ]

    def status(self, folder: Path, out: dict[str, Any], steps: dict[str, bool],
               record: Mapping[str, Any] | None) -> None:
        """The steps read (screened, audited), the relevant found and the most left unfound, the
        next one and why, and the audit reads that would meet the target if
        none of them is relevant (a projection); whether the review reads on past "met", or may;
        labelled once certified (unless reading on) or everything read;
        certify is done when the certificate covers every step read and says met (or all is read)."""
        audit = FrozenAudit(load_manifest(folder))
        review = replayed(audit)
        path = folder / LABELS_FILE
        if labels_mod.holds_store(path):
            with labels_mod.LabelStore(path, readonly=True) as store:
                try:   # edited with its history (else the replay refused): certify refuses it
                    check_opened(store, record, review)
                except ValueError as err:
                    out["labels_changed"] = str(err)
        step = review.next()
        out["review_steps"] = len(review.steps)
        out["found"] = review.state.review.found
        out["recall_bound"] = review.bounds[-1] if review.bounds else 0.0
        out["guarantee"] = (f"the chance that this review ever says 'met' while its recall is below "
                            f"{audit.target['recall']:g} is at most {audit.delta:g}, however each move was "
                            "chosen and wherever it stops")
        rev, words = review.state.review, review.words
        out["screened"], out["audited"] = review.state.screened, rev.audit_labels
        # the most relevant items left unread (the running bound on R, less those found), as certify says it
        out["unfound_at_most"] = int(rev.running_upper) - rev.found if review.steps else None
        out["audits_to_certify"] = tail = rev.audits_to_certify()
        out["tail"] = (None if tail == 0 else
                       f"if the next {tail:,} audit {words.item if tail == 1 else words.items} "
                       f"{'is' if tail == 1 else 'are all'} not relevant, the target is met then "
                       f"({tail:,} of the {rev.unread:,} unread; a projection, which each {words.item} "
                       "read moves)")
        out["next_item"] = None if step is None else step.to_dict()
        out["next_move"] = next_text(step, review)
        out["met_now"] = bool(rev.certified)   # by the running bound now ("met": the last certificate's)
        out["met_step"], out["reads_on"] = rev.met_step, review.read_on   # reading on past "met"
        out["can_read_on"] = review.can_read_on
        steps["label"] = step is None
        if steps["certify"]:
            content = read_json(folder / CERTIFICATE_FILE, "written by certify")
            verdict = content.get("verdict") or {}
            seen = int((content.get("counts") or {}).get("steps", 0))
            out["verdict"], out["met"] = verdict.get("text"), verdict.get("met")
            if len(review.steps) > seen:
                since = len(review.steps) - seen
                were = "steps were" if since != 1 else "step was"
                out["since_certify"] = f"{since} step{'s' * (since != 1)}"
                out["verdict"] = (f"out of date: the last certify, at step {seen}, said "
                                  f"\"{verdict.get('text')}\"; {since} {were} read since, which only "
                                  "certify counts: run certify again")
                steps["certify"] = False
            else:
                steps["certify"] = bool(verdict.get("met")) or seen == len(review.items)
