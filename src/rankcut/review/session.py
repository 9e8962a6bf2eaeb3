"""A screening review session: an audit folder of the ``interleaved`` design, the CAL ranker its
screener (issue 17). No second engine: every step is :mod:`rankcut.audit.workflow`'s, and this
module only translates records and record ids into the audit's collection and items.

:func:`start` freezes the review into its folder:

* ``records.run`` — the collection, one query (the review) holding the records in file (or run)
  order, given to ``freeze`` as the run;
* ``records.jsonl`` — each record's title and abstract, given to ``freeze`` as the texts: hashed in
  the manifest, shown when labelling (the title apart as well, the page's heading) and read by the
  ranker, so the certificate and a resumed session never depend on a file outside the folder;
* the manifest's screener ``{"name": "cal", "config": {"cal": CALConfig, "prior": {id: 0/1},
  "ranked": bool, "sources": [{path, sha256, bytes}], "corrects": None | {review, relabelled}}}``:
  the ranker's configuration and seed (the review's seed), the prior knowledge — records labelled
  before the session, which the ranker screens first and which are recorded as the review's first
  steps from the frozen prior (design data, never asked again) — the files the records were read
  from (provenance for the report; ``status`` says when one changed since, as the review goes on
  with its own copy), and the review it corrects (:func:`correct`).

Then :func:`label`, :func:`status`, ``workflow.certify`` and ``audit.report.write_report`` run on
the folder as on any interleaved audit. The review is replayed from the label store at every call
(the ranker's fits are deterministic and seeded), so a killed session resumes at the same record;
``next``, ``status`` and ``label`` take the ranker's features and fits from the folder's
``ranker-cache/`` (:mod:`rankcut.review.ranker_cache`), certify recomputes them.

Importing this module registers ``cal`` in the design's
:data:`~rankcut.audit.designs.interleaved.SCREENERS` (and the report's words for it in
``SCREENER_FACTS`` and ``SCREENER_WORDS``: "record", not "document"): the audit layer imports no
ranker.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import functools
import io
import json
import os
import secrets
import shlex
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut._words import count, id_list
from rankcut.audit import workflow
from rankcut.audit.designs.base import Words
from rankcut.audit.designs.interleaved import (
    SCREENER_FACTS,
    SCREENER_WORDS,
    SCREENERS,
    check_store_kept,
    lookahead,
    one_replay,
    replayed,
    words_of,
)
from rankcut.audit.folder import LABELS_FILE, SAMPLE_FILE, SAMPLE_ITEMS, FrozenAudit
from rankcut.audit.labels import LabelStore, holds_store, reviewer_name, reviewer_source, write_label_file
from rankcut.audit.manifest import (
    MANIFEST_FILE,
    Manifest,
    check_inputs,
    load_manifest,
    locate_input,
    now,
    read_json,
    sha256_file,
    write_json_atomic,
    write_text_atomic,
)
from rankcut.audit.options import check_count, spelled
from rankcut.audit.oracle import SIMULATION
from rankcut.audit.pools import Item
from rankcut.data.io import open_text
from rankcut.data.screening import LABEL_COLUMNS, delimiter_for, reads_like_labels, separator_hint
from rankcut.review.cal import CALConfig, CALScreener, library_versions, pins
from rankcut.review.records import _FORMS, _VALUES, RIS_SUFFIXES, Records, check_record_id, qrels_labels

if TYPE_CHECKING:
    from rankcut.certify.policies import ReviewState

__all__ = ["BATCH_COLUMNS", "CAL", "POLICY", "PRIOR_BASIS", "PRIOR_SOURCE", "RUN_FILE", "TABLES",
           "TEXTS_FILE", "batch_records", "correct",
           "is_review", "keep", "kept_answers", "kept_relevant", "kept_with_sources", "known_from_qrels",
           "known_from_records",
           "known_outcome", "label",
           "load_review", "next_record", "next_records", "prior_knowledge", "read_labels", "record_kept",
           "query_text", "record_known", "records_key",
           "simulate", "start",
           "status", "unkeep", "write_batch"]

CAL = "cal"
RUN_FILE = "records.run"       # the collection: the records in order, one query
TEXTS_FILE = "records.jsonl"   # their titles and abstracts, frozen
PENDING_FILE = "pending-labels.csv"   # answers given before the review asked for their records
BATCHES_FILE = "batches.json"   # the batch files next --out wrote and their records (open_batches)
PENDING_COLUMNS = ("query_id", "doc_id", "label", "source")   # source: who gave it, recorded with it
PENDING_LOCK = ".pending-labels.lock"   # held for each read and rewrite of PENDING_FILE (_kept_lock)
TABLES = (".csv", ".tsv", ".tab")     # the names of the tables a review writes (TSV: .tsv, .tab)
_ID_COLUMNS = ("record_id", "doc_id", "id")
_QUERY_COLUMNS = ("query_id", "qid")   # a label file's query column, as pending-labels.csv writes it


# ---------------------------------------------------------------------------------------------
# the screener


@lru_cache(maxsize=4)
def _texts_of(texts_path: str, texts_sha: str, items: tuple[Item, ...]) -> list[str]:
    """The frozen texts of the review's records, in the records' order."""
    from rankcut.data.texts import read_texts_jsonl

    texts = read_texts_jsonl(texts_path, by="pair")
    missing = [item for item in items if item not in texts]
    if missing:
        raise ValueError(f"{texts_path}: no text for record {missing[0][1]!r} of the review")
    return [texts[item] for item in items]


@lru_cache(maxsize=4)
def _features(texts_path: str, texts_sha: str, items: tuple[Item, ...], cal: str) -> tuple[Any, Any]:
    """The features of the frozen texts, computed (once per process)."""
    from rankcut.review.cal import query_features

    return query_features(_texts_of(texts_path, texts_sha, items), CALConfig.from_json(json.loads(cal)))


@lru_cache(maxsize=8)
def _cal(texts_path: str, texts_sha: str, items: tuple[Item, ...], config: str, folder: str, cached: bool,
         read_from: str) -> CALScreener:
    """One screener per review folder, frozen texts file and config in a process: the template each
    review's screener is copied from (:func:`cal_screener`). ``cached``: it takes its features and
    fits from the folder's ranker cache (:mod:`rankcut.review.ranker_cache`); otherwise (certify)
    both are recomputed, and the fits it computes are added to the cache. ``read_from``: the file
    the records were read from, for the refusal of texts without a word (``""``: none)."""
    from rankcut.review import ranker_cache

    spec = json.loads(config)
    cal = CALConfig.from_json(spec["cal"])
    cal_json = json.dumps(spec["cal"], sort_keys=True)
    index = {d: i for i, (_, d) in enumerate(items)}
    prior = np.full(len(items), -1, dtype=np.int8)
    for rid, y in spec["prior"].items():
        prior[index[rid]] = y
    texts = _texts_of(texts_path, texts_sha, items)
    review = Path(folder)
    try:
        computed = functools.partial(_features, texts_path, texts_sha, items, cal_json)
        features = ranker_cache.features(review, texts_sha, items, cal, computed) if cached else computed()
        return CALScreener(texts, cal, prior=prior, ranked=bool(spec["ranked"]), features=features,
                           fits=ranker_cache.FitsFile(review, trusted=cached))
    except ValueError as err:   # scikit-learn's words: name what the ranker could not read, and where from
        read = f"{read_from}: " if read_from else ""
        raise ValueError(f"{read}the ranker finds no word in the titles and abstracts of the {len(items)} "
                         f"records to learn from ({err}; words of one letter are not read)") from None


class _OncePerStep:
    """The ranker asked once per step: the replay may ask for the same step twice (to show it, then
    to take it), and a CAL screener moves on through its batch at every call."""

    def __init__(self, screener: CALScreener) -> None:
        self.screener = screener
        self._at: tuple[ReviewState, int] | None = None
        self._doc = -1
        self.drift: str | None = None   # why a replay may take other steps than recorded (cal_screener)

    def __call__(self, state: ReviewState) -> int:
        if self._at is None or self._at[0] is not state or self._at[1] != state.review.read:
            self._at, self._doc = (state, state.review.read), self.screener.next_screen(state)
        return self._doc


def cal_screener(audit: FrozenAudit, items: Sequence[Item], *, cached: bool, cal: Mapping[str, Any],
                 prior: Mapping[str, int], ranked: bool, sources: Sequence[Mapping[str, Any]],
                 corrects: Mapping[str, Any] | None,
                 libraries: str | None = None) -> Callable[[ReviewState], int]:
    """The CAL ranker of a review folder, on its frozen texts (their hash checked; ``sources``,
    the files the records were read from, and ``corrects``, the review it corrects
    (:func:`correct`), are provenance only: the ranker never reads them). ``cached``: its features
    and fits may come from the folder's ranker cache (not for certify). ``libraries``: the versions
    its fits were made with (:func:`~rankcut.review.cal.library_versions` at start); under others
    the screener's ``drift`` says so, for a replay that then takes other steps."""
    if libraries is None:   # frozen by every start since 2026-12-07; no release wrote a folder without
        raise ValueError(f"review {audit.folder} was started by an earlier rankcut, which did not freeze the "
                         "versions of its ranker's libraries: finish it with that rankcut, or start a new "
                         "review (rankcut review start)")
    path = locate_input(audit.folder, audit.manifest["inputs"]["texts"])
    config = json.dumps({"cal": dict(cal), "prior": dict(prior), "ranked": ranked}, sort_keys=True)
    # a copy per review: the fitted features are shared, but what the ranker learned along one
    # review (its batch queue, its draws) must not be restarted by another review in the process
    screener = _OncePerStep(copy.copy(_cal(str(path), sha256_file(path), tuple(items), config,
                                           str(audit.folder.resolve()), cached,
                                           str(sources[0]["path"]) if sources else "")))
    installed = library_versions()
    if installed != libraries:
        screener.drift = (f"the ranker's libraries changed since the review started ({libraries}; now "
                          f"{installed}): its fits, and so the records it asks for, can differ. Replay it "
                          f"with the versions it started with (pip install {pins(libraries)})")
    return screener


