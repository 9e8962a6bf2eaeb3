"""``rankcut cut`` and ``rankcut evaluate`` through typer's CliRunner: tiny files and Robust04."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app
from rankcut.cutters import GreedyK, make_cutter
from rankcut.cutters.base import spec_forms
from rankcut.data.trec import load_trec, read_qrels, read_run

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"
ROBUST04 = DATASETS / "robust04"

runner = CliRunner()


def invoke(*args: object) -> object:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def write_lists(path: Path, labels: dict[str, list[int]]) -> tuple[Path, Path]:
    """A run with documents ``d0, d1, …`` in score order per query, and qrels of the given labels
    (relevant ones only, like Robust04's positives-only qrels)."""
    run, qrels = [], []
    for q, lab in labels.items():
        for j, rel in enumerate(lab):
            run.append(f"{q} Q0 d{j} {j + 1} {len(lab) - j}.5 tiny")
            if rel:
                qrels.append(f"{q} 0 d{j} 1")
    (path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (path / "run.txt").write_text("\n".join(run) + "\n")
    return path / "run.txt", path / "qrels.txt"


A = [1, 1, 0, 0, 0, 0, 0, 0]
B = [1, 1, 1, 1, 1, 1, 1, 1]


@pytest.fixture
def tiny(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "test").mkdir()
    (tmp_path / "train").mkdir()
    run, qrels = write_lists(tmp_path / "test", {"q1": B, "q2": A, "q3": B, "q4": [0] * 8})
    train, train_qrels = write_lists(tmp_path / "train", {"t1": A, "t2": A, "t3": B})
    both = tmp_path / "qrels.txt"
    both.write_text(qrels.read_text() + train_qrels.read_text())
    return {"run": run, "train": train, "qrels": both, "dir": tmp_path}


def one_line_error(result: object, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


# --------------------------------------------------------------------------- evaluate, tiny files
def test_evaluate_prints_table_3_shape(tiny):
    result = invoke("evaluate", "--run", tiny["run"], "--train-run", tiny["train"], "--qrels",
                    tiny["qrels"], "--missing", "keep", "--cutters", "oracle,fixed-k:2,greedy-k",
                    "--baseline", "fixed-k:2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["Method", "F1@k", "k", "DCG@k", "k"]
    greedy = next(line for line in lines if line.startswith("greedy-k")).split()
    assert greedy[2] == "2.0"  # fitted on the training run: t1, t2 (A) outweigh t3 (B)
    assert "Ordering: rank" in result.stdout
    assert "than fixed-k:2 (Wilcoxon signed-rank test" in result.stdout


def test_evaluate_json_has_every_query_and_the_fits(tiny):
    result = invoke("evaluate", "--run", tiny["run"], "--train-run", tiny["train"], "--qrels",
                    tiny["qrels"], "--missing", "keep", "--cutters", "oracle,greedy-k", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["per_query"]["qids"] == ["q1", "q2", "q3", "q4"]
    greedy = data["summary"][1]
    assert greedy["f1"]["fitted"][0]["k_"] == 2 and greedy["f1"]["mean_k"] == 2.0
    assert data["protocol"]["ordering"] == "rank" and data["inputs"]["missing"] == "keep"


def test_metrics_choose_the_columns_precision_and_recall_included(tiny):
    """P@k and R@k, which the metrics module computes and a RAG depth is judged by, had no column
    (only the Python API's metrics=): --metrics names the columns, refused by name when unknown."""
    common = ["evaluate", "--run", tiny["run"], "--train-run", tiny["train"], "--qrels", tiny["qrels"],
              "--missing", "keep", "--cutters", "oracle,fixed-k:2"]
    res = invoke(*common, "--metrics", "precision, recall")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].split() == ["Method", "P@k", "k", "R@k", "k"]
    assert "(recall base: list); k: mean cut" in res.stdout and "Eq. 8" not in res.stdout
    data = json.loads(invoke(*common, "--metrics", "recall", "--json").stdout)
    lists = load_trec(tiny["run"], read_qrels(tiny["qrels"]), missing="keep")
    fixed = next(row for row in data["summary"] if row["method"] == "fixed-k:2")
    recall = [lists.labels[i, :2].sum() / max(lists.labels[i].sum(), 1) for i in range(len(lists))]
    assert fixed["recall"]["mean"] == pytest.approx(np.mean(recall))
    assert data["inputs"]["metrics"] == ["recall"]
    one_line_error(invoke(*common, "--metrics", "f1,ndcg"), "--metrics takes names from f1, precision, "
                   "recall, dcg, comma-separated ('ndcg' is not one of them)")


def test_missing_policy_decides_whether_an_unjudged_query_counts(tiny):
    common = ["evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--cutters", "oracle", "--json"]
    keep = json.loads(invoke(*common, "--missing", "keep").stdout)
    drop = invoke(*common)
    assert f"warning: {tiny['run']}: 1 run query is not in the qrels and is dropped" in drop.stderr
    assert keep["per_query"]["qids"] == ["q1", "q2", "q3", "q4"]
    assert json.loads(drop.stdout)["per_query"]["qids"] == ["q1", "q2", "q3"]
    one_line_error(invoke(*common, "--missing", "error"),
                   f"error: {tiny['run']}: 1 run query is not in the qrels: 'q4'")


def test_evaluate_with_query_id_splits_and_markdown(tiny):
    splits = tiny["dir"] / "splits.json"
    splits.write_text(json.dumps({"train": ["q2", "q4"], "test": ["q1", "q3"]}))
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--missing", "keep",
                    "--cutters", "greedy-k,fixed-k:8", "--train-queries", f"{splits}#train",
                    "--test-queries", f"{splits}#test", "--markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("| Method | F1@k | k | DCG@k | k |")
    assert "fitted on 2 training queries of the lists, tested on the 2 others" in result.stdout


def test_split_and_fold_refusals_name_the_options(tiny):
    # they said "train and test_queries share" and "folds must be", the library's names
    splits = tiny["dir"] / "splits.json"
    splits.write_text(json.dumps({"train": ["q2", "q4"], "test": ["q1", "q2"]}))
    base = ("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--missing", "keep", "--cutters",
            "greedy-k")
    one_line_error(invoke(*base, "--train-queries", f"{splits}#train", "--test-queries", f"{splits}#test"),
                   "error: the train and test queries share 1 query (training on test queries would leak "
                   "their labels): 'q2'")
    one_line_error(invoke(*base, "--folds", "1"), "error: --folds must be an integer ≥ 2, got 1")


def test_folds_are_checked_before_the_files_are_read(tiny):
    """``--folds 1`` was refused only after the run and qrels were read, their warnings first."""
    (tiny["dir"] / "bad.qrels").write_text("q1 0 d1 1\nq9 0 x 1\n")   # q9: in no run (a warning)
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["dir"] / "bad.qrels", "--missing",
                    "keep", "--cutters", "greedy-k", "--folds", "1")
    one_line_error(result, "error: --folds must be an integer ≥ 2, got 1")
    assert "q9" not in result.stderr, result.stderr


def test_evaluate_cross_validation_over_merged_runs(tiny):
    result = invoke("evaluate", "--run", tiny["run"], "--run", tiny["train"], "--qrels", tiny["qrels"],
                    "--missing", "keep", "--cutters", "greedy-k", "--folds", "3", "--seed", "4", "--json")
    data = json.loads(result.stdout)
    assert data["protocol"]["fold_sizes"] == [3, 2, 2]
    assert len(data["summary"][0]["f1"]["fitted"]) == 3


def test_evaluate_letor_input(tmp_path):
    lines = []
    for q in range(4):
        for d in range(6):
            lines.append(f"{int(d < 2)} qid:{q} 1:{0.1 * d:.1f} 2:{1.0 - 0.1 * d:.1f} #docid = D{q}-{d}")
    path = tmp_path / "S1.txt"
    path.write_text("\n".join(lines) + "\n")
    result = invoke("evaluate", "--letor", path, "--score-feature", "2", "--cutters", "oracle,greedy-k",
                    "--folds", "2", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["summary"][0]["f1"]["mean"] == 1.0  # feature 2 ranks the two relevant docs first
    assert data["summary"][1]["f1"]["mean_k"] == 2.0
    one_line_error(invoke("evaluate", "--letor", path, "--score-feature", "3", "--folds", "2"),
                   "error: --score-feature must be in [1, 2] (features seen), got 3")
    # feature 1 left out of every line (a sparse line's zeros): every score was 0, the lists kept in
    # file order, without a word
    path.write_text("".join(re.sub(r" 1:\S+", "", line) + "\n" for line in lines))
    one_line_error(invoke("evaluate", "--letor", path, "--score-feature", "1", "--folds", "2"),
                   "error: --score-feature 1 is on no line (a sparse LETOR line leaves out its zeros")


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--cutters", "nope"], ["unknown cutter 'nope'"]),
        (["--cutters", "greedy-k"], ["must be fitted"]),
        (["--json", "--markdown"], ["alternatives"]),
        (["--folds", "2", "--train-queries", "x.txt"], ["choose one way to train"]),
        (["--ordering", "score"], ["--ordering must be one of rank, trec_eval"]),
        (["--fit-metric", "map"], ["--fit-metric"]),
        (["--cutters", "oracle", "--baseline", "greedy-k"], ["baseline 'greedy-k' is not among"]),
        (["--train-queries", "absent.txt"], ["absent.txt"]),
        (["--plot", "x.png", "--cutters", "fixed-k:2"], ["--plot", "add oracle to --cutters"]),
        (["--folds", "9", "--cutters", "fixed-k:2"], ["--folds 9 exceeds the number of queries (4)"]),
    ],
)
def test_evaluate_bad_input_exits_2_with_one_line(tiny, extra, fragments):
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--missing", "keep", *extra)
    one_line_error(result, *fragments)


def test_evaluate_needs_lists_and_qrels(tiny):
    one_line_error(invoke("evaluate", "--cutters", "oracle"), "either as --run with --qrels or as --letor")
    one_line_error(invoke("evaluate", "--run", tiny["run"]), "--run needs --qrels")
    bad = tiny["dir"] / "bad.run"
    bad.write_text("q1 Q0 d1 1 x tag\n")
    one_line_error(invoke("evaluate", "--run", bad, "--qrels", tiny["qrels"]), "bad.run, line 1", "score")


# --------------------------------------------------------------------------- cut, tiny files
def test_cut_writes_the_kept_prefixes(tiny):
    out = tiny["dir"] / "cut.run"
    result = invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--train-run", tiny["train"],
                    "--qrels", tiny["qrels"], "--out", out)
    assert result.exit_code == 0, result.output
    assert "greedy-k fitted on 3 training queries: k_=2, score_=" in result.stdout
    score = re.search(r"score_=(\S+) \(score_: the mean f1 on the training queries\)", result.stdout)
    assert score is not None and len(score.group(1)) <= 6   # 4 digits, not 0.2852532962246189
    cut = read_run(out)
    assert {q: [p.doc_id for p in ps] for q, ps in cut.items()} == {q: ["d0", "d1"] for q in
                                                                     ("q1", "q2", "q3", "q4")}
    assert [p.rank for p in cut["q1"]] == [1, 2]
    assert "warning" not in result.stderr


def test_qrels_of_no_query_of_the_run_say_what_each_holds(tiny):
    """An empty qrels file, or query ids written otherwise (``0q1``), were both "no query of the run
    is in the qrels", with no sample of either side (the truncation walk)."""
    empty = tiny["dir"] / "empty.qrels"
    empty.write_text("")
    oracle = ("--folds", 2, "--cutters", "oracle")
    one_line_error(invoke("evaluate", "--run", tiny["run"], "--qrels", empty, *oracle),
                   f"{empty}: the qrels file holds no judgement (it is empty)")   # it named the run
    padded = tiny["dir"] / "padded.qrels"
    padded.write_text("".join(f"0{line}\n" for line in tiny["qrels"].read_text().splitlines()))
    one_line_error(invoke("evaluate", "--run", tiny["run"], "--qrels", padded, *oracle),
                   "no query of the run is in the qrels (the run's: 'q1', 'q2', 'q3', 'q4'; the qrels': "
                   "'0q1'")


def test_cut_fits_greedy_k_on_the_recall_base_given(tiny):
    """evaluate --recall-base judged fitted greedy-k so, and cut had no such option: it fitted on
    list recall (k 31, where the paper's convention gives 44 on Robust04; the truncation walk)."""
    train, qrels = write_lists(tiny["dir"] / "train", {"t1": [1, 0, 0, 1, 0, 0, 0, 0]})
    with open(qrels, "a") as f:   # six relevant documents the run does not list
        f.write("".join(f"t1 0 x{j} 1\n" for j in range(6)))
    out = tiny["dir"] / "cut.run"
    for base, k in (("list", 1), ("judged", 4)):   # 2/3 = 4/6 at k 1 and 4, the smaller; 2/9 < 4/12
        result = invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--train-run", train,
                        "--qrels", qrels, "--recall-base", base, "--missing", "keep", "--out", out)
        assert result.exit_code == 0, result.output
        assert f"greedy-k fitted on 1 training query: k_={k}," in result.stdout
    one_line_error(invoke("cut", "--cutter", "fixed-k:2", "--run", tiny["run"], "--recall-base", "judged",
                          "--out", out), "--recall-base is for a cutter fitted on recall, not 'fixed-k:2'")


