"""Trained neural cutters as folders: ``config.json`` + ``model.safetensors`` + a ``README.md``
model card (the layout of Hugging Face's ``ModelHubMixin``; STYLE.md item 12).

* ``config.json`` — format name and version, the cutter's registry name and constructor
  parameters, the input encoder (columns and standardisation, :class:`InputEncoder`), and the
  training summary (per-epoch history, best epoch, validation metric, training and validation
  query ids, the relevance grade counted relevant, the scores ranking the training lists, the
  longest of them);
* ``model.safetensors`` — the weights of every network, keys ``NETWORK.PARAMETER`` (e.g.
  ``net.encoder.weight_ih_l0``). safetensors holds tensors only: loading runs no code, unlike a
  pickle, and ``torch.load`` is never used;
* ``README.md`` — what the model is, what it was trained on, how well it did on validation and
  how to use it.

:func:`save_checkpoint` writes into a temporary folder next to the target and renames it into
place, so a failed write never leaves a half checkpoint; :func:`load_checkpoint` checks every
part and names the file at fault.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from rankcut import __version__
from rankcut._util import jsonable
from rankcut.cutters.base import cutter_class
from rankcut.cutters.neural import NeuralCutter
from rankcut.data.letor import score_feature_of
from rankcut.nn.inputs import SCORE_COLUMNS, InputEncoder

__all__ = ["CONFIG", "FORMAT", "FORMAT_VERSION", "README", "WEIGHTS", "is_checkpoint", "load_checkpoint",
           "model_card", "save_checkpoint"]

FORMAT = "rankcut-checkpoint"
FORMAT_VERSION = 1
CONFIG, WEIGHTS, README = "config.json", "model.safetensors", "README.md"


def _number(value: Any) -> Any:
    """A number written by :func:`rankcut._util.jsonable`: ``"nan"``, ``"inf"``, ``"-inf"`` become
    floats again."""
    return float(value) if value in ("nan", "inf", "-inf") else value


def _training_values(key: str, value: Any) -> Any:
    """A training summary attribute as it was before saving: query ids as tuples, the numbers of
    the per-epoch history and of the best epoch's scores as numbers (NaN included)."""
    if key.endswith("qids"):
        return tuple(value)
    if key.endswith("history"):
        return [{k: _number(v) for k, v in entry.items()} for entry in value]
    return _number(value)