def cal_facts(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The report's words for the frozen ranker and prior knowledge (``SCREENER_FACTS``)."""
    cal = CALConfig.from_json(config["cal"])
    model = {"logistic": "logistic regression", "svm": "linear SVM"}[cal.model]
    words = "words" if cal.ngrams == 1 else f"word {cal.ngrams}-grams"
    ranker = (f"CAL (AutoTAR/BMI): {model} on sublinear tf-idf {words}, L2 weight {cal.l2:g}, batches from "
              f"{cal.first_batch} growing by a tenth, {cal.presumed} records presumed irrelevant at each "
              f"fit{', balanced class weights' if cal.balanced else ''}"
              f"{', a seed query' if cal.query is not None else ''}; seed {cal.seed}")
    if config["ranked"]:
        ranker += "; the records' own order until a relevant one is read"
    prior = [int(y) for y in config["prior"].values()]
    known = (f"{len(prior)} record{'s' if len(prior) > 1 else ''} ({sum(prior)} relevant, "
             f"{len(prior) - sum(prior)} not), read as the review's first screening steps and counted among "
             "the screened" if prior else "none")
    read_from = "; ".join(f"{src['path']} (sha256:{src['sha256'][:12]}, {src['bytes']:,} bytes"
                          f"{_now_differs(src)})" for src in config["sources"]) or "records given in Python"
    facts = [("records from", read_from), ("ranker", ranker), ("ranker's libraries", config["libraries"]),
             ("prior knowledge", known)]
    if config["corrects"]:
        fix = config["corrects"]
        changed = "; ".join(f"record {rid!r} labelled {c['now']} (was {c['was']})"
                            for rid, c in fix["relabelled"].items())
        facts.append(("corrects", f"review {fix['review'][:12]}: {changed} — the same records, seed and "
                                  "audit order, its other answers given again"))
    return facts


def _changed(src: Mapping[str, Any]) -> str | None:
    """The sha256 a source file has now, when it changed since start (still at its path, other
    bytes); None otherwise."""
    path = Path(src["path"])
    if not path.is_file():
        return None
    now = sha256_file(path)
    return now if now != src["sha256"] else None


def _now_differs(src: Mapping[str, Any]) -> str:
    """``; the file differs now (sha256:…)`` when a source file changed since start, else ``""``."""
    now = _changed(src)
    return "" if now is None else (f"; the file differs now (sha256:{now[:12]}): the review read its "
                                   "frozen copy")


def _source(path: str | os.PathLike[str]) -> dict[str, Any]:
    given = Path(path)
    return {"path": str(given.resolve()), "sha256": sha256_file(given), "bytes": given.stat().st_size}


def changed_sources(manifest: Manifest, *, gone: bool = False) -> list[str]:
    """The files the records were read from that changed since :func:`start` (still at their path,
    with other bytes), and with ``gone`` those gone from it, each in one sentence. The review never
    reads them again: it screens the records frozen in its folder, so an edit there (a corrected
    title, records added) is not in it; a gone file loses nothing but export's columns."""
    said = []
    for src in manifest["screener"]["config"]["sources"]:
        if not Path(src["path"]).is_file():
            if not gone:
                continue
            said.append(f"{src['path']} is gone (sha256:{src['sha256'][:12]} at the start): the review "
                        f"screens the records frozen at its start ({TEXTS_FILE} in its folder), so nothing "
                        "of it is lost, but export gives the text the review screened, not the file's "
                        "columns")
        elif (now := _changed(src)) is not None:
            said.append(f"{src['path']} changed since the review started (sha256:{src['sha256'][:12]} "
                        f"then, {now[:12]} now): the review screens the records frozen at its start "
                        f"({TEXTS_FILE} in its folder), not the file's edits; to screen the changed records, "
                        "start a new review")
    return said


#: The review's default policy, as ``--policy`` spells it (:func:`start` freezes it, and
#: :func:`rankcut.review.simulate.simulate_review` plays it):
#: :class:`~rankcut.certify.policies.MarginalCostPolicy` whose returns from the audit read a probe
#: of 25 records first. With :data:`PRIOR_BASIS`, it is the candidate chosen leave-one-set-out on
#: every one of the 14 screening sets (``benchmarks/bench_review_loso.py``, ``docs/results-review.md``,
#: "The probe"). It only moves the cost: the certificate holds for every policy.
POLICY = "marginal-cost:probe=25"
#: The review's default prior basis (:class:`~rankcut.certify.interleaved.InterleavedRule`).
PRIOR_BASIS = "tail"

SCREENERS[CAL] = cal_screener
SCREENER_FACTS[CAL] = cal_facts
#: a review's words: records placed by their number in the file, or by their rank in a TREC run
_FILE_WORDS = Words(item="record", everything="", chooser="whatever the ranker learns", picker="ranker",
                    in_run=False, screened_at="number {rank} in the file",
                    audited_at="audit order position {position}, number {rank} in the file")
_RUN_WORDS = dataclasses.replace(_FILE_WORDS, screened_at="rank {rank} in the run",
                                 audited_at="audit order position {position}, rank {rank} in the run")


def _words(config: Mapping[str, Any]) -> Words:
    """A review's words (:data:`~rankcut.audit.designs.interleaved.SCREENER_WORDS`): its prior
    knowledge is what screening reads first."""
    words = _RUN_WORDS if config.get("ranked") else _FILE_WORDS
    n = len(config.get("prior") or {})
    return dataclasses.replace(words, first=f"the {n} record{'s' if n > 1 else ''} of the prior knowledge"
                               ) if n else words


SCREENER_WORDS[CAL] = _words


# ---------------------------------------------------------------------------------------------
# start


def start(records: Records, folder: str | os.PathLike[str], *, target_recall: float = 0.95,
          delta: float = 0.05, seed: int | None = None, policy: str | None = None,
          config: CALConfig | None = None, sources: Sequence[str | os.PathLike[str]] = (),
          prior_basis: str | None = None) -> Manifest:
    """Freeze a review of ``records`` into ``folder`` (module docstring), draw its audit order and
    record its prior knowledge as its first steps.

    :param seed: the audit order's and the ranker's seed (default: a random one, recorded).
    :param policy: the interleaved design's ``--policy`` (default the review's, :data:`POLICY`).
    :param prior_basis: the interleaved design's ``--prior-basis`` (default :data:`PRIOR_BASIS`).
    :param config: the ranker's configuration (its seed is replaced by ``seed``).
    :param sources: the files ``records`` were read from, frozen by path, hash and size for the
        report and for :func:`changed_sources` (none: records made in Python).
    :raises ValueError: for a record id holding white space (a collection's ids are TREC ids), and
        whatever ``rankcut audit freeze`` refuses.
    :raises FileExistsError: when ``folder`` already holds a review or an audit (any other file in
        it is refused too: the review writes its frozen files there).
    """
    out = Path(folder)
    _check_empty(out)
    for i, rid in enumerate(records.ids):
        check_record_id(rid, f"{records.name}: record {i + 1}")
    seed = secrets.randbelow(2**31) if seed is None else check_count(seed, "seed")
    cal = CALConfig.from_json({**(config or CALConfig()).to_json(), "seed": seed})
    prior = {rid: int(y) for rid, y in zip(records.ids, records.prior.tolist(), strict=True) if y >= 0}
    qid = records.query_id
    n = len(records)
    run = "".join(f"{qid} Q0 {rid} {r + 1} {n - r} rankcut-review\n" for r, rid in enumerate(records.ids))
    asked = {} if records.query_text is None else {"query": records.query_text}   # on the first line
    texts = "".join(json.dumps({"query_id": qid, "doc_id": rid, "text": text,
                                **({"title": title} if title else {}), **(asked if not i else {})},
                               ensure_ascii=False) + "\n"
                    for i, (rid, title, text) in enumerate(zip(records.ids, records.titles, records.texts,
                                                               strict=True)))
    config_json = {"cal": cal.to_json(), "prior": prior, "ranked": bool(records.ranked),
                   "sources": [_source(p) for p in sources], "corrects": None}
    return _freeze(out, run, texts, config_json, delta=delta, target_recall=target_recall, seed=seed,
                   policy=policy or POLICY, prior_basis=prior_basis or PRIOR_BASIS)


def _check_empty(out: Path) -> None:
    if (out / MANIFEST_FILE).exists():
        raise FileExistsError(f"{out} already holds a review ({out / MANIFEST_FILE}); a review is started "
                              "once — resume it (rankcut review next; a simulation: rankcut review label "
                              "--simulate), or start into a new folder")
    if out.is_dir() and any(out.iterdir()):
        raise ValueError(f"{out} is not empty: start a review into a new or empty folder")


def _freeze(out: Path, run: str, texts: str, config: Mapping[str, Any], **options: Any) -> Manifest:
    """Write the collection and its texts into the empty folder ``out``, freeze the review (the CAL
    screener with ``config``; ``options`` as for ``workflow.freeze``), draw its audit order and
    record the prior knowledge; nothing is left behind when any of it fails."""
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / RUN_FILE, run)
    write_text_atomic(out / TEXTS_FILE, texts)
    try:
        # the libraries the ranker's fits depend on, frozen: a replay under others can take other steps
        screener = {"name": CAL, "config": {**config, "libraries": library_versions()}}
        manifest = workflow.freeze(out, run=out / RUN_FILE, design="interleaved", texts=out / TEXTS_FILE,
                                   screener=screener, **options)
        workflow.plan(out)
        workflow.sample(out)
        _record_prior(out)
    except BaseException:   # the folder was empty: leave no half-started review behind
        for child in out.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        if made:
            out.rmdir()
        raise
    return manifest