def test_cut_fitted_on_the_queries_it_cuts_says_so(tiny):
    """cut --train-run RUN --run RUN fitted greedy-k on the labels of the queries it cut, without a
    word (evaluate refuses the split; the truncation walk)."""
    result = invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--train-run", tiny["run"],
                    "--qrels", tiny["qrels"], "--missing", "keep", "--out", tiny["dir"] / "cut.run")
    assert result.exit_code == 0, result.output
    assert ("warning: --train-run holds 4 of the 4 queries of --run ('q1', 'q2', 'q3', 'q4'): their cut was "
            "fitted on their own labels") in result.stderr
    # fixed-k learns nothing: a training run given it was said "fitted on 4 training queries" (the
    # re-walk), and is refused as unread, as --qrels is where nothing reads it
    one_line_error(invoke("cut", "--cutter", "fixed-k:2", "--run", tiny["run"], "--train-run", tiny["run"],
                          "--qrels", tiny["qrels"], "--missing", "keep", "--out", tiny["dir"] / "cut.run"),
                   "--train-run is not read: 'fixed-k:2' learns nothing from training lists")


def test_cut_oracle_reads_qrels_and_learned_cutters_need_training(tiny):
    out = tiny["dir"] / "cut.run"
    result = invoke("cut", "--cutter", "oracle", "--run", tiny["run"], "--qrels", tiny["qrels"],
                    "--missing", "keep", "--out", out)
    assert result.exit_code == 0, result.output
    assert {q: len(ps) for q, ps in read_run(out).items()} == {"q1": 8, "q2": 2, "q3": 8, "q4": 1}
    one_line_error(invoke("cut", "--cutter", "oracle", "--run", tiny["run"], "--out", out), "give --qrels")
    one_line_error(invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--out", out),
                   "give --train-run and its qrels")
    one_line_error(invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--train-run", tiny["train"],
                          "--out", out), "--train-run needs --qrels")
    one_line_error(invoke("cut", "--cutter", "fixed-k:0", "--run", tiny["run"], "--out", out), "fixed-k:0")


