"""Qrels that are not the audit's (another topic set, another collection) as the ``--oracle qrels``
reviewer: every unjudged item would be labelled not relevant and the certificate come out falsely
tight. The oracle counts what it has no judgement for, and refuses when that is most of the sample."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from audit_testdata import write_lists
from typer.testing import CliRunner

from rankcut.audit import workflow as wf
from rankcut.audit.folder import load_audit
from rankcut.audit.labels import LabelStore
from rankcut.audit.manifest import sha256_file
from rankcut.audit.oracle import place_unretrieved, unjudged_items
from rankcut.cli.audit import app
from rankcut.data.trec import read_qrels, uncovered_queries


def _sampled(folder: Path) -> tuple[Path, Path]:
    """An excluded-pool audit of 4 queries × 20 documents, sampled, and its qrels (every 4th
    document judged relevant, every other one judged not relevant)."""
    folder.mkdir()
    run, cut, qrels = write_lists(folder, queries=4, depth=20, cut=5,
                                  grade=lambda rank: int(rank % 4 == 0) if rank % 2 == 0 else None)
    audit = folder / "A"
    wf.freeze(audit, run=run, cut=cut, design="excluded", seed=3)
    wf.plan(audit)
    wf.sample(audit, excluded=30)
    return audit, qrels


def test_helpers_name_unjudged_items_and_uncovered_queries() -> None:
    qrels = {"q1": {"a": 1, "b": 0}}
    assert unjudged_items(qrels, [("q1", "a"), ("q1", "c"), ("q2", "a")]) == [("q1", "c"), ("q2", "a")]
    assert uncovered_queries(qrels, {"q1": ["c", "b"], "q2": ["a"], "q3": []}) == ["q2", "q3"]


def test_qrels_of_another_topic_set_are_refused_naming_the_option(tmp_path: Path) -> None:
    audit, _ = _sampled(tmp_path / "x")
    other = tmp_path / "other-topics.txt"
    other.write_text("".join(f"t{q} 0 d{q}-{r} 1\n" for q in range(4) for r in range(20)))
    code, out, err = _cli("label", "--audit", audit, "--oracle", "qrels", "--qrels", other)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "judges none of the documents listed for 4 of the 4 sampled queries" in err
    assert "falsely tight" in err and "--unjudged-nonrelevant" in err
    assert not (audit / "labels.sqlite").exists()  # nothing recorded, no store left behind
    # the option says the zeros are meant: the count of unjudged items is shown
    code, out, err = _cli("label", "--audit", audit, "--oracle", "qrels", "--qrels", other,
                          "--unjudged-nonrelevant")
    assert code == 0, err
    assert "30 of the items given to the qrels oracle have no judgement in the qrels" in out


def test_qrels_of_another_collection_with_the_same_topics_are_refused(tmp_path: Path) -> None:
    audit, _ = _sampled(tmp_path / "x")
    other = tmp_path / "other-docs.txt"
    other.write_text("".join(f"q{q} 0 D{q}-{r} 1\n" for q in range(4) for r in range(20)))
    with pytest.raises(ValueError, match="unjudged_nonrelevant"):
        wf.label(audit, qrels=other)
    assert not (audit / "labels.sqlite").exists()


def test_the_count_of_unjudged_items_is_always_given(tmp_path: Path) -> None:
    audit, qrels = _sampled(tmp_path / "x")
    rows = [json.loads(line) for line in (audit / "sample.jsonl").read_text().splitlines()]
    odd = sum(int(r["doc_id"].split("-")[1]) % 2 for r in rows)  # odd ranks are not judged
    res = wf.label(audit, qrels=qrels)
    assert res.unjudged == odd > 0
    assert f"{odd} of the items given to the qrels oracle have no judgement" in res.render()
    code, out, _ = _cli("status", "--audit", audit)
    assert code == 0


def test_a_few_uncovered_queries_are_named_in_a_warning(tmp_path: Path) -> None:
    """Positives-only qrels of a query without relevant documents look like another topic set's:
    the file cannot tell, so a minority of such items is labelled 0 with a warning naming them."""
    audit, qrels = _sampled(tmp_path / "x")
    kept = [line for line in qrels.read_text().splitlines() if not line.startswith("q3 ")]
    qrels.write_text("\n".join(kept) + "\n")
    with pytest.warns(wf.AuditWarning, match=r"1 of the 4 sampled queries \('q3'\)"):
        res = wf.label(audit, qrels=qrels)
    assert res.missing == 0


def _cli(*args: object) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


def test_qrels_that_judge_every_item_say_so(tmp_path: Path) -> None:
    audit, _ = _sampled(tmp_path / "x")
    full = tmp_path / "full.txt"
    full.write_text("".join(f"q{q} 0 d{q}-{r} {int(r < 3)}\n" for q in range(4) for r in range(20)))
    res = wf.label(audit, qrels=full)
    assert res.unjudged == 0 and "the qrels judge every item given to the qrels oracle" in res.render()


def test_qrels_given_once_every_item_is_labelled_are_not_read(tmp_path: Path) -> None:
    """A user's walk: labelling a fully labelled audit with qrels said "0 of the items given to the
    qrels oracle have no judgement" and warned about a query the qrels do not judge, as if the qrels
    had been consulted."""
    audit, qrels = _sampled(tmp_path / "x")
    wf.label(audit, qrels=qrels)
    partial = tmp_path / "partial.txt"   # judges no item of q3: a warning, were they read
    kept = [line for line in qrels.read_text().splitlines() if not line.startswith("q3 ")]
    partial.write_text("\n".join(kept) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = wf.label(audit, qrels=partial)
    assert (res.recorded, res.missing, res.unjudged) == (0, 0, None)
    assert res.render().startswith("recorded 0 labels (none asked: every sampled item is labelled already; "
                                   "the qrels were not read)")
    assert "judgement" not in res.render()
    # an interleaved review asked the oracle nothing (certified already): nothing to say of judgements
    assert "judgement" not in wf.LabelResult("qrels", 0, 5, 5, unjudged=0).render()


def test_relevant_documents_outside_a_size_only_corpus_run_are_placed_among_its_unretrieved(
        tmp_path: Path) -> None:
    """With ``--corpus-size`` the unretrieved documents are ``#u`` placeholders, which no qrels
    judge: qrels that grade relevant documents the run does not list were labelled 0 on every
    sampled placeholder (a falsely tight certificate, said only as "no judgement"). They are now
    placed at placeholders drawn at random, seeded by the query id: the same in every audit of these
    lists, so labels reused between audits agree."""
    run, cut, qrels = write_lists(tmp_path, queries=4, depth=20, cut=5)
    extra = "".join(f"q{q} 0 x{q}-{i} {1 if i < 3 else 0}\n" for q in range(2) for i in range(5))
    qrels.write_text(qrels.read_text() + extra)    # q0, q1: 3 relevant documents the run does not hold

    def sampled(name: str, n: int = 60, **corpus: object) -> Path:
        audit = tmp_path / name
        wf.freeze(audit, run=run, cut=cut, design="excluded", seed=3, **corpus)
        wf.plan(audit)
        wf.sample(audit, excluded=n, allow_underpowered=True)
        return audit

    sized = sampled("S", 700, corpus_size=200)   # 700 of the 4 x 195 excluded items
    code, out, err = _cli("label", "--audit", sized, "--oracle", "qrels", "--qrels", qrels,
                          "--threshold", "0.5")
    assert code == 0, err   # the grade counted relevant is recorded with the labels (it changes them)
    assert (f"(simulation: qrels qrels.txt sha256:{sha256_file(qrels)[:12]}, relevant at grade ≥ 0.5, "
            "6 relevant outside the run placed at random #u)") in out
    assert "the qrels grade relevant 6 documents that the run does not list: in this simulation they stand " \
           "at unretrieved places (#u) of their queries drawn at random, seeded by the query id" in out
    audit = load_audit(sized)
    judged, placed = place_unretrieved(audit.base, read_qrels(qrels), 0.5)
    assert placed == {"q0": 3, "q1": 3}
    spots = {q: sorted(d for d in judged[q] if d.startswith("#")) for q in ("q0", "q1")}
    assert spots["q0"] != spots["q1"]   # drawn per query
    twin = load_audit(sampled("U", 10, corpus_size=200))   # another audit (seed 3 too, other sizes)
    assert place_unretrieved(twin.base, read_qrels(qrels), 0.5)[0] == judged
    assert all(len(v) == 3 and all(0 <= int(d[1:]) < 180 for d in v) for v in spots.values())
    lines = (sized / "sample.jsonl").read_text().splitlines()
    rows = [(r["query_id"], r["doc_id"]) for r in map(json.loads, lines)]
    with LabelStore(sized / "labels.sqlite") as store:
        labels = store.get(rows)
    hit = [item for item in rows if item[1] in spots.get(item[0], [])]
    assert hit and all(labels[item] == 1 for item in hit)
    assert all(labels[item] == 0 for item in rows if item[1].startswith("#") and item not in hit)
    small = sampled("T", corpus_size=21)   # one unretrieved document a query: no room for 3
    code, _, err = _cli("label", "--audit", small, "--oracle", "qrels", "--qrels", qrels)
    assert code == 2 and "query 'q0': the qrels grade relevant 3 documents that its list does not hold, " \
                         "but the corpus of 21 documents leaves it only 1 unretrieved (--corpus-size too " \
                         "small" in err
    assert not (small / "labels.sqlite").exists()   # refused before anything was recorded
    ids = tmp_path / "ids.txt"   # the collection by its ids: the qrels judge the unretrieved documents
    ids.write_text("".join(f"d{q}-{r}\n" for q in range(4) for r in range(20)) +
                   "".join(f"x{q}-{i}\n" for q in range(2) for i in range(5)))
    named = sampled("N", 300, corpus_ids=ids)   # of the 340 excluded items
    res = wf.label(named, qrels=qrels)
    rows = [json.loads(line) for line in (named / "sample.jsonl").read_text().splitlines()]
    relevant = [(r["query_id"], r["doc_id"]) for r in rows
                if r["doc_id"].startswith(f"x{r['query_id'][1:]}-") and int(r["doc_id"][-1]) < 3]
    assert relevant and res.recorded == len(rows)
    with LabelStore(named / "labels.sqlite") as store:
        assert set(store.get(relevant).values()) == {1}   # the qrels judge the unretrieved documents
    plain = tmp_path / "in-run.txt"   # qrels of the listed documents only: nothing to refuse
    plain.write_text("".join(line + "\n" for line in qrels.read_text().splitlines() if " d" in line))
    assert wf.label(sampled("P", corpus_size=200), qrels=plain).recorded == 60
