"""Training losses of the neural truncation models (AttnCut, BiCut, Choppy), all masked.

Conventions shared by :mod:`rankcut.nn` (allRank style, STYLE.md item 7): a batch holds ``B``
ranked lists padded to ``L`` positions; ``mask`` is a bool tensor of shape ``[B, L]``, True at
listed documents, listed documents first (a prefix mask, at least one per list). Position ``n``
(0-based) stands for the cut ``k = n + 1``, "keep the first ``n + 1`` documents".

* ``rewards`` ``[B, L]``: ``rewards[b, n]`` = the metric when list ``b`` keeps ``n + 1``
  documents (``rankcut.metrics.curves(...)[:, 1:]``); whatever sits at padding (NaN, 0) is ignored.
* ``labels`` ``[B, L]``: 1.0 relevant, 0.0 otherwise (padding ignored).

Every distribution over positions gives padding exactly zero probability: logits are filled with
:data:`PADDED_LOGIT` there, then ``torch.log_softmax`` (never ``log(softmax)``). Every loss returns
the mean over lists of a per-list loss, a scalar tensor.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from rankcut._util import check_int

__all__ = [
    "PADDED_LOGIT",
    "bicut_loss",
    "bicut_position_loss",
    "expected_metric_loss",
    "masked_log_softmax",
    "mle_loss",
    "raml_loss",
    "raml_targets",
    "recall_bin_targets",
    "recall_bins_loss",
    "relevant_share",
    "rl_loss",
]

#: logit written at padded positions: exp(-inf) = 0, so padding gets exactly zero probability
PADDED_LOGIT = float("-inf")


# ---------------------------------------------------------------------------- validation
def _check_mask(mask: Tensor, shape: tuple[int, int] | None = None) -> Tensor:
    """Validate a prefix mask ``[B, L]`` (bool, listed documents first, >= 1 per list).

    :returns: the list lengths, int64 ``[B]``.
    """
    if not isinstance(mask, Tensor):
        raise ValueError(f"mask must be a torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool or mask.ndim != 2:
        raise ValueError(f"mask must be a bool tensor of shape [B, L], got {mask.dtype} {list(mask.shape)}")
    if shape is not None and tuple(mask.shape) != shape:
        raise ValueError(f"mask has shape {list(mask.shape)}, expected [B, L] = {list(shape)}")
    lengths = mask.sum(dim=1)
    empty = torch.nonzero(lengths == 0).flatten()
    if empty.numel():
        raise ValueError(f"mask: every list needs a listed document; empty list(s) {empty.tolist()}")
    prefix = torch.arange(mask.shape[1], device=mask.device)[None, :] < lengths[:, None]
    if not torch.equal(prefix, mask):
        raise ValueError("mask must list each list's documents first (a prefix mask: True then False)")
    return lengths


def _check_float(name: str, t: object, ndim: int) -> Tensor:
    if not isinstance(t, Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if not t.is_floating_point() or t.ndim != ndim:
        shape = "[B, L]" if ndim == 2 else "[B, L, C]"
        raise ValueError(f"{name} must be a float tensor of shape {shape}, got {t.dtype} {list(t.shape)}")
    return t


def _check_listed_finite(name: str, t: Tensor, mask: Tensor) -> None:
    if not bool(torch.isfinite(t[mask]).all()):
        raise ValueError(f"{name} must be finite at listed positions")


def _check_labels(labels: object, mask: Tensor) -> Tensor:
    labels = _check_float("labels", labels, 2)
    if labels.shape != mask.shape:
        raise ValueError(f"labels has shape {list(labels.shape)}, mask {list(mask.shape)}")
    listed = labels[mask]
    if not bool(((listed == 0) | (listed == 1)).all()):
        raise ValueError("labels must be 0 or 1 at listed positions")
    # whatever sits at padding (NaN included) must not reach the gradients: 0 · NaN is NaN
    return labels.masked_fill(~mask, 0.0)


def _check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not (isinstance(alpha, int | float) and 0.0 <= alpha <= 1.0):
        raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")
    return float(alpha)


def _check_share(share: float) -> float:
    if isinstance(share, bool) or not (isinstance(share, int | float) and 0.0 < share < 1.0):
        raise ValueError(f"relevant_share must be a number in (0, 1), got {share!r}")
    return float(share)


def relevant_share(labels: Tensor, mask: Tensor) -> float:
    """BiCut's normalisation factor ``r``: the proportion of relevant documents among the listed
    documents of the training lists (Lien et al. 2019), clipped into ``[1e-3, 1 − 1e-3]`` so that
    both costs stay finite.

    :param labels: float ``[B, L]`` relevance, 0 or 1.
    :param mask: bool ``[B, L]`` prefix mask.
    """
    _check_mask(mask, (labels.shape[0], labels.shape[1]))
    labels = _check_labels(labels, mask)
    return min(max(float(labels[mask].mean()), 1e-3), 1 - 1e-3)


def _position_inputs(logits: Tensor, rewards: Tensor, mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Validate (logits, rewards, mask) ``[B, L]``; rewards come back with 0 at padding."""
    logits = _check_float("logits", logits, 2)
    rewards = _check_float("rewards", rewards, 2)
    if rewards.shape != logits.shape:
        raise ValueError(f"rewards has shape {list(rewards.shape)}, logits {list(logits.shape)}")
    _check_mask(mask, (logits.shape[0], logits.shape[1]))
    _check_listed_finite("rewards", rewards, mask)
    return logits, rewards.masked_fill(~mask, 0.0), mask


