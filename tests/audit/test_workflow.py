"""The guarded audit workflow: the steps freeze → plan → sample → label → certify on any design, on
synthetic runs written by the tests (relevance known), and every refusal the issue lists. Each
design's own tests are in test_design_*.py (test_workflow_sequential.py for the sequential one),
the report's in test_report.py."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from audit_testdata import Data, _rows, _y

from rankcut.audit import workflow as wf
from rankcut.audit.designs import DESIGNS
from rankcut.audit.folder import refuse_if_opened
from rankcut.audit.labels import LabelStore
from rankcut.audit.manifest import load_manifest, write_manifest
from rankcut.audit.report import write_report
from rankcut.certify import excluded as ex
from rankcut.certify import recall as rc

# ---------------------------------------------------------------------------------------------
# the steps on any design: the draws, the corpus, incomplete labels, the list to label


def test_a_redraw_under_another_numpy_says_so(sampled: Path) -> None:
    from rankcut.audit.manifest import sha256_file

    info = json.loads((sampled / "sample.json").read_text())
    assert info["numpy"] == np.__version__
    rows = (sampled / "sample.jsonl").read_text().splitlines()
    (sampled / "sample.jsonl").write_text("\n".join(rows[1:] + rows[:1]) + "\n")  # another order
    info["sample_hash"] = sha256_file(sampled / "sample.jsonl")
    info["numpy"] = "1.0.0"
    (sampled / "sample.json").write_text(json.dumps(info))
    with pytest.raises(ValueError, match=r"drawn under numpy 1\.0\.0 .* check it under numpy 1\.0\.0"):
        wf.certify(sampled)


def test_corpus_extends_the_excluded_pool(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "C"
    m = wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", corpus_size=1000, seed=3)
    assert m["pools"]["n0"] == 12 * 1000 - sum(data.cuts.values())
    wf.plan(audit)
    wf.sample(audit, excluded=200)
    assert any(r["doc_id"].startswith("#") for r in _rows(audit))
    wf.label(audit, qrels=data.qrels)
    assert wf.certify(audit).report["missed"].inputs["excluded_sizes"] == m["pools"]["n0"]


def test_huge_corpus_switches_to_iid_draws(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "H"
    m = wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", corpus_size=10**10,
                  max_missed=10**8, seed=3)
    assert m["sampling"] == "with-replacement" and m["theorem"] == "Theorem 7"
    assert m["pools"]["n0"] == 12 * 10**10 - sum(data.cuts.values())
    with pytest.raises(ValueError, match="exceeds 1e"):
        wf.freeze(tmp_path / "H2", run=data.run, cut=data.cut, design="excluded", corpus_size=10**10,
                  sampling="without-replacement", seed=3)
    planned = wf.plan(audit).sizes
    assert planned is not None and planned["excluded"] > 0
    wf.sample(audit, excluded=500, allow_underpowered=True)
    wf.label(audit, qrels=data.qrels)
    res = wf.certify(audit)
    big = m["pools"]["items"]
    y = _y(data, _rows(audit))
    expected = ex.excluded_pool_certificate(int(y.sum()), 500, 0.05, p0=m["pools"]["n0"] / big,
                                            names=["the cut"])
    assert res.report["missed"] == expected


def test_allow_incomplete_counts_missing_labels_unfavourably(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "I"
    m = wf.freeze(audit, run=data.run, cut=data.cut, design="two-pool", allow_incomplete=True, seed=3)
    wf.plan(audit)
    wf.sample(audit, excluded=30, included=30)
    rows = _rows(audit)
    labelled = rows[::2]
    with LabelStore(audit / "labels.sqlite") as store:
        store.set_meta("audit_id", m.audit_id)
        store.set_meta("sample_hash", json.loads((audit / "sample.json").read_text())["sample_hash"])
        store.record([(r["query_id"], r["doc_id"]) for r in labelled], _y(data, labelled).tolist(), "test")
    res = wf.certify(audit)
    y = _y(data, rows)
    missing = np.ones(len(rows), dtype=bool)
    missing[::2] = False
    inc = np.array([r["pool"] == "included" for r in rows])
    y_worst = np.where(missing, np.where(inc, 0, 1), y)
    expected = rc.two_pool_recall_finite_certificate(k0=int(y_worst[~inc].sum()), n0=30,
                                                     pool0=m["pools"]["n0"], k1=int(y_worst[inc].sum()),
                                                     n1=30, pool1=m["pools"]["n1"], delta=0.05,
                                                     deltas=[0.025, 0.025])
    assert res.report["recall"] == expected
    assert any("counted unfavourably" in n for n in res.content["notes"])


def test_texts_and_jsonl_list_to_label(data: Data, tmp_path: Path) -> None:
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "text": f"text of {d}"}) + "\n"
                             for q, docs in data.lists.items() for d in docs))
    audit = tmp_path / "X"
    wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", texts=texts, seed=3)
    wf.plan(audit)
    res = wf.sample(audit, excluded=10, label_format="jsonl")
    lines = [json.loads(x) for x in res.to_label.read_text().splitlines()]
    assert len(lines) == 10 and all(x["text"] == f"text of {x['doc_id']}" for x in lines)
    assert "pool" not in lines[0]  # blinded: the labeller does not see where an item came from
    shown: list[str] = []
    answers = iter(["y", "n", "q"])
    out = wf.label(audit, interactive=True, input=lambda _: next(answers), output=shown.append)
    assert out.recorded == 2 and out.missing == 8
    assert any(line.startswith("text of ") for line in shown)


def test_the_list_to_label_gives_the_query_a_document_is_judged_against(data: Data, tmp_path: Path) -> None:
    """A passage is judged against its query: the list to label held the passage's text and only
    the query's id (the RAG engineer walk, a TREC DL texts file with its query lines); a texts file
    without queries adds no column, and a filled list is read back as labels."""
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(json.dumps({"query_id": q, "query": f"what is {q}?", "doc_id": d,
                                         "text": f"text of {d}"}) + "\n"
                             for q, docs in data.lists.items() for d in docs))
    for fmt in ("csv", "jsonl"):
        audit = tmp_path / fmt
        wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", texts=texts, seed=3)
        wf.plan(audit)
        to_label = wf.sample(audit, excluded=4, label_format=fmt).to_label
        if fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(to_label.read_text())))
            assert list(rows[0]) == ["query_id", "doc_id", "label", "query_text", "text"]
            filled = "query_id,doc_id,label,query_text,text\n" + "".join(
                f"{r['query_id']},{r['doc_id']},0,\"{r['query_text']}\",x\n" for r in rows)
        else:
            rows = [json.loads(x) for x in to_label.read_text().splitlines()]
            filled = "".join(json.dumps({**r, "label": 0}) + "\n" for r in rows)
        assert all(r["query_text"] == f"what is {r['query_id']}?" for r in rows)
        (tmp_path / f"filled.{fmt}").write_text(filled)
        assert wf.label(audit, from_file=tmp_path / f"filled.{fmt}").recorded == 4
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "text": "t"}) + "\n"
                             for q, docs in data.lists.items() for d in docs))
    wf.freeze(tmp_path / "P", run=data.run, cut=data.cut, design="excluded", texts=plain, seed=3)
    wf.plan(tmp_path / "P")
    header = wf.sample(tmp_path / "P", excluded=4).to_label.read_text().splitlines()[0]
    assert header == "query_id,doc_id,label,text"


def test_a_partly_filled_list_to_label_records_the_filled_rows(data: Data, tmp_path: Path) -> None:
    for fmt in ("csv", "jsonl"):
        audit = tmp_path / fmt
        wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", seed=3)
        wf.plan(audit)
        to_label = wf.sample(audit, excluded=6, label_format=fmt).to_label
        lines = to_label.read_text().splitlines()
        if fmt == "csv":
            lines[1] += "1"
        else:
            lines[0] = lines[0].replace('"label": null', '"label": 1')
        filled = tmp_path / f"half.{fmt}"
        filled.write_text("\n".join(lines) + "\n")
        out = wf.label(audit, from_file=filled)
        assert (out.recorded, out.missing) == (1, 5)


# ---------------------------------------------------------------------------------------------
# refusals


@pytest.fixture
def sampled(data: Data, tmp_path: Path) -> Path:
    audit = tmp_path / "R"
    wf.freeze(audit, run=data.run, cut=data.cut, design="two-pool", seed=7)
    wf.plan(audit)
    wf.sample(audit, excluded=20, included=20)
    return audit


def test_refuse_changed_cut_after_sampling(sampled: Path, data: Data) -> None:
    data.cut.write_text(data.cut.read_text().replace("d0-0 ", "d0-0x "))
    with pytest.raises(ValueError, match=r"--cut .*cut\.run changed after the audit was frozen"):
        wf.label(sampled, qrels=data.qrels)
    with pytest.raises(ValueError, match="changed after the audit was frozen"):
        wf.certify(sampled)


def test_refuse_changed_manifest(sampled: Path, data: Data) -> None:
    wf.label(sampled, qrels=data.qrels)
    path = sampled / "manifest.json"
    original = path.read_text()
    edited = json.loads(original)
    edited["delta"] = 0.2
    path.write_text(json.dumps(edited))
    with pytest.raises(ValueError, match="changed after freeze"):
        wf.certify(sampled)
    # a consistent manifest (its id recomputed): the sample was drawn from another audit
    path.unlink()
    del edited["audit_id"]
    write_manifest(sampled, edited)
    with pytest.raises(ValueError, match="the manifest changed after sampling.*Assumption 1.*restore the "
                                         "manifest it was drawn from, or freeze a new audit"):
        wf.certify(sampled)


def test_pools_that_are_not_the_frozen_ones_are_refused(data: Data, tmp_path: Path) -> None:
    """A manifest (consistent with its own hash) whose pool sizes are not what its input files give
    is refused, naming the query or the member: the certificates use the frozen sizes."""
    m = wf.freeze(tmp_path / "A", run=data.run, cut=data.cut, design="excluded", seed=2)

    def refrozen(name: str, change: Any) -> Path:
        content = json.loads(json.dumps(dict(m.content)))
        change(content)
        (tmp_path / name).mkdir()
        write_manifest(tmp_path / name, content)
        return tmp_path / name

    def one_query(c: dict[str, Any]) -> None:
        c["pools"]["per_query"]["n0"][3] += 1
        c["pools"]["per_query"]["n0"][4] -= 1  # the totals still agree

    b = refrozen("B", one_query)
    n0 = m["pools"]["per_query"]["n0"][3]
    with pytest.raises(ValueError, match=rf"records N0 of query 'q3' \(cut\) = {n0 + 1}, but the frozen "
                                         rf"input files give {n0}:.*freeze a new audit"):
        wf.plan(b)
    c = refrozen("C", lambda c: c["pools"]["members"][0].update(n0=7))
    with pytest.raises(ValueError, match="records N0 of member cut = 7, but the frozen input files give"):
        wf.plan(c)


def test_refuse_edited_sample(sampled: Path, data: Data) -> None:
    wf.label(sampled, qrels=data.qrels)
    items = sampled / "sample.jsonl"
    rows = items.read_text().splitlines()
    items.write_text("\n".join(rows[1:]) + "\n")
    with pytest.raises(ValueError, match="changed after sampling"):
        wf.certify(sampled)
    # edited consistently (hash updated too): it is not the draw of the frozen manifest and seed
    info = json.loads((sampled / "sample.json").read_text())
    from rankcut.audit.manifest import sha256_file

    info["sample_hash"] = sha256_file(items)
    (sampled / "sample.json").write_text(json.dumps(info))
    with pytest.raises(ValueError, match="not the sample that the frozen manifest and seed draw"):
        wf.certify(sampled)


def test_refuse_labels_outside_the_sample(sampled: Path, data: Data, tmp_path: Path) -> None:
    r = _rows(sampled)[0]
    labels = tmp_path / "extra.csv"
    labels.write_text(f"query_id,doc_id,label\n{r['query_id']},{r['doc_id']},1\nq0,not-sampled,0\n")
    with pytest.raises(ValueError, match="'not-sampled' is not in the sample .*nothing was recorded"):
        wf.label(sampled, from_file=labels)
    wf.label(sampled, qrels=data.qrels)
    with LabelStore(sampled / "labels.sqlite") as store:
        store.record([("q0", "not-sampled")], [0], "by hand")
    with pytest.raises(ValueError, match="not in the sample"):
        wf.certify(sampled)


def test_refuse_incomplete_sample(sampled: Path, data: Data) -> None:
    rows = _rows(sampled)
    m = load_manifest(sampled)
    with LabelStore(sampled / "labels.sqlite") as store:
        store.set_meta("audit_id", m.audit_id)
        store.set_meta("sample_hash", json.loads((sampled / "sample.json").read_text())["sample_hash"])
        store.record([(r["query_id"], r["doc_id"]) for r in rows[:-3]], [0] * (len(rows) - 3), "test")
    with pytest.raises(ValueError, match="the sample is incomplete: 3 of 40"):
        wf.certify(sampled)
    assert not (sampled / "opened.json").exists()  # a refused certify opens nothing


def test_a_cut_that_is_not_a_prefix_names_the_cut_file(data: Data, tmp_path: Path) -> None:
    bad = tmp_path / "bad.run"
    lines = data.cut.read_text().splitlines()
    del lines[1]  # q0 skips its rank 2
    bad.write_text("\n".join(lines) + "\n")
    for extra in ({"design": "excluded"}, {"design": "prefixes", "offsets": [0, 2]}):
        with pytest.raises(ValueError, match=r"^--cut .*bad\.run: query 'q0', rank 2: the cut run has"):
            wf.freeze(tmp_path / "Z", run=data.run, cut=bad, seed=1, **extra)


def test_refuse_refreeze(sampled: Path, data: Data) -> None:
    with pytest.raises(FileExistsError, match="already holds a frozen audit"):
        wf.freeze(sampled, run=data.run, cut=data.cut, design="excluded", seed=1)


def test_refuse_out_of_order(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "O"
    with pytest.raises(FileNotFoundError, match="freeze"):
        wf.plan(audit)
    wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", max_missed=30, seed=1)
    with pytest.raises(wf.AuditStepError, match="run plan first"):
        wf.sample(audit)
    with pytest.raises(wf.AuditStepError, match="run sample first"):
        wf.label(audit, qrels=data.qrels)
    with pytest.raises(wf.AuditStepError, match="run sample first"):
        wf.certify(audit)
    wf.plan(audit)
    wf.sample(audit)
    with pytest.raises(wf.AuditStepError, match="run label first"):
        wf.certify(audit)
    with pytest.raises(wf.AuditStepError, match="run certify first"):
        write_report(audit, tmp_path / "r.md")
    # each refusal says what is refused, why (Assumption 1) and what to do instead
    with pytest.raises(wf.AuditStepError, match=r"^a second sample of .* is refused: it was already drawn.*"
                                                r"\(Assumption 1\); label the sample drawn, or freeze a new"):
        wf.sample(audit)
    with pytest.raises(wf.AuditStepError, match=r"^a new plan for .* is refused: its sample was already "
                                                r"drawn .*Assumption 1.*; keep the plan .* or freeze a new"):
        wf.plan(audit, tolerated=1)
    assert wf.plan(audit).sizes is not None  # the same plan can be shown again
    wf.label(audit, qrels=data.qrels)
    wf.certify(audit)
    with pytest.raises(wf.AuditStepError, match=r"^recording labels is refused: .* opened for certification"
                                                r".*\(Assumption 1\) — freeze a new audit instead"):
        with LabelStore(audit / "labels.sqlite") as store:
            refuse_if_opened(store)
    with pytest.raises(wf.AuditStepError, match="opened for certification .* freeze a new audit instead"):
        wf.label(audit, qrels=data.qrels, overwrite=True)
    opened = json.loads((audit / "opened.json").read_text())["opened_at"]
    assert wf.certify(audit).content["opened_at"] == opened


def test_refuse_labels_changed_after_opening(sampled: Path, data: Data) -> None:
    wf.label(sampled, qrels=data.qrels)
    wf.certify(sampled)
    r = _rows(sampled)[0]
    with LabelStore(sampled / "labels.sqlite") as store:
        old = store.get([(r["query_id"], r["doc_id"])])[(r["query_id"], r["doc_id"])]
        store.record([(r["query_id"], r["doc_id"])], [1 - old], "edit", overwrite=True)
    with pytest.raises(ValueError, match=r"^certifying is refused: the labels changed after they were opened"
                                         r".*\(Assumption 1\); restore the labels that were opened, or "
                                         "freeze a new audit"):
        wf.certify(sampled)
    # the report is of the certificate written then, and says the labels changed since (it did not)
    files = write_report(sampled, sampled.parent / "report.md")
    said = wf.status(sampled)["labels_changed"]
    assert files.warning is not None and said in files.warning
    text = (sampled.parent / "report.md").read_text()
    assert "Warning: the labels changed after this certificate was written" in text and said in text
    assert "Warning" not in (sampled.parent / "report.json").read_text()   # the certificate as written
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    out = CliRunner().invoke(app, ["audit", "report", "--audit", str(sampled), "--out",
                                   str(sampled.parent / "report.html")])
    assert out.exit_code == 0 and out.stderr.startswith("warning: the labels changed after this certificate")


def test_a_report_after_an_input_changed_says_so(sampled: Path, data: Data) -> None:
    """status said an input changed after freeze (certify refuses it); the report said nothing."""
    wf.label(sampled, qrels=data.qrels)
    wf.certify(sampled)
    with open(data.cut, "a", encoding="utf-8") as f:
        f.write("q999 Q0 extra 1 1.0 edited\n")
    said = wf.status(sampled)["inputs_changed"]
    files = write_report(sampled, sampled.parent / "after.md")
    assert files.warning is not None and files.warning.startswith("an input changed after the audit was "
                                                                  f"frozen ({said})")
    text = (sampled.parent / "after.md").read_text()
    assert "Warning: an input changed after the audit was frozen" in text


def test_deleting_the_label_store_does_not_undo_the_opening(sampled: Path, data: Data,
                                                            tmp_path: Path) -> None:
    """opened.json remembers the opening: a deleted (or replaced) store cannot be relabelled, and a
    store that does not hold the labels that were opened cannot certify."""
    wf.label(sampled, qrels=data.qrels)
    opened = wf.certify(sampled).content["opened_at"]
    for name in ("labels.sqlite", "labels.sqlite-wal", "labels.sqlite-shm"):
        (sampled / name).unlink(missing_ok=True)
    zeros = tmp_path / "zeros.csv"
    rows = [line.split(",")[:2] for line in (sampled / "to_label.csv").read_text().splitlines()[1:]]
    zeros.write_text("query_id,doc_id,label\n" + "".join(f"{q},{d},0\n" for q, d in rows))
    opened_here = re.escape(f"opened for certification at {opened} (") + ".*opened.json"
    with pytest.raises(wf.AuditStepError, match=opened_here):
        wf.label(sampled, from_file=zeros)
    # a store rebuilt by hand (all labels 0) is not the one that was opened
    m = load_manifest(sampled)
    info = json.loads((sampled / "sample.json").read_text())
    with LabelStore(sampled / "labels.sqlite") as store:
        store.set_meta_many({"audit_id": m.audit_id, "sample_hash": info["sample_hash"]})
        store.record([(q, d) for q, d in rows], [0] * len(rows), "by hand")
    with pytest.raises(ValueError, match="does not hold the labels that were opened"):
        wf.certify(sampled)
    # nor can the sample be drawn again once sample.json is gone
    (sampled / "sample.json").unlink()
    with pytest.raises(wf.AuditStepError, match="opened for certification"):
        wf.sample(sampled, excluded=20, included=20)


def test_status_reads_the_opening_from_opened_json(sampled: Path, data: Data) -> None:
    """status reads the opening as certify does: deleting the store's meta (or the whole store)
    cannot make an opened audit look unopened."""
    import sqlite3

    wf.label(sampled, qrels=data.qrels)
    opened = wf.certify(sampled).content["opened_at"]
    with sqlite3.connect(sampled / "labels.sqlite") as con:
        con.execute("DELETE FROM meta WHERE key LIKE 'opened%'")
    con.close()
    info = wf.status(sampled)   # and says what certify would refuse
    assert info["opened_at"] == opened
    assert "does not hold the labels that were opened" in info["labels_changed"]
    for name in ("labels.sqlite", "labels.sqlite-wal", "labels.sqlite-shm"):
        (sampled / name).unlink(missing_ok=True)
    info = wf.status(sampled)
    assert info["opened_at"] == opened and info["steps"]["label"] and info["next"] is None
    assert "labels.sqlite is missing" in info["labels_changed"]
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    out = CliRunner().invoke(app, ["audit", "status", "--audit", str(sampled)])
    assert out.exit_code == 0 and "  warning: " in out.stdout and "labels.sqlite is missing" in out.stdout
    assert out.stdout.splitlines()[-1].startswith("next: restore the labels that were opened")   # not "done"


def test_status_names_a_sample_file_edited_by_hand(sampled: Path) -> None:
    info = json.loads((sampled / "sample.json").read_text())
    del info["sizes"]
    (sampled / "sample.json").write_text(json.dumps(info))
    with pytest.raises(ValueError, match=r"sample\.json lacks 'sizes': it is not as sample wrote it"):
        wf.status(sampled)   # it was a KeyError: a traceback, and a 500 on the page's result


def test_a_deleted_opening_record_is_refused(sampled: Path, data: Data) -> None:
    wf.label(sampled, qrels=data.qrels)
    wf.certify(sampled)
    (sampled / "opened.json").unlink()
    with pytest.raises(ValueError, match="opened.json is missing"):
        wf.certify(sampled)
    with pytest.raises(ValueError, match="opened.json is missing"):
        wf.label(sampled, qrels=data.qrels)


def test_a_failing_certificate_opens_nothing(sampled: Path, data: Data, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    """The certificates are computed before the opening is recorded: an error leaves the labels
    unopened, and certify can run again."""
    wf.label(sampled, qrels=data.qrels)

    def broken(*args: Any) -> Any:
        raise ValueError("no certificate today")

    monkeypatch.setattr(DESIGNS["two-pool"], "certify", broken)
    with pytest.raises(ValueError, match="no certificate today"):
        wf.certify(sampled)
    assert not (sampled / "opened.json").exists()
    with LabelStore(sampled / "labels.sqlite") as store:
        assert store.get_meta("opened_at") is None
    monkeypatch.undo()
    assert wf.certify(sampled).report["recall"].value >= 0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"design": "excluded", "max_missed": 0, "sampling": "with-replacement"},
     "max_missed 0 cannot be certified"),
    ({"design": "prefixes", "cut": None, "depths": [5, 10], "max_missed": 0, "sampling": "with-replacement"},
     "max_missed 0 cannot be certified"),
    ({"design": "excluded", "max_missed": 0, "corpus_size": 10**10}, r"auto: a pool of .* exceeds"),
    ({"design": "stratified", "bands": [5], "cut": "run"}, "excluded pool of the cut is empty"),
])
def test_freeze_refuses_what_certify_could_not_do(data: Data, tmp_path: Path, kwargs: dict[str, Any],
                                                 message: str) -> None:
    args: dict[str, Any] = {"run": data.run, "cut": data.cut, "seed": 1, **kwargs}
    if args["cut"] == "run":
        args["cut"] = data.run  # the cut keeps everything
    with pytest.raises(ValueError, match=message):
        wf.freeze(tmp_path / "Z", **args)
    assert not (tmp_path / "Z" / "manifest.json").exists()


def test_refuse_a_label_store_of_another_audit(sampled: Path, data: Data, tmp_path: Path) -> None:
    other = tmp_path / "other"
    wf.freeze(other, run=data.run, cut=data.cut, design="two-pool", seed=7)
    wf.plan(other)
    wf.sample(other, excluded=20, included=20)
    wf.label(other, qrels=data.qrels)
    shutil.copy(other / "labels.sqlite", sampled / "labels.sqlite")
    with pytest.raises(ValueError, match="holds the labels of audit"):
        wf.certify(sampled)


def test_reuse_of_opened_labels(data: Data, tmp_path: Path) -> None:
    old = tmp_path / "old"
    kwargs = dict(run=data.run, cut=data.cut, design="two-pool", seed=7)
    wf.freeze(old, **kwargs)
    # frozen before the old labels are opened: reusing them is valid
    early = tmp_path / "early"
    wf.freeze(early, reuse_labels=old, **kwargs)
    wf.plan(old)
    wf.sample(old, excluded=20, included=20)
    with pytest.raises(ValueError, match="without reuse_labels"):
        wf.label(old, reuse=True)
    wf.label(old, qrels=data.qrels)
    wf.certify(old)
    wf.plan(early)
    wf.sample(early, excluded=20, included=20)
    assert wf.label(early, reuse=True).recorded == 40  # same seed and pools: the same items
    assert wf.certify(early).report["recall"].value >= 0
    # frozen after they were opened: the old seed would draw the very items they labelled
    late = tmp_path / "late"
    with pytest.raises(ValueError, match="seed 7 is the seed of audit .* whose labels were seen at"):
        wf.freeze(late, reuse_labels=old, **kwargs)
    # with another seed: reused labels are refused, with a warning at freeze and at label
    with pytest.warns(wf.AuditWarning, match="certify will refuse"):
        wf.freeze(late, reuse_labels=old, **{**kwargs, "seed": 8})
    wf.plan(late)
    wf.sample(late, excluded=300, included=120)
    with pytest.warns(wf.AuditWarning):
        assert wf.label(late, reuse=True).recorded > 0
    wf.label(late, qrels=data.qrels)  # the items the old audit did not label
    with pytest.raises(ValueError, match=r"were opened for certification at .* before this audit was frozen"):
        wf.certify(late)
    # as design data: never counted; the sample is labelled afresh, never with the old seed
    design = tmp_path / "design"
    with pytest.raises(ValueError, match="seed 7 is the seed of audit .* whose labels are design data"):
        wf.freeze(design, reuse_labels=old, design_data=True, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = wf.freeze(design, reuse_labels=old, design_data=True, **{**kwargs, "seed": None})
    assert m["seed"] != 7
    wf.plan(design)
    wf.sample(design, excluded=20, included=20)
    with pytest.raises(ValueError, match="design data for this audit"):
        wf.label(design, reuse=True)
    wf.label(design, qrels=data.qrels)
    res = wf.certify(design)
    assert any("design data" in n for n in res.content["notes"])


def test_reuse_race_is_caught_at_certify(data: Data, tmp_path: Path) -> None:
    """An opening recorded with a time before the new freeze (e.g. two machines) is caught too."""
    old = _excluded_audit(tmp_path / "old", data, n=15, seed=7)
    new = _excluded_audit(tmp_path / "new", data, n=15, label=False, seed=7, reuse_labels=old)
    wf.label(new, reuse=True)
    with LabelStore(old / "labels.sqlite") as store:
        store.set_meta("opened_at", "2000-01-01T00:00:00.000000+00:00")
    with pytest.raises(ValueError, match="opened for certification at 2000-01-01"):
        wf.certify(new)


def _excluded_audit(folder: Path, data: Data, n: int = 100, label: bool = True, **kwargs: Any) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wf.AuditWarning)  # the tests check the refusals themselves
        wf.freeze(folder, run=data.run, cut=data.cut, design="excluded", **{"seed": 3, **kwargs})
    wf.plan(folder)
    wf.sample(folder, excluded=n)
    if label:
        if kwargs.get("reuse_labels") and not kwargs.get("design_data"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", wf.AuditWarning)
                assert wf.label(folder, reuse=True).recorded > 0
        wf.label(folder, qrels=data.qrels)  # the rest
    return folder


def test_labels_seen_through_a_reusing_audit_cannot_be_reused_again(data: Data, tmp_path: Path) -> None:
    """The guard follows the labels, not the folder: once B, which reused A's labels, is certified,
    A's labels have been seen, and an audit frozen after that cannot count them."""
    a = _excluded_audit(tmp_path / "A", data)
    b = _excluded_audit(tmp_path / "B", data, reuse_labels=tmp_path / "A")  # frozen before any opening
    wf.certify(b)
    with LabelStore(a / "labels.sqlite") as store:
        assert store.get_meta("opened_at") is None and store.get_meta("seen_at") is not None
    with pytest.warns(wf.AuditWarning, match=r"labels of audit .* were seen through audit"):
        wf.freeze(tmp_path / "C", run=data.run, cut=data.cut, design="excluded", seed=4, reuse_labels=a)
    wf.plan(tmp_path / "C")
    wf.sample(tmp_path / "C", excluded=300)
    with pytest.warns(wf.AuditWarning):
        assert wf.label(tmp_path / "C", reuse=True).recorded > 0
    wf.label(tmp_path / "C", qrels=data.qrels)
    with pytest.raises(ValueError, match="before this audit was frozen"):
        wf.certify(tmp_path / "C")
    # seen labels cannot be changed in their own store either
    with pytest.raises(wf.AuditStepError, match=r"^changing labels \(overwrite\) is refused: .* seen at .* "
                                                r"through audit .*\(Assumption 1, §2\.4\); record only "
                                                "missing labels"):
        wf.label(a, qrels=data.qrels, overwrite=True)
    assert wf.certify(a).report["missed"].value >= 0  # A was frozen before: its own certificate stands


