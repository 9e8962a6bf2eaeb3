"""Neural truncation networks and the cut decisions read from their outputs.

* :class:`AttnCutNet` — AttnCut (Wu et al. 2021, Fig. 1): BiLSTM encoding, one multi-head
  self-attention layer with a residual LayerNorm (Eq. 1–2), an MLP decision layer (Eq. 3).
* :class:`BiCutNet` — BiCut (Lien, Cohen and Croft 2019): BiLSTM, continue / end-of-list per position.
* :class:`ChoppyNet` — Choppy (Bahri et al. 2020): Transformer encoder over the list, a softmax
  over positions.

Inputs follow :mod:`rankcut.nn.losses`: ``x`` float ``[B, L, F]`` per-document features (values
at padding, NaN included, are ignored), ``mask`` bool ``[B, L]`` prefix mask (listed documents
first, at least one per list). A list's outputs do not depend on the padding around it (per-list
reversed LSTM inputs, attention key padding masks).
Position ``n`` (0-based) stands for the cut ``k = n + 1``; the decision functions return ``k``.

Under ``torch.autocast("cpu", dtype=torch.bfloat16)`` (``precision="bf16"`` of the cutters) the
networks compute in bfloat16 and return bfloat16 outputs; their weights stay float32. The
attention kernels and the dropout masks are chosen for speed on the CPU (:func:`_self_attention`,
:func:`_dropout`); none changes what a list's outputs depend on.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import NDArray
from torch import Tensor, nn

from rankcut._util import check_int
from rankcut.nn.losses import PADDED_LOGIT, _check_mask

__all__ = [
    "AttnCutNet",
    "BiCutNet",
    "ChoppyNet",
    "argmax_cuts",
    "first_eol_cuts",
    "recall_constrained_cuts",
]


# ---------------------------------------------------------------------------- helpers
def _positive(value: object, name: str) -> int:
    """A size of a network: an integer >= 1, else ParamError naming it."""
    return check_int(value, name, low=1, ge=">=")


def _check_dropout(dropout: object) -> float:
    if isinstance(dropout, bool) or not isinstance(dropout, int | float) or not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must be a number in [0, 1), got {dropout!r}")
    return float(dropout)


def _check_inputs(x: Tensor, mask: Tensor, n_features: int) -> tuple[Tensor, Tensor]:
    """Validate ``x`` ``[B, L, F]`` and ``mask`` ``[B, L]``.

    :returns: ``x`` with 0 at padding (a NaN there would leak through attention: 0 · NaN = NaN)
        and the list lengths ``[B]``.
    """
    if not isinstance(x, Tensor) or not x.is_floating_point() or x.ndim != 3:
        got = f"{x.dtype} {list(x.shape)}" if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"x must be a float tensor of shape [B, L, F], got {got}")
    if x.shape[2] != n_features:
        raise ValueError(f"x has {x.shape[2]} features per document, the network was built for {n_features}")
    lengths = _check_mask(mask, (x.shape[0], x.shape[1]))
    return x.masked_fill(~mask[:, :, None], 0.0), lengths


def _reverse_index(lengths: Tensor, length: int) -> Tensor | None:
    """Index ``[B, L]`` reversing each list within its own length (padding stays in place); None
    when every list fills ``L`` (then a plain flip does it). The index is its own inverse."""
    if bool((lengths == length).all()):
        return None
    n = torch.arange(length, device=lengths.device)[None, :]
    return torch.where(n < lengths[:, None], lengths[:, None] - 1 - n, n)


def _reverse(h: Tensor, index: Tensor | None) -> Tensor:
    if index is None:
        return h.flip(1)
    return h.gather(1, index[:, :, None].expand(-1, -1, h.shape[2]))


#: dropout keeps an element when its 16 random bits (as int16) reach ``-2^15 + round(p · 2^16)``
_DROP_LEVELS = 1 << 16


def _dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """Inverted dropout as :func:`torch.nn.functional.dropout`, with cheaper random numbers.

    The mask takes 16 random bits per element, four per 64-bit draw of torch's default generator
    (so ``torch.manual_seed`` makes it reproducible); an element is dropped with probability
    ``round(p · 2^16) / 2^16`` (within 8e-6 of ``p``) and the kept ones are scaled by the inverse
    of the keep rate. ``F.dropout`` draws one Bernoulli variable per element, single-threaded:
    forward + backward of one [20, 300, 256] dropout took 11.5 ms with it and 6.1 ms with this
    (one thread); AttnCut runs three per training step, Choppy nine.
    """
    if not training or p == 0.0:
        return x
    n = x.numel()
    drop = min(round(p * _DROP_LEVELS), _DROP_LEVELS - 1)
    if n == 0 or drop == 0:
        return x
    bits = torch.empty((n + 3) // 4, dtype=torch.int64, device=x.device).random_(-(1 << 63), None)
    keep = bits.view(torch.int16)[:n].view(x.shape) >= drop - (1 << 15)
    return x * keep.to(x.dtype).mul_(_DROP_LEVELS / (_DROP_LEVELS - drop))


class _Dropout(nn.Module):
    """:class:`torch.nn.Dropout` computed by :func:`_dropout`."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return _dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