# --------------------------------------------------------------------------- checks before any work
@pytest.fixture
def no_loading(monkeypatch):
    """Fail the test if the command reads a run, qrels or LETOR file, or fits a cutter."""

    def loaded(*args, **kwargs):
        raise AssertionError("the command loaded data before finding the bad option")

    monkeypatch.setattr("rankcut.data.trec.read_run", loaded)
    monkeypatch.setattr("rankcut.data.trec.read_qrels", loaded)
    monkeypatch.setattr("rankcut.data.letor.load_letor", loaded)
    monkeypatch.setattr(GreedyK, "fit", loaded)


def test_cut_refuses_to_overwrite_an_input(tiny, no_loading):
    runs = {p: p.read_bytes() for p in (tiny["run"], tiny["train"], tiny["qrels"])}
    spelled = tiny["dir"] / "test" / ".." / "test" / "run.txt"
    (tiny["dir"] / "link.run").symlink_to(tiny["run"])
    os.link(tiny["run"], tiny["dir"] / "hard.run")
    for out in (tiny["run"], spelled, tiny["dir"] / "link.run", tiny["dir"] / "hard.run"):
        one_line_error(invoke("cut", "--cutter", "fixed-k:2", "--run", tiny["run"], "--out", out),
                       f"--out {out} is the input file --run {tiny['run']}")
    one_line_error(invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--train-run", tiny["train"],
                          "--qrels", tiny["qrels"], "--out", tiny["train"]), "is the input file --train-run")
    one_line_error(invoke("cut", "--cutter", "oracle", "--run", tiny["run"], "--qrels", tiny["qrels"],
                          "--out", tiny["qrels"]), "is the input file --qrels")
    assert {p: p.read_bytes() for p in runs} == runs


