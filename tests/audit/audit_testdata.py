"""Helpers for the audit workflow tests (imported by them): a synthetic run with known relevance
and the steps the tests repeat; the ``data`` fixture of conftest.py builds a ``Data``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rankcut.audit import workflow as wf
from rankcut.audit.designs.interleaved import REVIEW_FILE


class Data:
    """``run.txt`` (Q lists of depth L), ``qrels.txt`` and ``cut.run`` (a per-query cut) in a folder."""

    def __init__(self, folder: Path, *, queries: int = 12, depth: int = 40, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.folder = folder
        self.run, self.qrels, self.cut = folder / "run.txt", folder / "qrels.txt", folder / "cut.run"
        self.relevant: set[tuple[str, str]] = set()
        self.cuts: dict[str, int] = {}
        self.lists: dict[str, list[str]] = {}
        with open(self.run, "w") as f, open(self.qrels, "w") as g, open(self.cut, "w") as c:
            for q in range(queries):
                qid = f"q{q}"
                k = int(rng.integers(4, 20))
                self.cuts[qid] = k
                self.lists[qid] = []
                for r in range(depth):
                    doc = f"d{q}-{r}"
                    self.lists[qid].append(doc)
                    line = f"{qid} Q0 {doc} {r + 1} {100 - r}.25 t\n"
                    f.write(line)
                    if r < k:
                        c.write(line)
                    if rng.random() < (0.5 if r < 8 else 0.06):
                        g.write(f"{qid} 0 {doc} 1\n")
                        self.relevant.add((qid, doc))

    def truth(self, cuts: dict[str, int] | None = None) -> tuple[int, int]:
        """``(M0, M1)``: relevant items excluded and kept by ``cuts`` (default: the cut run)."""
        cuts = self.cuts if cuts is None else cuts
        kept = {(q, d) for q, docs in self.lists.items() for d in docs[: cuts[q]]}
        m1 = len(self.relevant & kept)
        return len(self.relevant) - m1, m1

    def write_cut(self, name: str, depth: int) -> Path:
        path = self.folder / name
        with open(self.run) as f, open(path, "w") as out:
            for line in f:
                if int(line.split()[3]) <= depth:
                    out.write(line)
        return path


def _rows(audit: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (audit / "sample.jsonl").read_text().splitlines()]


def _run_all(audit: Path, data: Data, **sample_sizes: Any) -> wf.CertifyResult:
    wf.plan(audit)
    wf.sample(audit, **sample_sizes, allow_underpowered=True)   # sizes chosen to exercise certify
    wf.label(audit, qrels=data.qrels)
    return wf.certify(audit)


def _frozen(folder: Path, data: Data, name: str = "A", *, seed: int = 7, **kw: Any) -> Path:
    """An interleaved audit of ``data``'s run at recall 0.8, frozen, planned and sampled."""
    audit = folder / name
    wf.freeze(audit, run=data.run, design="interleaved", target_recall=0.8, seed=seed, **kw)
    wf.plan(audit)
    wf.sample(audit)
    return audit


def _truth(data: Data, audit: Path) -> tuple[np.ndarray, np.ndarray]:
    """The ranking's 0/1 labels and the frozen audit order (ranks, from 0), from sample.jsonl."""
    rows = _rows(audit)
    return _y(data, rows), np.argsort([r["audit"] for r in rows])


def _steps(audit: Path) -> list[dict[str, Any]]:
    """The interleaved review's recorded steps (review.jsonl)."""
    return [json.loads(line) for line in (audit / REVIEW_FILE).read_text().splitlines()]


def _y(data: Data, rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([(r["query_id"], r["doc_id"]) in data.relevant for r in rows], dtype=np.int64)


def write_lists(folder: Path, *, queries: int = 3, depth: int = 15, cut: int = 4,
                grade: Callable[[int], int | None] = lambda rank: int(rank % 5 == 0)
                ) -> tuple[Path, Path, Path]:
    """``run.txt`` (``queries`` lists of ``depth`` documents ``d{q}-{rank}``), ``cut.run`` (the top
    ``cut`` of each) and ``qrels.txt`` (the grade of each rank; None: unjudged) in ``folder``."""
    run, cut_run, qrels = folder / "run.txt", folder / "cut.run", folder / "qrels.txt"
    with open(run, "w") as r, open(cut_run, "w") as c, open(qrels, "w") as j:
        for q in range(queries):
            for rank in range(depth):
                line = f"q{q} Q0 d{q}-{rank} {rank + 1} {50 - rank}.5 t\n"
                r.write(line)
                if rank < cut:
                    c.write(line)
                if (g := grade(rank)) is not None:
                    j.write(f"q{q} 0 d{q}-{rank} {g}\n")
    return run, cut_run, qrels