def _self_attention(h: Tensor, attention: nn.MultiheadAttention, padding: Tensor | None) -> Tensor:
    """``attention(h, h, h, key_padding_mask=padding)[0]`` of a batch-first
    ``nn.MultiheadAttention``, with its weights, without dropout on the attention weights; in
    float32 the same result up to rounding (~2e-7). ``padding``: True at padded keys, None when no
    list is padded.

    The kernel is the fastest one measured here (one thread; forward + backward of the attention
    of a training step on [20, 300, ·], forward on [256, 300, ·] at inference):

    * float32, and inference in either precision: the flash kernel of
      ``scaled_dot_product_attention`` (no ``[B, heads, L, L]`` tensor), 1.4-2.1x faster at
      inference than ``nn.MultiheadAttention``'s own fused path;
    * a bfloat16 training step with heads of 64 or more (AttnCut: 4 of 64): the explicit
      softmax(QKᵀ/√d)·V in bfloat16, whose products run on AMX, 72 ms against 107 ms for the
      flash kernel, whose backward gains nothing from bfloat16;
    * a bfloat16 training step with narrower heads (Choppy: 8 of 16; 32 measured too): the flash
      kernel in float32, 80 ms, against 177 ms for it in bfloat16 and 144 ms for the explicit form,
      where the ``[B, heads, L, L]`` scores cost more than the products.
    """
    b, length, width = h.shape
    heads = attention.num_heads
    qkv = F.linear(h, attention.in_proj_weight, attention.in_proj_bias)
    q, k, v = qkv.view(b, length, 3, heads, width // heads).permute(2, 0, 3, 1, 4).unbind(0)  # [B, h, L, d]
    if torch.is_grad_enabled() and q.dtype != torch.float32 and q.shape[-1] >= 64:
        scores = torch.matmul(q * q.shape[-1] ** -0.5, k.transpose(-2, -1))
        if padding is not None:
            scores = scores.masked_fill(padding[:, None, None, :], -math.inf)
        m = torch.matmul(torch.softmax(scores, dim=-1), v)
    else:
        keep = None if padding is None else ~padding[:, None, None, :]
        if torch.is_grad_enabled() and q.dtype != torch.float32:
            with torch.autocast(q.device.type, enabled=False):  # autocast would cast back to bf16
                m = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=keep)
            m = m.to(q.dtype)
        else:
            m = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    return F.linear(m.transpose(1, 2).reshape(b, length, width), attention.out_proj.weight,
                    attention.out_proj.bias)