def test_cut_checks_the_output_folder_before_loading(tiny, no_loading):
    missing = tiny["dir"] / "nodir" / "sub"
    result = invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--train-run", tiny["train"],
                    "--qrels", tiny["qrels"], "--out", missing / "cut.run")
    one_line_error(result, f"output folder {missing} does not exist")
    assert ".tmp" not in result.stderr and result.stdout == ""
    one_line_error(invoke("cut", "--cutter", "fixed-k:2", "--run", tiny["run"], "--out",
                          tiny["run"] / "cut.run"), f"output folder {tiny['run']} is not a folder")


def test_evaluate_checks_the_plot_before_loading(tiny, no_loading, monkeypatch):
    common = ["evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--cutters", "oracle,fixed-k:2"]
    missing = tiny["dir"] / "nonexistent" / "dir"
    one_line_error(invoke(*common, "--plot", missing / "x.png"), f"output folder {missing} does not exist")
    one_line_error(invoke(*common, "--plot", tiny["qrels"]), "--plot", "is the input file --qrels")
    one_line_error(invoke(*common, "--plot", tiny["dir"] / "x.jpg"),
                   "x.jpg: a figure is written as *.png, *.pdf, *.svg, by the file's suffix")
    # every input is refused as the figure, not only the lists and the qrels (each was overwritten)
    ids = tiny["dir"] / "ids.txt"
    ids.write_text("q1\n")
    splits = tiny["dir"] / "splits.json"
    splits.write_text('{"test": ["q1"]}')
    cut = tiny["dir"] / "cut.run"
    cut.write_text(tiny["run"].read_text())
    model = tiny["dir"] / "model"
    model.mkdir(exist_ok=True)
    (model / "model.safetensors").write_bytes(b"weights")
    for option, given, plot in [("--cut", cut, cut), ("--features", ids, ids),
                                ("--train-queries", ids, ids), ("--test-queries", f"{splits}#test", splits),
                                ("--model", model, model / "model.safetensors"),
                                ("--model", model, model / "new.png")]:
        result = invoke(*common, option, given, "--plot", plot)
        said = "is in the input folder --model" if option == "--model" else f"is the input file {option}"
        one_line_error(result, "--plot", said)
    assert (model / "model.safetensors").read_bytes() == b"weights" and ids.read_text() == "q1\n"
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if matplotlib were not installed
    one_line_error(invoke(*common, "--plot", tiny["dir"] / "x.png"),
                   "--plot needs matplotlib: pip install 'rankcut[eval]'")


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--train-queries", "nofile.txt"], ["--train-queries nofile.txt: no file nofile.txt"]),
        (["--test-queries", "nofile.json#test"], ["--test-queries nofile.json#test: no file nofile.json"]),
        (["--cutters", "oracle,,greedy-k"],
         ["--cutters 'oracle,,greedy-k': spec 2 is empty", "fixed-k[:k=10]"]),
        (["--cutters", "oracle,"], ["spec 2 is empty"]),
        (["--cutters", "oracle,nope"], ["unknown cutter 'nope'"]),
        (["--cutters", "oracle,fixed-k:0"], ["fixed-k:0", "k must be an integer ≥ 1"]),
        (["--cutters", "oracle, oracle"], ["error: cutter 'oracle' is listed twice"]),
        (["--cutters", "oracle", "--baseline", "greedy-k"], ["baseline 'greedy-k' is not among"]),
        (["--threshold", "nan"], ["--threshold must be finite, got nan"]),
        (["--threshold", "inf"], ["--threshold must be finite, got inf"]),
        (["--threshold", "0"], ["--threshold must be > 0", "unjudged documents count as relevance 0"]),
        (["--threshold", "-1"], ["--threshold must be > 0"]),
        (["--cutters", "oracle", "--alpha", "1.5"], ["--alpha must lie in (0, 1), got 1.5"]),   # no test run
    ],
)
def test_evaluate_options_are_checked_before_loading(tiny, no_loading, extra, fragments):
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], *extra)
    one_line_error(result, *fragments)
    assert "specs:" not in result.stderr


@pytest.mark.parametrize("threshold", ["nan", "inf", "0", "-2"])
def test_cut_checks_the_threshold_before_loading(tiny, no_loading, threshold):
    one_line_error(invoke("cut", "--cutter", "oracle", "--run", tiny["run"], "--qrels", tiny["qrels"],
                          "--threshold", threshold, "--out", tiny["dir"] / "cut.run"), "--threshold must be")


def test_query_id_files_may_be_pipes(tiny):
    """--test-queries <(...) said "no file /dev/fd/63": a pipe is not a regular file."""
    import threading

    fifo = tiny["dir"] / "queries.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text("q1\nq2\n"), daemon=True)
    writer.start()
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--missing", "keep",
                    "--train-run", tiny["train"], "--test-queries", fifo, "--cutters", "oracle", "--json")
    writer.join(timeout=10)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["per_query"]["qids"] == ["q1", "q2"]


def test_query_id_files_errors_name_the_option(tiny):
    ids = tiny["dir"] / "ids.txt"
    ids.write_text("q1\nq1\n")
    common = ["evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--cutters", "greedy-k"]
    one_line_error(invoke(*common, "--train-queries", ids), f"--train-queries: {ids}, line 2")
    one_line_error(invoke(*common, "--train-queries", f"{ids}#train"),
                   f"--train-queries {ids}#train: #train names a list of a JSON splits file")


def test_a_threshold_no_document_reaches_is_warned_about(tiny):
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--missing", "keep",
                    "--cutters", "oracle", "--threshold", "5")
    assert result.exit_code == 0, result.output
    assert (f"warning: {tiny['run']}: no judged document reaches relevance ≥ 5 (the highest listed grade "
            "is 1)") in result.stderr


