"""Networks and cut decisions of rankcut.nn.models: padding invariance, hand-made decisions, overfitting."""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from nn_testdata import pad, prefix_mask  # noqa: E402
from torch import nn  # noqa: E402

from rankcut.data.lists import Posting, RankedLists  # noqa: E402
from rankcut.metrics import curves  # noqa: E402
from rankcut.nn.losses import bicut_loss, expected_metric_loss, raml_loss, recall_bins_loss  # noqa: E402
from rankcut.nn.models import (  # noqa: E402
    AttnCutNet,
    BiCutNet,
    ChoppyNet,
    argmax_cuts,
    first_eol_cuts,
    recall_constrained_cuts,
)

NETS: dict[str, Callable[[int], nn.Module]] = {
    "attncut": lambda f: AttnCutNet(f, hidden=8, heads=2, mlp_hidden=16),
    "attncut-bins": lambda f: AttnCutNet(f, hidden=8, heads=2, mlp_hidden=16, n_outputs=5),
    "bicut": lambda f: BiCutNet(f, hidden=8),
    "choppy": lambda f: ChoppyNet(f, d_model=16, heads=4, layers=2),
}


# ---------------------------------------------------------------------------- networks
@pytest.mark.parametrize("name", sorted(NETS))
def test_outputs_of_a_list_do_not_depend_on_the_padding_around_it(name: str) -> None:
    torch.manual_seed(0)
    net = NETS[name](3).eval()  # eval: dropout off
    a, b, c = torch.randn(3, 3), torch.randn(7, 3), torch.randn(1, 3)
    with torch.no_grad():
        alone = net(a[None], torch.ones(1, 3, dtype=torch.bool))[0]
        batched = net(torch.stack([pad(a, 7), b, pad(c, 7)]), prefix_mask([3, 7, 1], 7))
        c_alone = net(c[None], torch.ones(1, 1, dtype=torch.bool))[0]
        b_alone = net(b[None], torch.ones(1, 7, dtype=torch.bool))[0]
    torch.testing.assert_close(batched[0, :3], alone, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(batched[1], b_alone, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(batched[2, :1], c_alone, rtol=1e-4, atol=1e-5)
    assert torch.isfinite(batched[0, :3]).all() and torch.isfinite(c_alone).all()


def test_output_shapes_and_padding() -> None:
    x, mask = torch.randn(2, 4, 3), prefix_mask([4, 2], 4)
    torch.manual_seed(0)
    for net in (AttnCutNet(3, hidden=8, heads=2, mlp_hidden=16), ChoppyNet(3, d_model=16, heads=4, layers=1)):
        out = net(x, mask)
        assert out.shape == (2, 4)
        assert torch.isneginf(out[~mask]).all() and torch.isfinite(out[mask]).all()
    assert AttnCutNet(3, hidden=8, heads=2, n_outputs=5)(x, mask).shape == (2, 4, 5)
    assert BiCutNet(3, hidden=8)(x, mask).shape == (2, 4, 2)


@pytest.mark.parametrize("name", sorted(NETS))
def test_gradients_are_finite_with_equal_rewards_and_a_list_of_length_one(name: str) -> None:
    torch.manual_seed(0)
    net = NETS[name](2).train()
    x, mask = torch.randn(2, 4, 2), prefix_mask([4, 1], 4)
    rewards, labels = torch.full((2, 4), 0.5), torch.tensor([[1.0, 0, 1, 0], [1, 0, 0, 0]])
    out = net(x, mask)
    if name == "bicut":
        loss = bicut_loss(out, labels, mask, relevant_share=0.4)
    elif name == "attncut-bins":
        loss = recall_bins_loss(out, torch.zeros(2, 4, dtype=torch.long), mask)
    else:
        loss = raml_loss(out, rewards, mask)
    loss.backward()
    assert torch.isfinite(loss)
    grads = [p.grad for p in net.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="heads must divide"):
        AttnCutNet(3, hidden=5, heads=4)
    with pytest.raises(ValueError, match="n_features"):
        BiCutNet(0)
    with pytest.raises(ValueError, match="dropout"):
        ChoppyNet(3, dropout=1.0)
    net = ChoppyNet(3, d_model=8, heads=2, layers=1, max_len=4)
    with pytest.raises(ValueError, match="max_len"):
        net(torch.randn(1, 5, 3), torch.ones(1, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="features per document"):
        net(torch.randn(1, 4, 2), torch.ones(1, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="prefix mask"):
        net(torch.randn(1, 4, 3), torch.tensor([[True, False, True, False]]))


# ---------------------------------------------------------------------------- decisions
def test_argmax_cuts_ignores_padding_and_breaks_ties_towards_the_smallest_k() -> None:
    logits = np.array([[0.1, 2.0, 2.0, 0.0], [1.0, 0.5, 9.0, 9.0]])
    mask = np.array([[True, True, True, True], [True, True, False, False]])
    cuts = argmax_cuts(logits, mask)
    assert cuts.dtype == np.int64 and cuts.tolist() == [2, 1]
    assert argmax_cuts(torch.tensor(logits), torch.tensor(mask)).tolist() == [2, 1]


def test_first_eol_cuts() -> None:
    def two_class(p_eol: list[float]) -> list[list[float]]:
        return [[math.log(1 - p), math.log(p)] for p in p_eol]

    logits2 = torch.tensor(
        [
            two_class([0.2, 0.3, 0.9, 0.1]),  # first P(eol) > 1/2 at document 3: keep 2
            two_class([0.4, 0.5, 0.3, 0.2]),  # none (exactly 1/2 is not more): the whole list
            two_class([0.1, 0.3, 0.9, 0.9]),  # end of list only at padding: the whole list (2)
            two_class([0.8, 0.1, 0.1, 0.1]),  # EOL at the first document: keep one (k >= 1)
            two_class([0.3, 0.8, 0.1, 0.1]),  # EOL at document 2: keep 1
        ]
    )
    cuts = first_eol_cuts(logits2, prefix_mask([4, 4, 2, 1, 4], 4))
    assert cuts.dtype == np.int64 and cuts.tolist() == [2, 4, 2, 1, 1]


def test_a_perfect_bicut_classifier_cuts_at_the_best_f1() -> None:
    """BiCut's loss asks for *continue* at relevant and EOL at non-relevant documents; a classifier
    that gets every position right must then cut where F1 is best for a list whose relevant
    documents come first (the rule and the loss agree)."""
    from rankcut.data.lists import Posting, RankedLists
    from rankcut.metrics import oracle_cuts

    labels = [[1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0]]
    run = {f"q{i}": [Posting(f"d{j}", 10.0 - j, j + 1) for j in range(6)] for i in range(3)}
    qrels = {f"q{i}": {f"d{j}": 1 for j, y in enumerate(row) if y} for i, row in enumerate(labels)}
    lists = RankedLists.from_postings(run, qrels)
    y = torch.tensor([[float(v) for v in row] for row in labels])
    perfect = torch.stack([y - 0.5, 0.5 - y], dim=-1)  # EOL logit > continue logit iff not relevant
    cuts = first_eol_cuts(perfect, prefix_mask([6, 6, 6], 6))
    assert cuts.tolist() == [2, 1, 4] == oracle_cuts(lists, "f1").tolist()


def test_recall_constrained_cuts_by_hand() -> None:
    # 5 bins [0, .2), [.2, .4), ...; the cut is eligible once P(R ≥ σ) ≥ 1/2, recall uniform in a bin:
    # k=1: bin 0; k=2: bins 1 and 2 at 1/2 each (median 0.4); k=3: bin 1; k=4: bin 4
    def bins(probs: list[float]) -> list[float]:
        return [math.log(p) if p > 0 else -math.inf for p in probs]

    bin_logits = torch.tensor(
        [
            [bins([1, 0, 0, 0, 0]), bins([0, 0.5, 0.5, 0, 0]), bins([0, 1, 0, 0, 0]), bins([0, 0, 0, 0, 1])],
            # a length-2 list whose padding would claim full recall
            [bins([1, 0, 0, 0, 0]), bins([1, 0, 0, 0, 0]), bins([0, 0, 0, 0, 1]), bins([0, 0, 0, 0, 1])],
        ]
    )
    position_logits = torch.tensor([[5.0, 1.0, 3.0, 2.0], [1.0, 2.0, 50.0, 60.0]])
    mask = prefix_mask([4, 2], 4)

    def cuts(sigma: float) -> list[int]:
        return recall_constrained_cuts(position_logits, bin_logits, mask, sigma).tolist()

    assert cuts(0.0) == argmax_cuts(position_logits, mask).tolist() == [1, 2]
    assert cuts(0.1) == [1, 2]  # k=1: P(R ≥ 0.1) = 1/2 (half of bin 0): j = 1, the best cut m = 1 >= j
    assert cuts(0.15) == [3, 2]  # k=1 no longer (1/4); k=2: j = 2 > m = 1, so the next best, k = 3
    assert cuts(0.4) == [3, 2]  # k=2: P(R ≥ 0.4) = 1/2 exactly (bin 2): j = 2
    assert cuts(0.6) == [4, 2]  # j = 4; list 1: no cut reaches 0.6, so j = length = 2
    assert cuts(0.95) == [4, 2]  # k=4: P(R ≥ 0.95) = 1/4 < 1/2: no cut qualifies, the whole list
    assert cuts(1.0) == [4, 2]
    with pytest.raises(ValueError, match="sigma"):
        cuts(1.5)


def test_recall_constrained_rule_takes_j_itself_when_it_is_the_next_best() -> None:
    """The paper's m ≥ j / m′ > j: with j = 2 and the best cut m = 1, the next best is k = 2 = j
    itself, which meets the constraint and is taken (≥, not >)."""
    certain = [[0.0, -math.inf], [-math.inf, 0.0], [-math.inf, 0.0], [-math.inf, 0.0]]  # 2 bins
    bin_logits = torch.tensor([certain])  # k=1 in bin [0, .5), k>=2 in [.5, 1]
    cuts = recall_constrained_cuts(torch.tensor([[5.0, 3.0, 1.0, 0.0]]), bin_logits, prefix_mask([4], 4), 0.5)
    assert cuts.tolist() == [2]


# ---------------------------------------------------------------------------- learning
def test_attncut_overfits_a_handful_of_lists() -> None:
    labels = [
        [1, 1, 0, 0, 0, 0],
        [1, 0, 1, 1, 0, 0],
        [0, 1, 0, 0],
        [1, 1, 1, 1, 1],
        [1, 0, 0, 0, 0, 1],
    ]
    run = {f"q{i}": [Posting(f"d{j}", -j, j + 1) for j in range(len(lab))] for i, lab in enumerate(labels)}
    qrels = {f"q{i}": {f"d{j}": r for j, r in enumerate(lab)} for i, lab in enumerate(labels)}
    lists = RankedLists.from_postings(run, qrels)
    rewards_np = np.nan_to_num(curves(lists, "f1")[:, 1:])
    best = rewards_np.argmax(axis=1) + 1
    assert best.tolist() == [2, 4, 2, 5, 1]  # unique maxima: F1 = 2·TP / (k + R)
    mask = torch.tensor(lists.mask)
    # features: the label itself and the score; a network that can read them can find the best cut
    x = torch.tensor(np.stack([lists.labels, lists.scores], axis=-1), dtype=torch.float32)  # NaN at padding
    rewards = torch.tensor(rewards_np, dtype=torch.float32)

    torch.manual_seed(0)
    net = AttnCutNet(2, hidden=16, heads=2, mlp_hidden=32, dropout=0.0)
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(300):
        optimiser.zero_grad()
        raml_loss(net(x, mask), rewards, mask, tau=0.1).backward()
        optimiser.step()
    with torch.no_grad():
        assert argmax_cuts(net.eval()(x, mask), mask).tolist() == best.tolist()


def test_choppy_learns_the_best_cut_of_a_handful_of_lists() -> None:
    torch.manual_seed(0)
    lengths = [3, 5, 4, 2]
    mask = prefix_mask(lengths, 5)
    rewards = torch.tensor(
        [[0.2, 1.0, 0.1, 0, 0], [0.1, 0.2, 0.3, 0.4, 0.9], [0.9, 0.1, 0.1, 0.1, 0], [0.0, 0.5, 0, 0, 0]]
    )
    x = rewards[:, :, None]
    net = ChoppyNet(1, d_model=16, heads=2, layers=1, dropout=0.0)
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(150):
        optimiser.zero_grad()
        expected_metric_loss(net(x, mask), rewards, mask).backward()
        optimiser.step()
    with torch.no_grad():
        assert argmax_cuts(net.eval()(x, mask), mask).tolist() == [2, 5, 1, 2]


def test_choppy_tells_positions_apart() -> None:
    # identical documents: only the learned position embedding can make their logits differ
    torch.manual_seed(0)
    net = ChoppyNet(2, d_model=16, heads=2, layers=1).eval()
    logits = net(torch.ones(1, 6, 2), torch.ones(1, 6, dtype=torch.bool))
    assert logits.std().item() > 1e-3


# ---------------------------------------------------------------------------- optional extra
def test_import_without_torch_tells_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    monkeypatch.delitem(sys.modules, "rankcut.nn")
    nn_package = importlib.import_module("rankcut.nn")  # torch-free: rankcut.nn.options needs no torch
    with pytest.raises(ImportError, match=r"pip install 'rankcut\[torch\]'"):
        nn_package.AttnCutNet  # noqa: B018  (the models load torch on first use)
