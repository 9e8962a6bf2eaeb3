"""Speed of the neural cutters on Robust04 BM25 top-300: seconds per training epoch and lists per
second at inference, per model and precision, against the reference code's numbers.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_neural_speed.py [--models attncut bicut choppy attncut-rc]
        [--precisions fp32 bf16] [--epochs 4] [--runs 2] [--predict-repeats 7] [--threads 2]
        [--quality --seeds 0 1 2]

Reads ../shared/datasets/robust04: the 190 BM25 training lists (300 documents each; features
``score``, per-list ``score_z``, ``tfidf_sim``, ``doc2vec_sim``) and the 50 test lists.

* Training: each run fits the cutter (its defaults: batch 20, Adam lr 1e-3, 80/20 validation
  split of the 190 training queries, so an epoch is 152 lists trained and 38 validated) for
  ``--epochs`` epochs with early stopping off. The figure is the median of the per-epoch
  ``seconds`` of :func:`rankcut.nn.training.fit_network` over all runs, leaving out each run's
  first epoch (oneDNN builds its kernels and the allocator warms up there). attncut-rc trains
  two AttnCut networks: its epoch is one epoch of each.
* Inference: the median time of ``--predict-repeats`` ``predict`` calls (after one warm-up call)
  on the 50 test lists and on all 240 lists; lists per second = lists / median. Only speed is
  measured: no cut is scored, on test or elsewhere.
* Calibration: a fixed float32 workload (:func:`calibrate`: matrix products and a small LSTM)
  is timed before and after every row, in this process, with the same threads. Its spread says
  how disturbed the machine was (others' jobs on a shared machine): a row whose calibration
  times differ by more than 25% is marked "disturbed"; rerun it.
* ``--before``: also time the code as it was before the speed work, in the same process
  (:func:`before_speedups`: torch's stock ``nn.MultiheadAttention``, ``nn.TransformerEncoder``
  with its dropout on the attention weights, ``F.dropout``, plain Adam and gradient clipping,
  ``torch.no_grad`` and chunks of 256 at predict time), float32 only: the in-process baseline
  of the speed-ups.
* ``--quality``: full fits (60 epochs, patience 15, the cutters' defaults) for each ``--seeds``
  seed and precision, reporting the validation F1 of the chosen epoch — on the validation
  split of the *training* queries (``val_metric_``), never on the test lists — to check that
  bfloat16 does not cost accuracy beyond seed noise.

The reference numbers (2-core machine of this kind, the reference implementation): AttnCut
7.7-8.4 s per epoch over the 190 training lists, BiCut 3 s, Choppy 20 s; inference 99 lists/s.
Targets: 10x faster per epoch, >= 2,000 lists/s.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

import rankcut.cutters.neural as neural
import rankcut.nn.models as models
import rankcut.nn.training as training
from rankcut.cutters import make_cutter
from rankcut.data.lists import RankedLists
from rankcut.nn.training import has_amx_bf16

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "robust04"
#: reference seconds per epoch (low, high) and inference lists/s, as quoted in the issue
REFERENCE_EPOCH = {"attncut": (7.7, 8.4), "bicut": (3.0, 3.0), "choppy": (20.0, 20.0)}
REFERENCE_LISTS_PER_S = 99.0
DISTURBED = 1.25


def load_lists() -> tuple[RankedLists, RankedLists, RankedLists]:
    """(train, test, all 240) Robust04 BM25 lists with the ``tfidf_sim`` and ``doc2vec_sim`` columns,
    loaded as the truncation benchmark loads them."""
    from bench_truncation import robust04, robust04_split  # benchmarks/ is on sys.path when run

    train, test = robust04_split("bm25")(DATA.parent)
    every, _ = robust04("bm25")(DATA.parent)
    return train, test, every


@contextlib.contextmanager
def before_speedups() -> Iterator[None]:
    """Run the networks, training and prediction as before the speed work (module docstring)."""

    def attention(h: torch.Tensor, attn: torch.nn.MultiheadAttention, padding: torch.Tensor | None) -> Any:
        return attn(h, h, h, key_padding_mask=padding, need_weights=False)[0]

    def choppy_forward(self: models.ChoppyNet, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, _ = models._check_inputs(x, mask, self.n_features)
        h = self.embed(x) + self.position.weight[: x.shape[1]]
        h = self.encoder(h, src_key_padding_mask=None if bool(mask.all()) else ~mask)
        return self.output(h).squeeze(-1).masked_fill(~mask, models.PADDED_LOGIT)

    def adam(net: torch.nn.Module, *, lr: float, weight_decay: float) -> torch.optim.Optimizer:
        return torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)

    clip_grad_norm = torch.nn.utils.clip_grad_norm_

    def clip(parameters: Any, max_norm: float, **_: Any) -> torch.Tensor:
        return clip_grad_norm(parameters, max_norm)

    patches: dict[tuple[Any, str], Any] = {
        (models, "_self_attention"): attention, (models, "_dropout"): F.dropout,
        (models.ChoppyNet, "forward"): choppy_forward, (training, "_adam"): adam,
        (neural, "PREDICT_CHUNK"): 256, (torch, "inference_mode"): torch.no_grad,
        (torch.nn.utils, "clip_grad_norm_"): clip,
    }
    saved = {key: getattr(*key) for key in patches}
    for (owner, name), value in patches.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for (owner, name), value in saved.items():
            setattr(owner, name, value)


def calibrate() -> float:
    """Seconds of a fixed float32 workload: 10 products of 1024 x 1024 matrices (large kernels)
    and 3 forward passes of a small LSTM over [16, 300, 64] (300 short steps, which suffer most
    when another job takes a core from one of the threads)."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(1024, 1024, generator=gen), torch.randn(1024, 1024, generator=gen)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        lstm = torch.nn.LSTM(64, 64, batch_first=True)
    x = torch.randn(16, 300, 64, generator=gen)
    with torch.no_grad():
        torch.mm(a, b), lstm(x)
        start = time.perf_counter()
        for _ in range(10):
            torch.mm(a, b)
        for _ in range(3):
            lstm(x)
    return time.perf_counter() - start