def test_a_threshold_no_letor_label_reaches_is_warned_about(tmp_path):
    path = tmp_path / "S1.txt"
    lines = [f"{int(d < 2)} qid:{q} 1:{1.0 - 0.1 * d:.1f}" for q in range(2) for d in range(4)]
    path.write_text("\n".join(lines) + "\n")
    result = invoke("evaluate", "--letor", path, "--score-feature", "1", "--cutters", "oracle",
                    "--threshold", "2")
    assert result.exit_code == 0, result.output
    assert f"warning: {path}: no judged document reaches relevance ≥ 2" in result.stderr


def test_cutters_help_lists_the_registry():
    for command in ("evaluate", "cut"):
        result = invoke(command, "--help")
        text = " ".join(result.stdout.replace("│", " ").split())
        for form in spec_forms():
            assert f" {form}" in text, (command, form)


def test_warnings_name_their_file_and_speak_cli(tiny):
    """Both runs have a query without judgements: each warning says which run; the qrels query
    that no run holds is reported once; the advice names the option, not the Python keyword."""
    (tiny["dir"] / "train" / "run.txt").write_text(tiny["train"].read_text() + "t9 Q0 d0 1 1.0 tiny\n")
    with tiny["qrels"].open("a") as f:
        f.write("z1 0 d0 1\n")
    result = invoke("evaluate", "--run", tiny["run"], "--train-run", tiny["train"], "--qrels", tiny["qrels"],
                    "--cutters", "greedy-k")
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert warned == [
        f"warning: {tiny['run']}: 1 run query is not in the qrels and is dropped (--missing keep keeps it "
        "with no relevant document): 'q4'",
        f"warning: {tiny['train']}: 1 run query is not in the qrels and is dropped (--missing keep keeps it "
        "with no relevant document): 't9'",
        f"warning: {tiny['qrels']}: 1 query is in no run ({tiny['run']}, {tiny['train']}) and is "
        "ignored: 'z1'",
    ]


def test_counts_are_in_words(tiny):
    one = tiny["dir"] / "one.run"
    one.write_text("t1 Q0 d0 1 2.0 x\nt1 Q0 d1 2 1.0 x\n")
    single = tiny["dir"] / "single.run"
    single.write_text("q1 Q0 d0 1 2.0 x\n")
    out = tiny["dir"] / "cut.run"
    result = invoke("cut", "--cutter", "greedy-k", "--run", single, "--train-run", one,
                    "--qrels", tiny["qrels"], "--out", out)
    assert result.exit_code == 0, result.output
    assert "greedy-k fitted on 1 training query: k_=2" in result.stdout
    assert f"wrote {out}: 1 query, 1 document kept (mean k 1.00" in result.stdout


def test_a_baseline_with_nothing_to_compare_says_so(tiny):
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--missing", "keep",
                    "--cutters", "oracle,fixed-k:2", "--baseline", "fixed-k:2")
    assert result.exit_code == 0, result.output
    assert "no method to compare with the baseline fixed-k:2" in result.stdout
    assert "0 methods" not in result.stdout


# --------------------------------------------------------------------------- Robust04
@pytest.fixture
def robust04() -> Path:
    if not ROBUST04.is_dir():
        pytest.skip(f"real datasets not found at {ROBUST04}")
    return ROBUST04


def test_robust04_bm25_known_figures(robust04, tmp_path):
    plot = tmp_path / "cutoffs.png"
    runs = robust04 / "runs"
    result = invoke("evaluate", "--run", runs / "bm25.test.run", "--train-run", runs / "bm25.train.run",
                    "--qrels", robust04 / "qrels.robust04.positives.txt", "--missing", "keep",
                    "--cutters", "oracle,fixed-k:5,fixed-k:10,greedy-k", "--json",
                    "--plot", plot)
    assert result.exit_code == 0, result.output
    rows = {row["method"]: row for row in json.loads(result.stdout)["summary"]}
    assert round(rows["oracle"]["f1"]["mean"], 4) == 0.4413
    assert round(rows["oracle"]["dcg"]["mean"], 4) == 1.2862
    assert round(rows["fixed-k:5"]["f1"]["mean"], 4) == 0.2169
    assert round(rows["fixed-k:10"]["f1"]["mean"], 4) == 0.2768
    [fit] = rows["greedy-k"]["f1"]["fitted"]
    assert fit["k_"] == 31 and rows["greedy-k"]["f1"]["mean_k"] == 31.0
    assert round(rows["greedy-k"]["f1"]["mean"], 4) == 0.3039
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_robust04_paper_convention_reproduces_table_3(robust04):
    """AttnCut's Table 3 (Robust04 BM25: Oracle, Fixed-k) to 4 decimals on the given split, with
    query 672 dropped and recall over all judged relevant documents; Greedy-k picks the paper's
    k = 44."""
    runs = robust04 / "runs"
    result = invoke("evaluate", "--run", runs / "bm25.test.run", "--train-run", runs / "bm25.train.run",
                    "--qrels", robust04 / "qrels.robust04.positives.txt", "--missing", "drop",
                    "--recall-base", "judged", "--cutters", "oracle,fixed-k:5,fixed-k:10,fixed-k:50,greedy-k",
                    "--json")
    rows = {row["method"]: row for row in json.loads(result.stdout)["summary"]}
    table_3 = {"oracle": (0.3591, 1.3328), "fixed-k:5": (0.1550, 0.1876), "fixed-k:10": (0.2103, -0.2672),
               "fixed-k:50": (0.2499, -5.3966)}
    measured = {m: (round(rows[m]["f1"]["mean"], 4), round(rows[m]["dcg"]["mean"], 4)) for m in table_3}
    assert measured == table_3
    assert rows["greedy-k"]["f1"]["fitted"][0]["k_"] == 44


def test_robust04_cut_lengths_equal_the_cuts(robust04, tmp_path):
    out = tmp_path / "cut.run"
    run = robust04 / "runs" / "drmm.test.run"
    result = invoke("cut", "--cutter", "distribution", "--run", run, "--out", out)
    assert result.exit_code == 0, result.output
    expected = make_cutter("distribution").predict(load_trec(run))
    cut = read_run(out)
    lists = load_trec(run)
    assert list(cut) == list(lists.qids)
    np.testing.assert_array_equal([len(cut[q]) for q in lists.qids], expected)
    for i, q in enumerate(lists.qids):  # the kept prefix, in list order
        assert [p.doc_id for p in cut[q]] == list(lists.doc_ids[i, : expected[i]])


