"""A small sequential audit with texts (query and document), for the page's tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

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
        wf.sample(folder, excluded=4)
    return SmallAudit(folder, relevant)


@pytest.fixture
def small(tmp_path: Path) -> SmallAudit:
    return make_audit(tmp_path)
