"""The training loop of the neural cutters: seeded, with a validation split carved from the
training queries, Adam, gradient clipping and model choice on the validation metric.

AttnCut (Wu et al., AAAI 2021, "Experimental Settings") trains with Adam (Kingma & Ba 2014) on
mini-batches of 20 lists at learning rate 1e-3; it does not say how the epoch is chosen. Here the
epoch is chosen on held-out *training* queries, never on test queries: a seeded fraction
``val_fraction`` of the training lists is set aside, the network is trained on the rest, and
after every epoch the validation lists are cut by the model's own decision rule and scored with
the metric being optimised (F1@k of Eq. 8 or ±1-DCG@k of Eq. 9 of AttnCut, :mod:`rankcut.metrics`).
The weights of the best epoch are kept; training stops after ``patience`` epochs without a
better one.

Precision: ``precision="bf16"`` runs every forward pass (training and validation) under
``torch.autocast("cpu", dtype=torch.bfloat16)``: matrix products and LSTMs in bfloat16 on the
CPU's AMX units, the weights, gradients, Adam's state and the loss in float32 (the network's
output is cast back to float32 before the loss and the decision). ``"auto"`` is ``"bf16"`` where
the CPU has AMX bf16 (:func:`resolve_precision`), ``"fp32"`` elsewhere, where bfloat16 would be
emulated and slower. ``"bf16"`` is refused for a network with an LSTM on a CPU where torch cannot
run one under bfloat16 autocast at all (:func:`runnable_precision`; oneDNN builds no bf16 LSTM on
an AVX2-only CPU); a model saved in bf16 then predicts in float32, with a warning.

Speed: every list is encoded once (:func:`make_batch`); an epoch only permutes rows and slices
them, and validation is one forward pass under ``torch.inference_mode()``.
``torch.set_num_threads`` is left to the caller.
"""

from __future__ import annotations

import functools
import math
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from rankcut import metrics
from rankcut.data.lists import RankedLists
from rankcut.nn.inputs import InputEncoder
from rankcut.nn.options import (
    CLIP,
    METRIC,
    RECALL_BASE,
    TRAINING_DEFAULTS,
    WEIGHT_DECAY,
    check_precision,
    check_training_options,
)

__all__ = ["STREAMS", "Batch", "DecideFn", "LossFn", "TrainingResult", "autocast", "fit_network",
           "bf16_lstm_runs", "has_amx_bf16", "make_batch", "resolve_precision", "runnable_precision",
           "split_validation", "stream_seed"]


def has_amx_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices natively (Intel AMX, Sapphire Rapids on)."""
    try:
        return bool(torch.cpu.get_capabilities().get("amx_bf16", False))
    except (AttributeError, RuntimeError):  # older torch
        return bool(getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)())


@functools.cache
def bf16_lstm_runs() -> bool:
    """Whether torch runs an LSTM (forward and backward) under bfloat16 autocast on this CPU.

    oneDNN's bf16 LSTM needs AVX-512 BF16 or AMX; on an AVX2-only CPU torch refuses to build the
    primitive (``RuntimeError: could not create a primitive descriptor for the LSTM``). Checked
    once per process on a tiny LSTM; the caller's torch random state is left as it was."""
    with torch.random.fork_rng(devices=[]):
        lstm = nn.LSTM(2, 2, batch_first=True, bidirectional=True)
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = lstm(torch.zeros(1, 2, 2))[0]
            out.float().sum().backward()
        except RuntimeError:
            return False
    return True


def resolve_precision(precision: str) -> str:
    """``"fp32"`` or ``"bf16"``: ``precision`` itself, or for ``"auto"`` ``"bf16"`` when the CPU
    has AMX bf16 (:func:`has_amx_bf16`) and ``"fp32"`` otherwise."""
    check_precision(precision)
    if precision == "auto":
        return "bf16" if has_amx_bf16() else "fp32"
    return precision


def runnable_precision(precision: str, nets: Iterable[nn.Module], *, predicting: bool = False) -> str:
    """:func:`resolve_precision`, checked against what this CPU can run for ``nets``.

    ``"bf16"`` for networks with an LSTM (AttnCut, BiCut) where this CPU cannot run one in bfloat16
    (:func:`bf16_lstm_runs`) is refused for training, and for a trained model's predictions becomes
    ``"fp32"`` with a warning (its weights are float32 either way).

    :raises ValueError: training in ``"bf16"`` that this CPU cannot run.
    """
    precision = resolve_precision(precision)
    lstm = any(isinstance(m, nn.LSTM) for net in nets for m in net.modules())
    if precision != "bf16" or not lstm or bf16_lstm_runs():
        return precision
    why = "this CPU cannot run an LSTM in bfloat16 (torch's oneDNN kernels need AVX-512 BF16 or AMX)"
    if not predicting:
        raise ValueError(f"precision bf16: {why}; train with precision fp32 (--precision fp32), or auto, "
                         "which takes bf16 only where the CPU has AMX")
    warnings.warn(f"the model was trained in bf16, but {why}: it predicts in fp32 here", stacklevel=3)
    return "fp32"