def test_a_cut_run_made_elsewhere_is_scored_on_the_full_lists(tiny: dict[str, Path]) -> None:
    """``evaluate --run cut.run`` scores a cut as a list of its own (recall over what it kept: a
    top-2 cut read F1 1.0 on q2); ``--run full --cut cut.run`` scores it as the cutters are."""
    run, qrels, folder = tiny["run"], tiny["qrels"], tiny["dir"]
    cut = folder / "k2.run"
    assert invoke("cut", "--run", run, "--cutter", "fixed-k:2", "--out", cut).exit_code == 0
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                 "--cutters", "fixed-k:2,fixed-k:3", "--cut", cut, "--baseline", "fixed-k:3", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    methods = out["per_query"]["methods"]
    assert methods[str(cut)] == methods["fixed-k:2"]
    assert out["inputs"]["cuts"] == [str(cut)] and out["inputs"]["models"] == []
    given = next(row for row in out["summary"] if row["method"] == str(cut))
    assert given["f1"]["fitted"] == []   # a cut made elsewhere learned nothing here (not a row of nulls)
    alone = invoke("evaluate", "--run", cut, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                   "--cutters", "fixed-k:8", "--json")
    f1 = json.loads(alone.stdout)["per_query"]["methods"]["fixed-k:8"]["f1"]["score"]
    assert np.mean(f1) > np.mean(methods[str(cut)]["f1"]["score"])   # the inflation --cut avoids
    # not a prefix of the lists, a query left out, a mistaken flag: one line each, naming it
    lines = cut.read_text().splitlines()
    swapped = folder / "swapped.run"   # q1 keeps d0 and d2: not the top 2 of its list
    swapped.write_text("\n".join([lines[0], lines[1].replace("d1", "d2"), *lines[2:]]) + "\n")
    one_line_error(invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                          "--cut", swapped), f"--cut {swapped}: query 'q1', rank 2: the cut run has 'd2' "
                   "where the full list has 'd1'")
    short = folder / "short.run"
    short.write_text("\n".join(line for line in lines if not line.startswith("q4 ")) + "\n")
    one_line_error(invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                          "--cut", short), f"--cut {short}: query 'q4' of the full ranked lists is not in "
                   "the cut run", "give --allow-missing-queries to take an absent query as keeping nothing")
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                 "--cut", short, "--allow-missing-queries", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["per_query"]["methods"][str(short)]["f1"]["k"][-1] == 0   # q4 at 0
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                 "--cutters", "oracle", "--cut", short, "--allow-missing-queries")
    assert res.exit_code == 0 and "the oracle cuts at k ≥ 1, as in the paper; the cut run keeps nothing " \
        "of 1 list (--allow-missing-queries: k = 0, F1 and DCG 0), so it can score above it" in res.stdout
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                 "--cutters", "oracle", "--cut", short, "--cut", cut, "--allow-missing-queries")
    assert res.exit_code == 0 and f"; {short} keeps nothing of 1 list (--allow-missing-queries" in res.stdout
    # the other run keeps something of every list: "the cut runs keep nothing of 1 list" was said of both
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--folds", "2", "--cut", cut)
    assert res.exit_code == 0 and re.search(  # the run's own unjudged query, cut too: dropped, said
        rf"--cut {re.escape(str(cut))}: the qrels judge no document of 1 query of it \('\w+'\): "
        r"not evaluated \(--missing drop\)", res.stderr), res.stderr
    import shlex  # the runs read once: a --run that is a pipe, <(...), was read again, and refused
    import subprocess

    command = (f"{shlex.quote(sys.executable)} -c 'from rankcut.cli.main import app; app()' evaluate --run "
               f"<(cat {shlex.quote(str(run))}) --qrels {shlex.quote(str(qrels))} --folds 2 --cut "
               f"{shlex.quote(str(cut))} --json")
    piped = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["per_query"]["methods"][str(cut)] == json.loads(
        invoke("evaluate", "--run", run, "--qrels", qrels, "--folds", "2", "--cut", cut,
               "--json").stdout)["per_query"]["methods"][str(cut)]
    extra = folder / "extra.run"   # z9, judged by no qrels and in no --run: another topic set's query,
    extra.write_text(cut.read_text() + "z9 Q0 x 1 1.0 t\n")   # said to be unjudged before (RAG walk)
    one_line_error(invoke("evaluate", "--run", run, "--qrels", qrels, "--folds", "2", "--cut", extra),
                   f"--cut {extra}: 1 query of it ('z9') is in no --run: the cut of another run or "
                   "topic set?")
    one_line_error(invoke("evaluate", "--run", run, "--qrels", qrels, "--folds", "2",
                          "--allow-missing-queries"), "--allow-missing-queries is for --cut")
    other = folder / "other.run"   # another topic set's cut: every query would be cut at 0
    other.write_text(cut.read_text().replace("q", "t"))
    one_line_error(invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--folds", "2",
                          "--cut", other, "--allow-missing-queries"),
                   f"--cut {other} holds none of the 4 queries evaluated")
    # trained on q1 and q2, evaluated on q3 and q4: a cut needs lines of the evaluated queries only
    (folder / "train.txt").write_text("q1\nq2\n")
    tail = folder / "tail.run"
    tail.write_text("\n".join(line for line in lines if line.split()[0] in ("q3", "q4")) + "\n")
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--missing", "keep", "--train-queries",
                 folder / "train.txt", "--cutters", "fixed-k:2", "--cut", tail, "--cut", cut, "--json")
    assert res.exit_code == 0, res.output
    methods = json.loads(res.stdout)["per_query"]["methods"]
    assert methods[str(tail)] == methods[str(cut)] == methods["fixed-k:2"]
    one_line_error(invoke("evaluate", "--run", run, "--qrels", qrels, "--folds", "2", "--cut", cut,
                          "--cut", cut), f"--cut {cut} is given twice")
    one_line_error(invoke("evaluate", "--run", run, "--qrels", qrels, "--folds", "2", "--cut", cut,
                          "--baseline", "k2.run"),
                   "baseline 'k2.run' is not among the cutters", f"nor a row of --model or --cut, named as "
                   f"given: ['{cut}']")


