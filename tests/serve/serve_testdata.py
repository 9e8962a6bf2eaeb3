"""A small sequential audit with texts (query and document), for the page's tests (imported by name;
the ``small`` fixture is in conftest.py)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from rankcut.audit import workflow as wf

Item = tuple[str, str]


@dataclass
class SmallAudit:
    folder: Path
    relevant: set[Item]  # the truth the tests answer with


def make_audit(tmp_path: Path, *, design: str = "sequential", queries: int = 2, depth: int = 12,
               cut: int = 4) -> SmallAudit:
    """``queries`` lists of ``depth`` documents, cut at ``cut``; the first three of each list and
    none after the cut are relevant, so the audit certifies after a short run of non-relevant ones."""
    run, cut_run, texts = tmp_path / "run.txt", tmp_path / "cut.run", tmp_path / "texts.jsonl"
    relevant: set[Item] = set()
    with open(run, "w") as f, open(cut_run, "w") as c, open(texts, "w") as t:
        for q in range(queries):
            for r in range(depth):
                line = f"q{q} Q0 d{q}-{r} {r + 1} {100 - r} t\n"
                f.write(line)
                if r < cut:
                    c.write(line)
                if r < 3:
                    relevant.add((f"q{q}", f"d{q}-{r}"))
                text = f"Document {r} of topic {q}." + (" <script>alert('x')</script>" if r == 0 else "")
                t.write(json.dumps({"query_id": f"q{q}", "query": f"what is topic {q}?",
                                    "doc_id": f"d{q}-{r}", "text": text}) + "\n")
    folder = tmp_path / "audit"
    if design == "sequential":
        wf.freeze(folder, run=run, cut=cut_run, design="sequential", target_recall=0.5, delta=0.2, seed=3,
                  texts=texts)
        wf.plan(folder)
        wf.sample(folder)
    else:
        wf.freeze(folder, run=run, cut=cut_run, design=design, max_missed=5, seed=3, texts=texts)
        wf.plan(folder)
        wf.sample(folder, excluded=4, allow_underpowered=True)   # a small sample to label by hand
    return SmallAudit(folder, relevant)


def flip_with_history(folder: Path, doc_id: str) -> None:
    """Flip a label in the store and in its history row together, as an edit by hand that keeps the
    store consistent (certify refuses it after an opening: Assumption 1)."""
    with sqlite3.connect(folder / "labels.sqlite") as con:
        for table, column in (("labels", "label"), ("events", "new_label")):
            con.execute(f"UPDATE {table} SET {column} = 1 - {column} WHERE doc_id = ?", (doc_id,))
    con.close()
