"""``LabelStore.changes_since``: the labels written since a mark, so that a reader (the labelling
page) keeps the store's labels without reading them all again — across first labels, overwrites,
undos, other connections writing in between, and a store removed and written afresh."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.audit.labels import LabelChanges, LabelStore, StoreMark, remove_store

Item = tuple[str, str]


def _apply(held: dict[Item, int], changes: LabelChanges) -> None:
    if changes.full:
        held.clear()
    for q, d, label in changes.labels:
        if label is None:
            held.pop((q, d), None)
        else:
            held[q, d] = label


def _current(path: Path) -> dict[Item, int]:
    with LabelStore(path, create=False) as store:
        return {(q, d): y for q, d, y in store.items()}


def test_a_first_read_is_every_label_and_later_reads_only_what_changed(tmp_path: Path) -> None:
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        first = store.changes_since(None)
        assert first == LabelChanges(StoreMark(0, ""), True, [])
        store.record([("q", "a"), ("q", "b")], [1, 0], "cli")
        full = store.changes_since(None)
        assert full.full and sorted(full.labels) == [("q", "a", 1), ("q", "b", 0)]
        assert store.changes_since(full.mark) == LabelChanges(full.mark, False, [])
        with LabelStore(path) as other:   # another process: the command line
            other.record([("q", "b")], [1], "cli", overwrite=True)
            other.record([("q", "c")], [0], "serve")
            other.undo(("q", "c"), 0, "serve")
        later = store.changes_since(full.mark)
        assert not later.full and later.labels == [("q", "b", 1), ("q", "c", 0), ("q", "c", None)]
        assert later.mark.seq == full.mark.seq + 3
        # from the empty store's mark: every event since
        assert store.changes_since(first.mark).labels[:2] == [("q", "a", 1), ("q", "b", 0)]


def test_a_store_removed_and_written_afresh_is_read_in_full(tmp_path: Path) -> None:
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        store.record([("q", "a"), ("q", "b"), ("q", "c")], [1, 1, 1], "cli")
        mark = store.changes_since(None).mark
    remove_store(path)
    with LabelStore(path) as store:   # as many events as before, or more: the mark's is another one
        store.record([("q", "x"), ("q", "y"), ("q", "z"), ("q", "w")], [0, 0, 0, 0], "cli")
        again = store.changes_since(mark)
    assert again.full and sorted(again.labels) == [("q", "w", 0), ("q", "x", 0), ("q", "y", 0), ("q", "z", 0)]
    remove_store(path)
    with LabelStore(path) as store:   # fewer
        store.record([("q", "x")], [1], "cli")
        assert store.changes_since(mark) == LabelChanges(StoreMark(1, store.history()[0].recorded_at), True,
                                                         [("q", "x", 1)])


def test_a_read_only_store_gives_its_changes(tmp_path: Path) -> None:
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        store.record([("q", "a")], [1], "cli")
    with LabelStore(path, readonly=True) as store:
        assert store.changes_since(None).labels == [("q", "a", 1)]


_op = st.tuples(st.sampled_from(["label", "change", "undo", "read"]), st.integers(0, 5), st.integers(0, 1))


@settings(max_examples=40, deadline=None)
@given(st.lists(_op, max_size=30))
def test_applying_the_changes_gives_the_stores_labels(tmp_path_factory: pytest.TempPathFactory,
                                                     ops: list[tuple[str, int, int]]) -> None:
    path = tmp_path_factory.mktemp("changes") / "labels.sqlite"
    held: dict[Item, int] = {}
    mark: StoreMark | None = None
    with LabelStore(path) as reader, LabelStore(path) as writer:
        for what, i, y in ops + [("read", 0, 0)]:
            item = ("q", f"d{i}")
            have = writer.get([item]).get(item)
            if what == "read":
                changes = reader.changes_since(mark)
                _apply(held, changes)
                mark = changes.mark
                assert held == _current(path)
            elif what == "label" and have is None:
                writer.record([item], [y], "serve")
            elif what == "change" and have is not None:
                writer.record([item], [1 - have], "cli", overwrite=True)
            elif what == "undo" and have is not None and writer.history()[-1][:2] == item \
                    and writer.history()[-1].old_label is None:
                writer.undo(item, have, writer.history()[-1].source)
