"""AttnCut (Wu et al., "Learning to Truncate Ranked Lists for Information Retrieval", AAAI 2021)
and the variants of its Table 2, one per training objective.

The network (:class:`rankcut.nn.models.AttnCutNet`, Fig. 1) reads the whole list — BiLSTM
encoding, multi-head self-attention with a residual LayerNorm (Eq. 1–2), an MLP and a softmax
over positions (Eq. 3) — and cuts each list at its most probable position. The spec parameter
picks the loss:

* ``attncut`` / ``attncut:raml`` — AttnCut: reward-augmented maximum likelihood, the
  cross-entropy to ``q_k ∝ exp(r_k / τ)`` with ``r_k`` the metric at cut ``k`` (Eq. 4 and 6);
* ``attncut:mle`` — AttnCut-MLE: the log-likelihood of the best cut (Eq. 5);
* ``attncut:bi`` — AttnCut-Bi: BiCut's cost-sensitive loss on ``P(keep n) = Σ_{k ≥ n} p_k``
  (the ``L_BiCut`` of "Baselines", weight ``alpha``, normalised by the share of relevant training
  documents ``r``);
* ``attncut:rl`` — AttnCut-RL: REINFORCE (Williams 1992) on the metric, ``samples`` cuts per
  list, discounted by ``gamma^{epoch - 1}`` (the ``L_RL`` of "Baselines").

torch is imported only when fitting or predicting (:mod:`rankcut.cutters.neural`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankcut._util import check_int, check_number
from rankcut.cutters.base import register
from rankcut.cutters.neural import NeuralCutter, training_share
from rankcut.data.lists import RankedLists
from rankcut.nn.options import METRIC, RECALL_BASE

if TYPE_CHECKING:
    import torch

    from rankcut.nn.training import Batch, DecideFn, LossFn

__all__ = ["LOSSES", "AttnCut"]

#: the training objectives of AttnCut's Table 2
LOSSES: tuple[str, ...] = ("raml", "mle", "bi", "rl")


def check_loss_options(*, tau: object, alpha: object) -> None:
    """``tau`` > 0 (Eq. 4) and ``alpha`` in [0, 1] (BiCut's cost weight), else ValueError."""
    check_number(tau, "tau", low=0.0)
    check_number(alpha, "alpha", low=0.0, high=1.0, low_closed=True, high_closed=True)


@register("attncut")
class AttnCut(NeuralCutter):
    """AttnCut: where to cut, decided over the whole list (module docstring; Fig. 1, Eq. 1–6).

    :param loss: training objective, one of :data:`LOSSES` (spec param: ``attncut:mle``).
    :param metric: the metric optimised and used to choose the epoch (:data:`rankcut.metrics.METRICS`):
        F1@k of Eq. 8 or ±1-DCG@k of Eq. 9 (``"dcg"``); the reward ``r_k`` of RAML and RL.
    :param recall_base: ``"list"`` (relevant documents in the list, Eq. 7) or ``"judged"``.
    :param tau: RAML temperature ``τ`` of Eq. 4 (0.95 in the paper), > 0.
    :param alpha: weight of a kept non-relevant document in the ``bi`` loss, in [0, 1]
        (0.65 as in BiCut).
    :param gamma: RL decay rate ``γ``: the loss of epoch ``l`` is scaled by ``γ^{l-1}``.
    :param samples: RL cuts drawn per list and step, ≥ 2 (the mean of their rewards is the
        baseline).
    :param epochs: most training epochs.
    :param batch_size: lists per update (20, as the paper on Robust04).
    :param lr: Adam's learning rate (1e-3, as the paper).
    :param patience: stop after this many epochs without a better validation metric.
    :param val_fraction: share of the training queries held out to choose the epoch, in (0, 1).
    :param seed: seeds the weights, the validation split, the shuffling, dropout and RL draws.
    :param score_z: add the per-list z-score of the score to the inputs
        (:class:`rankcut.nn.inputs.InputEncoder`).
    :param precision: ``"fp32"``, ``"bf16"`` (bfloat16 autocast with float32 weights, 1.5-2x as
        fast on a CPU with AMX) or ``"auto"`` (``"bf16"`` where the CPU has AMX bf16, else
        ``"fp32"``), for training and prediction (:mod:`rankcut.cutters.neural`).
    :param progress: show a progress bar while training.

    Learned attributes: see :class:`rankcut.cutters.neural.NeuralCutter` (``net_`` is the
    :class:`rankcut.nn.models.AttnCutNet`).
    """

    paper = "AttnCut (Wu et al., AAAI 2021)"

    spec_param = ("loss", str)

    def __init__(
        self,
        *,
        loss: str = "raml",
        metric: str = METRIC,
        recall_base: str = RECALL_BASE,
        tau: float = 0.95,
        alpha: float = 0.65,
        gamma: float = 1.0,
        samples: int = 8,
        **options: Any,
    ) -> None:
        self.loss = loss
        self.metric = metric
        self.recall_base = recall_base
        self.tau = tau
        self.alpha = alpha
        self.gamma = gamma
        self.samples = samples
        super().__init__(**options)

    def _validate_params(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        super()._validate_params()
        check_loss_options(tau=self.tau, alpha=self.alpha)
        check_number(self.gamma, "gamma", low=0.0, low_closed=True)
        check_int(self.samples, "samples", low=2)

    def _build_networks(self, n_features: int) -> dict[str, torch.nn.Module]:
        from rankcut.nn.models import AttnCutNet

        return {"net": AttnCutNet(n_features)}

    def _loss_fn(self, lists: RankedLists) -> LossFn:
        import torch

        from rankcut.nn import losses
        from rankcut.nn.training import stream_seed

        tau, alpha, gamma, samples = float(self.tau), float(self.alpha), float(self.gamma), int(self.samples)
        if self.loss == "raml":
            return lambda out, b, epoch: losses.raml_loss(out, b.rewards, b.mask, tau=tau)
        if self.loss == "mle":
            return lambda out, b, epoch: losses.mle_loss(out, b.rewards, b.mask)
        if self.loss == "bi":
            share = training_share(lists)
            return lambda out, b, epoch: losses.bicut_position_loss(out, b.labels, b.mask, alpha=alpha,
                                                                    relevant_share=share)
        draws = torch.Generator().manual_seed(stream_seed(int(self.seed), "samples"))

        def rl(out: torch.Tensor, b: Batch, epoch: int) -> torch.Tensor:
            return losses.rl_loss(out, b.rewards, b.mask, samples=samples, generator=draws,
                                  discount=gamma ** (epoch - 1))

        return rl

    def _decide_fn(self) -> DecideFn:
        from rankcut.nn.models import argmax_cuts

        return argmax_cuts
