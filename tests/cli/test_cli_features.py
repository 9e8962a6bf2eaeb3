"""``rankcut features``: the document features of a run computed from its texts, written as the
table ``train``, ``cut`` and ``evaluate`` read with ``--features`` (a RAG engineer's walk found no
command that made one: only the Python ``extract_features``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app
from rankcut.data.features import attach_feature_tables, extract_features, write_feature_table
from rankcut.data.lists import Posting
from rankcut.data.texts import read_texts_jsonl
from rankcut.data.trec import load_trec

runner = CliRunner()
WORDS = ["flea", "cycle", "host", "pet", "year", "egg", "larva", "adult", "video", "control"]


def invoke(*args: object) -> object:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A run of 6 queries of 8 documents (one document listed by two queries, with two texts),
    their texts, and qrels."""
    rng = np.random.default_rng(5)
    run, texts, qrels = tmp_path / "r.run", tmp_path / "t.jsonl", tmp_path / "q.txt"
    lines, objs = [], []
    for q in range(6):
        for r in range(8):
            doc = "shared" if r == 3 else f"d{q}-{r}"
            lines.append(f"q{q} Q0 {doc} {r + 1} {20 - r}.5 t\n")
            words = rng.choice(WORDS, size=int(rng.integers(3, 12)))
            objs.append({"query_id": f"q{q}", "doc_id": doc, "text": " ".join(words)})
    run.write_text("".join(lines))
    texts.write_text("".join(json.dumps(o) + "\n" for o in objs))
    qrels.write_text("".join(f"q{q} 0 d{q}-{r} {int(r < 3)}\n" for q in range(6) for r in range(8)))
    return {"run": run, "texts": texts, "qrels": qrels, "dir": tmp_path}


@pytest.mark.parametrize("embedding", ["none", "doc2vec"])
def test_the_table_holds_what_extract_features_computes(files: dict[str, Path], embedding: str) -> None:
    out = files["dir"] / "f.tsv"
    result = invoke("features", "--run", files["run"], "--texts", files["texts"], "--out", out,
                    "--embedding", embedding)
    assert result.exit_code == 0, result.output
    columns = ["length", "unique_tokens", "tfidf_sim"] + (["doc2vec_sim"] if embedding == "doc2vec" else [])
    assert f"wrote {out}: 48 documents of 6 queries, columns {', '.join(columns)}" in result.stdout
    assert out.read_text().splitlines()[0].split("\t") == ["query_id", "doc_id", *columns]
    lists = load_trec(files["run"])
    read = attach_feature_tables(lists, [out])
    made = extract_features(lists, read_texts_jsonl(files["texts"]),
                            embedding=None if embedding == "none" else embedding, progress=False)
    assert read.feature_names == tuple(columns)
    np.testing.assert_array_equal(read.features, made.features[:, :, 2:])   # exactly: floats written by repr


def test_a_model_trains_and_cuts_on_the_table(files: dict[str, Path]) -> None:
    pytest.importorskip("torch")
    out = files["dir"] / "f.tsv"
    assert invoke("features", "--run", files["run"], "--texts", files["texts"], "--out", out,
                  "--embedding", "none").exit_code == 0
    model = files["dir"] / "M"
    trained = invoke("train", "--run", files["run"], "--qrels", files["qrels"], "--features", out, "--model",
                     "attncut", "--epochs", 1, "--out", model)
    assert trained.exit_code == 0, trained.output
    cut = invoke("cut", "--model", model, "--run", files["run"], "--features", out, "--out",
                 files["dir"] / "c.run")
    assert cut.exit_code == 0 and "wrote" in cut.stdout, cut.output


def test_refusals_name_the_option_or_the_document(files: dict[str, Path]) -> None:
    base = ("features", "--run", files["run"], "--texts", files["texts"])
    for args, said in [
        (("--out", files["dir"] / "f.tsv", "--embedding", "bert"),
         "--embedding must be one of doc2vec, minilm, none, got 'bert'"),
        (("--out", files["dir"] / "f.tsv", "--missing-text", "skip"),
         "--missing-text must be one of error, zero, got 'skip'"),
        (("--out", files["run"]), f"--out {files['run']} is the input file --run"),
        (("--out", files["dir"] / "absent" / "f.tsv"), "output folder"),
    ]:
        result = invoke(*base, *args)
        assert result.exit_code == 2 and said in result.stderr, result.output
    shorter = files["dir"] / "short.jsonl"
    shorter.write_text("".join(line + "\n" for line in files["texts"].read_text().splitlines()[1:]))
    out = files["dir"] / "f.tsv"
    base = ("features", "--run", files["run"], "--texts", shorter, "--out", out, "--embedding", "none")
    result = invoke(*base)
    assert result.exit_code == 2 and "no text for document 'd0-0' listed for query 'q0'" in result.stderr
    assert "--missing-text" in result.stderr and not out.exists()   # the option's name; nothing written
    result = invoke(*base, "--missing-text", "zero")
    assert result.exit_code == 0 and out.read_text().splitlines()[1] == "q0\td0-0\t0.0\t0.0\t0.0"


def test_only_columns_the_lists_carry_are_written(files: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match=r"the lists carry no feature column \['tfidf_sim'\]"):
        write_feature_table(load_trec(files["run"]), files["dir"] / "x.tsv", ["tfidf_sim"])
    assert not (files["dir"] / "x.tsv").exists()
    # an id holding a tab, as a Python mapping may give it, would split its table line (the review)
    tabbed = extract_features(load_trec({"q\t1": [Posting("d\t1", 2.0, 1), Posting("d2", 1.0, 2)]}),
                              {"d\t1": "a b", "d2": "b c"}, embedding=None, progress=False)
    with pytest.raises(ValueError, match=r"query 'q\\t1': id 'q\\t1' is empty or holds whitespace"):
        write_feature_table(tabbed, files["dir"] / "x.tsv", ["length"])
    assert not (files["dir"] / "x.tsv").exists()