def test_a_warning_of_each_fold_names_the_fold(tmp_path: Path) -> None:
    """fixed-k warns of the lists it cuts, one fold's at a time: the same words came once per fold,
    and words that differed (9 of 9, 8 of 8 lists) read as the whole run's counts (README)."""
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(f"q{q} Q0 d{q}-{j} {j + 1} {9 - j} t\n" for q in range(4) for j in range(2)))
    qrels.write_text("".join(f"q{q} 0 d{q}-0 1\n" for q in range(4)))
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--folds", "2", "--cutters", "fixed-k:5")
    assert res.exit_code == 0, res.output
    said = [line for line in res.stderr.splitlines() if "exceeds the length" in line]
    assert said == [f"warning: fold {k} of 2, 2 test queries: fixed-k: k=5 exceeds the length of 2 of 2 "
                    "lists (the longest has 2 documents); they are kept whole" for k in (0, 1)]
    res = invoke("evaluate", "--run", run, "--qrels", qrels, "--cutters", "fixed-k:5")   # no folds: as it was
    assert [line for line in res.stderr.splitlines() if "exceeds the length" in line] == [
        "warning: fixed-k: k=5 exceeds the length of 4 of 4 lists (the longest has 2 documents); they are "
        "kept whole"]


def test_graded_qrels_at_the_default_threshold_are_said(tmp_path: Path) -> None:
    """TREC DL grades 0–3 and its binary measures count grade ≥ 2; the default --threshold 1 changed
    every score (and a model, and an audit's certificate) without a word."""
    rng = np.random.default_rng(3)
    run, qrels = tmp_path / "r.run", tmp_path / "q.txt"
    run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {50 - d} t\n" for q in range(8) for d in range(30)))
    qrels.write_text("".join(f"q{q} 0 d{d} {rng.integers(0, 4)}\n" for q in range(8) for d in range(30)))
    note = f"note: {qrels} grades relevance up to 3; grade ≥ 1 counts as relevant (the default --threshold"
    scored = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--cutters", "fixed-k:5", "--folds", "2"]
    cut = ["cut", "--run", str(run), "--train-run", str(run), "--qrels", str(qrels), "--cutter", "greedy-k",
           "--out", str(tmp_path / "c.run")]
    train = ["train", "--run", str(run), "--qrels", str(qrels), "--model", "attncut", "--epochs", "1",
             "--out", str(tmp_path / "m")]
    cases = ((scored, [], True), (scored, ["--threshold", "1"], False), (scored, ["--threshold", "2"], False),
             (cut, [], True), (train, [], True))
    for command, threshold, said in cases:
        if command is train and importlib.util.find_spec("torch") is None:
            continue   # the note comes before training, but train needs the torch extra to start
        result = runner.invoke(app, command + threshold)
        assert (note in result.stderr) == said, (command, threshold, result.stderr)
    binary = tmp_path / "b.txt"
    binary.write_text("".join(f"q{q} 0 d{d} {int(d < 4)}\n" for q in range(8) for d in range(30)))
    result = runner.invoke(app, [*scored[:3], "--qrels", str(binary), *scored[5:]])
    assert result.exit_code == 0 and "note:" not in result.stderr


# --------------------------------------------------------------------------- without the torch extra
def _without_torch(*args: object) -> tuple[int, str, str]:
    """``rankcut ARGS`` in a fresh process where torch cannot be imported, as where the extra is
    not installed (a finder refuses it; scipy probes sys.modules for torch, so no None entry)."""
    import subprocess

    code = ("import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.partition('.')[0] in ('torch', 'safetensors'):\n"
            "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "from rankcut.cli.main import app\n"
            f"app({[str(a) for a in args]!r})\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout, done.stderr


def test_classical_cutters_need_no_torch_and_neural_ones_name_the_extra(tiny):
    """evaluate imported the checkpoint reader (torch) for every call, so without the torch extra
    it refused Oracle and Greedy-k with "No module named 'torch'"; a neural cutter, train and a
    --model said the same, train after reading every input."""
    for command in ([], ["train"], ["evaluate"], ["cut"]):   # their help builds no cutter
        assert _without_torch(*command, "--help")[0] == 0, command
    code, out, err = _without_torch("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"],
                                    "--train-run", tiny["train"], "--cutters", "oracle,greedy-k")
    assert code == 0, err
    assert "oracle" in out and "greedy-k" in out
    code, out, err = _without_torch("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"],
                                    "--train-run", tiny["train"], "--cutters", "oracle,attncut")
    assert code == 2 and err.strip() == ("error: the attncut cutter needs PyTorch: pip install "
                                         "'rankcut[torch]'"), err
    code, _, err = _without_torch("train", "--run", tiny["train"], "--qrels", tiny["qrels"], "--model",
                                  "bicut", "--out", tiny["dir"] / "M")
    assert code == 2 and err.strip() == "error: the bicut cutter needs PyTorch: pip install 'rankcut[torch]'"
    assert "warning" not in err and not (tiny["dir"] / "M").exists()   # refused before reading the inputs
    (tiny["dir"] / "M").mkdir()
    code, _, err = _without_torch("cut", "--model", tiny["dir"] / "M", "--run", tiny["run"], "--out",
                                  tiny["dir"] / "c.run")
    assert code == 2 and err.strip().endswith("a trained model needs PyTorch, an optional extra: pip install "
                                              "'rankcut[torch]'"), err
    assert not (tiny["dir"] / "c.run").exists()