# ---------------------------------------------------------------------------------------------
# label


def is_review(manifest: Manifest) -> bool:
    """Whether an audit folder's manifest is a review's of :func:`start` (its screener the CAL ranker)."""
    return bool(manifest.get("screener", {}).get("name") == CAL)


def load_review(folder: str | os.PathLike[str]) -> Manifest:
    """The manifest of a review folder (refused by name when the folder holds none, or an audit's):
    what the steps that need no replay check first."""
    folder = Path(folder)
    if not (folder / MANIFEST_FILE).is_file():
        if folder.exists() and not (folder.is_dir() and not any(folder.iterdir())):   # start refuses it
            what = f"holds no review ({MANIFEST_FILE} is missing)" if folder.is_dir() else "is a file"
            raise FileNotFoundError(f"{folder} {what}: give the folder that rankcut review start made (or "
                                    "start one in a new folder: rankcut review start RECORDS --folder "
                                    "NEW_FOLDER)")
        what = "does not exist" if not folder.exists() else "holds no review yet"
        raise FileNotFoundError(f"review folder {folder} {what} (start one with rankcut review start "
                                f"RECORDS --folder {folder})")
    manifest = load_manifest(folder)
    if not is_review(manifest):
        raise ValueError(f"{folder} is not a review folder of rankcut review (an audit's, of the "
                         f"{manifest.get('design')} design): use rankcut audit on it")
    for name in (SAMPLE_FILE, SAMPLE_ITEMS):   # start writes them (an audit's sample step would)
        if not (folder / name).is_file():
            raise ValueError(f"{folder / name} is missing: rankcut review start wrote it (the review's "
                             "frozen audit order) — restore it, or start a new review")
    return manifest


def prior_knowledge(manifest: Manifest) -> dict[str, int]:
    """A review's prior knowledge, frozen at start: record id → its label (never asked)."""
    return {str(k): int(v) for k, v in manifest["screener"]["config"]["prior"].items()}


def _items(folder: Path) -> tuple[str, list[str]]:
    """The review's query id and its record ids, in order (from the frozen collection)."""
    try:
        text = (folder / RUN_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{folder / RUN_FILE} is missing: it is the review's collection, frozen at start "
                         "(its sha256 is in the manifest) — restore it, or start a new review") from None
    rows = [line.split() for line in text.splitlines()]
    return rows[0][0], [r[2] for r in rows]


@contextmanager
def _label_file(folder: Path, labels: Mapping[str, int], name: str) -> Iterator[Path]:
    """``labels`` (record id → 0/1) as a CSV label file of the audit, named after ``name``, for the
    step."""
    qid, _ = _items(folder)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{Path(name).name.removesuffix('.gz').rsplit('.', 1)[0]}.csv"   # read as CSV
        write_label_file(path, [(qid, rid, y) for rid, y in labels.items()], kind="csv")
        yield path


#: the source the label store records with a step answered from the prior knowledge
PRIOR_SOURCE = "prior knowledge (frozen at start)"


def _record_prior(folder: Path) -> int:
    """Record the steps that ask for a record of the prior knowledge, from the frozen prior; how
    many were recorded."""
    prior = prior_knowledge(load_review(folder))
    if not _unread(folder, prior):   # each call replays the review: none once the prior is read
        return 0
    with _label_file(folder, prior, "prior-knowledge.csv") as path:
        return workflow.label(folder, from_file=path, file_source=PRIOR_SOURCE).recorded


def _interactive(folder: Path, input: Callable[[str], str], output: Callable[[str], Any], source: str
                 ) -> workflow.LabelResult:
    """The interactive label step. While a record of the prior knowledge is unread (a policy that
    audits before the ranker has screened them all), or an answer is kept for a record not asked
    yet (:data:`PENDING_FILE`), one answer a call: the step after it is not shown but answered from
    what is known if it asks for such a record (each call starts with that), so a record answered
    before is never asked again."""
    asked = query_text(folder)
    if asked:
        output(f"query: {asked}")
    recorded = 0
    while True:
        pending = _unread_prior(folder) or bool(kept_answers(folder))
        result = _ask(folder, input, output, source, once=pending)
        recorded += result.recorded
        if not pending or not result.recorded:
            return dataclasses.replace(result, recorded=recorded)
        known = record_known(folder)
        if known:
            output(f"recorded {known} answer{'s' * (known != 1)} given before (prior knowledge, or kept from "
                   f"a label file) for the record{'s' * (known != 1)} the review asked for next")


def record_known(folder: str | os.PathLike[str]) -> int:
    """Record the steps the prior knowledge and the kept answers hold, as far as the review asks
    for their records, in turn (before an interactive call, or the labelling page, asks for
    them); how many were recorded."""
    folder = Path(folder)

    def known() -> int:
        return len(_unread(folder, prior_knowledge(load_review(folder)))) + len(kept_answers(folder))

    before = left = known()
    while True:
        _record_prior(folder)
        record_kept(folder)
        now = known()
        if now == left:
            return before - now
        left = now


def _ask(folder: Path, input: Callable[[str], str], output: Callable[[str], Any], source: str, *,
         once: bool) -> workflow.LabelResult:
    """One interactive call, its answers recorded as given by ``source``; with ``once``, it ends
    after one answer, the next step unshown."""
    held: list[str] = []    # the lines of the step being shown, until it is asked
    answered = False

    def ask(prompt: str) -> str:
        nonlocal answered
        if once and answered:
            held.clear()
            return "q"
        for line in held:
            output(line)
        held.clear()
        reply = input(prompt)
        answered = answered or reply.strip().lower() in ("y", "yes", "1", "n", "no", "0")
        return reply

    result = workflow.label(folder, interactive=True, input=ask, output=held.append, file_source=source)
    for line in held:
        output(line)
    return result


def _unread_prior(folder: Path) -> bool:
    """Whether a record of the prior knowledge is not read yet."""
    return bool(_unread(folder, prior_knowledge(load_review(folder))))


def _unread(folder: Path, ids: Iterable[str]) -> list[str]:
    """Those of ``ids`` that the review has not read (no label recorded), in the given order."""
    ids = list(ids)
    if not ids or not holds_store(folder / LABELS_FILE):
        return ids
    qid, _ = _items(folder)
    with LabelStore(folder / LABELS_FILE, readonly=True) as store:
        read = store.get([(qid, rid) for rid in ids])
    return [rid for rid in ids if (qid, rid) not in read]


def read_labels(source: str | os.PathLike[str], ids: Sequence[str], records: str | None = None,
                query: str | None = None, label_column: str | None = None) -> dict[str, int]:
    """A reviewer's labels: a CSV (TSV for ``.tsv``/``.tab``) with a header naming ``record_id`` (or
    ``doc_id``, ``id``) and a label column (ASReview's names, ``label`` among them; any case); labels
    ``0``/``1``, ``yes``/``no``, ``y``/``n``, ``include``/``exclude``, ``relevant``/``irrelevant``,
    an empty cell not labelled yet. A file with a ``records`` column (a batch of ``next --out``)
    names on each row the records it was written for (:func:`records_key`): with ``records`` (the
    review's) a row of other records is refused, since the same record ids (numbers in a file) mean
    other records there. A file with a ``query_id`` (or ``qid``) column, as judgements of several
    topics are kept, has its rows of other queries than ``query`` (the review's) refused: a
    judgement of the same document for another topic is not this review's label.

    :param label_column: the column of the labels (any column, any case); needed where another
        column that reads like labels (:func:`~rankcut.data.screening.reads_like_labels`) holds an
        answer, such as a records file's ``label_abstract_screening`` beside ``label_included``.
    :raises ValueError: naming the file and line for a missing column, another label-like column
        holding an answer and no ``label_column``, a row of other records or of another query, a
        record id that is not one of ``ids``, a label value it cannot read, or a record labelled
        twice with different labels.
    """
    return _label_lines(source, ids, records, query, label_column)[0]