# ---------------------------------------------------------------------------- distributions
def masked_log_softmax(logits: Tensor, mask: Tensor) -> Tensor:
    """Log-probabilities over the positions of each list, ``-inf`` at padding (Eq. 3 of AttnCut).

    :param logits: float ``[B, L]`` position scores (values at padding are ignored).
    :param mask: bool ``[B, L]`` prefix mask.
    :returns: float ``[B, L]``, ``log p_n`` with ``Σ_n p_n = 1`` over each list's listed positions.
    """
    logits = _check_float("logits", logits, 2)
    _check_mask(mask, (logits.shape[0], logits.shape[1]))
    return torch.log_softmax(logits.masked_fill(~mask, PADDED_LOGIT), dim=-1)


def raml_targets(rewards: Tensor, mask: Tensor, tau: float = 0.95) -> Tensor:
    """RAML target distribution ``q_k = exp(r_k / τ) / Σ_n exp(r_n / τ)`` (Eq. 4 of AttnCut).

    Normalised per list, over that list's listed positions only.

    :param rewards: float ``[B, L]``, ``rewards[b, n]`` = metric when keeping ``n + 1`` documents.
    :param mask: bool ``[B, L]`` prefix mask.
    :param tau: temperature ``τ > 0`` (the paper uses 0.95); smaller is sharper.
    :returns: float ``[B, L]``, each row sums to 1, exactly 0 at padding.
    """
    if not (isinstance(tau, int | float) and math.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a finite number > 0, got {tau!r}")
    rewards = _check_float("rewards", rewards, 2)
    _check_mask(mask, (rewards.shape[0], rewards.shape[1]))
    _check_listed_finite("rewards", rewards, mask)
    return torch.softmax((rewards / tau).masked_fill(~mask, PADDED_LOGIT), dim=-1)


# ---------------------------------------------------------------------------- position losses
def raml_loss(logits: Tensor, rewards: Tensor, mask: Tensor, *, tau: float = 0.95) -> Tensor:
    """RAML loss ``-Σ_k q_k log p_k`` (Eq. 6 of AttnCut), ``q`` from :func:`raml_targets` (Eq. 4).

    :param logits: float ``[B, L]`` position logits (``p = softmax``, Eq. 3).
    :param rewards: float ``[B, L]`` metric at each cut.
    :param mask: bool ``[B, L]`` prefix mask.
    :returns: scalar, mean over the ``B`` lists.
    """
    logits, rewards, mask = _position_inputs(logits, rewards, mask)
    q = raml_targets(rewards, mask, tau)
    log_p = masked_log_softmax(logits, mask).masked_fill(~mask, 0.0)  # 0 · (-inf) would be NaN
    return -(q * log_p).sum(dim=-1).mean()


def mle_loss(logits: Tensor, rewards: Tensor, mask: Tensor) -> Tensor:
    """MLE loss ``-log p_{k*}`` (Eq. 5 of AttnCut), ``k*`` the best cut (ties → smallest ``k``).

    :param logits: float ``[B, L]`` position logits.
    :param rewards: float ``[B, L]`` metric at each cut; its argmax is the Dirac target ``δ_{k*}``.
    :param mask: bool ``[B, L]`` prefix mask.
    :returns: scalar, mean over the ``B`` lists.
    """
    logits, rewards, mask = _position_inputs(logits, rewards, mask)
    # torch.argmax returns the first maximal index: ties go to the smallest k
    best = rewards.masked_fill(~mask, float("-inf")).argmax(dim=-1, keepdim=True)
    return -masked_log_softmax(logits, mask).gather(1, best).mean()


def expected_metric_loss(logits: Tensor, rewards: Tensor, mask: Tensor) -> Tensor:
    """Choppy's loss, the negative expected metric ``-Σ_k p_k r_k`` (Bahri et al. 2020).

    :param logits: float ``[B, L]`` position logits.
    :param rewards: float ``[B, L]`` metric at each cut.
    :param mask: bool ``[B, L]`` prefix mask.
    :returns: scalar, mean over the ``B`` lists.
    """
    logits, rewards, mask = _position_inputs(logits, rewards, mask)
    p = masked_log_softmax(logits, mask).exp()
    return -(p * rewards).sum(dim=-1).mean()


def rl_loss(
    logits: Tensor,
    rewards: Tensor,
    mask: Tensor,
    *,
    samples: int = 8,
    generator: torch.Generator | None = None,
    discount: float = 1.0,
) -> Tensor:
    """AttnCut-RL: REINFORCE (Williams 1992) with the metric as reward ("Baselines" of AttnCut).

    Draws ``samples = S`` cuts ``k_s ~ p`` per list and returns
    ``discount · mean_lists(-mean_s (r_{k_s} - b) log p_{k_s})``; the baseline ``b`` is the mean
    reward of that list's samples (no gradient), which lowers the variance. The expected gradient is
    ``(S - 1) / S`` times the gradient of the paper's ``L_RL = -Σ_k p_k r_k`` (the sample's own
    reward inside ``b`` shrinks it; the direction is unbiased).

    :param logits: float ``[B, L]`` position logits.
    :param rewards: float ``[B, L]`` metric at each cut.
    :param mask: bool ``[B, L]`` prefix mask (padding is never drawn: it has probability 0).
    :param samples: cuts drawn per list, >= 2 (with one, the baseline cancels the reward).
    :param generator: torch.Generator for reproducible draws (None: torch's global one).
    :param discount: factor ``γ^{l-1}`` of the paper (``l`` = training trace, from the trainer), >= 0.
    :returns: scalar.
    """
    samples = check_int(samples, "samples", low=2, ge=">=")
    if not (isinstance(discount, int | float) and math.isfinite(discount) and discount >= 0):
        raise ValueError(f"discount must be a finite number >= 0, got {discount!r}")
    logits, rewards, mask = _position_inputs(logits, rewards, mask)
    log_p = masked_log_softmax(logits, mask)
    draws = torch.multinomial(log_p.detach().exp(), samples, replacement=True, generator=generator)  # [B, S]
    r = rewards.gather(1, draws)
    advantage = r - r.mean(dim=1, keepdim=True)
    return -discount * (advantage * log_p.gather(1, draws)).mean(dim=1).mean()


# ---------------------------------------------------------------------------- BiCut costs
def bicut_loss(logits2: Tensor, labels: Tensor, mask: Tensor, *, alpha: float = 0.65,
               relevant_share: float) -> Tensor:
    """BiCut's cost-sensitive loss (Lien, Cohen and Croft 2019), per list

    ``Σ_n [α (1 - y_n) P(continue_n) / (1 - r) + (1 - α) y_n P(eol_n) / r] / length``: continuing
    past a non-relevant document costs ``α``, stopping at a relevant one ``1 - α``, each divided by
    the share of its class among the training documents (``r`` relevant, :func:`relevant_share`;
    the "normalization factor r" of AttnCut's ``L_BiCut``). Without it the classes are not
    balanced: with ``α = 0.65`` and one relevant document in ten, ending the list at the first
    document minimises the loss, and every list is cut at ``k = 1``. With it, a position ends
    the list when its relevance probability is below ``αr / (αr + (1 − α)(1 − r))``.
    The costs are averaged over the list's documents (the paper's ``L_BiCut`` sums them): lists of
    one length, as Robust04's 300, differ by a constant factor only, and lists of different
    lengths weigh alike.

    :param logits2: float ``[B, L, 2]`` logits, class 0 = continue, class 1 = end of list; one
        softmax over the last axis (the only one: the network returns raw logits).
    :param labels: float ``[B, L]`` relevance, 0 or 1.
    :param mask: bool ``[B, L]`` prefix mask.
    :param alpha: cost weight ``α`` in [0, 1] (0.65 in Lien et al.).
    :param relevant_share: ``r`` in (0, 1), the proportion of relevant training documents.
    :returns: scalar, mean over the ``B`` lists.
    """
    alpha = _check_alpha(alpha)
    r = _check_share(relevant_share)
    logits2 = _check_float("logits2", logits2, 3)
    if logits2.shape[-1] != 2:
        raise ValueError(f"logits2 must have shape [B, L, 2], got {list(logits2.shape)}")
    lengths = _check_mask(mask, (logits2.shape[0], logits2.shape[1]))
    labels = _check_labels(labels, mask)
    p = torch.softmax(logits2, dim=-1)
    cost = alpha / (1 - r) * (1 - labels) * p[..., 0] + (1 - alpha) / r * labels * p[..., 1]
    return (cost.masked_fill(~mask, 0.0).sum(dim=-1) / lengths).mean()


def bicut_position_loss(logits: Tensor, labels: Tensor, mask: Tensor, *, alpha: float = 0.65,
                        relevant_share: float) -> Tensor:
    """AttnCut-Bi: BiCut's costs (Lien et al. 2019) on AttnCut's position softmax ("Baselines").

    Document ``n`` is kept when the cut is at or after it, ``P(keep_n) = Σ_{k >= n} p_k`` (a reverse
    cumulative sum of Eq. 3's ``p``); per list the loss is
    ``Σ_n [α (1 - y_n) P(keep_n) / (1 - r) + (1 - α) y_n (1 - P(keep_n)) / r] / length``, with
    BiCut's class normalisation ``r`` (:func:`bicut_loss`).

    :param logits: float ``[B, L]`` position logits.
    :param labels: float ``[B, L]`` relevance, 0 or 1.
    :param mask: bool ``[B, L]`` prefix mask.
    :param alpha: cost weight ``α`` in [0, 1].
    :param relevant_share: ``r`` in (0, 1), the proportion of relevant training documents.
    :returns: scalar, mean over the ``B`` lists.
    """
    alpha = _check_alpha(alpha)
    r = _check_share(relevant_share)
    logits = _check_float("logits", logits, 2)
    lengths = _check_mask(mask, (logits.shape[0], logits.shape[1]))
    labels = _check_labels(labels, mask)
    p = masked_log_softmax(logits, mask).exp()
    keep = p.flip(-1).cumsum(-1).flip(-1)
    cost = alpha / (1 - r) * (1 - labels) * keep + (1 - alpha) / r * labels * (1 - keep)
    return (cost.masked_fill(~mask, 0.0).sum(dim=-1) / lengths).mean()


# ---------------------------------------------------------------------------- recall bins
def recall_bin_targets(labels: Tensor, mask: Tensor, bins: int = 5) -> Tensor:
    """Recall bin of every cut, the targets of the recall-constrained AttnCut.

    ``R@k`` (Eq. 7 of AttnCut: relevant documents kept / relevant documents in the list, 0 for a
    list without any) falls in bin ``min(floor(R · bins), bins - 1)``; computed in integers, so a
    recall of exactly ``b / bins`` lands in bin ``b``.

    :param labels: float ``[B, L]`` relevance, 0 or 1.
    :param mask: bool ``[B, L]`` prefix mask.
    :param bins: number of ordered bins ``B >= 2`` (5 in the paper).
    :returns: int64 ``[B, L]`` bin index of the cut ``k = n + 1``; 0 at padding.
    """
    bins = check_int(bins, "bins", low=2, ge=">=")
    labels = _check_float("labels", labels, 2)
    _check_mask(mask, (labels.shape[0], labels.shape[1]))
    labels = _check_labels(labels, mask)
    kept = (labels.masked_fill(~mask, 0.0) > 0).long().cumsum(dim=-1)  # relevant among the first k
    total = kept[:, -1:]
    target = torch.where(total > 0, kept * bins // total.clamp(min=1), 0).clamp(max=bins - 1)
    return target.masked_fill(~mask, 0)


def recall_bins_loss(bin_logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    """Cross-entropy of the recall bins (the MLE objective of the recall-constrained AttnCut).

    :param bin_logits: float ``[B, L, C]`` raw logits over ``C`` bins at every position.
    :param targets: int64 ``[B, L]`` bins from :func:`recall_bin_targets`.
    :param mask: bool ``[B, L]`` prefix mask.
    :returns: scalar: per list, the mean cross-entropy over its listed positions; mean over lists.
    """
    bin_logits = _check_float("bin_logits", bin_logits, 3)
    n_lists, length, n_bins = bin_logits.shape
    lengths = _check_mask(mask, (n_lists, length))
    if not isinstance(targets, Tensor) or targets.dtype != torch.int64 or targets.shape != mask.shape:
        raise ValueError(f"targets must be an int64 tensor of shape {list(mask.shape)}")
    listed = targets[mask]
    if not bool(((listed >= 0) & (listed < n_bins)).all()):
        raise ValueError(f"targets must lie in [0, {n_bins}) at listed positions")
    ce = F.cross_entropy(
        bin_logits.reshape(-1, n_bins), targets.masked_fill(~mask, 0).reshape(-1), reduction="none"
    ).view(n_lists, length)
    return (ce.masked_fill(~mask, 0.0).sum(dim=-1) / lengths).mean()