def is_checkpoint(folder: Path) -> bool:
    """Whether ``folder`` holds a rankcut checkpoint (its ``config.json`` says so)."""
    try:
        return json.loads((folder / CONFIG).read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def save_checkpoint(cutter: NeuralCutter, folder: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write a fitted neural cutter to ``folder`` (module docstring), atomically.

    :param cutter: a fitted :class:`rankcut.cutters.neural.NeuralCutter`.
    :param folder: the checkpoint folder to create; its parent must exist.
    :param overwrite: replace ``folder`` if it exists — only when it is a checkpoint or empty,
        so that no other folder is ever deleted.
    :returns: ``folder`` as a :class:`~pathlib.Path`.
    :raises ValueError: for a cutter that is not a fitted neural cutter.
    :raises FileExistsError: when ``folder`` exists and ``overwrite`` is False, or it is neither a
        checkpoint nor empty.
    :raises FileNotFoundError: when the parent folder does not exist.
    """
    if not isinstance(cutter, NeuralCutter):
        raise ValueError(f"only neural cutters are saved as checkpoints, got {type(cutter).__name__}")
    if not cutter.is_fitted():
        raise ValueError(f"this {cutter.name} cutter is not fitted yet: fit it before saving")
    target = Path(folder)
    if target.exists():
        if not overwrite:
            raise FileExistsError(f"{target} exists: choose another folder or pass overwrite=True")
        if not target.is_dir() or not (is_checkpoint(target) or not any(target.iterdir())):
            raise FileExistsError(f"{target} exists and is not a rankcut checkpoint: it is not overwritten")
    if not target.parent.is_dir():
        raise FileNotFoundError(f"cannot write {target}: folder {target.parent} does not exist")

    tensors = {f"{name}.{key}": value.detach().cpu().contiguous()
               for name in cutter.networks
               for key, value in getattr(cutter, f"{name}_").state_dict().items()}
    training = {key.rstrip("_"): getattr(cutter, key) for key in cutter.summary_attributes}
    config = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rankcut_version": __version__,
        "cutter": cutter.name,
        "params": cutter.get_params(),
        "encoder": cutter.encoder_.to_dict(),
        "networks": {name: type(getattr(cutter, f"{name}_")).__name__ for name in cutter.networks},
        "training": training,
    }
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        (tmp / CONFIG).write_text(json.dumps(jsonable(config), indent=2, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
        # one metadata key: safetensors writes its metadata map in no fixed order, and the same
        # training should give the same bytes (audit manifests hash their inputs)
        save_file(tensors, str(tmp / WEIGHTS), metadata={"format": f"{FORMAT}:{cutter.name}"})
        (tmp / README).write_text(model_card(config, target.name), encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes 0700; a model folder is not secret
        if target.exists():  # overwrite: move the old one aside first, delete it once replaced
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, old / "checkpoint")
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def load_checkpoint(folder: str | os.PathLike[str]) -> NeuralCutter:
    """Read a checkpoint written by :func:`save_checkpoint`: the fitted cutter, in eval mode.

    :raises ValueError: naming the file, for a missing or unreadable ``config.json`` or
        ``model.safetensors``, another format or a newer format version, an unknown cutter,
        bad parameters or encoder, or weights that do not fit the networks.
    """
    path = Path(folder)
    if not path.is_dir():
        raise ValueError(f"{path}: no checkpoint folder there")
    config_path, weights_path = path / CONFIG, path / WEIGHTS
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{config_path}: missing (is {path} a rankcut checkpoint?)") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{config_path}: not readable JSON ({exc})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise ValueError(f"{config_path}: not a rankcut checkpoint (no \"format\": \"{FORMAT}\")")
    version = config.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
        raise ValueError(f"{config_path}: format_version {version!r} is not supported (this rankcut reads "
                         f"up to {FORMAT_VERSION}; upgrade rankcut)")
    absent = [k for k in ("cutter", "params", "encoder", "training") if k not in config]
    if absent:
        raise ValueError(f"{config_path}: lacks {absent}")
    try:
        cls = cutter_class(config["cutter"])
        if not issubclass(cls, NeuralCutter):
            raise ValueError(f"cutter {config['cutter']!r} is not a neural cutter")
        if not isinstance(config["params"], dict):
            raise ValueError("params must be an object")
        try:
            cutter = cls(**config["params"])
        except TypeError:
            raise ValueError(f"cutter {cls.name!r} accepts parameters {cls._param_names()}, got "
                             f"{sorted(config['params'])}") from None
        cutter._validate_params()
        encoder = InputEncoder.from_dict(config["encoder"])
        training = config["training"]
        wanted = [key.rstrip("_") for key in cls.summary_attributes]
        if not isinstance(training, dict):
            raise ValueError(f"training must hold {wanted}")
        lacks = [k for k in wanted if k not in training]
        if lacks:
            raise ValueError(f"training must hold {wanted}; it lacks {lacks} (a checkpoint of an earlier "
                             f"rankcut {config.get('rankcut_version', '')}: train it again)")
    except ValueError as exc:
        raise ValueError(f"{config_path}: {exc}") from None

    try:
        tensors = load_file(str(weights_path))
    except FileNotFoundError:
        raise ValueError(f"{weights_path}: missing") from None
    except (OSError, SafetensorError) as exc:
        raise ValueError(f"{weights_path}: not a readable safetensors file ({exc})") from None
    with torch.random.fork_rng(devices=[]):  # building draws initial weights: leave the caller's state
        nets = cutter._build_networks(encoder.n_features)
    for name, net in nets.items():
        prefix = f"{name}."
        state = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
        try:
            net.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            first = str(exc).strip().splitlines()
            raise ValueError(f"{weights_path}: the weights of {name!r} do not fit a {type(net).__name__} "
                             f"with {encoder.n_features} inputs ({' '.join(first[:3])})") from None
        net.eval()
    stray = sorted(k for k in tensors if k.split(".", 1)[0] not in nets)
    if stray:
        raise ValueError(f"{weights_path}: tensors {stray[:3]} belong to no network of {cls.name!r}")

    cutter.encoder_ = encoder
    for name, net in nets.items():
        setattr(cutter, f"{name}_", net)
    for key in cls.summary_attributes:
        setattr(cutter, key, _training_values(key.rstrip("_"), training[key.rstrip("_")]))
    return cutter


def model_card(config: dict[str, Any], title: str) -> str:
    """The ``README.md`` of a checkpoint, from its ``config.json`` content."""
    params, training = config["params"], config["training"]
    name = config["cutter"]
    paper = getattr(cutter_class(name), "paper", name)
    loss = f", loss {params['loss']}" if "loss" in params else ""
    sigma = f", minimal recall σ = {params['sigma']}" if "sigma" in params else ""
    history = training["history"]
    best = history[training["best_epoch"] - 1]
    seconds = sum(e["seconds"] for e in history)
    n_train, n_val = len(training["train_qids"]), len(training["val_qids"])
    lines = [
        f"# {title}",
        "",
        f"Truncation model `{name}` of rankcut {config['rankcut_version']}: {paper}"
        f"{loss}{sigma}, trained for the metric `{params['metric']}` (recall base "
        f"`{params['recall_base']}`).",
        "",
        "## Training",
        "",
        f"- Queries: {n_train} trained on, {n_val} held out for validation (val_fraction "
        f"{params['val_fraction']}, seed {params['seed']}); relevant: relevance ≥ {training['threshold']:g}; "
        f"lists ranked by {training['scored_by']}, ordered by {training['ordering']}, at most "
        f"{training['depth']} documents long (longer lists get a warning: it never learned to cut "
        "past that depth).",
        f"- Epochs run: {len(history)} of at most {params['epochs']} (patience {params['patience']}), "
        f"{seconds:.1f} s; batch size {params['batch_size']}, Adam lr {params['lr']}.",
        f"- Chosen epoch: {training['best_epoch']}, validation {params['metric']} "
        f"{best['val_metric']:.4f} (mean over the validation queries).",
    ]
    if "recall_best_epoch" in training:
        lines.append(f"- Recall model: epoch {training['recall_best_epoch']} chosen on the validation loss "
                     f"({training['recall_val_loss']:.4f}).")
    lines += [
        f"- Inputs: {', '.join(f'`{c}`' for c in config['encoder']['columns'])}, standardised with the "
        "training mean and standard deviation.",
        "",
        "## Use",
        "",
        "```",
        (f"rankcut cut --model {title} --letor FILE --score-feature {feature} --out cut.run"
         if (feature := score_feature_of(training["scored_by"])) is not None else
         f"rankcut cut --model {title} --run RUN --out cut.run"
         + (" --features FEATURES.tsv" if set(config["encoder"]["columns"]) - set(SCORE_COLUMNS) else "")),
        "```",
        "",
        "```python",
        "from rankcut.cutters.checkpoint import load_checkpoint",
        f"cutter = load_checkpoint({title!r})",
        "cuts = cutter.predict(lists)  # lists must carry the feature columns above",
        "```",
        "",
        f"Files: `{CONFIG}` (parameters, input encoder, training history), `{WEIGHTS}` (weights; "
        "safetensors, no pickle).",
        "",
    ]
    return "\n".join(lines)
