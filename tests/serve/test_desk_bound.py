"""The sequential bound in the page's header is kept between answers (issue 18's latency bar): an
answer evaluates the confidence sequence at the prefix it adds only, and the header stays the one a
fresh desk — and certify — gives, whatever the labels did in between (more, taken back, changed
before an opening, labelled from the command line)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from serve_testdata import SmallAudit, flip_with_history

from rankcut.audit import workflow as wf
from rankcut.audit.labels import LabelStore
from rankcut.certify.sequential import SequentialAudit
from rankcut.serve.desks import open_desk


def _label(folder: Path, item: tuple[str, str], label: int, overwrite: bool = False) -> None:
    with LabelStore(folder / "labels.sqlite") as store:   # as the command line records it
        store.record([item], [label], "cli", overwrite=overwrite)


def test_each_answer_evaluates_only_its_prefix_and_the_header_is_a_fresh_desks(
        small: SmallAudit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    desk = open_desk(small.folder)
    for item in desk.cut:
        _label(small.folder, item, int(item in small.relevant))
    evaluated: list[tuple[int, int | None]] = []   # (labels, prefixes reused from the last answer)
    running_state = SequentialAudit.running_state

    def spy(self: SequentialAudit, labels: Any, previous: Any = None, **kw: Any) -> Any:
        evaluated.append((len(labels), None if previous is None else previous.upper.size))
        return running_state(self, labels, previous, **kw)

    monkeypatch.setattr(SequentialAudit, "running_state", spy)
    order = desk.audit_order
    steps = [("label", 0, 0), ("label", 1, 0), ("label", 2, 1), ("label", 3, 0), ("undo", 3, 0),
             ("change", 2, 0), ("label", 3, 0), ("label", 4, 0)]
    for step, (what, i, y) in enumerate(steps):
        if what == "undo":
            with LabelStore(small.folder / "labels.sqlite") as store:
                store.undo(order[i], y, "cli")
        else:
            _label(small.folder, order[i], y, overwrite=what == "change")
        shown = desk.standing()
        assert shown.bound == open_desk(small.folder).standing().bound and shown.verdict is not None
        copy = tmp_path / f"copy{step}"
        shutil.copytree(small.folder, copy)
        assert shown.verdict == wf.certify(copy).content["verdict"]["text"], step
    # the first header computed all prefixes; each later one reused the last answer's state
    mine = evaluated[::3]   # each step: this desk's call, then the fresh desk's and certify's
    assert [n for n, _ in mine] == [1, 2, 3, 4, 3, 3, 4, 5]
    assert [kept for _, kept in mine] == [None, 2, 3, 4, 5, 4, 4, 5]
    assert len(evaluated) == 3 * len(steps)
    assert all(kept is None for _, kept in evaluated[1::3] + evaluated[2::3])


def test_labels_edited_with_their_history_after_certify_are_not_shown_as_met(small: SmallAudit) -> None:
    """As for the interleaved review: the header showed the edited labels' bound and verdict."""
    desk = open_desk(small.folder)
    for item in desk.cut + desk.audit_order[:4]:
        _label(small.folder, item, int(item in small.relevant))
    wf.certify(small.folder)
    assert open_desk(small.folder).standing().can_certify
    flip_with_history(small.folder, desk.audit_order[0][1])
    shown = open_desk(small.folder).standing()
    assert shown.verdict == wf.status(small.folder)["labels_changed"]
    assert shown.verdict.startswith("certifying is refused: the labels opened for certification")
    assert shown.met is False and not shown.can_certify


def test_the_base_desk_refuses_a_design_whose_page_is_its_own(small: SmallAudit) -> None:
    """Desk(folder) of a sequential audit showed no bound and never offered certify (a benchmark
    built it so, after each design's page became a desk of its own): it names open_desk."""
    from rankcut.serve.desk import Desk

    with pytest.raises(TypeError, match="the sequential design's page is a desk of its own: open the folder "
                                        "with rankcut.serve.desks.open_desk"):
        Desk(small.folder)
    assert type(open_desk(small.folder)).__name__ == "SequentialDesk"
