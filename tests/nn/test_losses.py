"""Losses of rankcut.nn.losses on tiny lists computed by hand (AttnCut Eq. 4–7, BiCut, Choppy, RL)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from nn_testdata import prefix_mask  # noqa: E402
from torch import Tensor  # noqa: E402

from rankcut.nn.losses import (  # noqa: E402
    bicut_loss,
    bicut_position_loss,
    expected_metric_loss,
    masked_log_softmax,
    mle_loss,
    raml_loss,
    raml_targets,
    recall_bin_targets,
    recall_bins_loss,
    relevant_share,
    rl_loss,
)

NAN = float("nan")
INF = float("inf")


def t(rows: list[list[float]]) -> Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def log_probs(rows: list[list[float]]) -> Tensor:
    """Logits whose softmax is the given (normalised) row; 0 stands for padding."""
    return torch.tensor([[math.log(p) if p > 0 else 0.0 for p in row] for row in rows], dtype=torch.float32)


# ---------------------------------------------------------------------------- masked softmax
def test_masked_log_softmax_gives_padding_exactly_zero_probability() -> None:
    mask = prefix_mask([3, 1], 3)
    out = masked_log_softmax(t([[1.0, 2.0, 3.0], [7.0, 100.0, NAN]]), mask)
    assert torch.isneginf(out[~mask]).all()
    assert out.exp().sum(dim=1).tolist() == pytest.approx([1.0, 1.0])
    e = [math.exp(v) for v in (1.0, 2.0, 3.0)]
    assert out[0].tolist() == pytest.approx([math.log(v / sum(e)) for v in e])
    assert out[1, 0].item() == 0.0  # a list of length 1 keeps its only cut


# ---------------------------------------------------------------------------- RAML (Eq. 4, 6)
def test_raml_targets_are_normalised_per_list() -> None:
    # two lists of different lengths; NaN rewards at padding, as metrics.curves gives them
    rewards = t([[0.0, 0.5, 1.0], [0.2, 0.8, NAN]])
    mask = prefix_mask([3, 2], 3)
    q = raml_targets(rewards, mask, tau=0.5)
    e0 = [math.exp(r / 0.5) for r in (0.0, 0.5, 1.0)]
    e1 = [math.exp(r / 0.5) for r in (0.2, 0.8)]
    assert q[0].tolist() == pytest.approx([v / sum(e0) for v in e0])
    assert q[1, :2].tolist() == pytest.approx([v / sum(e1) for v in e1])
    assert q[1, 2].item() == 0.0
    assert q.sum(dim=1).tolist() == pytest.approx([1.0, 1.0])


def test_raml_loss_by_hand() -> None:
    logits = t([[0.0, 1.0, 2.0], [0.5, -0.5, 9.0]])
    rewards = t([[0.2, 1.0, 0.4], [1.0, 0.0, 0.0]])
    mask = prefix_mask([3, 2], 3)
    expected = []
    for lg, rw in (([0.0, 1.0, 2.0], [0.2, 1.0, 0.4]), ([0.5, -0.5], [1.0, 0.0])):
        z = sum(math.exp(v) for v in lg)
        zq = sum(math.exp(r / 0.95) for r in rw)
        q = [math.exp(r / 0.95) / zq for r in rw]
        expected.append(-sum(qk * (v - math.log(z)) for v, qk in zip(lg, q, strict=True)))
    loss = raml_loss(logits, rewards, mask)
    assert loss.item() == pytest.approx(sum(expected) / 2, rel=1e-6)


# ---------------------------------------------------------------------------- MLE (Eq. 5)
def test_mle_loss_targets_the_best_cut_and_ties_go_to_the_smallest_k() -> None:
    # p = 1/6, 2/6, 3/6; rewards tie at k = 2 and k = 3 -> target k = 2: -log(1/3)
    logits = log_probs([[1 / 6, 2 / 6, 3 / 6], [1.0, 0.0, 0.0]])
    rewards = t([[0.5, 1.0, 1.0], [0.3, NAN, NAN]])
    mask = prefix_mask([3, 1], 3)
    assert mle_loss(logits, rewards, mask).item() == pytest.approx((math.log(3) + 0.0) / 2, rel=1e-6)


# ---------------------------------------------------------------------------- Choppy
def test_expected_metric_loss_by_hand() -> None:
    logits = log_probs([[0.2, 0.5, 0.3], [0.4, 0.6, 0.0]])
    rewards = t([[1.0, 0.5, 0.0], [0.25, 1.0, NAN]])
    mask = prefix_mask([3, 2], 3)
    expected = -((0.2 * 1.0 + 0.5 * 0.5) + (0.4 * 0.25 + 0.6 * 1.0)) / 2
    assert expected_metric_loss(logits, rewards, mask).item() == pytest.approx(expected, rel=1e-6)


# ---------------------------------------------------------------------------- REINFORCE
def test_rl_gradient_pushes_probability_towards_higher_rewards() -> None:
    samples = 512
    logits = torch.zeros(1, 3, requires_grad=True)
    rewards = t([[0.0, 0.5, 1.0]])
    rl_loss(logits, rewards, torch.ones(1, 3, dtype=torch.bool), samples=samples,
            generator=torch.Generator().manual_seed(0)).backward()
    assert logits.grad is not None
    grad = logits.grad[0].tolist()
    assert grad[0] > 0 and grad[2] < 0  # gradient descent raises p(k=3), lowers p(k=1)
    # E[grad] = -(S-1)/S · p_i (r_i - Σ_k p_k r_k) = ∓(S-1)/S · 1/6 at i = 1, 3
    expected = (samples - 1) / samples / 6
    assert grad[0] == pytest.approx(expected, abs=0.04)
    assert grad[2] == pytest.approx(-expected, abs=0.04)


def test_rl_loss_is_reproducible_with_a_generator_and_scaled_by_the_discount() -> None:
    logits = t([[0.3, -0.2, 0.1, 0.0], [1.0, 0.0, 0.0, 0.0]])
    rewards = t([[0.1, 0.9, 0.4, 0.2], [0.5, 1.0, NAN, NAN]])
    mask = prefix_mask([4, 2], 4)

    def loss(seed: int, discount: float = 1.0) -> float:
        g = torch.Generator().manual_seed(seed)
        return rl_loss(logits, rewards, mask, samples=6, generator=g, discount=discount).item()

    assert loss(3) == loss(3)
    assert loss(3) != loss(4)
    assert loss(3, discount=0.5) == pytest.approx(loss(3) / 2)


def test_rl_loss_vanishes_with_equal_rewards() -> None:
    logits = torch.randn(2, 5, requires_grad=True)
    mask = prefix_mask([5, 1], 5)
    loss = rl_loss(logits, torch.full((2, 5), 0.7), mask, generator=torch.Generator().manual_seed(0))
    loss.backward()
    # advantages r - mean(r) vanish up to float32 rounding of the mean
    assert loss.item() == pytest.approx(0.0, abs=1e-6)
    assert logits.grad is not None and logits.grad.abs().max().item() < 1e-6


# ---------------------------------------------------------------------------- BiCut costs
def test_bicut_loss_by_hand() -> None:
    # list 0: P(eol) = 0.5, 0.25, 0.8 and labels 1, 0, 1; list 1: one non-relevant doc, P(eol) = 0.9
    p_eol = [[0.5, 0.25, 0.8], [0.9, 0.5, 0.5]]
    logits2 = torch.tensor([[[math.log(1 - p), math.log(p)] for p in row] for row in p_eol])
    labels = t([[1, 0, 1], [0, 0, 0]])
    mask = prefix_mask([3, 1], 3)
    a, r = 0.65, 0.2
    hit, miss = (1 - a) / r, a / (1 - r)  # stopping at a relevant / continuing past a non-relevant doc
    list0 = (hit * 0.5 + miss * 0.75 + hit * 0.8) / 3
    list1 = miss * (1 - 0.9) / 1
    loss = bicut_loss(logits2, labels, mask, alpha=a, relevant_share=r)
    assert loss.item() == pytest.approx((list0 + list1) / 2, rel=1e-6)


def test_bicut_normalisation_moves_the_end_of_list_threshold() -> None:
    """Per position the loss is minimised by ending the list iff P(relevant) < αr/(αr + (1−α)(1−r)):
    with one relevant document in ten and α = 0.65 the threshold is 0.17, not α itself."""
    a, r = 0.65, 0.1
    threshold = a * r / (a * r + (1 - a) * (1 - r))
    assert threshold == pytest.approx(0.171, abs=1e-3)
    mask = prefix_mask([1], 1)

    def cost(relevant: float, p_eol: float) -> float:
        """bicut_loss of one position with the given label and P(eol)."""
        logits2 = torch.tensor([[[math.log(1 - p_eol), math.log(p_eol)]]])
        return bicut_loss(logits2, t([[relevant]]), mask, alpha=a, relevant_share=r).item()

    for p_rel in (threshold - 0.01, threshold + 0.01):
        # the expected loss of saying EOL (P(eol) near 1) or continue (near 0) when the position is
        # relevant with probability p_rel
        eol = p_rel * cost(1, 1 - 1e-6) + (1 - p_rel) * cost(0, 1 - 1e-6)
        cont = p_rel * cost(1, 1e-6) + (1 - p_rel) * cost(0, 1e-6)
        assert (eol < cont) == (p_rel < threshold), p_rel
    labels = t([[1, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
    assert relevant_share(labels, prefix_mask([10], 10)) == pytest.approx(0.1)
    assert relevant_share(t([[0, 0, 0]]), prefix_mask([3], 3)) == pytest.approx(1e-3)  # clipped


def test_bicut_position_loss_uses_reverse_cumulative_keep_probabilities() -> None:
    # p = 0.2, 0.5, 0.3 -> P(keep) = Σ_{k>=n} p_k = 1.0, 0.8, 0.3
    logits = log_probs([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]])
    labels = t([[1, 0, 1], [1, 0, 0]])
    mask = prefix_mask([3, 1], 3)
    a, r = 0.65, 0.25
    hit, miss = (1 - a) / r, a / (1 - r)
    list0 = (hit * (1 - 1.0) + miss * 0.8 + hit * (1 - 0.3)) / 3
    list1 = hit * (1 - 1.0)  # a list of length 1 keeps its document: no cost
    loss = bicut_position_loss(logits, labels, mask, alpha=a, relevant_share=r)
    assert loss.item() == pytest.approx((list0 + list1) / 2)


# ---------------------------------------------------------------------------- recall bins (Eq. 7)
def test_recall_bin_targets_by_hand() -> None:
    labels = t([[1, 0, 1, 1, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 0]])
    mask = prefix_mask([5, 3, 2], 5)
    # R@k: 1/3, 1/3, 2/3, 1, 1 | 0, 1, 1 | no relevant document: 0, 0 (no NaN)
    assert recall_bin_targets(labels, mask, bins=5).tolist() == [
        [1, 1, 3, 4, 4],
        [0, 4, 4, 0, 0],
        [0, 0, 0, 0, 0],
    ]


def test_recall_bin_targets_put_exact_boundaries_in_the_upper_bin() -> None:
    # R@1 = 1/49 with 49 bins is bin 1, although float 1/49 * 49 = 0.999...
    assert (1 / 49) * 49 < 1
    labels = torch.ones(1, 49)
    targets = recall_bin_targets(labels, torch.ones(1, 49, dtype=torch.bool), bins=49)
    assert targets[0].tolist() == list(range(1, 49)) + [48]


def test_recall_bins_loss_by_hand() -> None:
    probs = [[[0.25, 0.75], [0.5, 0.5]], [[0.9, 0.1], [0.5, 0.5]]]
    bin_logits = torch.tensor([[[math.log(p) for p in pos] for pos in row] for row in probs])
    targets = torch.tensor([[1, 0], [0, 1]])
    mask = prefix_mask([2, 1], 2)
    expected = ((-math.log(0.75) + math.log(2)) / 2 - math.log(0.9)) / 2
    assert recall_bins_loss(bin_logits, targets, mask).item() == pytest.approx(expected, rel=1e-6)


# ---------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("name", ["raml", "mle", "expected", "rl", "bi-position"])
def test_position_losses_have_finite_gradients_with_equal_rewards_and_length_one(name: str) -> None:
    """Equal rewards and a list of one document, with garbage at padding — large logits and NaN
    rewards and labels, which the losses must ignore: the loss and the gradients at listed
    positions are finite, and padding receives no gradient."""
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, 1e4, -1e4, 3.0]], requires_grad=True)
    rewards = torch.tensor([[0.5, 0.5, 0.5, 0.5], [0.5, NAN, NAN, NAN]])
    labels = t([[1, 1, 1, 1], [0, NAN, NAN, NAN]])
    mask = prefix_mask([4, 1], 4)
    losses = {
        "raml": lambda: raml_loss(logits, rewards, mask),
        "mle": lambda: mle_loss(logits, rewards, mask),
        "expected": lambda: expected_metric_loss(logits, rewards, mask),
        "rl": lambda: rl_loss(logits, rewards, mask, generator=torch.Generator().manual_seed(1)),
        "bi-position": lambda: bicut_position_loss(logits, labels, mask, relevant_share=0.5),
    }
    loss = losses[name]()
    loss.backward()
    assert torch.isfinite(loss)
    assert logits.grad is not None and torch.isfinite(logits.grad[mask]).all()
    assert (logits.grad[~mask] == 0).all()


def test_bicut_loss_ignores_nan_labels_at_padding() -> None:
    logits2 = torch.zeros(1, 3, 2, requires_grad=True)
    loss = bicut_loss(logits2, t([[1, 0, NAN]]), prefix_mask([2], 3), relevant_share=0.3)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits2.grad).all()


# ---------------------------------------------------------------------------- validation
def test_bad_inputs_are_refused_with_the_argument_named() -> None:
    logits, rewards = torch.zeros(2, 3), torch.zeros(2, 3)
    mask = prefix_mask([3, 2], 3)
    with pytest.raises(ValueError, match="prefix mask"):
        raml_loss(logits, rewards, torch.tensor([[True, False, True], [True, True, False]]))
    with pytest.raises(ValueError, match="empty list"):
        raml_loss(logits, rewards, prefix_mask([3, 0], 3))
    with pytest.raises(ValueError, match="mask must be a bool"):
        raml_loss(logits, rewards, mask.long())
    with pytest.raises(ValueError, match="tau"):
        raml_loss(logits, rewards, mask, tau=0.0)
    with pytest.raises(ValueError, match="rewards must be finite"):
        mle_loss(logits, t([[0, NAN, 0], [0, 0, 0]]), mask)
    with pytest.raises(ValueError, match="rewards has shape"):
        expected_metric_loss(logits, torch.zeros(2, 4), mask)
    with pytest.raises(ValueError, match="samples"):
        rl_loss(logits, rewards, mask, samples=1)
    with pytest.raises(ValueError, match="discount"):
        rl_loss(logits, rewards, mask, discount=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        bicut_position_loss(logits, rewards, mask, alpha=1.5, relevant_share=0.5)
    with pytest.raises(ValueError, match="relevant_share"):
        bicut_position_loss(logits, rewards, mask, relevant_share=1.0)
    with pytest.raises(ValueError, match="labels must be 0 or 1"):
        bicut_loss(torch.zeros(2, 3, 2), t([[0, 2, 1], [0, 0, 0]]), mask, relevant_share=0.5)
    with pytest.raises(ValueError, match=r"logits2 must have shape \[B, L, 2\]"):
        bicut_loss(torch.zeros(2, 3, 3), rewards, mask, relevant_share=0.5)
    with pytest.raises(ValueError, match="bins"):
        recall_bin_targets(rewards, mask, bins=1)
    with pytest.raises(ValueError, match="targets must lie"):
        recall_bins_loss(torch.zeros(2, 3, 5), torch.tensor([[0, 5, 0], [0, 0, 0]]), mask)
