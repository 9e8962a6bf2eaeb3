"""rankcut.nn.training: seeded split and training, model choice on validation, early stopping."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rankcut.data.lists import Posting, RankedLists  # noqa: E402
from rankcut.metrics import curves, mean_curve  # noqa: E402
from rankcut.nn.inputs import InputEncoder  # noqa: E402
from rankcut.nn.losses import raml_loss  # noqa: E402
from rankcut.nn.models import AttnCutNet, argmax_cuts  # noqa: E402
from rankcut.nn.training import Batch, fit_network, make_batch, split_validation  # noqa: E402


def gap_lists(n: int, seed: int, length: int = 12) -> RankedLists:
    """Lists whose relevant documents come first and score well above the rest: the best cut
    sits at the score gap, which differs from list to list."""
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(n):
        r = int(rng.integers(1, length - 3))
        scores = np.sort(np.r_[5 + rng.random(r), 1 + rng.random(length - r)])[::-1]
        run[f"s{seed}q{q}"] = [Posting(f"d{j}", float(s), j + 1) for j, s in enumerate(scores)]
        qrels[f"s{seed}q{q}"] = {f"d{j}": 1 for j in range(r)}
    return RankedLists.from_postings(run, qrels)


LISTS = gap_lists(20, seed=1)


def small_net(n_features: int, seed: int = 0) -> AttnCutNet:
    torch.manual_seed(seed)
    return AttnCutNet(n_features, hidden=8, heads=2, mlp_hidden=16)


def raml(out: torch.Tensor, b: Batch, epoch: int) -> torch.Tensor:
    return raml_loss(out, b.rewards, b.mask)


def fit(net: AttnCutNet | None = None, *, lists: RankedLists = LISTS, **kw: Any) -> tuple[AttnCutNet, Any]:
    enc = InputEncoder.fit(lists)
    net = net or small_net(enc.n_features)
    options: dict[str, Any] = {"epochs": 4, "patience": 10, "batch_size": 5, "lr": 1e-2, **kw}
    return net, fit_network(net, options.pop("loss_fn", raml), options.pop("decide_fn", argmax_cuts), lists,
                            encoder=enc, **options)


# --------------------------------------------------------------------------- validation split
def test_split_is_seeded_disjoint_and_keeps_the_order() -> None:
    qids = tuple(f"q{i}" for i in range(10))
    train, val = split_validation(qids, 0.2, seed=3)
    assert len(val) == 2 and len(train) == 8 and set(train) | set(val) == set(qids)
    assert list(train) == sorted(train, key=qids.index) and list(val) == sorted(val, key=qids.index)
    assert split_validation(qids, 0.2, seed=3) == (train, val)
    assert any(split_validation(qids, 0.2, seed=s)[1] != val for s in range(4, 10))
    assert len(split_validation(qids, 0.25, seed=0)[1]) == 3  # 2.5 rounds half up


def test_split_does_not_depend_on_the_order_of_the_queries() -> None:
    qids = tuple(f"q{i}" for i in range(10))
    train, val = split_validation(qids, 0.3, seed=5)
    train_r, val_r = split_validation(qids[::-1], 0.3, seed=5)
    assert set(val_r) == set(val) and set(train_r) == set(train)
    assert val_r == tuple(q for q in qids[::-1] if q in set(val))  # each part keeps the given order


def test_the_random_streams_are_distinct() -> None:
    from rankcut.nn.training import STREAMS, stream_seed

    seeds = {stream_seed(3, s) for s in STREAMS} | {3}
    assert len(seeds) == len(STREAMS) + 1
    assert stream_seed(3, "split") == stream_seed(3, "split") != stream_seed(4, "split")


@pytest.mark.parametrize(("n", "fraction", "counts"), [(1, 0.2, "0 for validation and 1"),
                                                        (2, 0.2, "0 for validation and 2"),
                                                        (3, 0.9, "3 for validation and 0")])
def test_too_few_training_queries_for_a_split(n: int, fraction: float, counts: str) -> None:
    with pytest.raises(ValueError, match=f"too few training queries for a validation split.*{counts}"):
        split_validation(tuple(f"q{i}" for i in range(n)), fraction, seed=0)


# --------------------------------------------------------------------------- batches
def test_make_batch_rewards_are_the_metric_curves_shifted_by_one() -> None:
    lists = gap_lists(3, seed=2, length=6).subset(["s2q0", "s2q1", "s2q2"])
    b = make_batch(lists, InputEncoder.fit(lists), metric="f1")
    expected = np.nan_to_num(curves(lists, "f1")[:, 1:], nan=0.0)
    assert np.allclose(b.rewards.numpy(), expected) and b.rewards.dtype == torch.float32
    assert b.labels.tolist() == lists.labels.astype(float).tolist()
    part = b.take(torch.tensor([2, 0]))
    assert len(part) == 2 and torch.equal(part.x, b.x[[2, 0]])


def test_a_list_without_relevant_documents_has_f1_zero_and_a_uniform_raml_target() -> None:
    """F1 of a list with no relevant document is 0 at every cut (not 0/0 = NaN), so its RAML target
    is uniform over its own positions, and padding gets none of it."""
    from rankcut.nn.losses import raml_targets

    run = {"none": [Posting(f"d{j}", 5.0 - j, j + 1) for j in range(3)],
           "some": [Posting(f"d{j}", 5.0 - j, j + 1) for j in range(5)]}
    lists = RankedLists.from_postings(run, {"none": {}, "some": {"d0": 1}})
    b = make_batch(lists, InputEncoder.fit(lists), metric="f1")
    row = lists.qids.index("none")
    assert b.rewards[row].tolist() == [0.0] * 5 and not torch.isnan(b.rewards).any()
    q = raml_targets(b.rewards, b.mask)
    assert q[row].tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0.0, 0.0])
    assert q[row, 3:].tolist() == [0.0, 0.0]


# --------------------------------------------------------------------------- training
def test_same_seed_same_weights_other_seed_other_weights() -> None:
    net_a, res_a = fit(seed=5)
    net_b, res_b = fit(seed=5)
    assert all(torch.equal(a, b) for a, b in zip(net_a.state_dict().values(), net_b.state_dict().values(),
                                                 strict=True))
    assert [e["train_loss"] for e in res_a.history] == [e["train_loss"] for e in res_b.history]
    assert res_a.val_qids == res_b.val_qids
    net_c, res_c = fit(seed=6)
    assert res_c.val_qids != res_a.val_qids
    assert not torch.equal(net_a.state_dict()["decision.3.bias"], net_c.state_dict()["decision.3.bias"])


def test_the_best_validation_epoch_is_the_one_kept() -> None:
    net, res = fit(epochs=6)
    assert res.criterion == "metric"
    metric = [e["val_metric"] for e in res.history]
    assert res.best_epoch == int(np.argmax(metric)) + 1  # first maximum
    val = LISTS.subset(res.val_qids)
    enc = InputEncoder.fit(LISTS)
    x, mask = enc.transform(val)
    with torch.no_grad():
        cuts = argmax_cuts(net(x, mask), mask)
    score = curves(val, "f1")[np.arange(len(val)), cuts].mean()
    assert score == pytest.approx(res.best["val_metric"], abs=1e-6)
    assert not net.training
    assert set(res.train_qids) | set(res.val_qids) == set(LISTS.qids)
    assert not set(res.train_qids) & set(res.val_qids)


def test_training_learns_the_gap() -> None:
    lists = gap_lists(30, seed=4)
    _, res = fit(lists=lists, epochs=8)
    # one depth for all lists (Greedy-k's best) cannot get there; the per-list cut can
    assert res.best["val_metric"] > 0.99 > np.nanmax(mean_curve(lists, "f1")) + 0.15


def test_a_run_that_diverges_keeps_its_best_epoch() -> None:
    """Weights that turn NaN at epoch 3 give NaN outputs: training stops there and keeps the
    best earlier epoch instead of failing in the decision."""

    def poisoned(out: torch.Tensor, b: Batch, epoch: int) -> torch.Tensor:
        return raml(out, b, epoch) * (math.nan if epoch >= 3 else 1.0)

    net, result = fit(loss_fn=poisoned, epochs=6)
    assert [e["epoch"] for e in result.history] == [1, 2, 3]
    assert math.isnan(result.history[-1]["val_metric"]) and result.best_epoch in (1, 2)
    assert all(torch.isfinite(p).all() for p in net.parameters())


def test_early_stopping_after_patience_epochs_without_progress() -> None:
    _, res = fit(lr=1e-12, epochs=20, patience=3)  # weights do not move: the cuts never change
    assert res.best_epoch == 1 and len(res.history) == 4


def test_without_a_decision_the_lowest_validation_loss_is_kept() -> None:
    _, res = fit(decide_fn=None, epochs=5)
    assert res.criterion == "loss" and "val_metric" not in res.history[0]
    assert res.best_epoch == int(np.argmin([e["val_loss"] for e in res.history])) + 1


def test_each_epoch_sees_every_training_list_once_and_knows_its_number() -> None:
    seen: list[tuple[int, int]] = []

    def recording(out: torch.Tensor, b: Batch, epoch: int) -> torch.Tensor:
        if torch.is_grad_enabled():
            seen.append((epoch, len(b)))
        return raml(out, b, epoch)

    _, res = fit(loss_fn=recording, epochs=2, batch_size=7)
    n_train = len(res.train_qids)
    assert [(e, sum(n for ep, n in seen if ep == e)) for e in (1, 2)] == [(1, n_train), (2, n_train)]
    assert max(n for _, n in seen) == 7


def test_the_callers_random_state_is_left_alone() -> None:
    net = small_net(InputEncoder.fit(LISTS).n_features)
    torch.manual_seed(123)
    state = torch.get_rng_state()
    fit(net, epochs=1)
    assert torch.equal(torch.get_rng_state(), state)


def test_progress_bar_on_stderr_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    fit(epochs=1)
    assert capsys.readouterr().err == ""
    fit(epochs=1, progress=True, desc="attncut")
    err = capsys.readouterr().err
    assert "attncut" in err and "val_f1" in err
    # stopped early: the bar ends full at the epochs run, saying why (it ended at 2/60 after 3, a walk)
    _, res = fit(epochs=60, patience=1, progress=True, desc="attncut")
    ran = len(res.history)
    assert ran < 60
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "100%" in last and f" {ran}/{ran} " in last and "stopped=no better in 1 epochs" in last, last


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"epochs": 0}, "epochs must be an integer ≥ 1"),
        ({"batch_size": 0}, "batch_size must be an integer ≥ 1"),
        ({"patience": 0}, "patience must be an integer ≥ 1"),
        ({"lr": 0.0}, "lr must be a finite number > 0"),
        ({"val_fraction": 1.0}, r"val_fraction must be a finite number in \(0, 1\)"),
        ({"seed": -1}, "seed must be an integer ≥ 0"),
        ({"metric": "map"}, "metric must be one of"),
        ({"weight_decay": -1.0}, "weight_decay must be a finite number ≥ 0"),
        ({"clip": 0.0}, "clip must be a number > 0"),
        ({"progress": "yes"}, "progress must be True or False"),
    ],
)
def test_bad_options_name_the_argument(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit(**kw)


def test_training_lists_need_judgements() -> None:
    blind = RankedLists.from_postings({"q": [Posting("d", 1.0, 1)], "r": [Posting("d", 1.0, 1)]})
    with pytest.raises(ValueError, match="carry no relevance judgements"):
        fit(lists=blind)