def _label_lines(source: str | os.PathLike[str], ids: Sequence[str], records: str | None = None,
                 query: str | None = None, label_column: str | None = None
                 ) -> tuple[dict[str, int], dict[str, int]]:
    """:func:`read_labels`'s labels, and the line each record's label is on."""
    known = set(ids)
    delimiter = delimiter_for(source)
    out: dict[str, int] = {}
    lines: dict[str, int] = {}
    with open_text(source, None, newline="") as (where, f):
        reader = csv.reader(f, delimiter=delimiter)
        first = [c.strip() for c in next(reader, [])]
        header = [c.lower() for c in first]
        if not header:
            raise ValueError(f"{where}: the file is empty; expected a header naming record_id and label")
        cols = []
        tokens = " ".join(first).split()
        if len(tokens) == 4 and tokens[1] in ("0", "Q0") and tokens[3].lstrip("-").isdigit():   # qrels
            raise ValueError(f"{where}, line 1: it reads like TREC qrels (query, 0, document, grade), not a "
                             f"label file ({'record_id' + delimiter + 'label'}): to play qrels as the "
                             f"reviewer, {spelled('label')} --simulate --qrels FILE")
        chosen = label_column is not None
        for names in (_ID_COLUMNS, (label_column.lower(),) if label_column is not None else LABEL_COLUMNS):
            col = next((header.index(n) for n in names if n in header), None)
            if col is None and any(c in known for c in first):   # a label file without its header line
                raise ValueError(f"{where}, line 1: it looks like a record's label, not a header (record "
                                 f"{next(c for c in first if c in known)!r} is one of this review's): add a "
                                 f"first line naming the columns, {'record_id' + delimiter + 'label'}")
            if col is None:
                shown = ", ".join(repr(c if len(c) <= 40 else c[:40] + "…") for c in first[:8])   # as written
                nor = (f"{spelled('label_column')}" if chosen and names is not _ID_COLUMNS else
                       f"nor {', '.join(repr(n) for n in names[1:])}")
                name_it = ("" if chosen or names is _ID_COLUMNS else
                           f"; if another column holds the answers, name it with {spelled('label_column')}")
                raise ValueError(f"{where}, line 1: the header names no {names[0]!r} column ({nor}); it "
                                 f"names {shown}{', ...' if len(header) > 8 else ''}{name_it}"
                                 f"{separator_hint(header, delimiter)}")
            cols.append(col)
        id_col, label_col = cols
        # other columns that read like labels: refused once one holds an answer (the systematic-review
        # walk: a records file's `included` was read where the reviewer's column held 16 relevant, not 91)
        others = [] if chosen else [i for i, c in enumerate(first)
                                    if i not in (id_col, label_col) and reads_like_labels(c)]
        records_col = header.index("records") if records is not None and "records" in header else None
        query_col = next((header.index(n) for n in _QUERY_COLUMNS if n in header), None) if query else None
        ended = reader.line_num
        for row in reader:   # a record's line is where it starts (a quoted text may hold line breaks)
            line, ended = ended + 1, reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(header):
                raise ValueError(f"{where}, line {line}: the row has {len(row)} fields, the header "
                                 f"{len(header)}")
            if (held := next((i for i in others if row[i].strip()), None)) is not None:
                both = [repr(first[i]) for i in (label_col, *others)]
                raise ValueError(f"{where}, line 1: columns {', '.join(both[:-1])} and {both[-1]} "
                                 f"{'both' if len(both) == 2 else 'all'} read like labels (line {line}'s "
                                 f"{first[held]!r} holds {row[held].strip()!r}): say which holds the answers "
                                 f"with {spelled('label_column')}; nothing was recorded")
            rid, value = row[id_col].strip(), row[label_col].strip()
            if records_col is not None and row[records_col].strip() not in ("", records):
                raise ValueError(f"{where}, line {line}: the row is of other records (its records column "
                                 f"says {row[records_col].strip()!r}, this review's are {records!r}): its "
                                 f"record {rid!r} is another record there; label it in a review of the "
                                 "records the file was written for")
            if query_col is not None and row[query_col].strip() not in ("", query):
                raise ValueError(f"{where}, line {line}: the row is of query {row[query_col].strip()!r}, "
                                 f"this review's is {query!r}: its label of record {rid!r} is a judgement "
                                 f"for another topic; keep only the rows of query {query!r} in the file")
            if rid not in known:
                raise ValueError(f"{where}, line {line}: record {rid!r} is not a record of this review"
                                 f"{_spreadsheet_id(rid, known)}")
            y = _VALUES.get(value.lower())
            if y is None:
                raise ValueError(f"{where}, line {line}: the label of record {rid!r} must be {_FORMS} "
                                 f"(not labelled yet), got {value!r}")
            if y < 0:
                continue
            if rid in out and out[rid] != y:
                raise ValueError(f"{where}, line {line}: record {rid!r} is labelled {y}, but {out[rid]} on "
                                 f"line {lines[rid]}")
            out.setdefault(rid, y)
            lines.setdefault(rid, line)
    return out, lines


def _spreadsheet_id(rid: str, known: Collection[str]) -> str:
    """What a spreadsheet did to an id that is no record's, where a record's id is the id as a
    spreadsheet writes it: as a number (``169.0``) or with its leading zeros dropped (``59`` for
    ``059``); "" otherwise."""
    if rid.endswith(".0") and rid[:-2] in known:
        return (f" (record {rid[:-2]!r} is: a spreadsheet wrote the id as a number; format the id column "
                "as text)")
    if rid.isdigit() and (rid == "0" or not rid.startswith("0")):   # a spreadsheet drops zeros, never adds
        padded = sorted((k for k in known if len(k) > len(rid) and k.isdigit() and k.startswith("0")
                         and k.lstrip("0") == rid.lstrip("0")), key=len)
        if len(padded) == 1:
            return (f" (record {padded[0]!r} is: a spreadsheet dropped the id's leading zeros; format the id "
                    "column as text)")
        if padded:
            return (f" (records {id_list(padded)} are: a spreadsheet drops an id's leading zeros, so it is "
                    "one of them; format the id column as text)")
    return ""


def known_from_qrels(source: str | os.PathLike[str], folder: str | os.PathLike[str], *,
                     threshold: float = 1) -> dict[str, int]:
    """The relevance of every record from TREC qrels: 1 where graded at least ``threshold``, else 0
    (unjudged: 0); of the review's query (:func:`rankcut.review.records.qrels_labels`)."""
    manifest = load_review(folder)   # a review folder, refused by name otherwise
    qid, ids = _items(Path(folder))
    ranked = bool(manifest["screener"]["config"]["ranked"])
    labels = qrels_labels(source, ids, qid, threshold=threshold, ranked=ranked)
    return dict(zip(ids, labels.tolist(), strict=True))


def known_from_records(records: Records, source: str | os.PathLike[str], folder: str | os.PathLike[str]
                       ) -> dict[str, int]:
    """The relevance of every record from a records file that labels each one (``records``, read from
    ``source``), refused unless the file holds the review's records: each of its ids, with the title
    and abstract frozen at start. Another collection that shares the ids (1 … N, as the screening
    sets number theirs) would otherwise play the reviewer, its missing ids taken as not relevant."""
    out = Path(folder)
    manifest = load_review(out)
    if records.labels is None:
        ris = Path(str(source).removesuffix(".gz")).suffix.lower() in RIS_SUFFIXES
        how = ("" if records.ranked else   # a run: only qrels label it
               "label every record with an ASReview note (N1  - ASReview_relevant or "
               "ASReview_irrelevant), or " if ris else
               f"give {spelled('label_column', 'label')} naming a column labelled on every record, or ")
        raise ValueError(f"--simulate: {source} does not label every record ({how}give {spelled('qrels')})")
    started = " or ".join(str(src["path"]) for src in manifest["screener"]["config"]["sources"])
    qid, ids = _items(out)
    frozen = _texts(check_inputs(manifest)["texts"]["path"], out)
    given = dict(zip(records.ids, records.texts, strict=True))
    for wrong, what in (([rid for rid in ids if rid not in given], "not in it"),
                        ([rid for rid in ids if rid in given and given[rid] != frozen[qid, rid]],
                         "in it with another title or abstract than the one frozen at start")):
        if wrong:
            shown = id_list(wrong, 3)
            raise ValueError(f"{source}: {len(wrong)} of the review's {len(ids)} records "
                             f"{'is' if len(wrong) == 1 else 'are'} {what} (record {shown}): it is not the "
                             "records file the review was started from, and its labels would not be the "
                             f"review's — simulate with {started or 'that file'}, or give the labels as "
                             "--qrels")
    return dict(zip(records.ids, records.labels.tolist(), strict=True))