def test_cut_out_to_stdout_writes_the_run_alone_there(tiny):
    """``--out /dev/stdout`` replaced that link with a regular file (an atomic write's temporary
    file renamed over it) and printed nothing; the summary went to stdout after the run. A link to
    /dev/stdout in the test's folder stands for it (a regression replaces only that link)."""
    import subprocess

    out = tiny["dir"] / "stdout.run"
    out.symlink_to("/dev/stdout")
    done = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()", "cut", "--run",
                           str(tiny["run"]), "--cutter", "fixed-k:2", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert [line.split()[:3] for line in done.stdout.splitlines()] == [
        [q, "Q0", f"d{j}"] for q in ("q1", "q2", "q3", "q4") for j in (0, 1)]
    assert out.is_symlink() and done.stderr.startswith(f"wrote {out}: 4 queries, 8 documents kept")
    # stdout appended to a file: the run was renamed over that file, what it held lost
    log = tiny["dir"] / "log.txt"
    log.write_text("earlier line\n")
    with open(log, "ab") as appended:
        done = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()", "cut",
                               "--run", str(tiny["run"]), "--cutter", "fixed-k:1", "--out", str(out)],
                              stdout=appended, stderr=subprocess.PIPE, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines()[0] == "earlier line" and len(log.read_text().splitlines()) == 5
    assert out.is_symlink() and done.stderr.startswith(f"wrote {out}: 4 queries, 4 documents kept")
    # "-" is stdout (it wrote a file named "-")
    done = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()", "cut", "--run",
                           str(tiny["run"]), "--cutter", "fixed-k:1", "--out", "-"], cwd=tiny["dir"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 4, done.stderr
    assert not (tiny["dir"] / "-").exists()
    assert done.stderr.startswith("wrote the cut run to stdout: 4 queries")   # it said "wrote -:"
    # a cutter that learns said what it learned on stdout, inside the run
    done = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()", "cut", "--run",
                           str(tiny["run"]), "--cutter", "greedy-k", "--train-run", str(tiny["train"]),
                           "--qrels", str(tiny["qrels"]), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert all(len(line.split()) == 6 for line in done.stdout.splitlines()), done.stdout
    assert "greedy-k fitted on 3 training queries" in done.stderr


def test_train_runs_judged_in_qrels_of_their_own(tiny):
    """TREC DL 2019 to train, 2020 to test: each year has its own qrels, and --qrels could be given
    once; the training run was refused as judged by no query (the RAG walk). --train-qrels judges
    --train-run, and gives what one file holding both qrels gives."""
    test_qrels, train_qrels = tiny["dir"] / "test" / "qrels.txt", tiny["dir"] / "train" / "qrels.txt"
    lists = ("--run", tiny["run"], "--train-run", tiny["train"], "--missing", "keep")
    one_line_error(invoke("evaluate", *lists, "--qrels", test_qrels, "--cutters", "greedy-k"),
                   "no query of the run is in the qrels", "give it as --train-qrels")
    cutters = ("--cutters", "oracle,fixed-k:2,greedy-k")
    apart = invoke("evaluate", *lists, "--qrels", test_qrels, "--train-qrels", train_qrels, *cutters)
    together = invoke("evaluate", *lists, "--qrels", tiny["qrels"], *cutters)
    assert apart.exit_code == 0 and together.exit_code == 0, apart.output + together.output
    assert apart.stdout == together.stdout and "greedy-k" in apart.stdout and "in no run" not in apart.stderr
    same = invoke("evaluate", *lists, "--qrels", tiny["qrels"], "--train-qrels", tiny["qrels"], *cutters)
    assert same.stdout == together.stdout and "in no run" not in same.stderr   # each file against every run
    out = {name: tiny["dir"] / f"{name}.run" for name in ("apart", "together")}
    for name, qrels in (("apart", ("--train-qrels", train_qrels)),   # greedy-k reads no test labels
                        ("together", ("--qrels", tiny["qrels"]))):
        result = invoke("cut", "--cutter", "greedy-k", *lists, *qrels, "--out", out[name])
        assert result.exit_code == 0 and "k_=2" in result.stdout, result.output
    assert out["apart"].read_text() == out["together"].read_text()
    one_line_error(invoke("cut", "--cutter", "greedy-k", *lists, "--qrels", test_qrels, "--train-qrels",
                          train_qrels, "--out", out["apart"]), "--qrels is not read")
    one_line_error(invoke("evaluate", "--run", tiny["run"], "--qrels", test_qrels, "--train-qrels",
                          train_qrels, "--folds", 2), "--train-qrels goes with --train-run")
    one_line_error(invoke("cut", "--cutter", "oracle", "--run", tiny["run"], "--train-qrels", train_qrels,
                          "--out", out["apart"]), "--train-qrels goes with --train-run")


def test_fit_metric_help_names_every_cutter_fitted_per_column() -> None:
    """--fit-metric's help named greedy-k, oracle and surprise, while BiCut too is trained once per
    column (and so costs its time twice: a walk). Every registered cutter with a metric is named."""
    import inspect

    from rankcut.cutters import available_cutters, cutter_class

    shown = " ".join(CliRunner().invoke(app, ["evaluate", "--help"], env={"COLUMNS": "200"}).stdout.split())
    said = shown[shown.index("--fit-metric"):shown.index("--baseline")]
    aware = [n for n in available_cutters() if "metric" in inspect.signature(cutter_class(n)).parameters]
    assert {"bicut", "greedy-k"} <= set(aware)
    assert all(re.search(rf"\b{re.escape(n)}\b", said) for n in aware), (aware, said)
