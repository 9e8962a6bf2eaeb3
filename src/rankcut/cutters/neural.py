"""What the neural cutters (``attncut``, ``attncut-rc``, ``bicut``, ``choppy``) share: their
training options (:mod:`rankcut.nn.options`), fitting, predicting, saving and loading
(:mod:`rankcut.cutters.checkpoint`).

torch is an optional extra (``pip install 'rankcut[torch]'``): this module and the cutters built
on it import :mod:`rankcut.nn` (and so torch) inside ``fit``, ``predict``, ``save`` and ``load``
only, so importing :mod:`rankcut.cutters` stays fast and torch-free; building one checks that
torch is installed, without importing it (:func:`rankcut.nn.require_torch`).

Fitting (:meth:`NeuralCutter.fit`): the input encoder (:class:`rankcut.nn.inputs.InputEncoder`)
is fitted on the training lists — all of them: its means and standard deviations, like BiCut's
relevant share ``r``, include the queries that :func:`~rankcut.nn.training.fit_network` then sets
aside for validation (training data, never test data) — the network is initialised under ``seed``, and
:func:`rankcut.nn.training.fit_network` trains it on ``1 - val_fraction`` of the training
queries, keeping the epoch with the best validation metric. The same seed gives the same weights
and the same cuts, in the same ``precision`` (on the same kind of CPU and number of threads).

Precision (:data:`rankcut.nn.options.PRECISIONS`): ``"bf16"`` trains and predicts under bfloat16
autocast, with float32 weights, gradients and loss (:mod:`rankcut.nn.training`); on a CPU with AMX it trained
AttnCut 1.5-2.1x and predicted 2.2x as fast as ``"fp32"``, at the same validation F1 (Robust04,
docs/benchmarks.md). ``"auto"`` picks ``"bf16"`` where the CPU has AMX bf16 and ``"fp32"``
elsewhere. The default is ``"fp32"``: a seed then gives the same weights and cuts on machines
with and without AMX. Prediction runs under ``torch.inference_mode()`` in chunks of
:data:`PREDICT_CHUNK` lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray

from rankcut._util import check_bool
from rankcut.cutters.base import Cutter, available_cutters, cutter_class
from rankcut.data.lists import RankedLists
from rankcut.nn import require_torch
from rankcut.nn.options import TRAINING_DEFAULTS, check_training_options

if TYPE_CHECKING:
    import torch

    from rankcut.nn.inputs import InputEncoder
    from rankcut.nn.training import DecideFn, LossFn, TrainingResult

__all__ = ["NeuralCutter", "neural_cutters", "summary_of", "training_share"]

#: lists per forward pass at predict time. Small chunks keep the activations in cache: on
#: Robust04 (300 documents a list) 64 was, of 16-256, the fastest or within noise of it for
#: every model and precision with 2 threads and the fastest with one (AttnCut bf16, 2 threads:
#: ~670 lists/s against 530 at 16 and ~590 at 256)
PREDICT_CHUNK = 64
def training_share(lists: RankedLists) -> float:
    """BiCut's ``r``: the proportion of relevant documents among the listed training documents
    (:func:`rankcut.nn.losses.relevant_share`)."""
    import torch

    from rankcut.nn.losses import relevant_share

    return relevant_share(torch.from_numpy(lists.labels.astype(np.float32)), torch.from_numpy(lists.mask))


class NeuralCutter(Cutter):
    """Base of the neural cutters: fit, predict, save and load (module docstring).

    Subclasses take ``metric`` and ``recall_base`` and their own keyword arguments, pass the shared
    training options (:data:`rankcut.nn.options.TRAINING_DEFAULTS`: ``epochs``, ``batch_size``,
    ``lr``, ``patience``, ``val_fraction``, ``seed``, ``score_z``, ``precision``, ``progress``) on
    to ``NeuralCutter.__init__`` through ``**options``, name their paper in :attr:`paper`, and
    implement :meth:`_build_networks`, :meth:`_loss_fn` and :meth:`_decide_fn` (or
    :meth:`_train` and :meth:`_decide` for more than one network).

    Learned attributes: ``encoder_`` (:class:`rankcut.nn.inputs.InputEncoder`), one network
    per name of ``networks`` (``net_``, ...), ``history_`` (per epoch: train loss, validation
    loss and metric, seconds), ``best_epoch_`` (1-based), ``val_metric_`` (the validation metric
    of that epoch), ``train_qids_`` and ``val_qids_`` (the queries trained and validated on),
    ``threshold_`` (the relevance grade the training lists counted as relevant), ``ordering_``
    (the rule the training lists were sorted by, ``rank`` or ``trec_eval``), ``scored_by_`` (what
    their scores were: a run's, or a LETOR feature), ``depth_`` (the longest training list: the
    model never placed a cut past it).
    """

    #: the paper that defines the model, as the checkpoint's model card cites it
    paper: ClassVar[str] = ""
    shared_params = tuple(TRAINING_DEFAULTS)
    #: the networks the cutter trains; each is stored in the attribute ``NAME_``
    networks: ClassVar[tuple[str, ...]] = ("net",)
    #: learned attributes saved in a checkpoint's ``config.json`` (besides encoder and networks)
    summary_attributes: ClassVar[tuple[str, ...]] = (
        "history_", "best_epoch_", "val_metric_", "train_qids_", "val_qids_", "threshold_", "ordering_",
        "scored_by_", "depth_")

    metric: str
    recall_base: str
    epochs: int
    batch_size: int
    lr: float
    patience: int
    val_fraction: float
    seed: int
    score_z: bool
    precision: str
    progress: bool
    encoder_: InputEncoder
    history_: list[dict[str, float]]
    best_epoch_: int
    val_metric_: float
    train_qids_: tuple[str, ...]
    val_qids_: tuple[str, ...]
    threshold_: float
    ordering_: str
    scored_by_: str
    depth_: int

    def __init__(self, **options: Any) -> None:
        """Store the shared training options; :data:`rankcut.nn.options.TRAINING_DEFAULTS` for
        those not given. Refused (ImportError naming the extra) without PyTorch, so a spec check
        fails before any data is read."""
        require_torch(f"the {self.name or type(self).__name__} cutter")
        unknown = sorted(set(options) - set(TRAINING_DEFAULTS))
        if unknown:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments {unknown}")
        for name, default in TRAINING_DEFAULTS.items():
            setattr(self, name, options.get(name, default))

    def requires_fit(self) -> bool:
        return True

    def _validate_params(self) -> None:
        check_training_options(**self._training_options())
        check_bool(self.score_z, "score_z")

    def _training_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`rankcut.nn.training.fit_network` (``score_z`` is the
        input encoder's)."""
        names = ("metric", "recall_base", *(k for k in TRAINING_DEFAULTS if k != "score_z"))
        return {k: getattr(self, k) for k in names}

    # ------------------------------------------------------------- subclass hooks
    def _build_networks(self, n_features: int) -> dict[str, torch.nn.Module]:
        """Fresh networks reading ``n_features`` inputs, one per name of :attr:`networks`."""
        raise NotImplementedError

    def _loss_fn(self, lists: RankedLists) -> LossFn:
        """The training loss of the single network, for the training lists ``lists``."""
        raise NotImplementedError

    def _decide_fn(self) -> DecideFn:
        """The cuts from the single network's output."""
        raise NotImplementedError

    def _train(self, lists: RankedLists, encoder: InputEncoder,
               nets: dict[str, torch.nn.Module]) -> dict[str, Any]:
        """Train ``nets`` in place on ``lists``; return the summary attributes to store."""
        from rankcut.nn.training import fit_network

        result = fit_network(nets["net"], self._loss_fn(lists), self._decide_fn(), lists, encoder=encoder,
                             desc=self.name, **self._training_options())
        return summary_of(result)

    def _decide(self, outputs: dict[str, torch.Tensor], mask: torch.Tensor) -> NDArray[np.int64]:
        """The cuts from the outputs of every network (``{name: output}``)."""
        return self._decide_fn()(outputs["net"], mask)

    # ------------------------------------------------------------- fit / predict
    def _fit(self, lists: RankedLists) -> None:
        if lists.gains is None:
            raise ValueError(f"{self.name} fit needs relevance judgements: build the training lists "
                             "with qrels")
        if not lists.labels.any():   # every target would be "cut at 1": nothing to learn, a model saved
            raise ValueError(f"{self.name} fit: no document of the {len(lists)} training list"
                             f"{'s' * (len(lists) != 1)} counts as "
                             f"relevant (relevance ≥ {lists.threshold:g}, --threshold): check the threshold "
                             "and that the qrels are those of the training queries")
        import torch

        from rankcut.nn.inputs import InputEncoder

        encoder = InputEncoder.fit(lists, score_z=self.score_z)
        with torch.random.fork_rng(devices=[]):  # seed the initial weights, leave the caller's state
            torch.manual_seed(self.seed)
            nets = self._build_networks(encoder.n_features)
        learned = self._train(lists, encoder, nets)
        # set together at the end: a failed fit leaves no half-fitted cutter
        self.encoder_ = encoder
        for name, net in nets.items():
            setattr(self, f"{name}_", net)
        for key, value in learned.items():
            setattr(self, key, value)
        self.threshold_ = float(lists.threshold)
        self.ordering_ = str(lists.ordering)
        self.scored_by_ = str(lists.scored_by)
        self.depth_ = int(lists.lengths.max())

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        import torch

        from rankcut.nn.training import autocast, runnable_precision

        x, mask = self.encoder_.transform(lists)
        nets = {name: getattr(self, f"{name}_") for name in self.networks}
        precision = runnable_precision(self.precision, nets.values(), predicting=True)
        cuts = np.empty(len(lists), dtype=np.int64)
        with torch.inference_mode():
            for net in nets.values():
                net.eval()
            for first in range(0, len(lists), PREDICT_CHUNK):
                rows = slice(first, first + PREDICT_CHUNK)
                m = mask[rows]
                width = int(m.sum(dim=1).max())
                xs, ms = x[rows, :width], m[:, :width]
                with autocast(precision):
                    outputs = {name: net(xs, ms) for name, net in nets.items()}
                cuts[rows] = self._decide({name: out.float() for name, out in outputs.items()}, ms)
        return cuts

    def feature_columns(self) -> list[str]:
        """The feature columns of the lists that this fitted cutter reads, besides the scores
        (:data:`rankcut.nn.inputs.SCORE_COLUMNS`, which it derives itself)."""
        from rankcut.nn.inputs import SCORE_COLUMNS

        return [c for c in self.encoder_.columns if c not in SCORE_COLUMNS]

    # ------------------------------------------------------------- checkpoints
    def save(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write this fitted cutter as a checkpoint folder
        (:func:`rankcut.cutters.checkpoint.save_checkpoint`)."""
        from rankcut.cutters.checkpoint import save_checkpoint

        return save_checkpoint(self, folder, overwrite=overwrite)

    @classmethod
    def load(cls, folder: str | Path) -> Self:
        """Read a checkpoint folder (:func:`rankcut.cutters.checkpoint.load_checkpoint`); ValueError
        when it holds another kind of cutter."""
        from rankcut.cutters.checkpoint import load_checkpoint

        cutter = load_checkpoint(folder)
        if not isinstance(cutter, cls):
            raise ValueError(f"{folder} holds a {cutter.name!r} checkpoint, not {cls.name!r}")
        return cutter


def summary_of(result: TrainingResult, prefix: str = "") -> dict[str, Any]:
    """The summary attributes of a :class:`rankcut.nn.training.TrainingResult`, names prefixed."""
    best = result.best
    out: dict[str, Any] = {
        f"{prefix}history_": [dict(e) for e in result.history],
        f"{prefix}best_epoch_": int(result.best_epoch),
    }
    if result.criterion == "metric":
        out[f"{prefix}val_metric_"] = float(best["val_metric"])
        out[f"{prefix}train_qids_"] = result.train_qids
        out[f"{prefix}val_qids_"] = result.val_qids
    else:
        out[f"{prefix}val_loss_"] = float(best["val_loss"])
    return out


def neural_cutters() -> tuple[str, ...]:
    """The registry names of the neural cutters, sorted (the models ``rankcut train`` fits)."""
    return tuple(name for name in available_cutters() if issubclass(cutter_class(name), NeuralCutter))
