"""``sample`` keeps its draws as index arrays (:class:`Draws`) and writes ``sample.jsonl`` a chunk
of draws at a time: the file is the canonical JSON of the rows it stands for, byte for byte, and
its hash is the sha256 of those bytes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from audit_testdata import write_lists

from rankcut.audit import workflow as wf
from rankcut.audit.designs import design_of
from rankcut.audit.folder import SAMPLE_ITEMS, load_audit, sample_text
from rankcut.audit.manifest import canonical_json, sha256_file
from rankcut.audit.pools import Corpus, Pools
from rankcut.audit.sampling import (
    Draws,
    draw_excluded,
    draw_included,
    excluded_part,
    included_part,
    write_draws,
)

# ids that JSON must escape or keep as they are: a quote, a backslash, non-ASCII, a tab
QIDS = ("q\"1", "q\\2", "qé3")
LISTS = (("b\td", "d"), ("x",), ("e", "ü", "c"))


def pools() -> Pools:
    return Pools(QIDS, LISTS, [1, 0, 2], Corpus.size(50))


def draws(replace: bool = False) -> Draws:
    p = pools()
    return Draws([excluded_part(p, 40, 7, replace=replace), included_part(p, 3, 8, replace=replace)])


@pytest.mark.parametrize("replace", [False, True])
def test_the_parts_draw_what_the_item_draws_draw(replace: bool) -> None:
    p, d = pools(), draws(replace)
    expected = draw_excluded(p, 40, 7, replace=replace) + draw_included(p, 3, 8, replace=replace)
    assert list(d.items()) == expected
    assert d.is_included().tolist() == [False] * 40 + [True] * 3
    assert d.n_distinct() == len(set(expected))
    twice = Draws([excluded_part(p, 30, 7, replace=True), excluded_part(p, 30, 8, replace=True)])
    assert twice.n_distinct() == len(set(twice.items()))


def test_rows_are_numbered_and_read_alike_by_index_slice_and_iteration() -> None:
    d = draws()
    rows = list(d)
    assert len(d) == len(rows) == 43
    assert [r["draw"] for r in rows] == list(range(43))
    assert {r["pool"] for r in rows[:40]} == {"excluded"} and rows[40]["pool"] == "included"
    assert all(r["member"] is None and r["stratum"] is None for r in rows)
    assert [d[i] for i in range(43)] == rows and d[-1] == rows[-1] and d[5:9] == rows[5:9]
    with pytest.raises(IndexError):
        d[43]


@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
def test_the_file_is_the_canonical_json_of_the_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   chunk: int) -> None:
    monkeypatch.setattr("rankcut.audit.sampling.CHUNK", chunk)
    d = draws(replace=True)
    path = tmp_path / "sample.jsonl"
    digest = write_draws(path, d)
    text = path.read_text(encoding="utf-8")
    assert text == sample_text(list(d)) == "".join(canonical_json(r).decode() + "\n" for r in d)
    assert [json.loads(line) for line in text.splitlines()] == list(d)
    assert digest == sha256_file(path)
    # rows of the other designs (plain dicts) are written the same way
    other = tmp_path / "rows.jsonl"
    assert write_draws(other, list(d)) == digest and other.read_bytes() == path.read_bytes()


def test_the_file_is_written_in_blocks_not_as_one_text(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rankcut.audit.sampling.CHUNK", 10)
    blocks: list[int] = []

    def spy(path: Path, data: object) -> None:
        assert not isinstance(data, bytes)
        with open(path, "wb") as f:
            for block in data:  # type: ignore[attr-defined]
                blocks.append(len(block))
                f.write(block)

    monkeypatch.setattr("rankcut.data.io.write_atomic", spy)
    write_draws(tmp_path / "sample.jsonl", draws())
    assert len(blocks) == 5  # 40 excluded draws in chunks of 10, then the 3 included


def test_the_single_designs_draw_indices_and_the_sample_is_the_rows(tmp_path: Path) -> None:
    run, cut, _ = write_lists(tmp_path)
    audit = tmp_path / "audit"
    wf.freeze(audit, run=run, cut=cut, design="two-pool", target_recall=0.5, seed=3, corpus_size=10**6)
    wf.plan(audit)
    result = wf.sample(audit, excluded=500, included=6, allow_underpowered=True)
    a = load_audit(audit)
    drawn = design_of(a).draw(a, result.sizes)
    assert isinstance(drawn, Draws) and len(drawn) == 506
    assert np.array_equal(drawn.is_included(), np.arange(506) >= 500)
    text = (audit / SAMPLE_ITEMS).read_text(encoding="utf-8")
    assert text == sample_text(list(drawn))
    assert sha256_file(audit / SAMPLE_ITEMS) == result.sample_hash
    # later steps check the sample against a fresh draw: labelling still accepts it
    assert wf.label(audit, from_file=_all_zero(audit, tmp_path)).recorded == 506


def _all_zero(audit: Path, tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in (audit / SAMPLE_ITEMS).read_text().splitlines()]
    path = tmp_path / "labels.csv"
    path.write_text("query_id,doc_id,label\n" + "".join(f"{r['query_id']},{r['doc_id']},0\n" for r in rows))
    return path