def autocast(precision: str) -> torch.autocast:
    """The CPU autocast context of a resolved ``precision`` (disabled for ``"fp32"``)."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")


@dataclass(frozen=True, eq=False)
class Batch:
    """The tensors of a set of lists, padded to a common length ``L`` (listed documents first).

    :param x: float32 ``[B, L, F]`` standardised input features (:class:`InputEncoder`).
    :param mask: bool ``[B, L]``, True at listed documents.
    :param rewards: float32 ``[B, L]``, ``rewards[b, n]`` = the metric when keeping ``n + 1``
        documents (0 at padding).
    :param labels: float32 ``[B, L]``, 1 for a relevant document, else 0 (0 at padding).
    """

    x: torch.Tensor
    mask: torch.Tensor
    rewards: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def take(self, rows: torch.Tensor) -> Batch:
        """The lists at ``rows`` (long ``[b]``), trimmed to their own longest length."""
        mask = self.mask[rows]
        width = int(mask.sum(dim=1).max())
        return Batch(self.x[rows, :width], mask[:, :width], self.rewards[rows, :width],
                     self.labels[rows, :width])


#: ``loss_fn(output, batch, epoch) -> scalar``: the network's output for ``batch`` and the
#: 1-based epoch (AttnCut-RL discounts by it)
LossFn = Callable[[torch.Tensor, Batch, int], torch.Tensor]
#: ``decide_fn(output, mask) -> cuts``: int64 ``[B]``, ``1 ≤ k ≤ length``
DecideFn = Callable[[torch.Tensor, torch.Tensor], NDArray[np.int64]]


@dataclass(frozen=True)
class TrainingResult:
    """What :func:`fit_network` did.

    :param history: one dict per epoch run: ``epoch`` (1-based), ``train_loss`` (mean over the
        training lists), ``val_loss``, ``val_metric`` (mean metric of the decided validation
        cuts; absent when the epoch is chosen by validation loss) and ``seconds``.
    :param best_epoch: the epoch whose weights were kept.
    :param criterion: ``"metric"`` (highest validation metric) or ``"loss"`` (lowest
        validation loss), how ``best_epoch`` was chosen.
    :param train_qids: the queries trained on.
    :param val_qids: the queries set aside for validation.
    """

    history: tuple[dict[str, float], ...]
    best_epoch: int
    criterion: str
    train_qids: tuple[str, ...]
    val_qids: tuple[str, ...]

    @property
    def best(self) -> dict[str, float]:
        """The history entry of :attr:`best_epoch`."""
        return self.history[self.best_epoch - 1]


def make_batch(lists: RankedLists, encoder: InputEncoder, *, metric: str, recall_base: str = "list") -> Batch:
    """Encode ``lists`` once for training: inputs, rewards of every cut, and labels.

    :param lists: ranked lists with relevance judgements.
    :param encoder: the input encoder (fitted on the training lists).
    :param metric: the reward (one of :data:`rankcut.metrics.METRICS`): ``rewards[b, n]`` is
        ``rankcut.metrics.curves(lists, metric, recall_base=recall_base)[b, n + 1]``.
    :param recall_base: ``"list"`` (AttnCut's Eq. 7) or ``"judged"``.
    """
    x, mask = encoder.transform(lists)
    curves = metrics.curves(lists, metric, recall_base=recall_base)[:, 1:]
    rewards = torch.from_numpy(np.nan_to_num(curves, nan=0.0).astype(np.float32))
    labels = torch.from_numpy(lists.labels.astype(np.float32))
    return Batch(x, mask, rewards, labels)


def split_validation(qids: tuple[str, ...], val_fraction: float,
                     seed: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split training queries into (train, validation), seeded.

    ``round(val_fraction · n)`` queries (half rounded up), drawn by
    ``numpy.random.default_rng(seed).permutation`` of the *sorted* query ids (so the split does
    not depend on the order of the run files), go to validation; both parts keep the order of
    ``qids``.

    :raises ValueError: when either part would be empty (too few training queries).
    """
    n = len(qids)
    n_val = int(math.floor(val_fraction * n + 0.5))
    if n_val < 1 or n_val >= n:
        works = f", or val_fraction={math.ceil(100 / n) / 100:g}" if n >= 2 else ""   # one for validation
        raise ValueError(
            f"too few training queries for a validation split: val_fraction={val_fraction:g} of "
            f"{n} {'query' if n == 1 else 'queries'} leaves {n_val} for validation and {n - n_val} "
            f"for training; each needs at least one (give more training queries{works})"
        )
    ranked = sorted(qids)
    held = {ranked[i] for i in np.random.default_rng(seed).permutation(n)[:n_val].tolist()}
    return tuple(q for q in qids if q not in held), tuple(q for q in qids if q in held)


#: the random streams of training, each seeded from the user's seed (:func:`stream_seed`)
STREAMS: tuple[str, ...] = ("split", "shuffle", "dropout", "samples")


def stream_seed(seed: int, stream: str) -> int:
    """An independent seed for one random stream of training (:data:`STREAMS`: the validation
    split, the batch order, dropout, RL's sampled cuts), from ``seed``
    (``numpy.random.SeedSequence([seed, i])``), so that no two streams replay the same numbers —
    nor the initial weights, which :meth:`rankcut.cutters.neural.NeuralCutter.fit` draws from
    ``torch.manual_seed(seed)`` itself."""
    return int(np.random.SeedSequence([seed, STREAMS.index(stream)]).generate_state(1)[0])


def _adam(net: nn.Module, *, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    """Adam, fused into one kernel where torch can (CPU since torch 2.4): measured 2 ms instead of
    7 ms per step for AttnCut's weights, with the gradient clipping."""
    try:
        return torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):
        return torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)


