"""``rankcut cut`` and ``rankcut evaluate`` through typer's CliRunner: tiny files and Robust04."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app
from rankcut.cutters import make_cutter
from rankcut.data.trec import load_trec, read_run

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


def test_missing_policy_decides_whether_an_unjudged_query_counts(tiny):
    common = ["evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--cutters", "oracle", "--json"]
    keep = json.loads(invoke(*common, "--missing", "keep").stdout)
    drop = invoke(*common)
    assert "warning: 1 run queries are not in the qrels and are dropped" in drop.stderr
    assert keep["per_query"]["qids"] == ["q1", "q2", "q3", "q4"]
    assert json.loads(drop.stdout)["per_query"]["qids"] == ["q1", "q2", "q3"]
    one_line_error(invoke(*common, "--missing", "error"), "run queries are not in the qrels", "'q4'")


def test_evaluate_with_query_id_splits_and_markdown(tiny):
    splits = tiny["dir"] / "splits.json"
    splits.write_text(json.dumps({"train": ["q2", "q4"], "test": ["q1", "q3"]}))
    result = invoke("evaluate", "--run", tiny["run"], "--qrels", tiny["qrels"], "--missing", "keep",
                    "--cutters", "greedy-k,fixed-k:8", "--train-queries", f"{splits}#train",
                    "--test-queries", f"{splits}#test", "--markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("| Method | F1@k | k | DCG@k | k |")
    assert "fitted on 2 training queries of the lists, tested on the 2 others" in result.stdout


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
        (["--plot", "x.png", "--cutters", "fixed-k:2"], ["reference 'oracle'"]),
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
    assert "greedy-k fitted on 3 training queries: k_=2" in result.stdout
    cut = read_run(out)
    assert {q: [p.doc_id for p in ps] for q, ps in cut.items()} == {q: ["d0", "d1"] for q in
                                                                     ("q1", "q2", "q3", "q4")}
    assert [p.rank for p in cut["q1"]] == [1, 2]


def test_cut_oracle_reads_qrels_and_learned_cutters_need_training(tiny):
    out = tiny["dir"] / "cut.run"
    result = invoke("cut", "--cutter", "oracle", "--run", tiny["run"], "--qrels", tiny["qrels"],
                    "--missing", "keep", "--out", out)
    assert result.exit_code == 0, result.output
    assert {q: len(ps) for q, ps in read_run(out).items()} == {"q1": 8, "q2": 2, "q3": 8, "q4": 1}
    one_line_error(invoke("cut", "--cutter", "oracle", "--run", tiny["run"], "--out", out), "give --qrels")
    one_line_error(invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--out", out),
                   "give --train-run and --qrels")
    one_line_error(invoke("cut", "--cutter", "greedy-k", "--run", tiny["run"], "--train-run", tiny["train"],
                          "--out", out), "--train-run needs --qrels")
    one_line_error(invoke("cut", "--cutter", "fixed-k:0", "--run", tiny["run"], "--out", out), "fixed-k:0")


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
