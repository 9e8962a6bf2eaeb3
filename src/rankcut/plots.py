"""Figures of an evaluation (matplotlib, imported lazily: ``pip install 'rankcut[eval]'``).

* :func:`plot_cutoffs` — the distribution of the cut-off positions chosen for the test queries,
  each method against the Oracle's (Figure 2 of AttnCut, Wu et al., AAAI 2021).

Figures are drawn on matplotlib's Agg canvas directly (``matplotlib.figure.Figure``), never
through pyplot, so plotting neither needs a display nor changes the backend of the caller's
session.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankcut._util import check_int
from rankcut.data.io import write_atomic
from rankcut.evaluation import Evaluation

__all__ = ["FIGURE_FORMATS", "check_figure_path", "plot_cutoffs"]

#: the figure formats written, named by the file's suffix
FIGURE_FORMATS = ("png", "pdf", "svg")

_INSTALL_HINT = "plotting needs matplotlib: pip install 'rankcut[eval]'"


def _figure(**kwargs: Any) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # matplotlib is an optional extra
        raise ImportError(_INSTALL_HINT) from exc
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def _cycle() -> Any:
    from matplotlib import rcParams

    return rcParams["axes.prop_cycle"]


def check_figure_path(path: str | os.PathLike[str]) -> str:
    """The format of the figure file ``path`` (its suffix, one of :data:`FIGURE_FORMATS`);
    ValueError for another suffix (a PDF name given PNG bytes would not open in LaTeX)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FIGURE_FORMATS:
        raise ValueError(f"{path}: a figure is written as {', '.join(f'*.{f}' for f in FIGURE_FORMATS)}, "
                         "by the file's suffix: name it so")
    return suffix


def plot_cutoffs(
    evaluation: Evaluation,
    path: str | os.PathLike[str],
    *,
    metric: str = "f1",
    methods: Sequence[str] | None = None,
    reference: str = "oracle",
    bin_width: int | None = None,
    title: str | None = None,
) -> Path:
    """Draw the distribution of the cuts of the test queries, per method, against ``reference``
    (Figure 2 of AttnCut: "the distribution of cut-off positions of testing queries from
    AttnCut and Oracle") and save it as PNG, PDF or SVG, by the suffix of ``path``.

    Each curve is the fraction of test queries whose cut falls in each bin of positions; the
    reference is filled. A method that cuts every list at one depth (every cut is
    ``min(k, length)``, as Fixed-k and Greedy-k do) is drawn as a dashed vertical line at ``k``
    instead of a spike that would flatten the other curves. The cuts are those of the
    ``metric`` column of the evaluation (for the Oracle of the F1 column: each query's F1-optimal
    cut).

    :param evaluation: the result of :func:`rankcut.evaluation.evaluate_cutters`; must include
        ``reference``.
    :param path: the figure to write (``*.png``, ``*.pdf`` or ``*.svg``), whole or not at all.
    :param metric: which column's cuts to draw (one of ``evaluation.metrics``).
    :param methods: methods to draw against the reference (default: all others).
    :param reference: the method drawn filled, the Oracle by default.
    :param bin_width: width of a bin in positions (default: about 30 bins over the longest cut).
    :param title: figure title (default names the metric and the number of queries).
    :returns: the path written.
    :raises ValueError: for an unknown metric, method or reference, a bin width < 1, or another
        suffix of ``path``.
    :raises FileNotFoundError: when the folder of ``path`` does not exist (checked before drawing).
    :raises ImportError: when matplotlib is missing (the message names ``rankcut[eval]``).
    """
    ev = evaluation
    out = Path(path)
    fmt = check_figure_path(out)
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise FileNotFoundError(f"cannot write {out}: output folder {out.parent} {what}")
    if metric not in ev.metrics:
        raise ValueError(f"metric must be one of the evaluated metrics {ev.metrics}, got {metric!r}")
    if reference not in ev.methods:
        raise ValueError(f"reference {reference!r} is not among the evaluated methods "
                         f"{tuple(ev.methods)}; the figure compares cuts with it (add it to the cutters)")
    others = [m for m in ev.methods if m != reference] if methods is None else list(methods)
    unknown = [m for m in others if m not in ev.methods]
    if unknown:
        raise ValueError(f"methods {unknown} are not among the evaluated methods {tuple(ev.methods)}")
    top = max(int(ev.methods[m].cuts[metric].max()) for m in [reference, *others])
    if bin_width is None:
        bin_width = max(1, int(np.ceil(top / 30)))
    check_int(bin_width, "bin_width", low=1)
    edges = np.arange(0, top + bin_width + 1, bin_width) + 0.5  # bin i holds cuts i*w+1 … (i+1)*w

    def share(name: str) -> np.ndarray:
        counts, _ = np.histogram(ev.methods[name].cuts[metric], bins=edges)
        return counts / counts.sum()

    fig = _figure(figsize=(7.0, 4.0), dpi=120)
    ax = fig.add_subplot()
    ref = ev.methods[reference]
    colours = iter([c["color"] for c in _cycle()] * (len(others) // 10 + 1))
    ax.stairs(share(reference), edges, fill=True, alpha=0.35, color="0.4",
              label=f"{reference} (mean k {ref.mean_k(metric):.1f})")
    for name in others:
        cuts = ev.methods[name].cuts[metric]
        depth = int(cuts.max())
        if np.array_equal(cuts, np.minimum(depth, ev.lengths)):
            ax.axvline(depth, linestyle="--", linewidth=1.2, color=next(colours),
                       label=f"{name} (every list at k = {depth})")
        else:
            ax.stairs(share(name), edges, linewidth=1.6, color=next(colours),
                      label=f"{name} (mean k {ev.methods[name].mean_k(metric):.1f})")
    ax.set_xlabel("cut-off position k (documents kept)")
    ax.set_ylabel("fraction of test queries")
    ax.set_xlim(0, edges[-1])
    label = {"f1": "F1", "dcg": "±1-DCG"}.get(metric, metric)
    ax.set_title(title or f"Cut-off positions of {len(ev.qids)} test queries (the cuts behind {label}@k)")
    ax.legend(frameon=False, fontsize="small")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    write_atomic(out, buffer.getvalue())
    return out