def fit_network(
    net: nn.Module,
    loss_fn: LossFn,
    decide_fn: DecideFn | None,
    train_lists: RankedLists,
    *,
    encoder: InputEncoder,
    metric: str = METRIC,
    recall_base: str = RECALL_BASE,
    epochs: int = TRAINING_DEFAULTS["epochs"],
    batch_size: int = TRAINING_DEFAULTS["batch_size"],
    lr: float = TRAINING_DEFAULTS["lr"],
    weight_decay: float = WEIGHT_DECAY,
    clip: float = CLIP,
    patience: int = TRAINING_DEFAULTS["patience"],
    val_fraction: float = TRAINING_DEFAULTS["val_fraction"],
    seed: int = TRAINING_DEFAULTS["seed"],
    precision: str = TRAINING_DEFAULTS["precision"],
    progress: bool = TRAINING_DEFAULTS["progress"],
    desc: str = "train",
) -> TrainingResult:
    """Train ``net`` in place and leave it holding the weights of the best validation epoch.

    The defaults of the options are those of every neural cutter (:mod:`rankcut.nn.options`).

    :param net: the network; ``net(x [B, L, F], mask [B, L])`` returns the output that
        ``loss_fn`` and ``decide_fn`` read. Its initial weights are the caller's (seed them).
    :param loss_fn: ``loss_fn(output, batch, epoch)``, a scalar to minimise (:data:`LossFn`).
    :param decide_fn: the model's cuts from its output (:data:`DecideFn`); the epoch with the
        highest mean validation ``metric`` at these cuts is kept. None: the epoch with the
        lowest validation loss is kept (for models that predict something else than a cut,
        such as the recall bins of recall-constrained AttnCut).
    :param train_lists: the training lists (with judgements); ``val_fraction`` of them are set
        aside for validation (:func:`split_validation`).
    :param encoder: turns lists into inputs; fitted on ``train_lists``.
    :param metric: reward and validation metric (:data:`rankcut.metrics.METRICS`).
    :param recall_base: ``"list"`` or ``"judged"`` (:func:`rankcut.metrics.curves`).
    :param epochs: most epochs to run.
    :param batch_size: lists per update (AttnCut: 20 on Robust04).
    :param lr: Adam's learning rate (AttnCut: 1e-3).
    :param weight_decay: Adam's L2 penalty.
    :param clip: largest gradient norm (``torch.nn.utils.clip_grad_norm_``); ``inf``: no clip.
    :param patience: stop after this many epochs without a better validation score.
    :param val_fraction: share of the training queries used for validation, in (0, 1).
    :param seed: seeds the split (numpy), the shuffling and dropout (torch), each through its own
        :func:`stream_seed`; the caller's global torch random state is restored afterwards.
    :param precision: ``"fp32"``, ``"bf16"`` (bfloat16 autocast, float32 weights and loss; module
        docstring) or ``"auto"`` (:func:`resolve_precision`).
    :param progress: show a tqdm bar on stderr with the loss and the validation score.
    :param desc: the bar's label.
    :returns: the :class:`TrainingResult`; ``net`` is left in eval mode.
    """
    check_training_options(metric=metric, recall_base=recall_base, epochs=epochs, batch_size=batch_size,
                           lr=lr, patience=patience, val_fraction=val_fraction, seed=seed,
                           precision=precision, progress=progress)
    precision = runnable_precision(precision, [net])
    if not (isinstance(weight_decay, int | float) and math.isfinite(weight_decay) and weight_decay >= 0):
        raise ValueError(f"weight_decay must be a finite number ≥ 0, got {weight_decay!r}")
    if not (isinstance(clip, int | float) and not math.isnan(clip) and clip > 0):
        raise ValueError(f"clip must be a number > 0 (inf: no clipping), got {clip!r}")
    if train_lists.gains is None:
        raise ValueError("training lists carry no relevance judgements: build them with qrels")
    train_ids, val_ids = split_validation(train_lists.qids, val_fraction, stream_seed(seed, "split"))

    data = make_batch(train_lists, encoder, metric=metric, recall_base=recall_base)
    row = {q: i for i, q in enumerate(train_lists.qids)}
    train = data.take(torch.tensor([row[q] for q in train_ids]))
    val = data.take(torch.tensor([row[q] for q in val_ids]))
    val_rewards = val.rewards.numpy()

    from tqdm.auto import tqdm  # lazy, as elsewhere in rankcut

    history: list[dict[str, float]] = []
    best_score, best_epoch, best_state = -math.inf, 0, None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(stream_seed(seed, "dropout"))
        shuffle = torch.Generator().manual_seed(stream_seed(seed, "shuffle"))
        optimizer = _adam(net, lr=lr, weight_decay=weight_decay)
        bar = tqdm(total=epochs, desc=desc, unit="epoch", disable=not progress, file=sys.stderr,
                   dynamic_ncols=True)
        for epoch in range(1, epochs + 1):
            start = time.perf_counter()
            net.train()
            total = 0.0
            order = torch.randperm(len(train), generator=shuffle)
            for first in range(0, len(train), batch_size):
                batch = train.take(order[first:first + batch_size])
                with autocast(precision):
                    out = net(batch.x, batch.mask)
                loss = loss_fn(out.float(), batch, epoch)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), clip, foreach=True)
                optimizer.step()
                total += float(loss.detach()) * len(batch)
            net.eval()
            with torch.inference_mode():
                with autocast(precision):
                    out = net(val.x, val.mask)
                out = out.float()
                diverged = not bool(torch.isfinite(out[val.mask]).all())
                val_loss = math.nan if diverged else float(loss_fn(out, val, epoch))
                entry: dict[str, float] = {"epoch": epoch, "train_loss": total / len(train),
                                           "val_loss": val_loss}
                if decide_fn is not None:
                    entry["val_metric"] = math.nan
                    if not diverged:
                        k = np.asarray(decide_fn(out, val.mask), dtype=np.int64)
                        entry["val_metric"] = float(val_rewards[np.arange(len(val)), k - 1].mean())
            score = entry["val_metric"] if decide_fn is not None else -entry["val_loss"]
            if score > best_score:  # strict: ties keep the earlier epoch
                best_score, best_epoch = score, epoch
                best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            entry["seconds"] = time.perf_counter() - start
            history.append(entry)
            shown = {"loss": f"{entry['train_loss']:.4f}"}
            if decide_fn is not None:
                shown[f"val_{metric}"] = f"{entry['val_metric']:.4f}"
                shown["best"] = f"{best_score:.4f}@{best_epoch}"
            else:
                shown["val_loss"] = f"{entry['val_loss']:.4f}"
            bar.set_postfix(shown, refresh=False)
            bar.update()
            if diverged or epoch - best_epoch >= patience:  # NaN weights never recover
                if epoch < epochs:   # the bar ends full, saying why it ended before --epochs
                    bar.total = epoch
                    bar.set_postfix({**shown, "stopped": "diverged" if diverged else
                                     f"no better in {patience} epochs"})
                break
        bar.close()
    if best_state is None:  # the first epoch diverged already
        raise ValueError(f"training diverged: no epoch of {desc} gave a finite validation score")
    net.load_state_dict(best_state)
    net.eval()
    return TrainingResult(tuple(history), best_epoch, "metric" if decide_fn is not None else "loss",
                          train_ids, val_ids)

