"""The query-id checks of the evaluation, which run in one pass over the ids (they were O(Q²)):
every id listed more than once is named, once and sorted; ``seen_queries`` takes any sequence."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rankcut.data.lists import Posting, RankedLists
from rankcut.evaluation import evaluate_cutters, read_query_ids, seen_queries


def lists(n: int) -> RankedLists:
    run = {f"q{i}": [Posting(f"d{j}", float(4 - j), j + 1) for j in range(4)] for i in range(n)}
    return RankedLists.from_postings(run, {f"q{i}": {"d0": 1} for i in range(n)})


def test_a_split_file_names_each_repeated_id_once_sorted(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    path.write_text(json.dumps(["q3", "q1", "q3", "q2", "q1", "q3"]))
    with pytest.raises(ValueError, match=r"split.json: query ids listed twice: 'q1', 'q3'$"):
        read_query_ids(path)


def test_train_ids_name_each_repeated_id_once_sorted() -> None:
    with pytest.raises(ValueError, match=r"^train: query ids listed twice: 'q1', 'q4'$"):
        evaluate_cutters(["fixed-k:2"], lists(6), train=["q4", "q1", "q4", "q0", "q1"])


def test_seen_queries_with_a_tuple_of_test_queries() -> None:
    cutter: Any = SimpleNamespace(train_qids_=["q1", "q2", "q5"], val_qids_=("q3",))
    assert seen_queries(cutter, lists(6), test_queries=("q2", "q3", "q4")) == ["q2", "q3"]
    assert seen_queries(cutter, lists(6), train=["q1"]) == ["q2", "q3", "q5"]