class _BiLSTM(nn.Module):
    """Stacked bidirectional LSTM over padded lists, ``[B, L, F] -> [B, L, 2·hidden]``.

    A list's outputs do not depend on its padding: the forward direction reads each list first to
    last and padding only comes after; the backward direction reads each list reversed within its
    own length, so it starts at the list's last document. This gives the outputs of
    ``pack_padded_sequence`` while keeping oneDNN's fused LSTM kernels, which packed sequences
    cannot use (measured: forward + backward of a 2-layer BiLSTM on [20, 300, 4], lengths 50..300,
    took 1796 ms packed, 176 ms this way).
    Outputs at padding are arbitrary.
    """

    def __init__(self, n_features: int, hidden: int, layers: int, dropout: float) -> None:
        super().__init__()
        sizes = [n_features] + [2 * hidden] * (layers - 1)
        self.forward_layers = nn.ModuleList(nn.LSTM(n, hidden, batch_first=True) for n in sizes)
        self.backward_layers = nn.ModuleList(nn.LSTM(n, hidden, batch_first=True) for n in sizes)
        # between stacked layers, as nn.LSTM's own dropout
        self.dropout = _Dropout(dropout)

    def forward(self, x: Tensor, lengths: Tensor) -> Tensor:
        """:param x: float ``[B, L, F]``; :param lengths: int64 ``[B]``; :returns: ``[B, L, 2·hidden]``."""
        index = _reverse_index(lengths, x.shape[1])
        h = x
        for i, (fwd, bwd) in enumerate(zip(self.forward_layers, self.backward_layers, strict=True)):
            if i:
                h = self.dropout(h)
            h = torch.cat([fwd(h)[0], _reverse(bwd(_reverse(h, index))[0], index)], dim=-1)
        return h


# ---------------------------------------------------------------------------- networks
class AttnCutNet(nn.Module):
    """AttnCut (Wu et al. 2021, Fig. 1): where to cut a ranked list, decided over the whole list.

    * Encoding layer: a ``lstm_layers``-layer bidirectional LSTM, ``h_n`` = forward ‖ backward
      states of the last layer, model dimension ``t = 2·hidden`` (256 in the paper).
    * Attention layer: ``M = MultiHeadAttention(H)`` with ``heads`` heads (Eq. 1; each head's
      scores are scaled by ``1/√(t/heads)``, as in Vaswani et al. and ``nn.MultiheadAttention``,
      where Eq. 1 writes ``1/√t``; padded
      documents are masked out as keys) and ``M' = LayerNorm(M + H)`` (Eq. 2).
    * Decision layer: ``MLP(M')`` (``t → mlp_hidden → n_outputs``, ReLU), Eq. 3; the softmax over
      positions is left to the loss (:func:`rankcut.nn.losses.masked_log_softmax`).

    With ``n_outputs = B_bins > 1`` the same network is the recall-constrained model: a
    ``B_bins``-way recall bin classifier at every position ("recall constraint" section).

    :param n_features: ``F``, features per document.
    :param hidden: LSTM hidden units per direction (128 in the paper).
    :param lstm_layers: stacked BiLSTM layers (2 in the paper).
    :param heads: attention heads ``h`` (4 in the paper); must divide ``2·hidden``.
    :param mlp_hidden: hidden units of the decision MLP.
    :param dropout: dropout rate between LSTM layers, on ``M`` before the residual and inside the
        MLP (not on the attention weights).
    :param n_outputs: 1 for position logits, the number of recall bins otherwise.
    """

    def __init__(
        self,
        n_features: int,
        *,
        hidden: int = 128,
        lstm_layers: int = 2,
        heads: int = 4,
        mlp_hidden: int = 256,
        dropout: float = 0.1,
        n_outputs: int = 1,
    ) -> None:
        super().__init__()
        self.n_features = _positive(n_features, "n_features")
        hidden = _positive(hidden, "hidden")
        heads = _positive(heads, "heads")
        if (2 * hidden) % heads:
            raise ValueError(f"heads must divide the model dimension 2*hidden = {2 * hidden}, got {heads}")
        dropout = _check_dropout(dropout)
        self.n_outputs = _positive(n_outputs, "n_outputs")
        t = 2 * hidden
        self.encoder = _BiLSTM(self.n_features, hidden, _positive(lstm_layers, "lstm_layers"), dropout)
        # no dropout on the attention weights: drawing [B, heads, L, L] masks made the attention's
        # forward + backward on [20, 300, 256] ~1.6x slower (measured 379 vs 229 ms, one thread)
        self.attention = nn.MultiheadAttention(t, heads, batch_first=True)
        self.dropout = _Dropout(dropout)
        self.norm = nn.LayerNorm(t)
        self.decision = nn.Sequential(
            nn.Linear(t, _positive(mlp_hidden, "mlp_hidden")),
            nn.ReLU(),
            _Dropout(dropout),
            nn.Linear(mlp_hidden, self.n_outputs),
        )

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """Position logits of every list.

        :param x: float ``[B, L, F]`` document features.
        :param mask: bool ``[B, L]`` prefix mask.
        :returns: float ``[B, L]`` logits, :data:`~rankcut.nn.losses.PADDED_LOGIT` (``-inf``) at
            padding, when ``n_outputs == 1``; else raw float ``[B, L, n_outputs]`` bin logits
            (arbitrary values at padding).
        """
        x, lengths = _check_inputs(x, mask, self.n_features)
        h = self.encoder(x, lengths)  # [B, L, t]
        padding = None if bool(mask.all()) else ~mask
        m = _self_attention(h, self.attention, padding)
        out = self.decision(self.norm(h + self.dropout(m)))  # [B, L, n_outputs]
        if self.n_outputs == 1:
            return out.squeeze(-1).masked_fill(~mask, PADDED_LOGIT)
        return out


