"""Score-distribution cutter: a normal–exponential mixture per list, cut at the best expected F1.

After Arampatzis, Kamps & Robertson, "Where to stop reading a ranked list? Threshold optimization
using truncated score distributions" (SIGIR 2009), which model the scores of one query's
ranked list as a mixture of a normal density for relevant documents and an exponential density
for non-relevant ones, estimate it by EM without any relevance judgement, and cut where the
expected F1 is highest. AttnCut (Wu et al., AAAI 2021, "Related work") lists it as the
parametric baseline.

What is implemented, exactly (per list of ``n`` listed documents with scores ``s_1 ≥ … ≥ s_n``):

1. **Shift and scale.** ``x_i = (s_i − s_min) / (s_max − s_min)`` ∈ [0, 1]: the exponential
   starts at the lowest listed score (the list is a left-truncated ranking, so its lowest score
   is the natural origin of the non-relevant tail), and scaling by the score range makes the
   fit independent of the retriever's score units. Parameters are reported back in score units.
2. **Model.** ``f(x) = π·N(x; μ, σ²) + (1 − π)·λ·exp(−λx)`` for ``x ≥ 0`` — the *untruncated*
   normal–exponential model the paper starts from (its truncated variants, the paper's main
   contribution, are not implemented; the normal keeps its full support).
3. **EM** (Dempster, Laird & Rubin 1977), closed-form M-step: ``π = mean r``,
   ``μ = Σ r x / Σ r``, ``σ² = Σ r (x − μ)² / Σ r`` (floored at ``SIGMA_FLOOR`` of the score
   range, because the likelihood is unbounded as σ → 0 on tied scores),
   ``λ = Σ (1 − r) / Σ (1 − r) x``, where ``r_i`` is the posterior probability that document
   ``i`` is relevant. It runs vectorised over all lists at once (padded arrays and mask), at most
   ``max_iter`` iterations, and a list stops updating once its mean log-likelihood per document
   changes by less than ``tol``.
4. **Initialisation** (deterministic, so no seed is needed): the top ``init_top`` fraction of
   the list (at least 2 documents) seeds the normal — ``π₀ = init_top``, ``μ₀``, ``σ₀`` = mean
   and standard deviation of their ``x`` — and the rest seeds the exponential, ``λ₀ = 1 / mean x``.
5. **Cut.** With posteriors ``p_i = r_i``, the expected F1 of keeping the top ``k`` is estimated
   by the ratio of expectations

       E[F1](k) ≈ 2 · Σ_{i≤k} p_i / (k + Σ_{i≤n} p_i),

   i.e. F1 = 2·TP / (k + R) with ``TP`` and ``R`` (relevant documents in the list) replaced by
   their posterior expectations; the recall base is the list, as in AttnCut's Eq. 8. The cut is
   ``argmax_{1≤k≤n} E[F1](k)``, ties to the smallest ``k``.
6. **Degenerate lists** — fewer than ``min_docs`` documents, all scores equal, or a fit whose
   parameters are not finite — are kept whole (``k = n``) and flagged ``fallback``.

The cutter is unsupervised: :meth:`fit` only validates its parameters and stores nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rankcut._util import check_int
from rankcut.cutters.base import Cutter, check_float, check_score_arrays, register
from rankcut.data.lists import RankedLists

__all__ = ["NormalExponentialFit", "ScoreDistribution", "expected_f1", "fit_normal_exponential"]

#: smallest standard deviation of the relevant normal, as a fraction of the list's score range
SIGMA_FLOOR = 1e-3
_EPS = 1e-12
_LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class NormalExponentialFit:
    """Per-list normal–exponential fits (arrays over ``n_queries``, parameters in score units).

    :param weight: π, the mixing weight of the relevant (normal) component, shape [n_queries].
    :param mean: μ of the relevant normal, in score units.
    :param std: σ of the relevant normal, in score units.
    :param rate: λ of the non-relevant exponential, per score unit; its origin is ``shift``.
    :param shift: the lowest listed score, where the exponential starts.
    :param posterior: ``[n_queries, max_len]`` posterior probability of relevance ``r_i``
        (0 at padding; NaN on fallback lists).
    :param log_likelihood: mean log-likelihood per document, in score units.
    :param n_iter: EM iterations run per list.
    :param converged: whether the tolerance was met before ``max_iter``.
    :param fallback: lists not fitted (too short, all scores equal, or a non-finite fit);
        their parameters are NaN.
    """

    weight: NDArray[np.float64]
    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    rate: NDArray[np.float64]
    shift: NDArray[np.float64]
    posterior: NDArray[np.float64]
    log_likelihood: NDArray[np.float64]
    n_iter: NDArray[np.int64]
    converged: NDArray[np.bool_]
    fallback: NDArray[np.bool_]


def _e_step(
    x: NDArray[np.float64], pi: NDArray[np.float64], mu: NDArray[np.float64],
    sigma: NDArray[np.float64], lam: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Posterior ``r`` and per-document log-density ``log f(x)``; parameters have shape [Q, 1]."""
    log_rel = np.log(pi) - 0.5 * _LOG_2PI - np.log(sigma) - 0.5 * ((x - mu) / sigma) ** 2
    log_non = np.log1p(-pi) + np.log(lam) - lam * x
    log_f = np.logaddexp(log_rel, log_non)
    return np.exp(log_rel - log_f), log_f