def label(folder: str | os.PathLike[str], *, from_file: str | os.PathLike[str] | None = None,
          known: Mapping[str, int] | None = None, interactive: bool = False, limit: int | None = None,
          input: Callable[[str], str] = input, output: Callable[[str], Any] = print,
          label_column: str | None = None, reviewer: str | None = None) -> workflow.LabelResult:
    """Record the review's next labels: from a reviewer's file (:func:`read_labels`; the labels of
    the records it asks for, as far as the file and the answers kept from earlier files hold them),
    from ``known`` labels (record id → 0/1: a simulation; the next ``limit`` steps, or to the
    certificate; a record it does not name is not relevant, as an unjudged document of qrels) or
    interactively. Steps that ask for a record of the prior knowledge are answered
    from it first.

    A file's labels of records the review has not asked for yet (a batch read ahead, after a
    relevant answer changed what the review asks for) are kept in :data:`PENDING_FILE` and recorded
    when the review asks for those records. That keeps the guarantee: the policy and the ranker see
    a kept answer only once the review has asked for its record, as if it had been given then
    (the theorem of :mod:`rankcut.certify.interleaved` needs only that each move is chosen from the
    labels recorded before it).

    :param label_column: a label file's label column, where it has two that read like labels.
    :param reviewer: the name of who gives the answers of a file or of the terminal, recorded in
        each one's source (``file batch.csv sha256:…, reviewer Ada``; the labelling page records
        ``serve reviewer Ada``), so the label store says who answered what.
    :raises ValueError: for none or several sources, a reviewer named in a simulation or by a name
        :func:`rankcut.audit.labels.reviewer_name` refuses, a label file :func:`read_labels` refuses,
        labels that contradict the prior knowledge or the review's recorded steps, and a label file
        that holds no label for the record the review asks for (nothing recorded).
    """
    out = Path(folder)
    manifest = load_review(out)
    if sum((from_file is not None, known is not None, bool(interactive))) != 1:
        raise ValueError("give one source of labels: a label file, known labels (simulate), or interactive")
    if reviewer is not None and known is not None:
        raise ValueError("a simulation plays the known labels, not a reviewer: name a reviewer of a label "
                         "file or of the terminal")
    name = None if reviewer is None else reviewer_name(reviewer)

    def given_by(source: str) -> str:   # the source, with the reviewer who gave it if named
        return source if name is None else reviewer_source(name, source)

    prior = prior_knowledge(manifest)
    check_store_kept(out)   # before the prior knowledge is written into a new store
    prior_first = _record_prior(out)   # the steps the prior knowledge answers before any other
    if known is not None:
        clash = next((rid for rid, y in prior.items() if known.get(rid, 0) != y), None)
        if clash is not None:
            raise ValueError(f"the prior knowledge of record {clash!r} ({prior[clash]}) contradicts its "
                             f"known label ({known.get(clash, 0)})")
        qid, ids = _items(out)
        held = _recorded(out, qid, ids)   # a review a reviewer began, simulated on from there
        differ = [rid for rid in ids if rid in held and held[rid] != int(known.get(rid, 0))]
        if differ:
            shown = id_list(differ, quote=False)
            warnings.warn(f"the known labels say otherwise than {len(differ)} recorded step"
                          f"{'s' if len(differ) > 1 else ''} (record {shown}): a recorded step stands, "
                          "and the simulation goes on from the labels recorded", stacklevel=2)
        kept_by = kept_with_sources(out)
        kept = {rid: y for rid, (y, _) in kept_by.items()}
        other = [rid for rid, y in kept.items() if int(known.get(rid, 0)) != y]
        if other:
            shown = id_list(other, quote=False)
            warnings.warn(f"the known labels replace {len(other)} kept answer{'s' if len(other) > 1 else ''} "
                          f"that say{'s' if len(other) == 1 else ''} otherwise (record {shown}; "
                          f"{out / PENDING_FILE}): they are dropped", stacklevel=2)
        with tempfile.TemporaryDirectory() as tmp:
            qrels = Path(tmp) / "known-labels.qrels"
            write_text_atomic(qrels, "".join(f"{qid} 0 {rid} {int(known.get(rid, 0))}\n" for rid in ids))
            result = workflow.label(out, qrels=qrels, limit=limit,
                                    file_source=f"{SIMULATION}known labels sha256:{sha256_file(qrels)[:12]}")
        with _kept_lock(out):
            _keep(out, {rid: kept for rid, kept in kept_with_sources(out).items() if rid not in other})
        return result
    if interactive:
        record_known(out)
        return _interactive(out, input, output, given_by("interactive"))
    assert from_file is not None
    if not Path(from_file).is_file():
        raise FileNotFoundError(f"{spelled('from_file')} {from_file}: no such file — nothing was recorded")
    qid, ids = _items(out)
    given, lines = _label_lines(from_file, ids, records_key(manifest), _judged_query(qid, manifest),
                                label_column)
    clash = next((rid for rid, y in given.items() if rid in prior and prior[rid] != y), None)
    if clash is not None:
        raise ValueError(f"{from_file}, line {lines[clash]}: record {clash!r} is labelled {given[clash]}, "
                         f"but the prior knowledge frozen at start says {prior[clash]} — nothing was "
                         "recorded")
    held = _recorded(out, qid, list(given))
    changed = next((rid for rid in given if rid in held and held[rid] != given[rid]), None)
    if changed is not None:
        raise ValueError(f"{from_file}, line {lines[changed]}: record {changed!r} is labelled "
                         f"{given[changed]}, but the review recorded {held[changed]} for it: a recorded step "
                         "is never changed (the moves after it were chosen from it), so a corrected label "
                         "means a new review, made from this one with the record relabelled: "
                         f"{spelled('correct')} --folder {shlex.quote(str(out))} --into NEW_FOLDER --relabel "
                         f"{shlex.quote(f'{changed}={given[changed]}')} — nothing was recorded")
    kept_by = kept_with_sources(out)
    kept = {rid: y for rid, (y, _) in kept_by.items()}
    _warn_replaced(from_file, given, kept_by, ids, "")
    # a record of the prior knowledge the review asks for among the file's is answered from it (a
    # policy may audit before the ranker has screened them all, and the audit meet one)
    unread_prior = {rid: prior[rid] for rid in _unread(out, prior)}
    answers = {**kept, **given, **unread_prior}   # the frozen prior wins (a file's may only agree)
    source = given_by(f"file {Path(from_file).name} sha256:{sha256_file(from_file)[:12]}")   # the file given
    # a kept answer is recorded with the source it was given by (a file before, a reviewer's page)
    sources = ({rid: by for rid, (_, by) in kept_by.items()} | dict.fromkeys(given, source)
               | dict.fromkeys(unread_prior, PRIOR_SOURCE))
    with _label_file(out, answers, Path(from_file).name) as path:
        try:
            result = workflow.label(out, from_file=path, file_source=source,
                                    item_sources={(qid, rid): sources[rid] for rid in answers})
        except ValueError as err:   # the translated file's errors name the reviewer's file
            raise ValueError(str(err).replace(str(path), str(from_file))) from None
    from_prior = prior_first + len(unread_prior) - len(_unread(out, unread_prior))
    also = [PENDING_FILE] * bool(kept) + [f"the prior knowledge, {from_prior} of them"] * bool(from_prior)
    result = dataclasses.replace(result, recorded=result.recorded + prior_first,
                                 source=" and ".join([source, *also]))
    waiting = [rid for rid in _unread(out, answers) if rid not in unread_prior]   # the prior is frozen
    new = [rid for rid in waiting if kept.get(rid) != answers[rid]]
    # the record the review asks for now (one replay, and only where a message needs it)
    asked = workflow.status(out).get("next_item") if new or not result.recorded else None
    fresh = [rid for rid in new if rid not in kept]   # answers for records nobody answered before
    if not result.recorded and asked is None and (fresh or not new):   # met: only a correction is taken
        raise ValueError(f"{from_file}: nothing was recorded — the review asks for no further record "
                         "(the target is certified, or every record is read)"
                         + (f", and record {fresh[0]!r} has no kept answer to correct"
                            if fresh and new != fresh else "")
                         + ": rankcut review certify; to read on after the target is met, rankcut review "
                         "read-on first (a kept answer is corrected, met or not)")
    if not result.recorded and not new and asked is not None:
        raise ValueError(f"{from_file}: nothing was recorded — it holds no new label, and none for "
                         f"record {asked['doc_id']!r}, the one the review asks for now (rankcut review "
                         "next names it, and --batch N the ones after it)")
    with _kept_lock(out):   # with the answers the page kept while this call ran
        now = kept_with_sources(out)
        meanwhile = {rid: by for rid, by in now.items() if rid not in kept_by}
        _keep(out, {**{rid: by for rid, by in now.items() if rid not in given},
                    **{rid: (answers[rid], sources[rid]) for rid in waiting}})
    _warn_replaced(from_file, given, meanwhile, ids, " while this file was read")
    if new:
        shown = id_list(new, quote=False)
        when = ("it asks for no further record now, so they are not counted (unless you read on, rankcut "
                "review read-on, and the ranker picks them)" if asked is None else
                "none is lost: each is recorded when it does, and `next` leaves them out of the records "
                "to read")
        warnings.warn(f"{from_file}: {len(new)} of its labels {'is' if len(new) == 1 else 'are'} kept for "
                      f"later: the review has not asked for those records yet (record {shown}); {when} "
                      f"({out / PENDING_FILE})", stacklevel=2)
    return result


def _warn_replaced(from_file: str | os.PathLike[str], given: Mapping[str, int],
                   kept: Mapping[str, tuple[int, str]], order: Sequence[str], when: str) -> None:
    """Warn (stacklevel of :func:`label`'s caller) of each kept answer the file's ``given`` label
    replaces, in the records' ``order``; ``when`` says when it was kept."""
    for rid in sorted(set(kept) & set(given), key=order.index):
        if kept[rid][0] != given[rid]:
            warnings.warn(f"{from_file}: record {rid!r} is labelled {given[rid]}, which replaces the "
                          f"{kept[rid][0]} kept for it{when}, given by {kept[rid][1]} (not recorded yet)",
                          stacklevel=3)


