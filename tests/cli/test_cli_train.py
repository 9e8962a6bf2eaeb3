"""``rankcut train`` and the trained models in ``rankcut cut --model`` / ``rankcut evaluate --model``,
through typer's CliRunner on small synthetic runs (a few epochs, so the whole file takes seconds)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app
from rankcut.cutters import AttnCut
from rankcut.data.synthetic import synthetic_run
from rankcut.data.trec import load_trec, read_run

pytest.importorskip("torch")
runner = CliRunner()


def invoke(*args: object) -> object:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def train(files: dict[str, Path], *args: object) -> object:
    """``rankcut train`` on the synthetic training run and qrels, with ``args`` added."""
    return invoke("train", "--run", files["train"], "--qrels", files["qrels"], *args)


def one_line_error(result: object, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.strip().splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def _write(path: Path, run: dict[str, list], qids: list[str]) -> Path:
    with path.open("w") as f:
        for q in qids:
            f.writelines(f"{q} Q0 {p.doc_id} {p.rank} {p.score!r} syn\n" for p in run[q])
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """24 training and 8 test queries of 30 documents, and their qrels."""
    folder = tmp_path_factory.mktemp("train")
    run, qrels = synthetic_run(32, 30, seed=3)
    qids = sorted(run)
    with (folder / "qrels.txt").open("w") as f:
        for q, judged in qrels.items():
            f.writelines(f"{q} 0 {d} {r}\n" for d, r in judged.items())
    return {
        "train": _write(folder / "train.run", run, qids[:24]),
        "test": _write(folder / "test.run", run, qids[24:]),
        "qrels": folder / "qrels.txt",
        "dir": folder,
    }


@pytest.fixture(scope="module")
def model(files: dict[str, Path]) -> Path:
    out = files["dir"] / "attncut-model"
    result = train(
        files, "--model", "attncut", "--loss", "raml", "--metric", "f1", "--epochs", "3", "--seed", "5",
        "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"wrote {out}: attncut trained on 19 queries, 5 held out for validation" in result.stdout
    return out


def test_train_writes_a_checkpoint_folder(model: Path) -> None:
    assert sorted(p.name for p in model.iterdir()) == ["README.md", "config.json", "model.safetensors"]
    config = json.loads((model / "config.json").read_text())
    assert config["cutter"] == "attncut"
    assert (
        config["params"]["loss"] == "raml"
        and config["params"]["epochs"] == 3
        and config["params"]["seed"] == 5
    )
    assert len(config["training"]["history"]) <= 3
    assert len(config["training"]["train_qids"]) == 19 and len(config["training"]["val_qids"]) == 5


def test_train_saves_the_precision_it_trained_in(files: dict[str, Path]) -> None:
    from rankcut.nn.training import bf16_lstm_runs

    out = files["dir"] / "bf16-model"
    result = train(files, "--model", "bicut", "--epochs", "1", "--precision", "bf16", "--out", out)
    if not bf16_lstm_runs():   # an AVX2-only CPU: refused by name, nothing written
        assert result.exit_code != 0 and "--precision fp32" in result.output, result.output
        assert not out.exists()
        return
    assert result.exit_code == 0, result.output
    assert json.loads((out / "config.json").read_text())["params"]["precision"] == "bf16"


def test_cut_with_the_model_writes_the_cuts_of_the_loaded_cutter(model: Path, files: dict[str, Path]) -> None:
    out = files["dir"] / "cut.run"
    result = invoke("cut", "--model", model, "--run", files["test"], "--out", out)
    assert result.exit_code == 0, result.output
    assert f"attncut from {model}" in result.stdout
    expected = AttnCut.load(model).predict(load_trec(files["test"]))
    kept = read_run(out)
    assert [len(kept[q]) for q in sorted(kept)] == expected.tolist()
    assert "warning" not in result.stderr
    other = invoke("cut", "--model", model, "--run", files["test"], "--out", out, "--ordering", "trec_eval")
    assert other.exit_code == 0 and f"--model {model} was trained on lists ordered by rank, and these are " \
        "ordered by trec_eval (--ordering)" in other.stderr
    config = (model / "config.json").read_bytes()   # the model read is no output: it was overwritten
    one_line_error(invoke("cut", "--model", model, "--run", files["test"], "--out", model / "config.json"),
                   f"--out {model / 'config.json'} is in the input folder --model {model}")
    assert (model / "config.json").read_bytes() == config
    deeper = files["dir"] / "deeper.run"   # one query 5 documents deeper than any it trained on
    first = files["test"].read_text().splitlines()[0].split()[0]
    extra = "".join(f"{first} Q0 extra{j} {31 + j} {-1.0 - j} syn\n" for j in range(5))
    deeper.write_text(files["test"].read_text() + extra)
    deep = invoke("cut", "--model", model, "--run", deeper, "--out", out)
    assert deep.exit_code == 0 and f"--model {model} was trained on lists of at most 30 documents, and " \
        f"1 list here is longer (query '{first}' holds 35)" in deep.stderr, deep.output


def test_the_same_seed_trains_the_same_model(model: Path, files: dict[str, Path]) -> None:
    again = files["dir"] / "again"
    result = train(files, "--epochs", "3", "--seed", "5", "--out", again)
    assert result.exit_code == 0, result.output
    assert (again / "model.safetensors").read_bytes() == (model / "model.safetensors").read_bytes()


def test_evaluate_puts_the_model_beside_the_cutters(model: Path, files: dict[str, Path]) -> None:
    result = invoke(
        "evaluate",
        "--run",
        files["test"],
        "--train-run",
        files["train"],
        "--qrels",
        files["qrels"],
        "--cutters",
        "oracle,fixed-k:5,greedy-k",
        "--model",
        model,
        "--baseline",
        "greedy-k",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = {row["method"]: row for row in data["summary"]}
    assert set(rows) == {"oracle", "fixed-k:5", "greedy-k", str(model)} and data["inputs"]["models"] == [
        str(model)
    ]
    assert rows[str(model)]["f1"]["test"] is not None  # tested against greedy-k like the others
    [fit] = rows[str(model)]["f1"]["fitted"]   # what it learned, as a fitted cutter's row says it
    assert fit["fold"] == -1 and fit["threshold_"] == 1
    assert fit["best_epoch_"] == AttnCut.load(model).best_epoch_
    assert (
        data["per_query"]["methods"][str(model)]["f1"]["k"]
        == AttnCut.load(model).predict(load_trec(files["test"])).tolist()
    )
    assert "cut as saved, not refitted" in data["protocol"]["description"]
    assert f"(trained for {model}: f1)" in data["protocol"]["description"]


def test_evaluate_refuses_a_model_on_its_own_training_queries(model: Path, files: dict[str, Path]) -> None:
    result = invoke(
        "evaluate",
        "--run",
        files["train"],
        "--qrels",
        files["qrels"],
        "--cutters",
        "oracle",
        "--model",
        model,
    )
    one_line_error(result, f"--model {model} was trained on 24 queries that would be evaluated")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "bicut", "--loss", "mle"], "--loss applies to --model attncut, not bicut"),
        (["--model", "attncut", "--sigma", "0.5"], "--sigma applies to --model attncut-rc, not attncut"),
        (["--model", "bert"], "--model must be one of attncut, attncut-rc, bicut, choppy, got 'bert'"),
        (["--loss", "hinge"], "--loss must be one of raml, mle, bi, rl"),
        (["--metric", "ndcg"], "--metric must be one of"),
        (["--epochs", "0"], "--epochs must be"),
        (["--val-fraction", "1.5"], "--val-fraction must be"),
        (["--precision", "fp16"], "--precision must be one of"),
    ],
)
def test_train_refuses_bad_options_before_reading(
    files: dict[str, Path], args: list[str], message: str
) -> None:
    out = files["dir"] / "never"
    result = train(files, "--out", out, *args)
    one_line_error(result, message)
    assert not out.exists()


def test_too_few_queries_for_validation_name_the_option(files: dict[str, Path]) -> None:
    """The refusal said "change val_fraction", the library's name, and no value that works."""
    one_line_error(train(files, "--epochs", "1", "--val-fraction", "0.01", "--out", files["dir"] / "few"),
                   "--val-fraction 0.01 of 24 queries leaves 0 for validation and 24 for training; each "
                   "needs at least one (give more training queries, or --val-fraction 0.05)")


