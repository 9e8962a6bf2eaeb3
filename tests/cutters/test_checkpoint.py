"""rankcut.cutters.checkpoint: config.json + model.safetensors + README.md, atomic, checked on load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from safetensors.torch import load_file, save_file  # noqa: E402

from rankcut.cutters import checkpoint  # noqa: E402
from rankcut.cutters.attncut import AttnCut  # noqa: E402
from rankcut.cutters.bicut import BiCut  # noqa: E402
from rankcut.cutters.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from rankcut.cutters.choppy import Choppy  # noqa: E402
from rankcut.cutters.neural import NeuralCutter  # noqa: E402
from rankcut.cutters.recall_constrained import AttnCutRC  # noqa: E402
from rankcut.data.lists import Posting, RankedLists  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


def lists_with_features(n: int = 12, seed: int = 0) -> RankedLists:
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(n):
        length = int(rng.integers(4, 10))
        scores = np.sort(rng.random(length) * 10)[::-1]
        run[f"q{q}"] = [Posting(f"d{j}", float(s), j + 1) for j, s in enumerate(scores)]
        qrels[f"q{q}"] = {f"d{j}": int(rng.random() < 0.4) for j in range(length)}
    lists = RankedLists.from_postings(run, qrels)
    return lists.with_features(rng.random((n, lists.max_len, 1)), ["sim"])


LISTS = lists_with_features()


@pytest.fixture(scope="module")
def fitted() -> Any:
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield {"attncut": AttnCut(epochs=2, seed=1).fit(LISTS),
           "attncut-rc": AttnCutRC(sigma=0.6, epochs=2).fit(LISTS),
           "bicut": BiCut(epochs=2).fit(LISTS),
           "choppy": Choppy(epochs=2, seed=2).fit(LISTS)}
    torch.set_num_threads(n)


@pytest.mark.parametrize("name", ["attncut", "attncut-rc", "bicut", "choppy"])
def test_save_then_load_gives_the_same_cutter(fitted: dict[str, NeuralCutter], tmp_path: Path,
                                              name: str) -> None:
    cutter = fitted[name]
    folder = save_checkpoint(cutter, tmp_path / "model")
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "config.json", "model.safetensors"]
    back = load_checkpoint(folder)
    assert type(back) is type(cutter) and back.get_params() == cutter.get_params()
    assert back.encoder_ == cutter.encoder_
    other = lists_with_features(7, seed=9)
    assert np.array_equal(back.predict(other), cutter.predict(other))
    for key in cutter.summary_attributes:
        assert getattr(back, key) == getattr(cutter, key), key
    for net in cutter.networks:
        a, b = getattr(cutter, f"{net}_").state_dict(), getattr(back, f"{net}_").state_dict()
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        assert not getattr(back, f"{net}_").training


def test_nan_in_the_history_and_numpy_parameters_round_trip(tmp_path: Path) -> None:
    """A run whose last epoch diverged has NaN in its history; parameters given as numpy integers
    are plain numbers in config.json: both come back as they were."""
    cutter = AttnCut(epochs=np.int64(2), seed=1).fit(LISTS)
    cutter.history_[-1]["val_loss"] = float("nan")
    cutter.history_[-1]["val_metric"] = float("inf")
    back = load_checkpoint(save_checkpoint(cutter, tmp_path / "model"))
    assert back.get_params()["epochs"] == 2
    last = back.history_[-1]
    assert np.isnan(last["val_loss"]) and last["val_metric"] == float("inf")
    assert back.history_[:-1] == cutter.history_[:-1] and back.val_qids_ == cutter.val_qids_


def test_the_files_hold_what_they_say(fitted: dict[str, NeuralCutter], tmp_path: Path) -> None:
    cutter = fitted["attncut-rc"]
    folder = cutter.save(tmp_path / "rc")

    def no_constant(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    config = json.loads((folder / "config.json").read_text(), parse_constant=no_constant)
    assert config["format"] == "rankcut-checkpoint" and config["format_version"] == 1
    assert config["cutter"] == "attncut-rc" and config["params"]["sigma"] == 0.6
    assert config["encoder"]["columns"] == ["score", "score_z", "sim"]
    assert config["training"]["best_epoch"] == cutter.best_epoch_
    assert len(config["training"]["val_qids"]) == 2 and len(config["training"]["train_qids"]) == 10
    tensors = load_file(str(folder / "model.safetensors"))  # plain tensors: no pickle inside
    assert {k.split(".", 1)[0] for k in tensors} == {"net", "recall_net"}
    card = (folder / "README.md").read_text()
    for fragment in ("recall-constrained AttnCut", "σ = 0.6", "10 trained on, 2 held out",
                     f"Chosen epoch: {cutter.best_epoch_}", "`sim`", "rankcut cut --model rc",
                     "--features FEATURES.tsv", "load_checkpoint('rc')"):
        assert fragment in card, fragment
    assert AttnCutRC.load(folder).sigma == 0.6
    with pytest.raises(ValueError, match="holds a 'attncut-rc' checkpoint, not 'bicut'"):
        BiCut.load(folder)


def test_an_existing_folder_is_refused_unless_overwrite(fitted: dict[str, NeuralCutter],
                                                        tmp_path: Path) -> None:
    folder = tmp_path / "m"
    save_checkpoint(fitted["bicut"], folder)
    with pytest.raises(FileExistsError, match="exists: choose another folder or pass overwrite=True"):
        save_checkpoint(fitted["attncut"], folder)
    assert load_checkpoint(folder).name == "bicut"
    save_checkpoint(fitted["attncut"], folder, overwrite=True)
    assert load_checkpoint(folder).name == "attncut"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no temporary folder left behind
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="is not a rankcut checkpoint: it is not overwritten"):
        save_checkpoint(fitted["attncut"], precious, overwrite=True)
    assert (precious / "notes.txt").read_text() == "keep me"


def test_a_failed_write_leaves_nothing(fitted: dict[str, NeuralCutter], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint, "save_file", broken)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(fitted["attncut"], tmp_path / "m")
    assert list(tmp_path.iterdir()) == []


def test_only_fitted_neural_cutters_are_saved(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not fitted yet"):
        save_checkpoint(AttnCut(), tmp_path / "m")
    from rankcut.cutters.fixed import FixedK

    with pytest.raises(ValueError, match="only neural cutters"):
        save_checkpoint(FixedK(), tmp_path / "m")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save_checkpoint(AttnCut(epochs=1).fit(LISTS), tmp_path / "no" / "m")


# --------------------------------------------------------------------------- load errors
@pytest.fixture
def saved(fitted: dict[str, NeuralCutter], tmp_path: Path) -> Path:
    return save_checkpoint(fitted["attncut"], tmp_path / "m")


def edit_config(folder: Path, change: Any) -> None:
    path = folder / "config.json"
    config = json.loads(path.read_text())
    change(config)
    path.write_text(json.dumps(config))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.update(format="other"), r"config.json: not a rankcut checkpoint"),
        (lambda c: c.update(format_version=2), r"config.json: format_version 2 is not supported"),
        (lambda c: c.pop("encoder"), r"config.json: lacks \['encoder'\]"),
        (lambda c: c.update(cutter="nope"), r"config.json: unknown cutter 'nope'"),
        (lambda c: c.update(cutter="fixed-k"), r"config.json: cutter 'fixed-k' is not a neural cutter"),
        (lambda c: c["params"].update(loss="xent"), r"config.json: loss must be one of"),
        (lambda c: c["params"].update(depth=3), r"config.json: cutter 'attncut' accepts parameters"),
        (lambda c: c["encoder"].update(std=[0.0, 1.0, 1.0]), r"config.json: std must be > 0"),
        (lambda c: c["training"].pop("best_epoch"), r"config.json: training must hold"),
        (lambda c: c["encoder"].update(columns=["score", "sim"], mean=[0, 0], std=[1, 1]),
         r"model.safetensors: the weights of 'net' do not fit a AttnCutNet with 2 inputs"),
    ],
)
def test_load_errors_name_the_file(saved: Path, change: Any, message: str) -> None:
    edit_config(saved, change)
    with pytest.raises(ValueError, match=message):
        load_checkpoint(saved)


def test_missing_or_broken_files_are_named(saved: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no checkpoint folder there"):
        load_checkpoint(tmp_path / "absent")
    tensors = load_file(str(saved / "model.safetensors"))
    save_file({**tensors, "extra.w": torch.zeros(1)}, str(saved / "model.safetensors"))
    with pytest.raises(ValueError, match=r"model.safetensors: tensors \['extra.w'\] belong to no network"):
        load_checkpoint(saved)
    (saved / "model.safetensors").write_bytes(b"not safetensors at all")
    with pytest.raises(ValueError, match="model.safetensors: not a readable safetensors file"):
        load_checkpoint(saved)
    os.remove(saved / "model.safetensors")
    with pytest.raises(ValueError, match="model.safetensors: missing"):
        load_checkpoint(saved)
    (saved / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json: not readable JSON"):
        load_checkpoint(saved)
    os.remove(saved / "config.json")
    with pytest.raises(ValueError, match=r"config.json: missing \(is .* a rankcut checkpoint\?\)"):
        load_checkpoint(saved)


def test_training_lists_without_a_relevant_document_are_refused(tmp_path: Path) -> None:
    """Robust04's binary qrels at --threshold 2: a model was trained and saved that cuts at 1."""
    run = {f"q{q}": [Posting(f"d{j}", float(10 - j), j + 1) for j in range(6)] for q in range(6)}
    qrels = {q: {f"d{j}": int(j % 2) for j in range(6)} for q in run}
    lists = RankedLists.from_postings(run, qrels, threshold=2).with_features(np.ones((6, 6, 1)), ["sim"])
    with pytest.raises(ValueError, match=r"attncut fit: no document of the 6 training lists counts as "
                                         r"relevant \(relevance ≥ 2, --threshold\)"):
        AttnCut(epochs=1, seed=0).fit(lists)