class BiCutNet(nn.Module):
    """BiCut (Lien, Cohen and Croft 2019): a BiLSTM predicts continue / end-of-list per position.

    BiLSTM (padding-free, as in :class:`AttnCutNet`) → dropout → ``Linear(2·hidden, 2)``. The list
    is cut at the first end-of-list (:func:`first_eol_cuts`); trained with
    :func:`rankcut.nn.losses.bicut_loss`.

    :param n_features: ``F``, features per document.
    :param hidden: LSTM hidden units per direction.
    :param lstm_layers: stacked BiLSTM layers.
    :param dropout: dropout rate between LSTM layers and before the output layer.
    """

    def __init__(
        self, n_features: int, *, hidden: int = 128, lstm_layers: int = 2, dropout: float = 0.1
    ) -> None:
        super().__init__()
        self.n_features = _positive(n_features, "n_features")
        hidden = _positive(hidden, "hidden")
        dropout = _check_dropout(dropout)
        self.encoder = _BiLSTM(self.n_features, hidden, _positive(lstm_layers, "lstm_layers"), dropout)
        self.dropout = _Dropout(dropout)
        self.output = nn.Linear(2 * hidden, 2)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """Continue / end-of-list logits of every position.

        :param x: float ``[B, L, F]`` document features.
        :param mask: bool ``[B, L]`` prefix mask.
        :returns: float ``[B, L, 2]`` raw logits, class 0 = continue, class 1 = end of list
            (arbitrary values at padding). No softmax here: the loss or the decision applies it once.
        """
        x, lengths = _check_inputs(x, mask, self.n_features)
        out: Tensor = self.output(self.dropout(self.encoder(x, lengths)))
        return out