def _judged_query(qid: str, manifest: Manifest) -> str | None:
    """The query a label file's ``query_id`` column must name: a TREC run's ``qid`` (its
    judgements are kept per topic); None for records from a table or RIS file, whose query id is
    only the file's name, which a topic column need not be."""
    return qid if manifest["screener"]["config"]["ranked"] else None


def _recorded(folder: Path, qid: str, rids: Sequence[str]) -> dict[str, int]:
    """The labels the review's store holds for ``rids`` (record id → 0/1; none before a store)."""
    if not holds_store(folder / LABELS_FILE):
        return {}
    with LabelStore(folder / LABELS_FILE, readonly=True) as store:
        return {d: y for (_, d), y in store.get([(qid, rid) for rid in rids]).items()}


def kept_answers(folder: str | os.PathLike[str]) -> dict[str, int]:
    """The answers kept for records the review has not asked for yet (:data:`PENDING_FILE`): record
    id → 0/1."""
    return {rid: y for rid, (y, _) in kept_with_sources(folder).items()}


def kept_with_sources(folder: str | os.PathLike[str]) -> dict[str, tuple[int, str]]:
    """The kept answers with who gave them: record id → (0/1, the source its label is recorded
    with: the reviewer's file, or ``serve reviewer NAME`` for a record read ahead on the page)."""
    out = Path(folder)
    path = out / PENDING_FILE
    if not path.is_file():
        return {}
    qid, ids = _items(out)
    kept = read_labels(path, ids, query=qid)
    rows = _table_rows(path)
    at = {c: i for i, c in enumerate(rows[0])} if rows else {}
    given = {row[at["doc_id"]]: row[at["source"]] for row in rows[1:]
             if "source" in at and len(row) == len(at)}
    return {rid: (kept[rid], given.get(rid) or f"file {PENDING_FILE}") for rid in _unread(out, kept)}


def kept_relevant(folder: str | os.PathLike[str]) -> list[str]:
    """The records whose kept answer says relevant, in the records' order: answered, but counted by
    no certificate until the review asks for them."""
    order = {rid: i for i, rid in enumerate(_items(Path(folder))[1])}
    return sorted((rid for rid, y in kept_answers(folder).items() if y), key=order.__getitem__)


def kept_relevant_text(n: int) -> str:
    """``n`` records answered relevant and kept, in words: what no certificate counts."""
    them, stay = ("them", "they stay relevant records") if n > 1 else ("it", "it stays a relevant record")
    return (f"{count(n, 'record', 'records')} answered relevant {'are' if n > 1 else 'is'} kept, not "
            f"recorded: the review has not asked for {them}, so no certificate counts {them} ({stay} of "
            "your review)")


def kept_note(folder: str | os.PathLike[str]) -> str:
    """The records answered relevant and kept, not counted, with their ids ("" when none)."""
    ids = kept_relevant(folder)
    return f"{kept_relevant_text(len(ids))}: {id_list(ids, 10, quote=False)}" if ids else ""


def report_notes(folder: str | os.PathLike[str], changed: Sequence[str]) -> list[str]:
    """What a review's report says beside its certificate, wherever it is made (the command line,
    the labelling page): the records files changed since start (``changed``: the caller's
    :func:`changed_sources`, which hashes them), the records answered relevant but kept, which no
    certificate counts, and how many answered not relevant are kept (read by a person, so a count
    of the records screened includes them, as the certificate's does not)."""
    kept = kept_note(folder)
    others = sum(1 for y in kept_answers(folder).values() if not y)
    one = others == 1
    it = "it" if one else "them"
    read = (f"Note: {count(others, 'more record', 'more records')} answered not relevant "
            f"{'is' if one else 'are'} kept, not recorded (read ahead, or in a batch file, before the "
            f"review asked for {it}): a count of the records people screened includes {it}, the records "
            "read above do not.")
    return [*(f"Warning: {said}." for said in changed), *([f"Note: {kept}."] if kept else []),
            *([read] if others else [])]


_HELD = threading.local()   # the folders whose kept-answers lock this thread holds (_kept_lock)


