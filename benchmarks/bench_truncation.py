"""AttnCut's comparisons (Tables 2–4 of Wu et al., AAAI 2021) measured on the shared datasets.

Settings:

* ``robust04-bm25``, ``robust04-drmm`` — Robust04 top-300 lists, all queries (the given train and
  test runs merged: 240 and 243 queries) with their ``tfidf_sim``/``doc2vec_sim`` tables, seeded
  5-fold cross-validation over the queries (folds drawn as :func:`rankcut.evaluation.evaluate_cutters`
  draws them), recall over the relevant documents inside the list (Eq. 7), ``--missing keep``
  (query 672 has no relevant document and scores 0, as in the dataset's known figures);
* ``robust04-bm25-split``, ``robust04-drmm-split`` — the same lists, the given train/test split
  (190/50 and 193/50 queries), on which figures of other implementations are quoted;
* ``dl19-dl20``, ``dl20-dl19`` — TREC DL passage BM25 top-100, relevance ≥ 2, trained on one
  year and tested on the other, with text features (length, unique tokens, tf-idf and Doc2Vec
  neighbour similarity, :func:`rankcut.data.features.extract_features`).

Every neural cutter chooses its epoch on a validation split carved from its own training
queries (``val_fraction`` 0.2, seeded), never on the test fold. Metric-aware cutters (Greedy-k,
Oracle and every neural cutter) are fitted separately for F1 and for ±1-DCG, as Table 3 does.

For every (setting, method, metric, fold) the per-query cuts and scores, the fit time, the
seconds of each epoch and the inference speed are written to a JSON file under ``--cache``, so
an interrupted run resumes where it stopped; ``--fresh`` recomputes. The tables (Markdown) go to
stdout and, with ``--markdown FILE``, to a file:

* per setting, Table 2/3: mean ± standard deviation over the test queries of F1@k and DCG@k,
  the share of Oracle F1, the mean cut, how many distinct cuts a method made and the share of
  queries it cut at k = 1 (the failure modes to watch: a collapse to k = 1, one k for every query),
  and Wilcoxon signed-rank tests against BiCut (two-sided, Holm-adjusted over the methods);
* Table 4: recall-constrained AttnCut for σ ∈ {0, 0.3, 0.5, 0.7}: F1, and how many queries
  reach R@k ≥ σ, beside AttnCut and the Oracle under the same constraint;
* on the given Robust04 split, the F1 cuts scored by the paper's convention (query 672 dropped,
  recall over all judged relevant documents), where Oracle and Fixed-k reproduce its Table 3;
* against the bars: every learned cutter's share of Oracle F1, ratio to Greedy-k and p-value
  against BiCut;
* the ablation: AttnCut with and without the per-list score z-score, with a Wilcoxon p-value;
* training: the epoch chosen on validation, the epochs run, the validation metric at epoch 1 and
  at the chosen epoch;
* speed: median seconds per training epoch and median lists per second at inference, per model.

    .venv/bin/python benchmarks/bench_truncation.py                       # everything (hours)
    .venv/bin/python benchmarks/bench_truncation.py --settings robust04-bm25 --methods bicut,attncut
    .venv/bin/python benchmarks/bench_truncation.py --report-only --markdown tables.md   # the tables only
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from rankcut import metrics
from rankcut.cutters import AttnCut, AttnCutRC, make_cutter
from rankcut.data.lists import RankedLists
from rankcut.significance import paired_tests

METRICS = ("f1", "dcg")
#: name → the cutter for a metric and a precision (neural cutters only take the precision)
METHODS: dict[str, Callable[[str, str], Any]] = {
    "oracle": lambda m, p: make_cutter("oracle", metric=m),
    "fixed-k:5": lambda m, p: make_cutter("fixed-k:5"),
    "fixed-k:10": lambda m, p: make_cutter("fixed-k:10"),
    "fixed-k:50": lambda m, p: make_cutter("fixed-k:50"),
    "greedy-k": lambda m, p: make_cutter("greedy-k", metric=m),
    "bicut": lambda m, p: make_cutter("bicut", metric=m, precision=p),
    "choppy": lambda m, p: make_cutter("choppy", metric=m, precision=p),
    "attncut:mle": lambda m, p: make_cutter("attncut:mle", metric=m, precision=p),
    "attncut:bi": lambda m, p: make_cutter("attncut:bi", metric=m, precision=p),
    "attncut:rl": lambda m, p: make_cutter("attncut:rl", metric=m, precision=p),
    "attncut": lambda m, p: make_cutter("attncut", metric=m, precision=p),
    # ablation: without the per-list z-score of the score among the inputs (a choice of ours)
    "attncut (no score_z)": lambda m, p: AttnCut(metric=m, score_z=False, precision=p),
}
ABLATION = "attncut (no score_z)"
BASELINE = "bicut"
SIGMAS = (0.0, 0.3, 0.5, 0.7)
RC = "attncut-rc"


# ------------------------------------------------------------------------------------------ data
@dataclass(frozen=True)
class Setting:
    key: str
    title: str
    load: Callable[[Path], tuple[RankedLists, RankedLists | None]]  # (all or train lists, test lists)


def _quiet(fn: Callable[[], RankedLists]) -> RankedLists:
    from rankcut.data.trec import MissingQueriesWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        return fn()


def robust04(model: str) -> Callable[[Path], tuple[RankedLists, None]]:
    def load(d: Path) -> tuple[RankedLists, None]:
        from rankcut.data.features import load_precomputed_features
        from rankcut.data.trec import load_trec, read_qrels, read_run

        r = d / "robust04"
        run = {**read_run(r / "runs" / f"{model}.train.run"), **read_run(r / "runs" / f"{model}.test.run")}
        lists = _quiet(lambda: load_trec(run, read_qrels(r / "qrels.robust04.positives.txt"), missing="keep"))
        parts = []
        for split in ("train", "test"):
            qids = list(read_run(r / "runs" / f"{model}.{split}.run"))
            parts.append(
                load_precomputed_features(lists.subset(qids), r / "features" / f"{model}.{split}.tsv")
            )
        return _merge(lists, parts), None

    return load


def robust04_split(model: str) -> Callable[[Path], tuple[RankedLists, RankedLists]]:
    """The given train/test split (190/50 BM25, 193/50 DRMM queries), for the figures quoted from
    other implementations on these very test lists."""

    def load(d: Path) -> tuple[RankedLists, RankedLists]:
        lists, _ = robust04(model)(d)
        from rankcut.data.trec import read_run

        parts = [list(read_run(d / "robust04" / "runs" / f"{model}.{s}.run")) for s in ("train", "test")]
        return lists.subset(parts[0]), lists.subset(parts[1])

    return load


def _merge(lists: RankedLists, parts: Sequence[RankedLists]) -> RankedLists:
    """``lists`` with the feature columns of ``parts`` (which split its queries)."""
    names = parts[0].feature_names
    values = np.zeros((len(lists), lists.max_len, len(names)))
    row = {q: i for i, q in enumerate(lists.qids)}
    for part in parts:
        assert part.features is not None and part.feature_names == names
        for j, q in enumerate(part.qids):
            values[row[q], : part.max_len] = part.features[j]
    return lists.with_features(values, names)


def trec_dl(train_year: str, test_year: str) -> Callable[[Path], tuple[RankedLists, RankedLists]]:
    def load(d: Path) -> tuple[RankedLists, RankedLists]:
        from rankcut.data.features import extract_features
        from rankcut.data.texts import read_texts_jsonl
        from rankcut.data.trec import load_trec

        t = d / "trec-dl"
        out = []
        for year in (train_year, test_year):
            run, qrels = t / "runs" / f"bm25.{year}.run", t / f"qrels.{year}-passage.txt"
            lists = _quiet(partial(load_trec, run, qrels, threshold=2))
            texts = read_texts_jsonl(t / "texts" / f"bm25.{year}.jsonl")
            out.append(extract_features(lists, texts, progress=False))
        return out[0], out[1]

    return load


SETTINGS = {
    s.key: s
    for s in (
        Setting(
            "robust04-bm25",
            "Robust04 BM25 top-300, 5-fold cross-validation over all 240 queries",
            robust04("bm25"),
        ),
        Setting(
            "robust04-drmm",
            "Robust04 DRMM top-300, 5-fold cross-validation over all 243 queries",
            robust04("drmm"),
        ),
        Setting(
            "robust04-bm25-split",
            "Robust04 BM25 top-300, the given split: trained on 190 queries, tested on 50",
            robust04_split("bm25"),
        ),
        Setting(
            "robust04-drmm-split",
            "Robust04 DRMM top-300, the given split: trained on 193 queries, tested on 50",
            robust04_split("drmm"),
        ),
        Setting(
            "dl19-dl20",
            "TREC DL passage BM25 top-100 (relevance ≥ 2), trained on 2019, tested on 2020",
            trec_dl("dl19", "dl20"),
        ),
        Setting(
            "dl20-dl19",
            "TREC DL passage BM25 top-100 (relevance ≥ 2), trained on 2020, tested on 2019",
            trec_dl("dl20", "dl19"),
        ),
    )
}


def folds_of(
    lists: RankedLists, test: RankedLists | None, n_folds: int, seed: int
) -> list[tuple[RankedLists, RankedLists]]:
    """(train, test) per fold: seeded k-fold over ``lists`` as ``evaluate_cutters`` draws them, or
    the one given train/test pair."""
    if test is not None:
        return [(lists, test)]
    order = np.random.default_rng(seed).permutation(len(lists))
    out = []
    for part in np.array_split(order, n_folds):
        held = set(part.tolist())
        out.append(
            (
                lists.subset([q for i, q in enumerate(lists.qids) if i not in held]),
                lists.subset([lists.qids[i] for i in sorted(held)]),
            )
        )
    return out


def blind(lists: RankedLists) -> RankedLists:
    """``lists`` without their judgements: what a cutter sees at test time."""
    from dataclasses import replace

    return replace(lists, gains=None, n_relevant=None)


# ------------------------------------------------------------------------------------------ runs
def _median_speed(cutter: Any, test: RankedLists, repeats: int = 5) -> float | None:
    """Median lists per second of ``cutter.predict`` on ``test`` (None for non-neural cutters)."""
    if not hasattr(cutter, "history_"):
        return None
    cutter.predict(test)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        cutter.predict(test)
        times.append(time.perf_counter() - start)
    return len(test) / float(np.median(times))


def run_unit(
    method: str, metric: str, precision: str, train: RankedLists, test: RankedLists
) -> dict[str, Any]:
    """Fit one method for one metric on ``train``; its cuts and scores on ``test``."""
    cutter = METHODS[method](metric, precision)
    start = time.perf_counter()
    if cutter.requires_fit():
        cutter.fit(train)
    fit_seconds = time.perf_counter() - start
    cuts = cutter.predict(test if method == "oracle" else blind(test))
    out: dict[str, Any] = {
        "qids": list(test.qids),
        "cuts": cuts.tolist(),
        "scores": {m: metrics.score_at(test, cuts, m).tolist() for m in METRICS},
        "fit_seconds": fit_seconds,
    }
    if hasattr(cutter, "history_"):
        out.update(
            epochs=len(cutter.history_),
            best_epoch=cutter.best_epoch_,
            val_metric=cutter.val_metric_,
            epoch_seconds=[e["seconds"] for e in cutter.history_],
            val_curve=[e["val_metric"] for e in cutter.history_],
            lists_per_second=_median_speed(cutter, blind(test)),
        )
    elif hasattr(cutter, "k_"):
        out["k"] = int(cutter.k_)
    return out


def run_rc(precision: str, train: RankedLists, test: RankedLists) -> dict[str, Any]:
    """Recall-constrained AttnCut, one fit serving every σ (its rule reads σ at prediction)."""
    cutter = AttnCutRC(metric="f1", precision=precision)
    start = time.perf_counter()
    cutter.fit(train)
    out: dict[str, Any] = {
        "qids": list(test.qids),
        "fit_seconds": time.perf_counter() - start,
        "epoch_seconds": [e["seconds"] for e in cutter.history_ + cutter.recall_history_],
        "sigma": {},
    }
    for sigma in SIGMAS:
        cutter.sigma = sigma
        cuts = cutter.predict(blind(test))
        out["sigma"][str(sigma)] = {
            "cuts": cuts.tolist(),
            "scores": {m: metrics.score_at(test, cuts, m).tolist() for m in METRICS},
            "recall": metrics.score_at(test, cuts, "recall").tolist(),
        }
    out["lists_per_second"] = _median_speed(cutter, blind(test))
    return out


def cached(path: Path, fresh: bool, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    if path.exists() and not fresh:
        return json.loads(path.read_text())
    result = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    tmp.replace(path)  # a killed run never leaves half a result
    return result


# ------------------------------------------------------------------------------------------ tables
def _collect(units: list[dict[str, Any]], order: Sequence[str]) -> dict[str, Any]:
    """Fold results → per-query arrays in the order of ``order`` (the query ids)."""
    pos = {q: i for i, q in enumerate(order)}
    cuts = np.zeros(len(order), dtype=np.int64)
    scores = {m: np.zeros(len(order)) for m in METRICS}
    for u in units:
        idx = [pos[q] for q in u["qids"]]
        cuts[idx] = u["cuts"]
        for m in METRICS:
            scores[m][idx] = u["scores"][m]
    return {"cuts": cuts, "scores": scores}


def table(setting: Setting, results: dict[str, dict[str, list[dict[str, Any]]]], qids: Sequence[str]) -> str:
    rows = {name: {m: _collect(results[name][m], qids) for m in METRICS} for name in results}
    tests = {}
    if BASELINE in rows:
        for m in METRICS:
            compared = {n: rows[n][m]["scores"][m] for n in rows if n != "oracle"}
            if len(compared) > 1:
                tests[m] = paired_tests(compared, BASELINE, test="wilcoxon")
    oracle_f1 = rows["oracle"]["f1"]["scores"]["f1"].mean() if "oracle" in rows else None
    lines = [
        f"### {setting.title}",
        "",
        f"{len(qids)} test queries. ± is the standard deviation over queries; † / ‡ significantly better / "
        f"worse than BiCut (Wilcoxon signed-rank, two-sided, Holm-adjusted, p ≤ 0.05); "
        "distinct k and k = 1 share: of the F1 cut / of the DCG cut.",
        "",
        "| Method | F1@k | of Oracle | k | DCG@k | k | distinct k | k = 1 share |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, per in rows.items():
        cells = [name.replace("attncut", "AttnCut").replace("bicut", "BiCut").replace("choppy", "Choppy")]
        for m in METRICS:
            s = per[m]["scores"][m]
            t = tests.get(m, {}).get(name)
            mark = "" if t is None or not t.significant else ("†" if t.direction == "better" else "‡")
            cells.append(f"{s.mean():.4f} ± {s.std():.3f}{mark}")
            if m == "f1":
                cells.append("" if oracle_f1 is None else f"{s.mean() / oracle_f1:.3f}")
            cells.append(f"{per[m]['cuts'].mean():.1f}")
        k1, k2 = per["f1"]["cuts"], per["dcg"]["cuts"]
        cells += [
            f"{len(set(k1.tolist()))} / {len(set(k2.tolist()))}",
            f"{(k1 == 1).mean():.2f} / {(k2 == 1).mean():.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def paper_convention_table(setting: Setting, results: dict[str, dict[str, list[dict[str, Any]]]],
                           test: RankedLists) -> str:
    """The F1 cuts of a given-split setting scored as the paper's Table 3 scores them: query 672
    (no relevant document) dropped and recall over all judged relevant documents, under which the
    Oracle and Fixed-k rows reproduce the paper's (docs/results-baselines.md). The cuts are the
    same; only the score changes (the cutters were trained for F1 with recall inside the list)."""
    assert test.n_relevant is not None
    keep = [q for q, n in zip(test.qids, test.n_relevant, strict=True) if n > 0]
    lists = test.subset(keep)
    best = metrics.oracle_cuts(lists, "f1", recall_base="judged")
    oracle = float(metrics.score_at(lists, best, "f1", recall_base="judged").mean())
    lines = [
        f"### The paper's convention — {setting.title}",
        "",
        f"The F1 cuts above, scored on the {len(keep)} test queries with a relevant document, recall over "
        "all judged relevant documents (the convention of the paper's Table 3). Oracle: the best F1 "
        "cut under this convention.",
        "",
        "| Method | F1@k | of Oracle |",
        "| --- | --- | --- |",
        f"| oracle | {oracle:.4f} | 1.000 |",
    ]
    for name, per in results.items():
        if name == "oracle":
            continue
        cut = dict(zip(per["f1"][0]["qids"], per["f1"][0]["cuts"], strict=True))
        f1 = metrics.score_at(lists, np.array([cut[q] for q in keep]), "f1", recall_base="judged").mean()
        lines.append(f"| {name} | {f1:.4f} | {f1 / oracle:.3f} |")
    return "\n".join(lines) + "\n"


def rc_table(
    setting: Setting, units: list[dict[str, Any]], attncut: list[dict[str, Any]] | None, lists: RankedLists
) -> str:
    qids = [q for u in units for q in u["qids"]]
    test = lists.subset(qids)
    f1_curve = metrics.curves(test, "f1")
    recall_curve = metrics.curves(test, "recall")
    base = _collect(attncut, qids) if attncut else None
    lines = [
        f"### Recall-constrained AttnCut — {setting.title}",
        "",
        "Queries meeting the constraint: R@k ≥ σ (recall inside the list, Eq. 7). Oracle under σ: the best "
        "F1 among the cuts with R@k ≥ σ.",
        "",
        "| σ | AttnCut-RC F1@k | k | meets σ | AttnCut F1@k | meets σ | Oracle under σ |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for sigma in SIGMAS:
        f1 = np.concatenate([u["sigma"][str(sigma)]["scores"]["f1"] for u in units])
        rec = np.concatenate([u["sigma"][str(sigma)]["recall"] for u in units])
        k = np.concatenate([u["sigma"][str(sigma)]["cuts"] for u in units])
        allowed = np.where(np.nan_to_num(recall_curve, nan=-1) >= sigma, f1_curve, -np.inf)
        best = np.nan_to_num(allowed.max(axis=1), neginf=0.0)
        cells = [
            f"{sigma:g}",
            f"{f1.mean():.4f}",
            f"{k.mean():.1f}",
            f"{int((rec >= sigma).sum())}/{len(rec)}",
        ]
        if base is not None:
            rec_base = metrics.score_at(test, base["cuts"], "recall")
            cells += [
                f"{base['scores']['f1'].mean():.4f}",
                f"{int((rec_base >= sigma).sum())}/{len(rec_base)}",
            ]
        else:
            cells += ["", ""]
        cells.append(f"{best.mean():.4f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def summary_table(all_results: dict[str, dict[str, dict[str, list[dict[str, Any]]]]],
                  qids: dict[str, list[str]]) -> str:
    """Where each learned cutter lands against the issue's bars, F1 only: its share of Oracle F1,
    its ratio to Greedy-k and the Holm-adjusted Wilcoxon p-value against BiCut (the tests of the
    setting's table). Every cutter is listed: picking the best here would be reading the test set."""
    lines = [
        "### Against the bars (F1@k)",
        "",
        "Share of Oracle F1 (bar: ≥ 0.80), ratio to Greedy-k F1 (bar: ≥ 1.10), and the Holm-adjusted "
        "two-sided Wilcoxon p-value against BiCut with the direction (bar: significantly better).",
        "",
        "| Setting | Model | F1@k | of Oracle | of Greedy-k | p vs BiCut |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for key, results in all_results.items():
        needed = {"oracle", "greedy-k", BASELINE}
        if not needed <= set(results):
            continue
        f1 = {n: _collect(results[n]["f1"], qids[key])["scores"]["f1"] for n in results}
        tests = paired_tests({n: v for n, v in f1.items() if n != "oracle"}, BASELINE, test="wilcoxon")
        for name, values in f1.items():
            if not any("val_curve" in u for u in results[name]["f1"]):
                continue
            t = tests.get(name)
            p = "" if t is None else f"{t.p_adjusted:.3f} ({t.direction})"
            lines.append(
                f"| {key} | {name} | {values.mean():.4f} | {values.mean() / f1['oracle'].mean():.3f} | "
                f"{values.mean() / f1['greedy-k'].mean():.3f} | {p} |"
            )
    return "\n".join(lines) + "\n"


def ablation_table(all_results: dict[str, dict[str, dict[str, list[dict[str, Any]]]]],
                   qids: dict[str, list[str]]) -> str:
    """AttnCut with and without the per-list score z-score (``score_z``, an input of ours), F1@k,
    two-sided Wilcoxon signed-rank test on the per-query differences."""
    lines = [
        f"### Ablation: {ABLATION} against attncut (F1@k)",
        "",
        "| Setting | attncut | without score_z | difference | Wilcoxon p |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key, results in all_results.items():
        if not {"attncut", ABLATION} <= set(results):
            continue
        f1 = {n: _collect(results[n]["f1"], qids[key])["scores"]["f1"] for n in ("attncut", ABLATION)}
        t = paired_tests(f1, ABLATION, test="wilcoxon")["attncut"]
        a, b = f1["attncut"].mean(), f1[ABLATION].mean()
        lines.append(f"| {key} | {a:.4f} | {b:.4f} | {a - b:+.4f} | {t.p_value:.3f} |")
    return "\n".join(lines) + "\n"


def training_table(all_results: dict[str, dict[str, dict[str, list[dict[str, Any]]]]]) -> str:
    """How the neural cutters trained: the epoch chosen on validation, and the validation metric of
    the first and the chosen epoch (a model stuck at k = 1 shows a flat start)."""
    lines = [
        "### Training",
        "",
        "Per model and metric, over the folds: the epoch chosen on the validation queries (median, range), "
        "the epochs run, and the mean validation metric after the first epoch and at the chosen one.",
        "",
        "| Setting | Model | metric | chosen epoch (median, range) | epochs run | validation, epoch 1 "
        "| validation, chosen |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, results in all_results.items():
        for name, per in results.items():
            for m in METRICS:
                units = [u for u in per[m] if "val_curve" in u]
                if not units:
                    continue
                best = [u["best_epoch"] for u in units]
                first = np.mean([u["val_curve"][0] for u in units])
                chosen = np.mean([u["val_metric"] for u in units])
                lines.append(
                    f"| {key} | {name} | {m} | {np.median(best):.0f} ({min(best)}–{max(best)}) | "
                    f"{np.median([u['epochs'] for u in units]):.0f} | {first:.4f} | {chosen:.4f} |"
                )
    return "\n".join(lines) + "\n"


def speed_table(
    all_results: dict[str, dict[str, dict[str, list[dict[str, Any]]]]],
    rc: dict[str, list[dict[str, Any]]],
    threads: int,
    precision: str,
) -> str:
    lines = [
        "### Speed",
        "",
        "Median over every training epoch of every fold and metric (an epoch: one pass over the "
        "training lists of the fold, ~80% of them, and one validation pass), and median lists per second "
        f"of `predict` on the test fold (median of 5 calls). torch threads = {threads}, "
        f"precision {precision}.",
        "",
        "| Setting | Model | s / epoch | epochs run (median) | lists / s |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key, results in all_results.items():
        for name, per in results.items():
            units = [u for m in METRICS for u in per[m] if "epoch_seconds" in u]
            if not units:
                continue
            sec = np.median([s for u in units for s in u["epoch_seconds"]])
            epochs = np.median([u["epochs"] for u in units])
            lps = np.median([u["lists_per_second"] for u in units])
            lines.append(f"| {key} | {name} | {sec:.3f} | {epochs:.0f} | {lps:.0f} |")
        if rc.get(key):
            sec = np.median([s for u in rc[key] for s in u["epoch_seconds"]])
            lps = np.median([u["lists_per_second"] for u in rc[key]])
            lines.append(f"| {key} | {RC} (two networks) | {sec:.3f} | | {lps:.0f} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ main
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--datasets", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
    )
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--methods", default=",".join([*METHODS, RC]))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=Path(".bench-cache") / "truncation")
    parser.add_argument(
        "--precision",
        default="bf16",
        choices=("fp32", "bf16", "auto"),
        help="of the neural cutters (bf16: twice as fast here, the same validation F1; docs/benchmarks.md)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: on a 2-core machine shared with anything else, "
        "2 threads were measured many times slower; docs/benchmarks.md)",
    )
    parser.add_argument("--fresh", action="store_true", help="recompute cached results")
    parser.add_argument("--report-only", action="store_true", help="tables from the cache; compute nothing")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    methods = [m.strip() for m in args.methods.split(",")]
    unknown = [m for m in methods if m not in METHODS and m != RC]
    if unknown:
        parser.error(f"unknown methods {unknown}; known: {[*METHODS, RC]}")
    out: list[str] = []
    all_results: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {}
    rc_results: dict[str, list[dict[str, Any]]] = {}
    setting_qids: dict[str, list[str]] = {}
    for key in args.settings.split(","):
        setting = SETTINGS[key.strip()]
        lists, test = setting.load(args.datasets)
        folds = folds_of(lists, test, args.folds, args.seed)
        qids = [q for _, t in folds for q in t.qids]
        results: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for name in [m for m in methods if m != RC]:
            results[name] = {}
            for metric in METRICS:
                units = []
                for i, (tr, te) in enumerate(folds):
                    path = (
                        args.cache / key / name.replace(" ", "_") / metric / f"fold{i}-seed{args.seed}.json"
                    )
                    if args.report_only and not path.exists():
                        break
                    start = time.perf_counter()
                    units.append(
                        cached(
                            path,
                            args.fresh,
                            partial(run_unit, name, metric, args.precision, tr, te),
                        )
                    )
                    if time.perf_counter() - start > 1:
                        print(
                            f"[{key}] {name} {metric} fold {i}: {time.perf_counter() - start:.0f} s",
                            file=sys.stderr,
                        )
                if len(units) == len(folds):
                    results[name][metric] = units
            if len(results[name]) < len(METRICS):
                del results[name]
        all_results[key] = results
        setting_qids[key] = qids
        first = len(out)
        out.append(table(setting, results, qids))
        if test is not None and key.startswith("robust04"):
            out.append(paper_convention_table(setting, results, test))
        if RC in methods:
            units = []
            for i, (tr, te) in enumerate(folds):
                path = args.cache / key / RC / f"fold{i}-seed{args.seed}-{args.precision}.json"
                if args.report_only and not path.exists():
                    break
                units.append(cached(path, args.fresh, partial(run_rc, args.precision, tr, te)))
                print(f"[{key}] {RC} fold {i} done", file=sys.stderr)
            if len(units) == len(folds):
                rc_results[key] = units
                attn = results.get("attncut", {}).get("f1")
                out.append(rc_table(setting, units, attn, test if test is not None else lists))
        print("\n".join(out[first:]), flush=True)
    out.append(summary_table(all_results, setting_qids))
    out.append(ablation_table(all_results, setting_qids))
    out.append(training_table(all_results))
    out.append(speed_table(all_results, rc_results, args.threads, args.precision))
    text = "\n".join(out)
    print(out[-1])
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