def test_labels_reused_through_a_chain_are_checked_at_their_source(data: Data, tmp_path: Path) -> None:
    """C reuses B, whose labels came from A: A's opening before C was frozen refuses them, although
    B itself was never opened."""
    a = _excluded_audit(tmp_path / "A", data)
    b = _excluded_audit(tmp_path / "B", data, reuse_labels=a)
    wf.certify(a)
    c = _excluded_audit(tmp_path / "C", data, n=300, reuse_labels=b, seed=4)
    with pytest.raises(ValueError, match="before this audit was frozen"):
        wf.certify(c)
    assert wf.certify(b).report["missed"].value >= 0  # B was frozen before A was opened


def test_a_broken_reuse_chain_is_refused_naming_the_path(data: Data, tmp_path: Path) -> None:
    """A link of the reuse chain that is gone or replaced is refused, never skipped: without it the
    guard cannot see whether the labels were seen (§2.4)."""
    a = _excluded_audit(tmp_path / "A", data)
    b = _excluded_audit(tmp_path / "B", data, reuse_labels=a)  # B's labels come from A
    wf.certify(a)  # A's labels are now opened: C below must not count them
    c = _excluded_audit(tmp_path / "C", data, n=300, reuse_labels=b, seed=4)
    store = a / "labels.sqlite"
    saved = store.read_bytes()
    store.unlink()  # A's store gone: its opening, recorded there too, must not vanish with it
    for f in a.glob("labels.sqlite-*"):
        f.unlink()
    with pytest.raises(ValueError, match=rf"chain of reused labels is broken at {re.escape(str(store))}: "
                                         r"the label store is missing.*opened\.json shows.*Restore"):
        wf.certify(c)
    # with opened.json and the certificate gone too, only the chain says A had labels (B copied them)
    aside = tmp_path / "aside"
    aside.mkdir()
    for name in ("opened.json", "certificate.json"):
        (a / name).rename(aside / name)
    with pytest.raises(ValueError, match=r"label store is missing, but the audit had labels \(labels were "
                                         "copied from it"):
        wf.certify(c)
    for name in ("opened.json", "certificate.json"):
        (aside / name).rename(a / name)
    with pytest.raises(ValueError, match="chain of reused labels is broken at"):
        wf.freeze(tmp_path / "D", run=data.run, cut=data.cut, design="excluded", seed=5, reuse_labels=b)
    # replaced by another audit's store
    _excluded_audit(tmp_path / "X", data)
    shutil.copy(tmp_path / "X" / "labels.sqlite", store)
    with pytest.raises(ValueError, match=r"broken at .*labels\.sqlite: it holds the labels of audit"):
        wf.certify(c)
    store.write_bytes(saved)
    with pytest.raises(ValueError, match="before this audit was frozen"):  # the chain whole again
        wf.certify(c)
    # a folder of the chain that holds another audit now
    shutil.rmtree(a)
    shutil.copytree(tmp_path / "X", a)
    with pytest.raises(ValueError, match=r"broken at .*manifest\.json: the folder holds audit"):
        wf.certify(c)
    shutil.rmtree(a)
    with pytest.raises(ValueError, match=r"broken at .*manifest\.json: its manifest cannot be read"):
        wf.freeze(tmp_path / "E", run=data.run, cut=data.cut, design="excluded", seed=5, reuse_labels=b)