def epoch_seconds(cutter: Any) -> list[float]:
    """Seconds of every epoch but the first; for attncut-rc, metric + recall network per epoch."""
    first = [e["seconds"] for e in cutter.history_]
    if hasattr(cutter, "recall_history_"):
        second = [e["seconds"] for e in cutter.recall_history_]
        first = [a + b for a, b in zip(first, second, strict=True)]
    return first[1:]


def predict_rate(cutter: Any, lists: RankedLists, repeats: int) -> float:
    """Lists per second: ``len(lists)`` / median time of ``repeats`` predict calls."""
    cutter.predict(lists)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        cutter.predict(lists)
        times.append(time.perf_counter() - start)
    return len(lists) / statistics.median(times)


def speed(args: argparse.Namespace, train: RankedLists, test: RankedLists, every: RankedLists) -> None:
    rows = []
    for name in args.models:
        settings = [("fp32", True)] if args.before else []
        for precision, old in [*settings, *((p, False) for p in args.precisions)]:
            before = calibrate()
            seconds: list[float] = []
            cutter = None
            with before_speedups() if old else contextlib.nullcontext():
                for run in range(args.runs):
                    cutter = make_cutter(name, epochs=args.epochs, patience=args.epochs, seed=run,
                                         precision=precision)
                    cutter.fit(train)
                    seconds += epoch_seconds(cutter)
                rate_test = predict_rate(cutter, test, args.predict_repeats)
                rate_all = predict_rate(cutter, every, args.predict_repeats)
            after = calibrate()
            label = "fp32, before" if old else precision
            rows.append({"model": name, "precision": label, "epoch": statistics.median(seconds),
                         "epoch_range": (min(seconds), max(seconds)), "n_epochs": len(seconds),
                         "test": rate_test, "all": rate_all, "calibration": (before, after)})
            print(f"# {name} {label}: epochs {[round(s, 3) for s in seconds]}, "
                  f"test {rate_test:.0f} lists/s, all {rate_all:.0f} lists/s, "
                  f"calibration {before:.3f} s / {after:.3f} s", flush=True)

    base_label = "fp32, before" if args.before else "fp32"
    baseline = {r["model"]: r for r in rows if r["precision"] == base_label}
    print()
    print(f"| model | precision | s / epoch (median) | range | vs reference | vs {base_label} "
          "(epoch, 240 lists/s) | lists/s, 50 test | lists/s, 240 | vs 99 lists/s | calibration |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        ref = REFERENCE_EPOCH.get(r["model"])
        note = ""
        if ref is None and r["model"] == "attncut-rc":  # two AttnCut networks per epoch
            low, high = REFERENCE_EPOCH["attncut"]
            ref, note = (2 * low, 2 * high), " (vs 2x AttnCut)"
        if ref is None:
            vs_ref = "n/a"
        elif ref[0] == ref[1]:
            vs_ref = f"{ref[0] / r['epoch']:.1f}x{note}"
        else:
            vs_ref = f"{ref[0] / r['epoch']:.1f}-{ref[1] / r['epoch']:.1f}x{note}"
        base = baseline.get(r["model"])
        vs_fp32 = "1" if base is None or base is r else (
            f"{base['epoch'] / r['epoch']:.2f}x, {r['all'] / base['all']:.2f}x")
        lo, hi = r["epoch_range"]
        before, after = r["calibration"]
        flag = " disturbed" if max(before, after) > DISTURBED * min(before, after) else ""
        print(f"| {r['model']} | {r['precision']} | {r['epoch']:.3f} | {lo:.2f}-{hi:.2f} | {vs_ref} | "
              f"{vs_fp32} | {r['test']:,.0f} | {r['all']:,.0f} | {r['all'] / REFERENCE_LISTS_PER_S:.1f}x | "
              f"{before:.3f} / {after:.3f} s{flag} |")


def quality(args: argparse.Namespace, train: RankedLists) -> None:
    """Validation F1 (training queries' validation split) of full fits, per precision and seed."""
    print()
    print("| model | precision | validation F1 per seed | mean | best epochs | s / epoch (median) |")
    print("|---|---|---|---:|---|---:|")
    for name in args.models:
        for precision in args.precisions:
            scores, epochs, seconds = [], [], []
            for seed in args.seeds:
                cutter: Any = make_cutter(name, seed=seed, precision=precision).fit(train)
                scores.append(cutter.val_metric_)
                epochs.append(cutter.best_epoch_)
                seconds += epoch_seconds(cutter)
            print(f"| {name} | {precision} | {', '.join(f'{s:.4f}' for s in scores)} | "
                  f"{statistics.mean(scores):.4f} | {', '.join(map(str, epochs))} | "
                  f"{statistics.median(seconds):.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["attncut", "bicut", "choppy", "attncut-rc"],
                        choices=["attncut", "bicut", "choppy", "attncut-rc"])
    parser.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16", "auto"])
    parser.add_argument("--epochs", type=int, default=4, help="epochs per timing fit (the first is left out)")
    parser.add_argument("--runs", type=int, default=2, help="timing fits per model and precision")
    parser.add_argument("--predict-repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    parser.add_argument("--before", action="store_true",
                        help="also time the code as before the speed work (float32), in this process")
    parser.add_argument("--quality", action="store_true", help="also run full fits and compare validation F1")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    if args.epochs < 2:
        parser.error("--epochs must be at least 2 (the first epoch is left out)")

    torch.set_num_threads(args.threads)
    train, test, every = load_lists()
    load = os.getloadavg()
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} torch threads, {os.cpu_count()} CPUs, "
          f"AMX bf16: {has_amx_bf16()}, Python {platform.python_version()}; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at start")
    print(f"# Robust04 BM25: {len(train)} training lists, {len(test)} test lists, {len(every)} in all, "
          f"{train.max_len} documents each; features score, score_z, {', '.join(train.feature_names)}")
    if not args.skip_speed:
        speed(args, train, test, every)
    if args.quality:
        quality(args, train)
    load = os.getloadavg()
    print(f"# load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")


if __name__ == "__main__":
    main()