class ChoppyNet(nn.Module):
    """Choppy (Bahri et al. 2020): a Transformer encoder over the ranked list, softmax over positions.

    ``Linear(F → d_model)`` plus a learned position embedding, ``layers`` post-norm
    ``nn.TransformerEncoderLayer`` (``heads`` heads, feed-forward width ``4·d_model`` as in Vaswani
    et al. 2017; padded documents masked out as keys), ``Linear(d_model → 1)``. Trained with
    :func:`rankcut.nn.losses.expected_metric_loss`.

    The layers are ``nn.TransformerEncoderLayer`` modules (their weights and checkpoint keys) run
    by :meth:`forward` itself: the same post-norm computation, with :func:`_self_attention` and
    :func:`_dropout`, and, as in :class:`AttnCutNet`, no dropout on the attention weights.
    Drawing the [20, 8, 300, 300] masks of that dropout made a float32 training step about 3x
    slower (measured 2.24 s against 0.72 s, one thread) and forces the slow attention kernel.

    :param n_features: ``F``, features per document.
    :param d_model: Transformer width; ``heads`` must divide it.
    :param heads: attention heads.
    :param layers: encoder layers.
    :param dropout: dropout rate inside the encoder layers.
    :param max_len: longest list the position embedding covers.
    """

    def __init__(
        self,
        n_features: int,
        *,
        d_model: int = 128,
        heads: int = 8,
        layers: int = 3,
        dropout: float = 0.1,
        max_len: int = 1000,
    ) -> None:
        super().__init__()
        self.n_features = _positive(n_features, "n_features")
        d_model = _positive(d_model, "d_model")
        heads = _positive(heads, "heads")
        if d_model % heads:
            raise ValueError(f"heads must divide d_model = {d_model}, got {heads}")
        self.max_len = _positive(max_len, "max_len")
        self.embed = nn.Linear(self.n_features, d_model)
        self.position = nn.Embedding(self.max_len, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, dim_feedforward=4 * d_model, dropout=_check_dropout(dropout), batch_first=True
        )
        # nested tensors (a prototype API that warns) would only speed up padded inference
        self.encoder = nn.TransformerEncoder(layer, _positive(layers, "layers"), enable_nested_tensor=False)
        self.output = nn.Linear(d_model, 1)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """Position logits of every list.

        :param x: float ``[B, L, F]`` document features, ``L <= max_len``.
        :param mask: bool ``[B, L]`` prefix mask.
        :returns: float ``[B, L]`` logits, ``-inf`` at padding.
        """
        x, _ = _check_inputs(x, mask, self.n_features)
        length = x.shape[1]
        if length > self.max_len:
            raise ValueError(f"x has lists padded to {length} documents, more than max_len = {self.max_len}")
        h = self.embed(x) + self.position.weight[:length]
        padding = None if bool(mask.all()) else ~mask
        for layer in self.encoder.layers:  # nn.TransformerEncoderLayer's post-norm forward
            p = layer.dropout.p
            h = layer.norm1(h + _dropout(_self_attention(h, layer.self_attn, padding), p, self.training))
            ff = layer.linear2(_dropout(F.relu(layer.linear1(h)), p, self.training))
            h = layer.norm2(h + _dropout(ff, p, self.training))
        return self.output(h).squeeze(-1).masked_fill(~mask, PADDED_LOGIT)


# ---------------------------------------------------------------------------- decisions
def _decision_inputs(name: str, values: Any, mask: Any, ndim: int) -> tuple[Tensor, Tensor, Tensor]:
    """numpy or torch in; (values as float tensor, bool mask, lengths) out, checked."""
    values = torch.as_tensor(values.detach() if isinstance(values, Tensor) else values)
    mask = torch.as_tensor(mask.detach() if isinstance(mask, Tensor) else mask, device=values.device)
    if not values.is_floating_point() or values.ndim != ndim:
        shape = "[B, L]" if ndim == 2 else "[B, L, C]"
        got = f"{values.dtype} {list(values.shape)}"
        raise ValueError(f"{name} must be a float array of shape {shape}, got {got}")
    lengths = _check_mask(mask, (values.shape[0], values.shape[1]))
    if bool(torch.isnan(values[mask]).any()):
        raise ValueError(f"{name} must not be NaN at listed positions")
    return values, mask, lengths


def _cuts(k: Tensor) -> NDArray[np.int64]:
    return k.cpu().numpy().astype(np.int64)


def argmax_cuts(logits: Any, mask: Any) -> NDArray[np.int64]:
    """The most probable cut of each list (AttnCut's inference rule after Eq. 6); ties → smallest k.

    :param logits: float ``[B, L]`` position logits (numpy or torch; values at padding ignored).
    :param mask: bool ``[B, L]`` prefix mask.
    :returns: int64 ``[B]``, ``k`` = documents kept, ``1 <= k <= length``.
    """
    logits, mask, _ = _decision_inputs("logits", logits, mask, 2)
    return _cuts(logits.masked_fill(~mask, PADDED_LOGIT).argmax(dim=-1) + 1)


