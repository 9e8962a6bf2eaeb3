"""What a reviewer meets in ``label --interactive``: the query text (from the texts file frozen with
the audit), a hint when there is none, and an undo of the last answer where it cannot change what a
certificate saw."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.audit import workflow as wf
from rankcut.audit.interactive import label_interactively
from rankcut.audit.labels import LabelStore
from rankcut.cli.audit import app
from rankcut.data.texts import read_query_texts

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


def _inputs(folder: Path) -> tuple[Path, Path, Path, Path]:
    run, cut, qrels, texts = (folder / n for n in ("run.txt", "cut.run", "qrels.txt", "texts.jsonl"))
    with open(run, "w") as r, open(cut, "w") as c, open(qrels, "w") as j, open(texts, "w") as t:
        for q in range(2):
            for rank in range(10):
                line = f"q{q} Q0 d{q}-{rank} {rank + 1} {50 - rank}.5 t\n"
                r.write(line)
                if rank < 3:
                    c.write(line)
                j.write(f"q{q} 0 d{q}-{rank} {int(rank % 4 == 0)}\n")
                t.write(json.dumps({"query_id": f"q{q}", "query": f"what is topic {q}",
                                    "doc_id": f"d{q}-{rank}", "text": f"passage {rank} of q{q}"}) + "\n")
    return run, cut, qrels, texts


def _script(*answers: str | Callable[[], str]) -> Callable[[str], str]:
    it: Iterator[str | Callable[[], str]] = iter(answers)

    def ask(prompt: str) -> str:
        try:
            a = next(it)
        except StopIteration:
            raise EOFError from None
        return a() if callable(a) else a

    return ask


def test_query_texts_are_read_from_the_texts_file() -> None:
    f = io.StringIO('{"query_id": 7, "query": "flea life", "doc_id": "a", "text": "x"}\n\n'
                    '{"query_id": "7", "query": "flea life", "doc_id": "b", "text": "y"}\n'
                    '{"query_id": "8", "doc_id": "c", "text": "z"}\n')
    assert read_query_texts(f, name="t.jsonl") == {"7": "flea life"}
    clash = io.StringIO('{"query_id": "7", "query": "a"}\n{"query_id": "7", "query": "b"}\n')
    with pytest.raises(ValueError, match=r"t.jsonl, line 2: query '7' has a different text than on line 1"):
        read_query_texts(clash, name="t.jsonl")
    with pytest.raises(ValueError, match="line 1: 'query' must be a string"):
        read_query_texts(io.StringIO('{"query_id": "7", "query": 3}\n'), name="t.jsonl")


def test_the_trec_dl_texts_file_gives_its_queries() -> None:
    path = DATASETS / "trec-dl" / "texts" / "bm25.dl19.jsonl"
    if not path.exists():
        pytest.skip("the TREC DL texts are not in ../shared/datasets")
    queries = read_query_texts(path)
    assert queries["264014"] == "how long is life cycle of flea"
    assert len(queries) == 43


def test_the_reviewer_sees_the_query_text(tmp_path: Path) -> None:
    run, cut, _, texts = _inputs(tmp_path)
    audit = tmp_path / "A"
    wf.freeze(audit, run=run, cut=cut, design="excluded", seed=2, texts=texts)
    wf.plan(audit)
    wf.sample(audit, excluded=4)
    shown: list[str] = []
    wf.label(audit, interactive=True, input=_script("y", "q"), output=shown.append)
    page = "\n".join(shown)
    first = next(line for line in shown if line.startswith("[1/"))
    q = first.split()[2].rstrip(":")
    assert first.endswith(f"query {q}: what is topic {q[1:]}")
    assert "passage" in page and "u (undo the last answer)" in page


def test_without_texts_the_reviewer_is_told_how_to_get_them(tmp_path: Path) -> None:
    run, cut, _, _ = _inputs(tmp_path)
    audit = tmp_path / "A"
    wf.freeze(audit, run=run, cut=cut, design="excluded", seed=2)
    wf.plan(audit)
    wf.sample(audit, excluded=4)
    res = CliRunner().invoke(app, ["label", "--audit", str(audit), "--interactive"], input="q\n")
    assert res.exit_code == 0, res.stderr
    assert "frozen without --texts: only query and document ids are shown" in res.stdout


def test_undo_takes_back_the_last_answer_and_asks_again(tmp_path: Path) -> None:
    items = [("q1", "a"), ("q1", "b"), ("q2", "c")]
    shown: list[str] = []
    prompts: list[str] = []
    answer = _script("u", "y", "u", "n", "s", "undo", "y", "q")

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return answer(prompt)

    with LabelStore(tmp_path / "labels.sqlite") as store:
        summary = label_interactively(store, items, input=ask, output=shown.append)
        assert store.items() == [("q1", "a", 0), ("q1", "b", 1)]
        assert [(e.doc_id, e.old_label, e.new_label) for e in store.history()] == [
            ("a", None, 1), ("a", 1, None), ("a", None, 0), ("b", None, 1)]
    assert (summary.labelled, summary.skipped, summary.remaining, summary.stopped) == (2, 0, 1, True)
    page = "\n".join(shown)
    assert "nothing to undo: no answer was given in this session" in page
    assert page.count("undone: query q1, document a is asked again") == 1
    assert page.count("undone: query q1, document b is asked again") == 1
    assert all("[u]ndo the last answer" in p for p in prompts)


def test_a_label_certify_has_seen_is_never_undone(tmp_path: Path) -> None:
    """Sequential design: new labels come after an opening, but once a certify ran after an answer,
    that answer may be part of what it certified — the undo is refused and the label stays."""
    run, cut, qrels, _ = _inputs(tmp_path)
    audit = tmp_path / "S"
    wf.freeze(audit, run=run, cut=cut, design="sequential", target_recall=0.5, seed=2)
    wf.plan(audit)
    wf.sample(audit)
    wf.label(audit, qrels=qrels, limit=6)   # the cut: 2 queries × 3
    shown: list[str] = []

    def certify_then_undo() -> str:
        wf.certify(audit)
        return "u"

    wf.label(audit, interactive=True, input=_script("n", certify_then_undo, "q"), output=shown.append)
    assert any(line.startswith("cannot undo the label 0 of query") for line in shown)
    with LabelStore(audit / "labels.sqlite", readonly=True) as store:
        assert store.count() == 7
    # before any certify saw it, the same undo is taken
    wf.label(audit, interactive=True, input=_script("y", "u", "q"), output=shown.append)
    with LabelStore(audit / "labels.sqlite", readonly=True) as store:
        assert store.count() == 7


def test_the_store_undoes_only_an_untouched_first_label(tmp_path: Path) -> None:
    with LabelStore(tmp_path / "labels.sqlite") as store:
        store.record([("q", "d")], [1], "alice")
        store.record([("q", "d")], [0], "bob", overwrite=True)
        with pytest.raises(ValueError, match="no longer holds the first label 1 from 'alice'"):
            store.undo(("q", "d"), 1, "alice")
        with pytest.raises(ValueError, match="no longer holds the first label"):
            store.undo(("q", "d"), 0, "bob")   # an overwrite is not undone: its history stays
        assert store.items() == [("q", "d", 0)]