def test_the_ordering_and_recall_base_trained_with_are_kept_and_checked(tmp_path: Path) -> None:
    """A model trained on trec_eval-ordered lists for judged recall, then used on rank-ordered lists
    scored with list recall: nothing said so (only the relevance grade was checked)."""
    import warnings

    from rankcut.evaluation import evaluate_cutters, trained_otherwise, with_trained

    rng = np.random.default_rng(4)
    run = {f"q{q}": [Posting(f"d{j}", float(10 - j // 2), j + 1) for j in range(8)] for q in range(10)}
    qrels = {q: {f"d{j}": int(rng.integers(0, 2)) for j in range(8)} for q in run}
    features = rng.random((10, 8, 1))
    trec = RankedLists.from_postings(run, qrels, ordering="trec_eval").with_features(features, ["sim"])
    ranked = RankedLists.from_postings(run, qrels, ordering="rank").with_features(features, ["sim"])
    model = load_checkpoint(AttnCut(epochs=1, seed=0, recall_base="judged").fit(trec).save(tmp_path / "m"))
    assert model.ordering_ == "trec_eval"
    assert trained_otherwise(model, trec, "judged") == []
    said = trained_otherwise(model, ranked, "list")
    assert said == [
        "was trained on lists ordered by trec_eval, and these are ordered by rank (--ordering): tied scores "
        "stand in another order than it learned from; give --ordering trec_eval",
        "was trained to maximise its metric with recall over 'judged' relevant documents, and these scores "
        "count recall over 'list' (--recall-base): it learned to cut for another metric"]
    dcg = load_checkpoint(AttnCut(epochs=1, seed=0, metric="dcg", recall_base="judged").fit(trec)
                          .save(tmp_path / "d"))
    assert trained_otherwise(dcg, trec, "list") == []   # ±1-DCG counts no recall
    with pytest.warns(UserWarning, match="m was trained on lists ordered by trec_eval"):
        with_trained(evaluate_cutters(["fixed-k:2"], ranked, folds=2), ranked, {"m": model}, baseline=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with_trained(evaluate_cutters(["fixed-k:2"], trec, folds=2, recall_base="judged"), trec, {"m": model},
                     baseline=None)


def test_the_relevance_grade_trained_with_is_kept_and_checked(tmp_path: Path) -> None:
    """A model trained counting grade ≥ 2 relevant (TREC DL) and evaluated at ≥ 1: no file said
    what it was trained for, and the evaluation went on without a word."""
    import warnings

    from rankcut.evaluation import evaluate_cutters, with_trained

    rng = np.random.default_rng(3)
    run = {f"q{q}": [Posting(f"d{j}", float(10 - j), j + 1) for j in range(8)] for q in range(10)}
    qrels = {q: {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for q in run}
    features = rng.random((10, 8, 1))
    strict = RankedLists.from_postings(run, qrels, threshold=2).with_features(features, ["sim"])
    loose = RankedLists.from_postings(run, qrels, threshold=1).with_features(features, ["sim"])
    folder = AttnCut(epochs=1, seed=0).fit(strict).save(tmp_path / "m")
    model = load_checkpoint(folder)
    assert model.threshold_ == 2.0
    assert "relevant: relevance ≥ 2; lists ranked by run scores, ordered by rank, at most 8 documents long" \
        in (folder / "README.md").read_text()
    config = json.loads((folder / "config.json").read_text())   # as an earlier rankcut wrote it
    del config["training"]["threshold"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"config\.json: training must hold .*; it lacks \['threshold'\] "
                                         r"\(a checkpoint of an earlier rankcut .*: train it again\)"):
        load_checkpoint(folder)
    result = evaluate_cutters(["fixed-k:2"], loose, folds=2)
    with pytest.warns(UserWarning, match=r"m was trained with relevance ≥ 2 counted relevant, and these "
                                         r"lists count relevance ≥ 1 \(--threshold\)"):
        with_trained(result, loose, {"m": model}, baseline=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with_trained(evaluate_cutters(["fixed-k:2"], strict, folds=2), strict, {"m": model}, baseline=None)


def test_the_depth_trained_on_is_kept_and_checked(tmp_path: Path) -> None:
    """A model trained on top-8 lists cut top-12 lists without a word: the checkpoint did not say how
    long its training lists were, and positions past 8 are ones it never placed a cut at."""
    import warnings

    from rankcut.evaluation import evaluate_cutters, trained_otherwise, with_trained

    rng = np.random.default_rng(5)

    def lists(depth: int) -> RankedLists:
        run = {f"q{q}": [Posting(f"d{j}", float(20 - j), j + 1) for j in range(depth - (q == 3))]
               for q in range(10)}
        qrels = {q: {f"d{j}": int(rng.integers(0, 2)) for j in range(depth)} for q in run}
        return RankedLists.from_postings(run, qrels).with_features(rng.random((10, depth, 1)), ["sim"])

    short, deep = lists(8), lists(12)
    folder = AttnCut(epochs=1, seed=0).fit(short).save(tmp_path / "m")
    model = load_checkpoint(folder)
    assert model.depth_ == 8
    assert trained_otherwise(model, short, "list") == []
    assert trained_otherwise(model, deep, "list") == [
        "was trained on lists of at most 8 documents, and 10 lists here are longer (query 'q0' holds 12): "
        "it never saw a position past 8, and its cuts there are untested; give it the top 8 of each list to "
        "cut as it learned"]
    one = deep.subset(["q3", "q4"])
    assert trained_otherwise(model, one, "list")[0].startswith(
        "was trained on lists of at most 8 documents, and 2 lists here are longer (query 'q3' holds 11)")
    with pytest.warns(UserWarning, match="m was trained on lists of at most 8 documents"):
        with_trained(evaluate_cutters(["fixed-k:2"], deep, folds=2), deep, {"m": model}, baseline=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with_trained(evaluate_cutters(["fixed-k:2"], short, folds=2), short, {"m": model}, baseline=None)
        # only the evaluated lists count: the deeper ones here are training queries it never cuts
        mixed = RankedLists.from_postings(
            {**{f"t{q}": [Posting(f"d{j}", float(20 - j), j + 1) for j in range(12)] for q in range(4)},
             **{f"e{q}": [Posting(f"d{j}", float(20 - j), j + 1) for j in range(8)] for q in range(4)}},
            {**{f"t{q}": {"d0": 1} for q in range(4)}, **{f"e{q}": {"d1": 1} for q in range(4)}})
        mixed = mixed.with_features(rng.random((8, 12, 1)), ["sim"])
        with_trained(evaluate_cutters(["fixed-k:2"], mixed, train=[f"t{q}" for q in range(4)]), mixed,
                     {"m": model}, baseline=None)
