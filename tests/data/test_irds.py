"""Qrels from ir_datasets, tested offline with a stand-in module (never downloads)."""

import io
import sys
import types
from collections import namedtuple

import pytest

from rankcut.data.irds import load_irds, read_irds_qrels
from rankcut.data.lists import GradedQrelsWarning

Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance", "iteration"])
RUN = "1 Q0 a 1 3.0 s\n1 Q0 b 2 2.0 s\n2 Q0 c 1 1.0 s\n"


class FakeDataset:
    def __init__(self, qrels):
        self._qrels = qrels

    def has_qrels(self):
        return self._qrels is not None

    def qrels_iter(self):
        yield from self._qrels


@pytest.fixture
def fake_irds(monkeypatch):
    """Install a stand-in ``ir_datasets`` module whose ``load`` serves a dict of datasets."""
    datasets = {}
    module = types.ModuleType("ir_datasets")
    module.load = lambda dataset_id: datasets[dataset_id]
    monkeypatch.setitem(sys.modules, "ir_datasets", module)
    return datasets


def test_load_irds_with_graded_qrels(fake_irds):
    fake_irds["toy/judged"] = FakeDataset([Qrel("1", "b", 3, "0"), Qrel("1", "z", 2, "0"),
                                           Qrel("2", "c", 1, "0")])
    lists = load_irds("toy/judged", io.StringIO(RUN), threshold=2)
    assert lists.qids == ("1", "2")
    assert lists.gains.tolist() == [[0, 3], [1, 0]]
    assert lists.n_relevant.tolist() == [2, 0]


def test_irds_errors(fake_irds):
    fake_irds["toy/nothing"] = FakeDataset(None)
    with pytest.raises(ValueError, match="'toy/nothing' has no qrels"):
        read_irds_qrels("toy/nothing")
    fake_irds["toy/dup"] = FakeDataset([Qrel("1", "a", 1, "0"), Qrel("1", "a", 0, "0")])
    with pytest.raises(ValueError, match=r"qrels record 2: query '1', document 'a' is judged twice, "
                                         r"differently \(1, then 0\)"):
        read_irds_qrels("toy/dup")
    fake_irds["toy/same"] = FakeDataset([Qrel("1", "a", 1, "0"), Qrel("1", "a", 1, "1")])
    assert read_irds_qrels("toy/same") == {"1": {"a": 1}}
    # ir_datasets says KeyError('no-such-dataset') of an id it does not know
    with pytest.raises(ValueError, match=r"ir_datasets has no dataset 'toy/typo' \(its ids: "):
        read_irds_qrels("toy/typo")


@pytest.mark.parametrize(("module", "call", "extra"), [
    ("pandas", "rankcut.data.frames:lists_to_frame", "eval"),
    ("ir_measures", "rankcut.metrics:pm1_dcg_measure", "eval"),
])
def test_other_optional_packages_name_their_extra(monkeypatch, module, call, extra):
    """lists_to_frame and pm1_dcg_measure raised a bare ModuleNotFoundError without them."""
    import importlib

    from rankcut.data.trec import load_trec

    where, name = call.split(":")
    fn = getattr(importlib.import_module(where), name)
    lists = load_trec(io.StringIO(RUN))
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=rf"{name} needs {module}: pip install 'rankcut\[{extra}\]'"):
        fn(lists) if module == "pandas" else fn(10)


def test_missing_ir_datasets_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # makes `import ir_datasets` fail
    with pytest.raises(ImportError, match=r"pip install .rankcut\[irds\]."):
        load_irds("msmarco-passage/trec-dl-2019/judged", io.StringIO(RUN))


def test_graded_qrels_without_a_threshold_are_warned_of_at_the_callers_line(fake_irds):
    """TREC DL's path from Python: load_irds kept threshold=1, so the graded-qrels warning of
    load_trec never fired there (the review of the change)."""
    fake_irds["toy/judged"] = FakeDataset([Qrel("1", "b", 3, "0"), Qrel("2", "c", 1, "0")])
    with pytest.warns(GradedQrelsWarning, match="grade relevance up to 3") as caught:
        lists = load_irds("toy/judged", io.StringIO(RUN))
    assert lists.threshold == 1 and caught[0].filename == __file__