def test_evaluate_names_no_option_it_lacks_for_too_few_queries(tmp_path: Path) -> None:
    """The train command's --val-fraction was named by evaluate too, which has no such option."""
    run, qrels = synthetic_run(4, 10, seed=1)
    path = _write(tmp_path / "r.run", run, sorted(run))
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items()
                                            for d, r in docs.items()))
    result = invoke("evaluate", "--run", path, "--qrels", tmp_path / "q.txt", "--cutters", "attncut,oracle",
                    "--folds", "2")
    one_line_error(result, "val_fraction=0.2 of 2 queries leaves 0 for validation", "val_fraction=0.5")
    assert "--val-fraction" not in result.stderr


def test_train_does_not_overwrite_a_folder_unless_asked(model: Path, files: dict[str, Path]) -> None:
    result = train(files, "--epochs", "1", "--out", model)
    one_line_error(result, f"--out {model} exists: choose another folder or pass --overwrite")
    other = files["dir"] / "not-a-model"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    result = train(files, "--epochs", "1", "--out", other, "--overwrite")
    # refused before training (no progress, no 'wrote'), and the folder is untouched
    one_line_error(result, f"--out {other} is neither a rankcut checkpoint nor empty")
    assert "wrote" not in result.stdout and (other / "notes.txt").read_text() == "mine"