@contextmanager
def _kept_lock(folder: Path) -> Iterator[None]:
    """Hold :data:`PENDING_FILE` for one read and rewrite, across processes: the labelling page
    keeps an answer read ahead while a ``label --from`` runs, and each rewrote the file from the
    answers it had read, so the other's were lost. An advisory lock (``flock``) on
    :data:`PENDING_LOCK`; none where ``fcntl`` is missing (not POSIX). A thread that holds it
    already takes it again at once (``flock`` on a second open of the file would wait for itself)."""
    held: set[str] = _HELD.__dict__.setdefault("folders", set())
    key = str(folder.resolve())
    try:
        import fcntl
    except ImportError:
        fcntl = None   # type: ignore[assignment]
    if key in held or fcntl is None:
        yield
        return
    with open(folder / PENDING_LOCK, "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
            fcntl.flock(lock, fcntl.LOCK_UN)


def _keep(folder: Path, kept: Mapping[str, tuple[int, str]]) -> None:
    """Keep ``kept`` (record id → (0/1, source); none: remove the file) in :data:`PENDING_FILE`."""
    path = folder / PENDING_FILE
    if kept:
        qid, _ = _items(folder)
        _write_table(path, PENDING_COLUMNS, ([qid, rid, y, source] for rid, (y, source) in kept.items()))
    else:
        path.unlink(missing_ok=True)


def keep(folder: str | os.PathLike[str], answers: Mapping[str, int], source: str, *,
         agreeing: bool = False) -> None:
    """Keep ``answers`` (record id → 0/1), given by ``source`` (recorded with them, as ``serve
    reviewer NAME``), for records the review has not asked for yet, beside the answers kept already
    (:data:`PENDING_FILE`): each is recorded when the review asks for its record (:func:`record_kept`,
    or the next ``label``). The labelling page keeps a record read ahead so; with no ``answers``,
    the file is rewritten without those recorded since.

    :param agreeing: refuse (ValueError, nothing kept) an answer that differs from one kept for its
        record: the page's rule, checked under the same lock as the write (a ``label --from``
        running meanwhile may have kept another).
    """
    out = Path(folder)
    with _kept_lock(out):
        kept = kept_with_sources(out)
        differs = next((rid for rid, y in answers.items() if rid in kept and kept[rid][0] != y), None)
        if agreeing and differs is not None:
            raise ValueError(f"record {differs!r} has a kept answer {kept[differs][0]} (given by "
                             f"{kept[differs][1]}), and this answer says {answers[differs]}")
        _keep(out, {**kept, **{rid: (y, source) for rid, y in answers.items()}})


def unkeep(folder: str | os.PathLike[str], record_id: str, label: int, source: str) -> bool:
    """Take back the answer ``label`` kept for ``record_id`` by ``source`` (a record read ahead on
    the labelling page, answered by mistake): it was never recorded, so no step was chosen from it.
    Returns whether it was kept so (False: recorded since, as the review asked for it, or replaced;
    nothing is changed)."""
    out = Path(folder)
    with _kept_lock(out):
        kept = kept_with_sources(out)
        if kept.get(record_id) != (label, source):
            return False
        del kept[record_id]
        _keep(out, kept)
    return True


def record_kept(folder: str | os.PathLike[str]) -> None:
    """Record the steps the kept answers hold (before an interactive call, or the labelling page,
    asks for them), each with the source it was given by. Under the answers' lock from the read
    to the rewrite: the page's undo of an answer read ahead (:func:`unkeep`) waits, and then finds
    it recorded, where it said "taken back" of an answer this call went on to record."""
    out = Path(folder)
    if not (out / PENDING_FILE).is_file():   # nothing kept: no lock to take (every page start asks)
        return
    with _kept_lock(out):
        kept = kept_with_sources(out)
        if not kept:
            return
        qid, _ = _items(out)
        with _label_file(out, {rid: y for rid, (y, _) in kept.items()}, PENDING_FILE) as path:
            workflow.label(out, from_file=path, file_source=f"file {PENDING_FILE}",
                           item_sources={(qid, rid): source for rid, (_, source) in kept.items()})
        _keep(out, kept_with_sources(out))   # the answers not recorded (kept by this thread meanwhile)


# ---------------------------------------------------------------------------------------------
# next, status, simulate


def _texts(path: str | os.PathLike[str], folder: Path) -> dict[Item, str]:
    """The frozen texts by record, read once in a process with the ranker's (:func:`_texts_of`):
    reading them again took a third of a ``next`` on 235,472 records."""
    qid, ids = _items(folder)
    items = tuple((qid, rid) for rid in ids)
    return dict(zip(items, _texts_of(str(path), sha256_file(path), items), strict=True))


def query_text(folder: str | os.PathLike[str]) -> str | None:
    """The query the reviewer judges relevance to (a TREC run's: :func:`start` freezes it on the
    first line of :data:`TEXTS_FILE`), or None (records from a table or RIS file, or a run's texts
    without one). Only that line is read: the file is hashed and checked by every step."""
    with open(Path(folder) / TEXTS_FILE, encoding="utf-8") as f:
        first = json.loads(f.readline() or "{}")
    text = first.get("query")
    return text if isinstance(text, str) and text.strip() else None


def _record(step: Mapping[str, Any], texts: Mapping[Any, str], prior: Mapping[str, int], words: Words
            ) -> dict[str, Any]:
    """A step of the review (``Step.to_dict``) in the review's words, with the record's text and
    where it stands (``where``: ``number 30 in the file``, its place in the records' file, which is
    not its ID; ``rank 30 in the run`` for a run's documents; or ``audit order position 12, ...``)."""
    return {"record_id": step["doc_id"], "move": step["move"], "position": step["rank"],
            "audit_position": step["audit_position"], "why": step["why"],
            "where": words.where(step["move"], step["rank"], step["audit_position"]),
            "text": texts.get((step["query_id"], step["doc_id"]), ""), "prior": step["doc_id"] in prior}


def status(folder: str | os.PathLike[str], *, ahead: int = 1, skip: Collection[str] = ()) -> dict[str, Any]:
    """The audit's status (``workflow.status``) with the review's words: ``read``, ``found``, the
    current ``recall_bound`` (certified at every step), ``collection``, ``target``, ``delta``,
    ``prior_read`` (the records of the prior knowledge among those read), ``kept`` (answers kept for
    records not asked for, :data:`PENDING_FILE`; ``kept_relevant``: the ids of those answered
    relevant, which no certificate counts until recorded), ``changed_sources`` (:func:`changed_sources`),
    ``met_step`` (the step at which the target was first met, ``None`` before), ``reads_on`` and
    ``can_read_on`` (:func:`read_on`), and the ``next_record`` (``None`` once certified, unless
    reading on, or once all is read) with its move, place, why and text.

    :param ahead: also list, as ``next_records``, the next ``ahead`` records the review asks for if
        none of them is relevant (a record of the prior knowledge, or one whose answer is kept in
        :data:`PENDING_FILE`, as it is known; neither is listed: it is answered when asked), for a reviewer
        who reads a batch before labelling it (:func:`~rankcut.audit.designs.interleaved.lookahead`:
        a relevant answer can change the records after it).
    :param skip: records to leave out of ``next_records`` as if answered (those of
        :func:`open_batches`, handed to another reviewer), though the review asks for them first.
    :raises ValueError: when a frozen input (the records' ranking or texts) changed: the next record
        would be another review's."""
    with one_replay():   # the batch goes on from the status's replay
        return _status(Path(folder), ahead, skip)


def _status(out: Path, ahead: int, skip: Collection[str]) -> dict[str, Any]:
    manifest = load_review(out)
    check_count(ahead, "ahead", minimum=1)
    texts_path = check_inputs(manifest)["texts"]["path"]
    info = workflow.status(out, check_files=False)   # checked here: a changed one is refused
    prior = prior_knowledge(manifest)
    item = info.get("next_item")
    texts = _texts(texts_path, out) if item is not None else {}
    words = words_of(manifest)
    nxt = None if item is None else _record(item, texts, prior, words)
    if nxt is not None:   # in the review's words (the design's names a query, a document and a rank)
        info = {**info, "next_move": f"next: {nxt['move']} record {nxt['record_id']} ({nxt['where']}) — "
                                     f"{nxt['why']}"}
    kept = kept_answers(out)
    result = {**info, "read": info.get("review_steps", 0), "collection": manifest["pools"]["items"],
              "prior_read": len(prior) - len(_unread(out, prior)), "kept": len(kept),
              "kept_relevant": kept_relevant(out),
              "target": manifest["target"]["recall"], "delta": manifest["delta"], "next_record": nxt,
              "query_text": query_text(out),
              "changed_sources": changed_sources(manifest, gone=True),
              "corrects": manifest["screener"]["config"]["corrects"]}
    known = {**kept, **prior}   # answered already, so never listed: recorded when it is asked
    if ahead > 1 or skip or (nxt is not None and nxt["record_id"] in known):
        qid, _ = _items(out)
        review = replayed(FrozenAudit(manifest))
        batch: list[dict[str, Any]] = []
        for step in lookahead(review, {(qid, rid): y for rid, y in known.items()}):
            if step.item[1] not in known and step.item[1] not in skip:
                batch.append(_record(step.to_dict(), texts, prior, words))
            if len(batch) == ahead:
                break
        result["next_records"] = batch
    else:
        result["next_records"] = [] if nxt is None else [nxt]
    return result


def next_record(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The record to read now (:func:`status`'s ``next_record``)."""
    return status(folder)["next_record"]  # type: ignore[no-any-return]


def next_records(folder: str | os.PathLike[str], n: int) -> list[dict[str, Any]]:
    """The next ``n`` records to read if none of them is relevant (:func:`status`'s ``ahead``)."""
    return status(folder, ahead=n)["next_records"]  # type: ignore[no-any-return]


BATCH_COLUMNS = ("record_id", "label", "move", "position", "audit_position", "why", "records", "text")


def records_key(manifest: Manifest) -> str:
    """What names a review's records in its batch files: the start of the frozen texts' sha256
    (the same for every review of the same records, a corrected one included)."""
    return str(manifest["inputs"]["texts"]["sha256"])[:12]


def write_batch(folder: str | os.PathLike[str], path: str | os.PathLike[str],
                batch: Sequence[Mapping[str, Any]]) -> None:
    """A batch of the review's records to read (:func:`next_records`) as a CSV for :func:`label`'s
    ``from_file``: :data:`BATCH_COLUMNS`, the label column empty (to fill in), ``position`` the
    record's place in the records, ``audit_position`` its place in the audit order (audit moves),
    ``records`` the review's :func:`records_key` (:func:`label` refuses the file in a review of
    other records), its title and abstract in ``text``; TSV for ``.tsv``/``.tab``. Written whole or
    not at all. An existing file is replaced only when the review has recorded or kept
    (:data:`PENDING_FILE`) every label it holds (the last batch, given to :func:`label`), so that no
    answer is lost.

    :raises FileExistsError: when ``path`` exists and holds a label the review has not recorded, or
        is not a label file of this review.
    :raises ValueError: for a ``path`` not named ``.csv``, ``.tsv`` or ``.tab``.
    """
    out = Path(path)
    if out.suffix.lower() not in TABLES:   # a CSV named .txt or .xlsx would open as something else
        raise ValueError(f"{out}: a batch is a file to fill in and give back to label --from, written as "
                         "CSV or TSV: name it *.csv or *.tsv (next --json prints the records)")
    manifest = load_review(Path(folder))
    records = records_key(manifest)
    if out.exists():
        try:
            qid, ids = _items(Path(folder))
            given = read_labels(out, ids, records, _judged_query(qid, manifest))
        except (ValueError, UnicodeDecodeError):
            raise FileExistsError(f"{out} exists and is not a label file of this review: name a new file "
                                  "for the batch") from None
        kept = kept_answers(Path(folder))
        waiting = [rid for rid in _unread(Path(folder), given) if kept.get(rid) != given[rid]]
        if waiting:
            labels = "label" if len(waiting) == 1 else "labels"
            raise FileExistsError(f"{out} exists and holds {len(waiting)} {labels} not recorded yet (record "
                                  f"{waiting[0]}{', ...' if len(waiting) > 1 else ''}): record them first "
                                  f"(rankcut review label --from {out}), or name a new file")
    handed = str(out.resolve())
    notes = [b for b in _batches(Path(folder)) if b["file"] != handed]   # refused before a file is written
    _write_table(out, BATCH_COLUMNS, ([r["record_id"], "", r["move"], r["position"],
                                       r["audit_position"] or "", r["why"], records, r["text"]]
                                      for r in batch))
    write_json_atomic(Path(folder) / BATCHES_FILE,
                      [*notes, {"file": handed, "records": [r["record_id"] for r in batch],
                                "written_at": now()}])


def _batches(folder: Path) -> list[dict[str, Any]]:
    """The batch files :func:`write_batch` wrote (:data:`BATCHES_FILE`), oldest first."""
    path = folder / BATCHES_FILE
    notes = read_json(path, "written by next --out") if path.exists() else []
    if not isinstance(notes, list) or not all(isinstance(n, dict) and isinstance(n.get("file"), str)
                                              and isinstance(n.get("records"), list)
                                              and isinstance(n.get("written_at"), str) for n in notes):
        raise ValueError(f"{path} is not as next --out wrote it: delete it (it only names the batch files "
                         "handed out, for next --skip-open; no label or certificate reads it)")
    return notes


def open_batches(folder: str | os.PathLike[str], *, but: str | os.PathLike[str] | None = None
                 ) -> list[dict[str, Any]]:
    """The batch files :func:`write_batch` wrote (other than ``but``) that hold a record the review
    has neither read nor kept an answer for: another reviewer's batch, still to be answered. Each is
    ``{"file", "records": those records, "written_at"}``; a later batch that lists them again has
    two reviewers read them (double screening, if meant), and :func:`status`'s ``skip`` leaves
    them out."""
    out = Path(folder)
    kept = kept_answers(out)
    skip = None if but is None else str(Path(but).resolve())
    notes = [note for note in _batches(out) if note["file"] != skip]
    unread = set(_unread(out, {r for note in notes for r in note["records"]}))   # one look at the store
    found = []
    for note in notes:
        if left := [r for r in note["records"] if r in unread and r not in kept]:
            found.append({**note, "records": left})
    return found


def _write_table(path: Path, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """``columns`` and ``rows`` as a CSV (TSV for ``.tsv``/``.tab``), written whole or not at all."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter_for(path), lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    write_text_atomic(path, buf.getvalue())


def _table_rows(path: Path) -> list[list[str]]:
    """A CSV's (TSV's) rows, header first; none when the file cannot be read as one."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:   # a spreadsheet's BOM
            return list(csv.reader(f, delimiter=delimiter_for(path)))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def correct(folder: str | os.PathLike[str], into: str | os.PathLike[str], relabel: Mapping[str, int]
            ) -> dict[str, Any]:
    """Start, in the new folder ``into``, the review that ``folder``'s would have been with the
    labels ``relabel`` (record id → its right label) from the start, and give it the old review's
    answers again.

    The new review has the same records, seed (so the same frozen audit order), target, δ, policy
    and ranker; the manifest records which review it corrects and how (the report's "corrects"
    row). The old review's answers, with ``relabel`` applied, are kept answers of the new one
    (:data:`PENDING_FILE`), recorded as far as it asks for their records; a relabelled record of the
    prior knowledge is its new prior knowledge. From the first relabelled step on the ranker and the
    policy may ask for other records than before: those are asked of the reviewer, and old answers
    it never asks for cost nothing but the reading already done.

    **Why the seed stays the same.** The guarantee is over the one frozen audit order, for a fixed
    labelling, and assumes the labels are right. With the same order, the corrected review is a
    function of that order and the (now right) labels: it is the review the reviewer would have
    had with those labels from the start, so its chance of a false "met" is that review's, at most
    δ. A new seed would be a second review: restarting with fresh orders until one stops early
    would give each restart its own chance of a false "met", and their union is not bounded by δ.
    So a correction never draws a new order, and it is refused for a record whose label it would
    not change.

    :returns: ``{"manifest", "corrected" (record id → (was, now)), "answers" (the old answers
        given again), "recorded" (of them, recorded now), "kept" (the rest, kept)}``.
    :raises ValueError: for an empty ``relabel``, a record the old review does not hold or never
        had an answer for (label it when the new review asks), one whose answer is only kept (a
        ``label --from`` replaces it in place), a label it already has, ``into``
        the old folder, and whatever :func:`status` refuses on the old review (a changed frozen
        input, an edited store).
    """
    old, out = Path(folder), Path(into)
    manifest = load_review(old)
    if out.resolve() == old.resolve():
        raise ValueError(f"{out} is the review to correct: a corrected review goes into a new folder "
                         "(the review it corrects stays as it is)")
    _check_empty(out)
    if not relabel:
        raise ValueError("name at least one record to relabel (RECORD=LABEL)")
    paths = check_inputs(manifest)
    review = replayed(FrozenAudit(manifest))
    recorded = {s.item[1]: int(s.label or 0) for s in review.steps}
    answers = {**kept_answers(old), **recorded}
    _, ids = _items(old)
    known = set(ids)
    for rid, y in relabel.items():
        if rid not in known:
            raise ValueError(f"record {rid!r} is not in review {manifest.short_id} ({len(ids)} records)")
        if rid in answers and rid not in recorded:
            raise ValueError(f"record {rid!r} is only kept in review {manifest.short_id} (answered, never "
                             "recorded: the review has not asked for it), so no step was chosen from it: "
                             "give its right label with rankcut review label --from, which replaces a kept "
                             "answer in place — no new review is needed")
        if rid not in answers:
            raise ValueError(f"record {rid!r} has no answer in review {manifest.short_id}: nothing to "
                             "correct (label it when a review asks for it)")
        if y not in (0, 1):
            raise ValueError(f"record {rid!r}: a label is 0 or 1, got {y!r}")
        if answers[rid] == y:
            raise ValueError(f"record {rid!r} is labelled {y} in review {manifest.short_id} already: "
                             "nothing to correct")
    fixed = {**answers, **relabel}
    config = manifest["screener"]["config"]
    prior = {rid: fixed[rid] for rid in config["prior"]}
    corrects = {"review": manifest.audit_id,
                "relabelled": {rid: {"was": answers[rid], "now": int(y)} for rid, y in relabel.items()}}
    policy = manifest["policy"]
    new = _freeze(out, Path(paths["run"]["path"]).read_text(encoding="utf-8"),
                  Path(paths["texts"]["path"]).read_text(encoding="utf-8"),
                  {**config, "prior": prior, "corrects": corrects}, delta=manifest["delta"],
                  target_recall=manifest["target"]["recall"], seed=manifest["seed"],
                  policy=f"{policy['name']}:" + ",".join(f"{k}={v}" for k, v in policy["config"].items()),
                  prior_scale=manifest["prior_scale"], prior_basis=manifest["prior_basis"])
    given = {rid: y for rid, y in fixed.items() if rid not in prior}
    # each old answer is recorded with where it came from: the corrected review, or the correction
    said = f"review {manifest.short_id}'s answer (rankcut review correct)"
    _keep(out, {rid: (y, "relabelled by rankcut review correct" if rid in relabel else said)
                for rid, y in given.items()})
    record_known(out)   # the prior knowledge too: the corrected review's audit may meet it
    kept = kept_answers(out)
    return {"manifest": new, "corrected": {rid: (answers[rid], int(y)) for rid, y in relabel.items()},
            "answers": len(given), "recorded": len(given) - len(kept), "kept": len(kept)}


def batch_records(path: str | os.PathLike[str]) -> list[str] | None:
    """The record ids a batch file of :func:`write_batch` lists, in its order (``None``: the file is
    another label file, or unreadable, or lists none), so that the next batch can be asked of the
    same size, and a record it lists that the review still asks for is known to be unanswered."""
    rows = _table_rows(Path(path))
    listed = [row[0].strip() for row in rows[1:] if row] if rows and tuple(rows[0]) == BATCH_COLUMNS else []
    return listed or None


def read_on(folder: str | os.PathLike[str]) -> tuple[int, bool]:
    """Read on after the target was met: from now on the review asks for the ranker's next picks,
    one at a time (``next``, ``label``, the labelling page), until every record is read or the
    reviewer stops; each one read is counted, and the certificate stays met and says at which step
    it was first met (:meth:`rankcut.audit.designs.interleaved.Interleaved.read_on`, where the guarantee is
    argued). Answers kept for records not asked for yet (:data:`PENDING_FILE`) are recorded as far
    as the ranker picks them. Returns the records read when the review began to read on, and
    whether it began now (``False``: it read on already; nothing is changed).

    :raises ValueError: when the target is not met yet, every record is read, the folder is
        read-only, or a frozen input changed.
    """
    out = Path(folder)
    check_inputs(load_review(out))
    since, now = workflow.read_on(out)
    record_known(out)   # an answer given before, for a record the ranker picks now, is not asked again
    return since, now


def known_outcome(folder: str | os.PathLike[str], known: Mapping[str, int]) -> dict[str, Any]:
    """What a simulated review did, by the known labels (record id → 0/1) that played the reviewer,
    which the certificate does not use: ``relevant`` (all the records known relevant), ``found``
    (of them, read), ``recall`` (their ratio; 1.0 with none relevant), ``last_found_at`` (the step
    that read the last relevant record found; 0: none found), ``read`` and ``collection``."""
    from rankcut.audit.designs.interleaved import recorded_steps

    out = Path(folder)
    steps = recorded_steps(out)
    relevant = sum(int(y) for y in known.values())
    hits = [int(s["step"]) for s in steps if int(known.get(s["doc_id"], 0))]
    return {"relevant": relevant, "found": len(hits), "recall": len(hits) / relevant if relevant else 1.0,
            "last_found_at": max(hits, default=0), "read": len(steps), "collection": len(_items(out)[1])}


def simulate(records: Records, folder: str | os.PathLike[str], *, known: Mapping[str, int] | None = None,
             known_from: str = "the labels given", progress: bool = False,
             **options: Any) -> workflow.CertifyResult:
    """A whole seeded review, known labels playing the reviewer: :func:`start` (``options``), every
    step labelled from ``known`` (default the records' own labels; ``known_from`` says where
    ``known`` came from, for a refusal) until certified or all is read, then certify. A progress
    bar over the records read when ``progress``.

    :raises ValueError: without a label for every record (a label column labelled throughout, or
        qrels), or with none of them relevant: a review with nothing to find is met at once ("0 of 0
        found"), which is no simulation of it (a wrong label column, most often).
    """
    from rankcut._progress import bars

    if known is None:
        if records.labels is None:
            raise ValueError(f"{records.name}: a simulation needs every record's label; give a label column "
                             "labelled on every record, or qrels")
        known = dict(zip(records.ids, records.labels.tolist(), strict=True))
        known_from = str(records.labelled_by)
    if not any(int(known.get(rid, 0)) for rid in records.ids):
        raise ValueError(f"{records.name}: the labels the simulation plays ({known_from}) mark none of the "
                         f"{len(records)} records relevant: a review with nothing to find is met at once, "
                         "which is no simulation of it; give the labels of the relevant records (another "
                         f"column: {spelled('label_column', 'label')})")
    clash = next(((rid, y) for rid, y in zip(records.ids, records.prior.tolist(), strict=True)
                  if y >= 0 and int(known.get(rid, 0)) != y), None)
    if clash is not None:   # before anything is frozen
        rid, y = clash
        raise ValueError(f"{records.name}: record {rid!r} is known {'relevant' if y else 'not relevant'} "
                         f"before the session, but the labels the simulation plays ({known_from}) say "
                         f"{int(known.get(rid, 0))}: give the prior knowledge the labels agree with")
    start(records, folder, **options)
    with bars(progress):
        label(folder, known=known)
        return workflow.certify(Path(folder))
