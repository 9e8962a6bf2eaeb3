"""The sequential design of the audit workflow (high-recall review): the cut labelled in full, the
excluded pool in one random audit order, certify at any labelled prefix — checked against the
engine (rankcut.certify.sequential) called by hand with counts taken from the qrels, and every
refusal that keeps the guarantee."""

from __future__ import annotations

import json
import shutil
import sqlite3
from itertools import permutations
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from audit_testdata import Data, _rows
from scipy.stats import chisquare

from rankcut.audit import workflow as wf
from rankcut.audit.designs.sequential import engine
from rankcut.audit.folder import load_audit
from rankcut.audit.pools import Pools
from rankcut.audit.report import write_report
from rankcut.audit.sampling import draw_excluded
from rankcut.certify.curves import sequential_curve
from rankcut.certify.sequential import SequentialAudit, default_prior_mean, sequential_recall_certificate
from rankcut.data.trec import load_trec


def _frozen(tmp_path: Path, data: Data, name: str = "A", **kw: Any) -> Path:
    audit = tmp_path / name
    wf.freeze(audit, run=data.run, cut=data.cut, design="sequential", target_recall=0.8, seed=7, **kw)
    wf.plan(audit)
    wf.sample(audit)
    return audit


def _write_labels(path: Path, data: Data, items: list[tuple[str, str]]) -> Path:
    lines = ["query_id,doc_id,label"] + [f"{q},{d},{int((q, d) in data.relevant)}" for q, d in items]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sample_is_the_cut_then_a_seeded_permutation_of_the_excluded_pool(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    rows = _rows(audit)
    cut = [(r["query_id"], r["doc_id"]) for r in rows if r["pool"] == "included"]
    order = [(r["query_id"], r["doc_id"]) for r in rows if r["pool"] == "excluded"]
    assert [r["pool"] for r in rows] == ["included"] * len(cut) + ["excluded"] * len(order)
    kept = [(q, d) for q, docs in data.lists.items() for d in docs[: data.cuts[q]]]
    rest = [(q, d) for q, docs in data.lists.items() for d in docs[data.cuts[q]:]]
    assert cut == kept                                   # query by query, in rank order
    assert sorted(order) == sorted(rest) and order != rest   # every excluded item once, shuffled
    lists = load_trec(data.run)
    pools = Pools.from_lists(lists, [data.cuts[q] for q in lists.qids])
    assert order == draw_excluded(pools, pools.n0, np.random.default_rng([7, 0]))
    to_label = (audit / "to_label.csv").read_text().splitlines()
    assert to_label[0] == "query_id,doc_id,label,part,position"
    assert [tuple(line.split(",")[:2]) for line in to_label[1:]] == cut + order   # the order labels count in
    assert to_label[1].endswith(",cut,1") and to_label[len(cut) + 1].endswith(",audit,1")
    assert to_label[-1].endswith(f",audit,{len(order)}")


def test_the_prior_is_frozen_in_the_manifest(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    manifest = json.loads((audit / "manifest.json").read_text())
    assert manifest["prior_scale"] == 0.5 and manifest["allocation"] == {"sequential audit": 0.05}


def test_a_full_draw_of_the_pool_is_a_uniform_permutation() -> None:
    """The audit order must be uniform over orderings (the confidence sequence's only assumption)."""
    pools = Pools(["q"], [("a", "b", "c", "d")], [1])
    perms = {p: i for i, p in enumerate(permutations(("b", "c", "d")))}
    counts = np.zeros(len(perms))
    for seed in range(3000):
        counts[perms[tuple(d for _, d in draw_excluded(pools, 3, np.random.default_rng([seed, 0])))]] += 1
    assert chisquare(counts).pvalue > 1e-4


def _running_certificate(found: int, y: np.ndarray, where: np.ndarray, u: int) -> Any:
    """The registered certificate after ``u`` audit labels ``y[:u]``, with the running intersection."""
    return sequential_recall_certificate(found=found, pool=y.size, labelled=u, hits=int(y[:u].sum()),
                                         target=0.8, delta=0.05, prior_mean=default_prior_mean(found, 0.8),
                                         best_prefix=int(where[u]), best_prefix_hits=int(y[:where[u]].sum()))


def test_certify_at_every_prefix_is_the_engine_on_the_qrels_counts(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    rows = _rows(audit)
    n1 = sum(r["pool"] == "included" for r in rows)
    order = [(r["query_id"], r["doc_id"]) for r in rows if r["pool"] == "excluded"]
    found = sum((r["query_id"], r["doc_id"]) in data.relevant for r in rows[:n1])
    assert found == data.truth()[1]
    wf.label(audit, qrels=data.qrels, limit=n1)
    y = np.array([item in data.relevant for item in order], dtype=np.int64)
    running, where = SequentialAudit(pool=len(order), found=found, target=0.8, delta=0.05,
                                     prior_mean=default_prior_mean(found, 0.8)).running_upper(y)
    certified_at = [_running_certificate(found, y, where, u).details["certified"]
                    for u in range(len(order) + 1)]
    results = []
    for t in range(0, len(order) + 1, 30):
        if t:
            wf.label(audit, qrels=data.qrels, limit=30)
        res = wf.certify(audit)
        x, s = int(y[:t].sum()), int(where[t])
        want = sequential_recall_certificate(found=found, pool=len(order), labelled=t, hits=x, target=0.8,
                                             delta=0.05, prior_mean=default_prior_mean(found, 0.8),
                                             best_prefix=s, best_prefix_hits=int(y[:s].sum()))
        assert res.report["recall"] == want and want.details["missed_upper"] == running[t]
        first = next((u for u in range(t + 1) if certified_at[u]), None)
        assert res.content["counts"]["excluded"] == {"draws": len(order), "labelled": t, "relevant": x,
                                                     "best_prefix": s, "best_prefix_hits": int(y[:s].sum()),
                                                     "first_met": first}
        assert res.content["verdict"]["met"] == want.details["certified"]
        results.append(res)
        if want.details["certified"]:
            break
    assert results[-1].content["verdict"]["met"], "the synthetic review never certified"
    assert not results[0].content["verdict"]["met"]
    # the hint for the next labels is the engine's: that many non-relevant labels do certify
    note = next(n for n in results[0].content["notes"] if n.startswith("next:"))
    more = int(note.split("if positions 1–")[1].split()[0])
    assert sequential_recall_certificate(found=found, pool=len(order), labelled=more, hits=0, target=0.8,
                                         delta=0.05,
                                         prior_mean=default_prior_mean(found, 0.8)).details["certified"]
    assert not sequential_recall_certificate(found=found, pool=len(order), labelled=more - 1, hits=0,
                                             target=0.8, delta=0.05,
                                             prior_mean=default_prior_mean(found, 0.8)).details["certified"]
    # once the audit has met relevant items, the hint says what its rate makes of those positions: a
    # lawyer read "if they hold none, the target is certified" as an estimate (the e-discovery walk)
    rated = 0
    for res in results:
        t, x = (res.content["counts"]["excluded"][k] for k in ("labelled", "relevant"))
        hint = next((n for n in res.content["notes"] if n.startswith("next:") and "if positions" in n), None)
        if hint is not None and x:
            span = hint.split("if positions ")[1].split()[0]
            more_t = int(span.split("–")[1]) - t
            assert f"at the audit's rate so far ({x} relevant in {t}) those positions would hold about " \
                   f"{round(x / t * more_t)}" in hint
            rated += 1
        elif hint is not None:
            assert "rate so far" not in hint
    assert rated, "no certify of the synthetic review had relevant audit labels before it was met"
    plain = next(n for n in results[0].content["notes"] if n.startswith("In plain words"))
    assert "no corpus was given: documents the run does not list are not covered" in plain
    # the curve: every point is the certificate at that prefix (anytime-valid, so each one holds)
    last = results[-1].content
    t_end = last["counts"]["excluded"]["labelled"]
    curve = last["curve"]
    assert curve["labels"][0] == 0 and curve["labels"][-1] == t_end
    for j, b in zip(curve["labels"], curve["bound"], strict=True):
        assert b == pytest.approx(_running_certificate(found, y, where, j).value, abs=1e-12)
    # the report recomputes the certificate from the manifest and the counts
    files = write_report(audit, tmp_path / "report.md")
    text = files.report.read_text()
    assert f"Labels spent: {n1 + t_end} — the cut's {n1} and the first {t_end} of the {len(order)}" in text
    assert "In plain words" in text
    assert wf.status(audit)["next"] is None


def test_labels_past_the_first_met_are_said_with_where_it_was_met(data: Data, tmp_path: Path) -> None:
    """The qrels oracle labels the whole audit order at once: certify said "met after N0 of N0
    audit labels", as if the review had to read them all."""
    audit = _frozen(tmp_path, data)
    rows = _rows(audit)
    n1 = sum(r["pool"] == "included" for r in rows)
    order = [(r["query_id"], r["doc_id"]) for r in rows if r["pool"] == "excluded"]
    found = sum((r["query_id"], r["doc_id"]) in data.relevant for r in rows[:n1])
    y = np.array([item in data.relevant for item in order], dtype=np.int64)
    running, where = SequentialAudit(pool=len(order), found=found, target=0.8, delta=0.05,
                                     prior_mean=default_prior_mean(found, 0.8)).running_upper(y)
    first = next(t for t in range(len(order) + 1)
                 if _running_certificate(found, y, where, t).details["certified"])
    assert 0 < first < len(order)
    labelled = wf.label(audit, qrels=data.qrels).render()   # it said "label on as far as needed"
    assert f"the audit order: all {len(order)} positions labelled — run certify" in labelled, labelled
    res = wf.certify(audit)
    assert res.met and f"met after {len(order)} of {len(order)} audit labels" in res.render()
    said = (f"the target was first met after {first} audit labels: the {len(order) - first} after them "
            "are counted in the bound, and a review could have stopped there")
    assert said in res.content["notes"]
    assert said in write_report(audit, tmp_path / "r.md").report.read_text()   # rebuilt from the counts
    partial = _frozen(tmp_path, data, "B")
    wf.label(partial, qrels=data.qrels, limit=n1 + first)   # stopped at the first "met": no such note
    res = wf.certify(partial)
    assert res.met and not any("first met" in n for n in res.content["notes"])


def test_labels_after_a_gap_wait_until_it_is_filled(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    rows = _rows(audit)
    cut = [(r["query_id"], r["doc_id"]) for r in rows if r["pool"] == "included"]
    order = [(r["query_id"], r["doc_id"]) for r in rows if r["pool"] == "excluded"]
    gap = wf.label(audit, from_file=_write_labels(tmp_path / "g.csv", data, cut + order[1:5])).render()
    # it said "positions 1–0 ... (4 more after it wait for it)"
    assert f"none of its {len(order)} positions labelled (4 further on wait for position 1)" in gap, gap
    wf.label(audit, from_file=_write_labels(tmp_path / "a.csv", data, cut + order[:10] + order[11:25]))
    res = wf.certify(audit)
    assert res.content["counts"]["excluded"]["labelled"] == 10
    assert any("14 audit labels after position 11" in n for n in res.content["notes"])
    wf.label(audit, from_file=_write_labels(tmp_path / "b.csv", data, order[10:11]))
    assert wf.certify(audit).content["counts"]["excluded"]["labelled"] == 25


def test_opened_labels_cannot_change_but_new_ones_count(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    n1 = sum(r["pool"] == "included" for r in _rows(audit))
    wf.label(audit, qrels=data.qrels, limit=n1 + 20)
    wf.certify(audit)
    with pytest.raises(wf.AuditStepError, match="overwrite.*refused.*opened for certification"):
        wf.label(audit, qrels=data.qrels, overwrite=True)
    rows = _rows(audit)
    q, d = rows[n1 + 3]["query_id"], rows[n1 + 3]["doc_id"]
    flipped = _write_labels(tmp_path / "flip.csv", data, [])
    flipped.write_text(f"query_id,doc_id,label\n{q},{d},{1 - int((q, d) in data.relevant)}\n")
    with pytest.raises(ValueError, match=r"never changed after that \(freeze a new audit\)$") as refused:
        wf.label(audit, from_file=flipped)   # it added "(the change is kept in the history)": nothing is
    assert "history" not in str(refused.value)
    wf.label(audit, qrels=data.qrels, limit=20)          # new labels are taken after the opening
    assert wf.certify(audit).content["counts"]["excluded"]["labelled"] == 40
    opened = json.loads((audit / "opened.json").read_text())
    assert opened["prefix"] == 40
    rows = _rows(audit)
    q, d = rows[n1 + 5]["query_id"], rows[n1 + 5]["doc_id"]   # an opened audit label, edited behind the tool
    with sqlite3.connect(audit / "labels.sqlite") as con:
        con.execute("UPDATE labels SET label = 1 - label WHERE query_id = ? AND doc_id = ?", (q, d))
    with pytest.raises(ValueError, match="opened for certification.*changed or were removed"):
        wf.certify(audit)
    # status says so too (it said "done" and nothing else); the report is of the certificate
    # written before the edit, from its files, never from the labels: it can still be read
    assert "changed or were removed since" in wf.status(audit)["labels_changed"]
    assert "after 40 of" in write_report(audit, tmp_path / "r.md").report.read_text()


def test_a_missing_label_file_is_named_by_its_option(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    with pytest.raises(FileNotFoundError, match=r"^from_file .*missing.csv: the file does not exist$"):
        wf.label(audit, from_file=tmp_path / "missing.csv")
    with pytest.raises(FileNotFoundError, match=r"^qrels .*: the file is a folder$"):
        wf.label(audit, qrels=tmp_path)
    assert not (audit / "labels.sqlite").exists()


def test_a_report_of_a_certificate_labels_came_in_after_is_refused(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    n1 = sum(r["pool"] == "included" for r in _rows(audit))
    wf.label(audit, qrels=data.qrels, limit=n1 + 10)
    wf.certify(audit)
    assert "since_certify" not in wf.status(audit)
    write_report(audit, tmp_path / "r.md")
    wf.label(audit, qrels=data.qrels, limit=21)
    assert wf.status(audit)["since_certify"] == "21 audit labels"
    with pytest.raises(wf.AuditStepError, match=r"^the certificate is out of date \(21 audit labels read "
                                                r"since the last certify\): run certify again, then report$"):
        write_report(audit, tmp_path / "r.md")
    wf.certify(audit)
    assert write_report(audit, tmp_path / "r.md").replaced


def test_a_replaced_label_store_is_refused(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    n1 = sum(r["pool"] == "included" for r in _rows(audit))
    wf.label(audit, qrels=data.qrels, limit=n1 + 10)
    shutil.copy(audit / "labels.sqlite", tmp_path / "before.sqlite")   # a copy from before the opening
    wf.certify(audit)
    (audit / "labels.sqlite").unlink()
    with pytest.raises(ValueError, match="labels.sqlite is missing, but the labels of this audit were"):
        wf.label(audit, qrels=data.qrels, limit=n1 + 50)
    shutil.copy(tmp_path / "before.sqlite", audit / "labels.sqlite")
    with pytest.raises(ValueError, match="replaced or deleted after the labels were seen"):
        wf.certify(audit)


def test_the_cut_must_be_labelled_in_full(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    rows = _rows(audit)
    cut = [(r["query_id"], r["doc_id"]) for r in rows if r["pool"] == "included"]
    wf.label(audit, from_file=_write_labels(tmp_path / "a.csv", data, cut[1:]))
    with pytest.raises(ValueError, match=rf"1 of its {len(cut)} items have no label \(first: query "
                                         rf"'{cut[0][0]}', document '{cut[0][1]}'\)"):
        wf.certify(audit)
    assert not (audit / "opened.json").exists()
    assert wf.status(audit)["next"] == "label"


def test_an_empty_excluded_pool_is_a_complete_review(tmp_path: Path, data: Data) -> None:
    audit = tmp_path / "A"
    wf.freeze(audit, run=data.run, cut=data.run, design="sequential", target_recall=0.8, seed=1)
    wf.plan(audit)
    wf.sample(audit)
    wf.label(audit, qrels=data.qrels)
    res = wf.certify(audit)
    assert res.report["recall"].value == 1.0 and res.content["verdict"]["met"]
    # it said "met after 0 of 0 audit labels" (note 48's walk)
    assert res.content["verdict"]["text"] == ("target recall ≥ 0.8: met — the cut holds every item, so "
                                              "nothing is left to audit")


@pytest.mark.parametrize(("kw", "message"), [
    ({}, "sequential design needs its recall target"),
    ({"target_recall": None, "max_missed": 3}, "max_missed is not a target of the sequential design"),
    ({"sampling": "with-replacement"}, "with-replacement is not for it"),
    ({"allow_incomplete": True}, "allow_incomplete is not for the sequential design"),
    ({"allocation": {"excluded": 0.02, "included": 0.03}}, "allocation is for the two-pool design"),
])
def test_freeze_refusals(data: Data, tmp_path: Path, kw: dict[str, Any], message: str) -> None:
    args = {"target_recall": 0.8} if kw else {}
    args.update(kw)
    args = {k: v for k, v in args.items() if v is not None}
    with pytest.raises(ValueError, match=message):
        wf.freeze(tmp_path / "A", run=data.run, cut=data.cut, design="sequential", **args)
    assert not (tmp_path / "A" / "manifest.json").exists()


def test_reuse_and_sizes_are_refused(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    with pytest.raises(ValueError, match="reuse_labels is not offered for the sequential design"):
        wf.freeze(tmp_path / "B", run=data.run, cut=data.cut, design="sequential", target_recall=0.8,
                  reuse_labels=audit)
    other = tmp_path / "C"
    wf.freeze(other, run=data.run, cut=data.cut, design="sequential", target_recall=0.8, seed=3)
    wf.plan(other)
    with pytest.raises(ValueError, match="labels the whole excluded pool .* in order: excluded 50"):
        wf.sample(other, excluded=50)
    with pytest.raises(ValueError, match="limit is for qrels"):
        wf.label(audit, from_file=tmp_path / "x.csv", limit=5)


def test_status_says_label_on_until_the_target_is_met(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    n1 = sum(r["pool"] == "included" for r in _rows(audit))
    assert wf.status(audit)["next"] == "label"
    wf.label(audit, qrels=data.qrels, limit=n1)
    assert wf.status(audit)["next"] == "certify"
    wf.certify(audit)
    info = wf.status(audit)
    assert info["next"] == "label" and "NOT met yet after 0" in info["verdict"]
    wf.label(audit, qrels=data.qrels, limit=10)
    info = wf.status(audit)
    assert info["next"] == "certify" and info["audit_labels"] == 10
    assert "(certified at 0 audit labels; 10 labelled since are not: run certify again)" in info["verdict"]
    wf.certify(audit)
    wf.label(audit, qrels=data.qrels)                    # the whole pool: the claim is exact
    wf.certify(audit)
    assert wf.status(audit)["next"] is None


def test_a_frozen_prior_scale_is_the_one_certified_with(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data, prior_scale=0.25)
    assert json.loads((audit / "manifest.json").read_text())["prior_scale"] == 0.25
    rows = _rows(audit)
    n1 = sum(r["pool"] == "included" for r in rows)
    found = sum((r["query_id"], r["doc_id"]) in data.relevant for r in rows[:n1])
    y = np.array([(r["query_id"], r["doc_id"]) in data.relevant for r in rows[n1:n1 + 120]], dtype=np.int64)
    wf.label(audit, qrels=data.qrels, limit=n1 + 120)
    res = wf.certify(audit)
    prior = default_prior_mean(found, 0.8, 0.25)
    _, where = SequentialAudit(pool=len(rows) - n1, found=found, target=0.8, delta=0.05,
                               prior_mean=prior).running_upper(y)
    want = sequential_recall_certificate(found=found, pool=len(rows) - n1, labelled=120, hits=int(y.sum()),
                                         target=0.8, delta=0.05, prior_mean=prior, best_prefix=int(where[-1]),
                                         best_prefix_hits=int(y[:where[-1]].sum()))
    assert res.report["recall"] == want
    for bad in (0, -1.0, True, "0.5"):
        with pytest.raises(ValueError, match="prior_scale must be a positive number"):
            wf.freeze(tmp_path / "B", run=data.run, cut=data.cut, design="sequential", target_recall=0.8,
                      prior_scale=bad)
    with pytest.raises(ValueError, match="prior_scale is for the sequential and interleaved designs, "
                                         "not excluded"):
        wf.freeze(tmp_path / "B", run=data.run, cut=data.cut, design="excluded", prior_scale=0.25)


def test_the_curve_counts_the_hits_up_to_each_point(data: Data, tmp_path: Path) -> None:
    """Every audit label relevant: the curve's point after j labels is the certificate at (j, j)."""
    audit = load_audit(_frozen(tmp_path, data))
    pool, found = audit.base.n0, 30
    y = np.ones(40, dtype=np.int64)
    running, where = engine(audit, found).running_upper(y)
    curve = sequential_curve(found, y, running)
    assert curve["labels"][0] == 0 and curve["labels"][-1] == 40
    for j, b in zip(curve["labels"], curve["bound"], strict=True):
        want = sequential_recall_certificate(found=found, pool=pool, labelled=j, hits=j, target=0.8,
                                             delta=0.05, prior_mean=default_prior_mean(found, 0.8),
                                             best_prefix=int(where[j]), best_prefix_hits=int(where[j]))
        assert b == pytest.approx(want.value, abs=1e-12), j
    assert np.all(np.diff(curve["bound"]) >= 0)   # the running bound never withdraws a recall level


def test_a_met_stays_met_when_later_labels_find_relevant_items(data: Data, tmp_path: Path) -> None:
    """The running intersection: finds after the first 'met' cannot withdraw it, where the
    certificate at the current prefix alone would (checked here, so the test can fail)."""
    audit = _frozen(tmp_path, data)
    rows = _rows(audit)
    n1 = sum(r["pool"] == "included" for r in rows)
    cut = [(r["query_id"], r["doc_id"]) for r in rows[:n1]]
    order = [(r["query_id"], r["doc_id"]) for r in rows[n1:]]
    found = sum(item in data.relevant for item in cut)
    engine = SequentialAudit(pool=len(order), found=found, target=0.8, delta=0.05,
                             prior_mean=default_prior_mean(found, 0.8))
    quiet = engine.zero_find_stop(0, 0)
    burst = 4
    assert quiet + burst < len(order)
    lines = ["query_id,doc_id,label"] + [f"{q},{d},{int((q, d) in data.relevant)}" for q, d in cut]
    lines += [f"{q},{d},0" for q, d in order[:quiet]]
    (tmp_path / "quiet.csv").write_text("\n".join(lines) + "\n")
    wf.label(audit, from_file=tmp_path / "quiet.csv")
    first = wf.certify(audit)
    assert first.content["verdict"]["met"]
    (tmp_path / "burst.csv").write_text("query_id,doc_id,label\n"
                                        + "".join(f"{q},{d},1\n" for q, d in order[quiet:quiet + burst]))
    wf.label(audit, from_file=tmp_path / "burst.csv")
    later = wf.certify(audit)
    assert later.content["verdict"]["met"]
    assert later.report["recall"].value >= first.report["recall"].value
    assert later.content["counts"]["excluded"]["best_prefix"] == quiet
    assert not sequential_recall_certificate(found=found, pool=len(order), labelled=quiet + burst, hits=burst,
                                             target=0.8, delta=0.05,
                                             prior_mean=default_prior_mean(found, 0.8)).details["certified"]


def test_interactive_labelling_says_where_in_the_cut_or_the_audit_order(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    rows = _rows(audit)
    n1 = sum(r["pool"] == "included" for r in rows)
    shown: list[str] = []
    answers = iter(["n", "q"])
    wf.label(audit, interactive=True, input=lambda _: next(answers), output=shown.append)
    assert f"[cut 1/{n1}] query {rows[0]['query_id']}" in shown
    wf.label(audit, qrels=data.qrels, limit=n1 - 1)     # the rest of the cut
    answers = iter(["y", "q"])
    shown.clear()
    wf.label(audit, interactive=True, input=lambda _: next(answers), output=shown.append)
    assert f"[audit order 1/{len(rows) - n1}] query {rows[n1]['query_id']}" in shown
    with sqlite3.connect(audit / "labels.sqlite") as db:
        got = db.execute("SELECT label FROM labels WHERE query_id = ? AND doc_id = ?",
                         (rows[n1]["query_id"], rows[n1]["doc_id"])).fetchone()
    assert got == (1,)


def test_status_reads_an_empty_label_store_as_no_label(data: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, data)
    (audit / "labels.sqlite").write_bytes(b"")   # a label call stopped before it wrote anything
    info = wf.status(audit)   # it said "not a rankcut label store (an SQLite database without tables)"
    assert info["next"] == "label" and info["audit_labels"] == 0
    wf.label(audit, qrels=data.qrels)   # and labelling goes on into it
    assert wf.status(audit)["next"] == "certify"