def fit_normal_exponential(
    scores: NDArray[np.float64],
    mask: NDArray[np.bool_],
    *,
    max_iter: int = 200,
    tol: float = 1e-6,
    min_docs: int = 10,
    init_top: float = 0.1,
) -> NormalExponentialFit:
    """Fit a normal (relevant) + exponential (non-relevant) mixture to every list by EM.

    See the module docstring (steps 1–4 and 6) for the shift, model, initialisation and
    degenerate cases.

    :param scores: ``[n_queries, max_len]`` scores, each row sorted descending over its mask.
    :param mask: ``[n_queries, max_len]`` True where a document is listed.
    :param max_iter: cap on EM iterations (≥ 1).
    :param tol: stop a list when its mean log-likelihood per document changes by less (> 0).
    :param min_docs: lists shorter than this are not fitted (≥ 2).
    :param init_top: fraction of each list that seeds the relevant normal, in (0, 1).
    """
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol")
    if tol <= 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    min_docs = check_int(min_docs, "min_docs", low=2)
    init_top = check_float(init_top, "init_top")
    if not 0 < init_top < 1:
        raise ValueError(f"init_top must be in (0, 1), got {init_top}")
    scores, mask = check_score_arrays(scores, mask)

    n_q = scores.shape[0]
    n = mask.sum(axis=1)
    s = np.where(mask, scores, np.nan)
    with np.errstate(all="ignore"):
        smin = np.nanmin(np.where(mask, s, np.inf), axis=1)
        smax = np.nanmax(np.where(mask, s, -np.inf), axis=1)
    span = smax - smin
    fallback = (n < min_docs) | ~(span > 0)
    ok = ~fallback
    w = mask & ok[:, None]
    nn = np.where(ok, n, 1).astype(float)[:, None]
    x = np.where(w, (s - smin[:, None]) / np.where(ok, span, 1.0)[:, None], 0.0)

    # initialisation from the top init_top of each list (lists are sorted by score descending,
    # so the top documents are the first columns)
    m = np.maximum(2, np.ceil(init_top * n)).astype(int)
    top = w & (np.arange(x.shape[1])[None, :] < m[:, None])
    rest = w & ~top
    n_top = np.maximum(top.sum(axis=1, keepdims=True), 1)
    mu = (x * top).sum(axis=1, keepdims=True) / n_top
    sigma = np.sqrt((((x - mu) ** 2) * top).sum(axis=1, keepdims=True) / n_top)
    sigma = np.maximum(sigma, SIGMA_FLOOR)
    mean_rest = (x * rest).sum(axis=1, keepdims=True) / np.maximum(rest.sum(axis=1, keepdims=True), 1)
    lam = 1.0 / np.maximum(mean_rest, _EPS)
    pi = np.full((n_q, 1), init_top)

    ll_old = np.full(n_q, -np.inf)
    active = ok.copy()
    n_iter = np.zeros(n_q, dtype=np.int64)
    converged = np.zeros(n_q, dtype=bool)
    for _ in range(max_iter):
        if not active.any():
            break
        r, log_f = _e_step(x, pi, mu, sigma, lam)
        r = r * w
        ll = (log_f * w).sum(axis=1) / nn[:, 0]
        # M-step (closed form), guarded against empty components
        big_r = np.maximum(r.sum(axis=1, keepdims=True), _EPS)
        not_r = (1.0 - r) * w
        new_pi = np.clip(big_r / nn, _EPS, 1.0 - 1e-9)
        new_mu = (r * x).sum(axis=1, keepdims=True) / big_r
        new_sigma = np.sqrt((r * (x - new_mu) ** 2).sum(axis=1, keepdims=True) / big_r)
        new_sigma = np.maximum(new_sigma, SIGMA_FLOOR)
        new_lam = not_r.sum(axis=1, keepdims=True) / np.maximum((not_r * x).sum(axis=1, keepdims=True), _EPS)
        upd = active[:, None]
        pi = np.where(upd, new_pi, pi)
        mu = np.where(upd, new_mu, mu)
        sigma = np.where(upd, new_sigma, sigma)
        lam = np.where(upd, new_lam, lam)
        n_iter += active
        done = active & (np.abs(ll - ll_old) < tol)
        converged |= done
        active &= ~done
        ll_old = np.where(active, ll, ll_old)

    r, log_f = _e_step(x, pi, mu, sigma, lam)
    ll = (log_f * w).sum(axis=1) / nn[:, 0]
    params = np.hstack([pi, mu, sigma, lam])
    bad = ok & ~(np.all(np.isfinite(params), axis=1) & np.isfinite(ll))
    fallback = fallback | bad
    ok = ~fallback
    posterior = np.where(mask & ok[:, None], r, 0.0)
    posterior[fallback] = np.nan
    span_ok = np.where(ok, span, np.nan)

    def rows(a: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.where(ok, a[:, 0], np.nan)

    return NormalExponentialFit(
        weight=rows(pi),
        mean=np.where(ok, smin, np.nan) + rows(mu) * span_ok,
        std=rows(sigma) * span_ok,
        rate=rows(lam) / span_ok,
        shift=np.where(ok, smin, np.nan),
        posterior=posterior,
        log_likelihood=np.where(ok, ll - np.log(np.where(ok, span, 1.0)), np.nan),
        n_iter=n_iter,
        converged=converged & ok,
        fallback=fallback,
    )


def expected_f1(posterior: NDArray[np.float64], mask: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Expected-F1 curves ``[n_queries, max_len + 1]`` from posterior relevance probabilities.

    Column ``k`` holds ``2 · Σ_{i≤k} p_i / (k + Σ_{i≤n} p_i)`` (module docstring, step 5);
    column 0 and columns beyond a list's length are NaN, as in :func:`rankcut.metrics.curves`.

    :param posterior: ``[n_queries, max_len]`` probabilities in [0, 1] (ignored at padding).
    :param mask: ``[n_queries, max_len]`` True where a document is listed.
    """
    p = np.where(mask, np.asarray(posterior, dtype=float), 0.0)
    if np.any((p < 0) | (p > 1) | np.isnan(p)):
        raise ValueError("posterior must hold probabilities in [0, 1] at every listed document")
    n_q, width = p.shape
    tp = np.concatenate([np.zeros((n_q, 1)), np.cumsum(p, axis=1)], axis=1)
    k = np.arange(width + 1, dtype=float)[None, :]
    total = tp[:, -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = 2.0 * tp / (k + total)
    lengths = mask.sum(axis=1)
    out[(k == 0) | (k > lengths[:, None])] = np.nan
    return out


@register("distribution")
class ScoreDistribution(Cutter):
    """Cut each list where its expected F1 under a fitted normal–exponential mixture peaks.

    Arampatzis, Kamps & Robertson (SIGIR 2009); see the module docstring for the exact model,
    EM, initialisation, estimator and fallback. Unsupervised: needs no labels and no ``fit``.

    :param max_iter: cap on EM iterations.
    :param tol: EM tolerance on the mean log-likelihood per document.
    :param min_docs: lists shorter than this are kept whole.
    :param init_top: fraction of each list that seeds the relevant component.
    """

    reads_scores = True

    def __init__(
        self, *, max_iter: int = 200, tol: float = 1e-6, min_docs: int = 10, init_top: float = 0.1
    ) -> None:
        self.max_iter = max_iter
        self.tol = tol
        self.min_docs = min_docs
        self.init_top = init_top

    def _validate_params(self) -> None:
        check_int(self.max_iter, "max_iter", low=1)
        if check_float(self.tol, "tol") <= 0:
            raise ValueError(f"tol must be > 0, got {self.tol!r}")
        check_int(self.min_docs, "min_docs", low=2)
        if not 0 < check_float(self.init_top, "init_top") < 1:
            raise ValueError(f"init_top must be in (0, 1), got {self.init_top!r}")

    def fit_mixture(self, lists: RankedLists) -> NormalExponentialFit:
        """The per-list mixture fits this cutter would use on ``lists``."""
        return fit_normal_exponential(
            lists.scores, lists.mask, max_iter=self.max_iter, tol=self.tol,
            min_docs=self.min_docs, init_top=self.init_top,
        )

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        fit = self.fit_mixture(lists)
        lengths = lists.lengths
        cuts = lengths.copy()
        ok = ~fit.fallback
        if ok.any():
            curves = expected_f1(fit.posterior[ok], lists.mask[ok])
            curves[:, 0] = -np.inf  # k = 0 is never a candidate
            cuts[ok] = np.nanargmax(curves, axis=1)  # first maximum: ties → smallest k
        return cuts