def _letor(path: Path, queries: range, seed: int) -> Path:
    """A LETOR file: per query 12 documents, 2 features, the first feature ranking the relevant high."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in queries:
        for d in range(12):
            y = int(rng.random() < (0.6 if d < 4 else 0.1))
            lines.append(f"{y} qid:{q} 1:{1 - d / 12 + 0.01 * rng.random():.4f} 2:{rng.random():.4f} "
                         f"#docid = D{q}-{d} inc = 1 prob = 0.5")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_train_and_cut_read_letor_files(tmp_path: Path) -> None:
    """MQ2008-style input: it was only for evaluate (`train --letor` was no such option)."""
    train_file = _letor(tmp_path / "S1.txt", range(40), 1)
    test_file = _letor(tmp_path / "S5.txt", range(40, 50), 2)
    model = tmp_path / "m"
    result = invoke("train", "--letor", train_file, "--score-feature", "1", "--model", "attncut", "--epochs",
                    "1", "--out", model)
    assert result.exit_code == 0, result.output
    assert f"rankcut cut --model {model} --letor FILE --score-feature 1 --out CUT.run" in result.stdout
    card = (model / "README.md").read_text()   # the model card's use, as train says it (it gave --run)
    assert "rankcut cut --model m --letor FILE --score-feature 1 --out cut.run" in card
    assert "--run" not in card
    out = tmp_path / "cut.run"
    result = invoke("cut", "--model", model, "--letor", test_file, "--score-feature", "1", "--out", out)
    assert result.exit_code == 0, result.output
    from rankcut.data.letor import load_letor

    lists = load_letor([test_file], score_feature=1)
    expected = AttnCut.load(model).predict(replace(lists, gains=None, n_relevant=None))
    kept = read_run(out)
    assert [len(kept.get(q, [])) for q in lists.qids] == expected.tolist()
    assert kept["40"][0].doc_id == "D40-0"   # named by the file's #docid
    assert "warning" not in result.stderr
    # another ranking feature than it trained on: its score inputs silently became another feature
    other = invoke("cut", "--model", model, "--letor", test_file, "--score-feature", "2", "--out", out)
    assert other.exit_code == 0 and f"--model {model} was trained on lists ranked by LETOR feature 1, and " \
        "these are ranked by LETOR feature 2: the scores it reads are not those it learned from; give " \
        "--score-feature 1" in other.stderr, other.output
    # the oracle reads the file's labels; a learning cutter trains on --train-letor
    result = invoke("cut", "--cutter", "oracle", "--letor", test_file, "--score-feature", "1", "--out", out)
    assert result.exit_code == 0, result.output
    oracle = read_run(out)
    assert all(lists.labels[lists.qids.index(q)][len(docs) - 1] for q, docs in oracle.items())
    result = invoke("cut", "--cutter", "greedy-k", "--letor", test_file, "--train-letor", train_file,
                    "--score-feature", "1", "--out", out)
    assert result.exit_code == 0 and "greedy-k fitted on 40 training queries: k_=" in result.stdout
    assert "warning" not in result.stderr
    same = invoke("cut", "--cutter", "greedy-k", "--letor", train_file, "--train-letor", train_file,
                  "--score-feature", "1", "--out", out)   # fitted on the queries it cuts, as cut --run says
    assert same.exit_code == 0
    assert "warning: --train-letor holds 40 of the 40 queries of --letor" in same.stderr
    one_line_error(invoke("cut", "--cutter", "greedy-k", "--letor", test_file, "--out", out),
                   "cutter 'greedy-k' learns from training lists: give --train-letor")
    one_line_error(invoke("cut", "--cutter", "fixed-k:2", "--out", out),
                   "give the lists to cut either as --run or as --letor")
    one_line_error(invoke("cut", "--cutter", "fixed-k:2", "--letor", test_file, "--train-run", test_file,
                          "--out", out), "--train-run, --qrels, --train-qrels and --features go with --run")
    one_line_error(invoke("train", "--out", tmp_path / "n"),
                   "give the training lists either as --run with --qrels or as --letor")
    one_line_error(invoke("train", "--letor", train_file, "--qrels", train_file, "--out", tmp_path / "n"),
                   "--qrels and --features go with --run")
    one_line_error(invoke("train", "--letor", train_file, "--score-feature", "3", "--out", tmp_path / "n"),
                   "--score-feature must be in [1, 2]")