def test_docs_list_every_meta_key_the_workflow_writes(data: Data, tmp_path: Path) -> None:
    """docs/audit.md's table of label-store meta keys names every key a reuse round writes."""
    import sqlite3

    a = _excluded_audit(tmp_path / "A", data)
    b = _excluded_audit(tmp_path / "B", data, reuse_labels=a)
    wf.certify(b)  # writes the opening in B, seen_at/seen_by in A
    keys: set[str] = set()
    for folder in (a, b):
        with sqlite3.connect(folder / "labels.sqlite") as con:
            keys |= {str(r[0]) for r in con.execute("SELECT key FROM meta")}
        con.close()
    assert {"seen_at", "seen_by", "reused_from", "opened_at"} <= keys
    docs = (Path(__file__).resolve().parents[2] / "docs" / "audit.md").read_text(encoding="utf-8")
    table = docs.split("The `meta` table of `labels.sqlite`", 1)[1].split("\n\n", 2)[1]
    documented = {k for row in table.splitlines() if row.startswith("| `")
                  for k in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert keys <= documented, sorted(keys - documented)


def test_design_data_marks_the_labels_seen(data: Data, tmp_path: Path) -> None:
    """Taking an audit's labels as design data says they were seen: an audit frozen later cannot
    count them, even though nobody certified with them."""
    a = _excluded_audit(tmp_path / "A", data)
    d = tmp_path / "D"
    m = wf.freeze(d, run=data.run, cut=data.cut, design="excluded", reuse_labels=a, design_data=True)
    with LabelStore(a / "labels.sqlite") as store:
        assert store.get_meta("seen_at") == m["frozen_at"] and store.get_meta("seen_by") == m.audit_id
    with pytest.raises(ValueError, match="seed 3 is the seed of audit"):
        wf.freeze(tmp_path / "E", run=data.run, cut=data.cut, design="excluded", seed=3, reuse_labels=a)
    e = _excluded_audit(tmp_path / "E", data, n=300, reuse_labels=a, seed=5)
    with pytest.raises(ValueError, match="before this audit was frozen"):
        wf.certify(e)


def test_design_data_marks_the_labels_seen_before_its_manifest(data: Data, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash after the manifest of a design-data freeze is written must not leave its sources
    unmarked: they are marked first (§2.4), with the id the manifest then gets."""
    a = _excluded_audit(tmp_path / "A", data)

    def crash(folder: Any, content: Any) -> Any:
        with LabelStore(a / "labels.sqlite") as store:
            assert store.get_meta("seen_at") == content["frozen_at"]  # marked before the manifest
        raise KeyboardInterrupt  # killed while writing it

    monkeypatch.setattr(wf, "write_manifest", crash)
    with pytest.raises(KeyboardInterrupt):
        wf.freeze(tmp_path / "D", run=data.run, cut=data.cut, design="excluded", reuse_labels=a,
                  design_data=True)
    monkeypatch.undo()
    m = wf.freeze(tmp_path / "D2", run=data.run, cut=data.cut, design="excluded", reuse_labels=a,
                  design_data=True)
    with LabelStore(a / "labels.sqlite") as store:
        assert store.get_meta("seen_by") != m.audit_id  # the earlier (crashed) sight is kept


def test_a_design_data_round_draws_a_fresh_sample(data: Data, tmp_path: Path) -> None:
    """The labels that designed a cut never certify it through the seed: a design-data round gets a
    fresh seed, so its sample is not the one whose labels were seen."""
    old, new = tmp_path / "old", tmp_path / "new"
    kw = dict(run=data.run, cut=data.cut, design="two-pool", seed=7)
    wf.freeze(old, **kw)
    wf.plan(old)
    wf.sample(old, excluded=20, included=20)
    wf.label(old, qrels=data.qrels)
    wf.certify(old)
    with pytest.raises(ValueError, match="seed 7 is the seed of audit"):
        wf.freeze(new, reuse_labels=old, design_data=True, **kw)
    wf.freeze(new, reuse_labels=old, design_data=True, **{**kw, "seed": None})
    wf.plan(new)
    wf.sample(new, excluded=20, included=20)
    a = {(r["query_id"], r["doc_id"]) for r in _rows(old)}
    b = {(r["query_id"], r["doc_id"]) for r in _rows(new)}
    assert len(a & b) < 20


def test_a_design_data_round_with_the_source_seed_is_always_refused(data: Data, tmp_path: Path) -> None:
    """Design data drawn again with its own seed: refused at freeze, and at certify for a manifest
    made otherwise, even though nobody opened the source labels."""
    a = _excluded_audit(tmp_path / "A", data, n=15, seed=7)  # labelled, never opened
    with pytest.raises(ValueError, match="seed 7 is the seed of audit .* design data"):
        wf.freeze(tmp_path / "D", run=data.run, cut=data.cut, design="excluded", seed=7, reuse_labels=a,
                  design_data=True)
    m = wf.freeze(tmp_path / "D", run=data.run, cut=data.cut, design="excluded", seed=8, reuse_labels=a,
                  design_data=True)
    content = json.loads(json.dumps(dict(m.content)))
    content["seed"] = 7  # as freeze would never write it
    (tmp_path / "E").mkdir()
    write_manifest(tmp_path / "E", content)
    wf.plan(tmp_path / "E")
    wf.sample(tmp_path / "E", excluded=15)
    wf.label(tmp_path / "E", qrels=data.qrels)
    with pytest.raises(ValueError, match=r"seed of audit .* \(7\), whose labels are its design data.*"
                                         "whether or not they were opened"):
        wf.certify(tmp_path / "E")


def test_the_seed_of_labels_seen_before_the_freeze_is_refused_at_certify(data: Data, tmp_path: Path) -> None:
    """An opening dated before the freeze but recorded after it (two machines): a fresh labelling
    with the old seed would be a labelling of the very items that were seen."""
    old = _excluded_audit(tmp_path / "old", data, n=15, seed=7)
    new = _excluded_audit(tmp_path / "new", data, n=15, seed=7, label=False, reuse_labels=old)
    wf.label(new, qrels=data.qrels)  # labelled afresh, not reused
    with LabelStore(old / "labels.sqlite") as store:
        store.set_meta("opened_at", "2000-01-01T00:00:00.000000+00:00")
    with pytest.raises(ValueError, match=r"draws with the seed of audit .* whose labels were seen at 2000"):
        wf.certify(new)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"design": "nope"}, "design must be one of"),
    ({"design": "excluded", "target_recall": 0.8},
     "target_recall is a target of the two-pool and sequential designs"),
    ({"design": "two-pool", "max_missed": 3}, "max_missed is not a target of the two-pool design"),
    ({"design": "two-pool", "target_recall": 1.2}, r"target_recall must lie in \(0, 1\), got 1.2$"),
    ({"design": "two-pool", "target_recall": 95}, r"got 95 \(a share, not a percentage: 0.95 for 95%\)$"),
    ({"design": "two-pool", "target_recall": 120}, r"target_recall must lie in \(0, 1\), got 120$"),
    ({"design": "excluded", "target_recall": 0.8, "max_missed": 2}, "give one target"),
    ({"design": "excluded", "depths": [5, 10]}, "depths describes a nested family"),
    ({"design": "excluded", "cut": None}, "needs the cut run"),
    ({"design": "prefixes", "cut": None}, "needs exactly one family"),
    ({"design": "prefixes", "depths": [5, 10]}, "cut is used with offsets only"),
    ({"design": "prefixes", "depths": [10, 5], "cut": None}, "strictly increasing"),
    ({"design": "fixed-sequence", "offsets": [0, 5]}, "needs a target fixed before the audit"),
    ({"design": "excluded", "allocation": {"excluded": 0.05}}, "allocation is for the two-pool design"),
    ({"design": "two-pool", "allocation": {"excluded": 0.04, "included": 0.02}}, "sum to 0.06, more than"),
    ({"design": "two-pool", "allocation": {"excluded": 0.04}}, "both 'excluded' and 'included'"),
    ({"design": "two-pool", "allocation": {"pool": 0.04}}, "keys are 'excluded' and 'included'"),
    ({"design": "stratified"}, "needs bands"),
    ({"design": "excluded", "bands": [5]}, "bands are for the stratified design"),
    ({"design": "excluded", "reference": "shared"}, "is for the prefix designs"),
    ({"design": "prefixes", "offsets": [0], "reference": "both"}, "reference must be one of"),
    ({"design": "excluded", "delta": 1.5}, r"delta must lie in \(0, 1\)"),
    ({"design": "excluded", "corpus_size": 10, "corpus_ids": "x"}, "give the corpus once"),
    ({"design": "excluded", "design_data": True}, "give reuse_labels"),
    ({"design": "excluded", "sampling": "sometimes"}, "sampling must be one of"),
    ({"design": "excluded", "seed": -1}, "seed must be an integer >= 0"),
    ({"design": "excluded", "corpus_size": 5}, "corpus size must be at least every list's depth"),
    ({"design": "prefixes", "depths": [0, 40], "cut": None, "run_only": True}, None),
])
def test_freeze_refusals(data: Data, tmp_path: Path, kwargs: dict[str, Any], message: str | None) -> None:
    args: dict[str, Any] = {"run": data.run, "cut": data.cut, "seed": 1, **kwargs}
    args.pop("run_only", None)
    if message is None:  # a family whose shallowest member already keeps everything is no audit
        args["depths"] = [40, 41]
        message = "is empty: every member keeps every item"
    with pytest.raises(ValueError, match=message):
        wf.freeze(tmp_path / "Z", **args)
    assert not (tmp_path / "Z" / "manifest.json").exists()


def test_a_numpy_target_recall_is_taken(data: Data, tmp_path: Path) -> None:
    """np.float32(0.8) was refused as "must lie in (0, 1), got np.float32(0.8)": its type was."""
    import numpy as np

    for kind in (np.float32, np.float64):
        folder = tmp_path / kind.__name__
        wf.freeze(folder, run=data.run, cut=data.cut, design="two-pool", seed=1, target_recall=kind(0.8))
        assert json.loads((folder / "manifest.json").read_text())["target"] == {"recall": float(kind(0.8))}
    with pytest.raises(ValueError, match=r"target_recall must lie in \(0, 1\), got np.True_"):
        wf.freeze(tmp_path / "B", run=data.run, cut=data.cut, design="two-pool", seed=1,
                  target_recall=np.bool_(True))


def test_sample_refusals(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "Q"
    wf.freeze(audit, run=data.run, cut=data.cut, design="two-pool", seed=1)
    wf.plan(audit)
    with pytest.raises(ValueError, match="give excluded"):
        wf.sample(audit)
    with pytest.raises(ValueError, match="give included"):
        wf.sample(audit, excluded=5)
    with pytest.raises(ValueError, match="exceed the pool"):
        wf.sample(audit, excluded=10**6, included=5)
    with pytest.raises(ValueError, match="takes one excluded sample size"):
        wf.sample(audit, excluded=[5, 5], included=5)
    with pytest.raises(ValueError, match="label_format"):
        wf.sample(audit, excluded=5, included=5, label_format="xlsx")
    assert not (audit / "sample.json").exists()
    with pytest.raises(ValueError, match="exactly one label source"):
        wf.label(audit, qrels=data.qrels, interactive=True)


def test_status_says_what_certify_and_report_refuse_and_is_not_done(sampled: Path, data: Data) -> None:
    """status said "done" for an audit whose cut changed after freeze (certify refused it) and for a
    certificate edited after certify (report refused it)."""
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    wf.label(sampled, qrels=data.qrels)
    wf.certify(sampled)
    assert wf.status(sampled)["next"] is None
    frozen = data.cut.read_bytes()
    data.cut.write_bytes(frozen + b"q9 Q0 extra 1 1.0 t\n")
    info = wf.status(sampled)
    assert "changed after the audit was frozen" in info["inputs_changed"]
    with pytest.raises(ValueError, match="changed after the audit was frozen"):
        wf.certify(sampled)
    out = CliRunner().invoke(app, ["audit", "status", "--audit", str(sampled)])
    assert out.exit_code == 0 and f"  warning: {info['inputs_changed']}" in out.stdout
    assert out.stdout.splitlines()[-1].startswith("next: restore the input file named above")
    data.cut.write_bytes(frozen)
    assert "inputs_changed" not in wf.status(sampled)
    path = sampled / "certificate.json"
    content = json.loads(path.read_text())
    content["report"]["certificates"][0]["certificate"]["value"] -= 1   # a bound made tighter by hand
    path.write_text(json.dumps(content))
    info = wf.status(sampled)
    assert "does not match its inputs" in info["certificate_refused"]
    assert not info["steps"]["certify"] and info["next"] == "certify"
    with pytest.raises(ValueError, match="does not match its inputs"):
        write_report(sampled, sampled.parent / "report.md")
    del content["report"]   # a key edited away: said, not a traceback
    path.write_text(json.dumps(content))
    info = wf.status(sampled)
    assert "its report is not one certify writes (KeyError" in info["certificate_refused"]
    with pytest.raises(ValueError, match="its report is not one certify writes"):
        write_report(sampled, sampled.parent / "report.md")


def test_status_of_a_fixed_design_says_its_verdict(data: Data, tmp_path: Path) -> None:
    """A fixed-size design whose target was not met said only "done"; the sequential ones said it."""
    audit = tmp_path / "V"
    wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", max_missed=0, seed=3)
    wf.plan(audit)
    wf.sample(audit, excluded=20, allow_underpowered=True)   # too few to meet it: "NOT met"
    wf.label(audit, qrels=data.qrels)
    verdict = wf.certify(audit).content["verdict"]
    assert wf.status(audit)["verdict"] == verdict["text"]
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    out = CliRunner().invoke(app, ["audit", "status", "--audit", str(audit)])
    assert out.exit_code == 0 and f"  {verdict['text']}\n" in out.stdout