def first_eol_cuts(logits2: Any, mask: Any) -> NDArray[np.int64]:
    """BiCut's rule (Lien et al. 2019): the list ends at the first position whose end-of-list
    probability exceeds 1/2 (its EOL logit exceeds its continue logit); the documents before it
    are kept, at least one; the whole list when no position says EOL.

    The EOL document itself is not kept, so that the rule agrees with BiCut's loss
    (:func:`rankcut.nn.losses.bicut_loss`), which charges EOL at a relevant document and
    *continue* at a non-relevant one: a classifier that is right at every position says EOL at
    the first non-relevant document, and cutting just before it keeps the relevant run ahead.

    :param logits2: float ``[B, L, 2]`` logits, class 0 = continue, class 1 = end of list.
    :param mask: bool ``[B, L]`` prefix mask.
    :returns: int64 ``[B]``, ``k`` = documents kept, ``1 <= k <= length``.
    """
    logits2, mask, lengths = _decision_inputs("logits2", logits2, mask, 3)
    if logits2.shape[-1] != 2:
        raise ValueError(f"logits2 must have shape [B, L, 2], got {list(logits2.shape)}")
    eol = (logits2[..., 1] > logits2[..., 0]) & mask
    before = (eol.to(torch.uint8).argmax(dim=-1)).clamp(min=1)  # argmax returns the first True
    return _cuts(torch.where(eol.any(dim=-1), before, lengths))


def recall_constrained_cuts(
    position_logits: Any, bin_logits: Any, mask: Any, sigma: float
) -> NDArray[np.int64]:
    """Recall-constrained AttnCut's rule ("recall constraint" section of Wu et al. 2021).

    The recall model gives, at every cut ``k``, probabilities over ``C`` ordered recall bins
    (``softmax(bin_logits)``; bin ``b`` covers ``[b/C, (b+1)/C)``). The paper does not say how the
    position ``j`` "under the minimal recall requirement σ" is read from them; here ``j`` is the
    first cut at which the recall is more likely than not to reach ``σ``:
    ``P(R@k ≥ σ) = Σ_b p_b · clip((b+1) − σC, 0, 1) ≥ 1/2`` (recall uniform within a bin), i.e. the
    median of the predicted recall reaches ``σ`` (``j`` = length when no cut does). Unlike the
    mean of the bin midpoints, which always lies in ``[1/(2C), 1 − 1/(2C)]``, this reading covers
    every ``σ`` in ``[0, 1]``: ``σ = 0`` gives ``j = 1``.
    Then AttnCut's cuts are tried in order of decreasing probability and the first ``m ≥ j`` is
    taken, i.e. the most probable cut among ``k ≥ j`` (ties → smallest ``k``); with ``sigma = 0``
    this is :func:`argmax_cuts`. (The paper writes "``m ≥ j``" for the best cut and "until
    ``m′ > j``" for the next ones; ``j`` itself meets the constraint, so ``≥`` is used for both.)

    :param position_logits: float ``[B, L]`` AttnCut position logits.
    :param bin_logits: float ``[B, L, C]`` recall-bin logits of the recall-constrained model.
    :param mask: bool ``[B, L]`` prefix mask.
    :param sigma: minimal recall ``σ`` in [0, 1].
    :returns: int64 ``[B]``, ``k`` = documents kept.
    """
    if isinstance(sigma, bool) or not isinstance(sigma, int | float) or not 0.0 <= sigma <= 1.0:
        raise ValueError(f"sigma must be a number in [0, 1], got {sigma!r}")
    position_logits, mask, lengths = _decision_inputs("position_logits", position_logits, mask, 2)
    if not bool(torch.isfinite(position_logits[mask]).all()):
        raise ValueError("position_logits must be finite at listed positions")
    bin_logits, _, _ = _decision_inputs("bin_logits", bin_logits, mask, 3)
    n_bins = bin_logits.shape[-1]
    upper = torch.arange(1, n_bins + 1, dtype=torch.float64, device=bin_logits.device)  # (b + 1)
    above = (upper - sigma * n_bins).clamp(0.0, 1.0)  # share of bin b at or above σ
    p_reach = torch.softmax(bin_logits.double(), dim=-1) @ above  # P(R@k ≥ σ), [B, L]
    reached = (p_reach >= 0.5) & mask
    j = torch.where(reached.any(dim=-1), reached.to(torch.uint8).argmax(dim=-1) + 1, lengths)
    k = torch.arange(1, mask.shape[1] + 1, device=mask.device)
    eligible = mask & (k[None, :] >= j[:, None])
    return _cuts(position_logits.masked_fill(~eligible, PADDED_LOGIT).argmax(dim=-1) + 1)
