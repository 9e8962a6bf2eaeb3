"""The cutter contract (rankcut.cutters.base) for every registered cutter, and the registry."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cutters_testdata import lists_from_labels
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankcut.cutters import (
    Cutter,
    NotFittedError,
    available_cutters,
    base,
    clone,
    cutter_class,
    make_cutter,
    register,
)
from rankcut.cutters.base import spec_forms
from rankcut.data.lists import Posting, RankedLists

BUILTIN = {"oracle", "fixed-k", "greedy-k", "distribution", "surprise"}


def varied_lists() -> RankedLists:
    """Lists of lengths 1–40 with ties, an all-equal list, and a list with no relevant document."""
    rng = np.random.default_rng(7)
    labels, scores = [], []
    for n in (1, 2, 3, 12, 25, 40, 40):
        labels.append((rng.random(n) < 0.3).astype(int).tolist())
        scores.append(sorted(np.round(rng.exponential(2.0, n), 1).tolist(), reverse=True))
    labels.append([0] * 15)
    scores.append([3.0] * 15)
    return lists_from_labels(labels, scores)


def test_builtin_cutters_registered() -> None:
    assert BUILTIN <= set(available_cutters())
    assert list(available_cutters()) == sorted(available_cutters())
    for name in BUILTIN:
        assert cutter_class(name).name == name


@pytest.mark.parametrize("name", available_cutters())
def test_contract(name: str) -> None:
    lists = varied_lists()
    cutter = make_cutter(name)
    assert cutter.fit(lists) is cutter
    cuts = cutter.predict(lists)
    assert cuts.shape == (len(lists),)
    assert cuts.dtype == np.int64
    assert np.all(cuts >= 1) and np.all(cuts <= lists.lengths)
    assert np.array_equal(cutter.fit_predict(lists), cuts)
    # learned attributes end in "_"; __init__ stored exactly the keyword arguments
    params = cutter.get_params()
    assert set(params) <= set(vars(cutter))
    assert all(k.endswith("_") for k in set(vars(cutter)) - set(params))
    # clone: same parameters, unfitted, same predictions once fitted again
    twin = clone(cutter)
    assert type(twin) is type(cutter) and twin.get_params() == params
    assert not twin.is_fitted()
    assert np.array_equal(twin.fit(lists).predict(lists), cuts)
    assert name in repr(cutter) or type(cutter).__name__ in repr(cutter)


@pytest.mark.parametrize("name", available_cutters())
def test_predict_before_fit(name: str) -> None:
    lists = varied_lists()
    cutter = make_cutter(name)
    if cutter.requires_fit():
        with pytest.raises(NotFittedError, match="not fitted"):
            cutter.predict(lists)
    else:
        assert cutter.predict(lists).shape == (len(lists),)


@pytest.mark.parametrize("name", available_cutters())
def test_predict_rejects_non_lists(name: str) -> None:
    with pytest.raises(ValueError, match="RankedLists"):
        make_cutter(name).fit([[1.0, 0.5]])  # type: ignore[arg-type]


@st.composite
def random_lists(draw: st.DrawFn) -> RankedLists:
    n_q = draw(st.integers(1, 5))
    run, qrels = {}, {}
    for q in range(n_q):
        n = draw(st.integers(1, 30))
        scores = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))  # many ties
        rel = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        run[f"q{q}"] = [Posting(f"d{j}", float(s), j + 1) for j, s in enumerate(scores)]
        qrels[f"q{q}"] = {f"d{j}": int(r) for j, r in enumerate(rel)}
    return RankedLists.from_postings(run, qrels)


@pytest.mark.parametrize("name", sorted(BUILTIN))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lists=random_lists())
def test_contract_on_random_lists(name: str, lists: RankedLists) -> None:
    cuts = make_cutter(name).fit(lists).predict(lists)
    assert cuts.dtype == np.int64 and cuts.shape == (len(lists),)
    assert np.all((cuts >= 1) & (cuts <= lists.lengths))


# --------------------------------------------------------------------------- registry
def test_make_cutter_parses_specs() -> None:
    assert make_cutter("fixed-k:20").get_params() == {"k": 20}
    assert make_cutter(" fixed-k : 7 ").get_params() == {"k": 7}
    assert make_cutter("greedy-k:dcg").get_params()["metric"] == "dcg"
    assert make_cutter("greedy-k").get_params()["metric"] == "f1"
    assert make_cutter("greedy-k:f1", recall_base="judged").get_params()["recall_base"] == "judged"
    assert make_cutter("oracle:precision", allow_zero=True).get_params() == {
        "metric": "precision", "recall_base": "list", "allow_zero": True,
    }
    assert make_cutter("surprise:2.5").get_params()["threshold"] == 2.5
    # the keyword form --help shows (fixed-k[:k=10]) works as typed (a stop-56 walk: it was refused)
    assert make_cutter("fixed-k:k=10").get_params() == {"k": 10}
    assert make_cutter("greedy-k: metric = dcg").get_params()["metric"] == "dcg"
    assert make_cutter("attncut-rc:sigma=0.5").sigma == 0.5


@pytest.mark.parametrize(
    ("spec", "kwargs", "message"),
    [
        ("nope", {}, "unknown cutter 'nope'; known cutters: .*fixed-k.*greedy-k"),
        ("", {}, "unknown cutter ''"),
        ("fixed-k:abc", {}, r"bad parameter 'abc' in cutter spec 'fixed-k:abc': k must be an integer, "
                            r"got 'abc'"),
        ("fixed-k:2.5", {}, "bad parameter '2.5'"),
        ("fixed-k:", {}, "bad parameter ''"),
        ("fixed-k:0", {}, "cutter spec 'fixed-k:0': k must be an integer ≥ 1"),
        ("greedy-k:map", {}, "metric must be one of"),
        ("oracle", {"recall_base": "all"}, "recall_base must be one of"),
        ("oracle", {"allow_zero": "yes"}, "allow_zero must be True or False"),
        ("distribution:3", {}, "cutter 'distribution' takes no parameter"),
        ("distribution", {"tol": -1.0}, "tol must be > 0"),
        ("distribution", {"init_top": 1.0}, r"init_top must be in \(0, 1\)"),
        ("surprise:high", {}, "bad parameter 'high'"),
        ("surprise:nan", {}, "threshold must be a number, not NaN"),
        ("distribution", {"tol": float("inf")}, "tol must be finite"),
        ("fixed-k:5", {"k": 3}, "both set 'k'"),
        ("fixed-k:depth=5", {}, r"cutter 'fixed-k' takes k in its spec \(fixed-k:VALUE or fixed-k:k=VALUE\), "
                                r"got 'depth' in 'fixed-k:depth=5'"),
        ("fixed-k:k=x", {}, "bad parameter 'x' in cutter spec 'fixed-k:k=x': k must be an integer"),
        ("fixed-k", {"depth": 3}, r"accepts keywords \['k'\], got \['depth'\]"),
    ],
)
def test_make_cutter_errors(spec: str, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_cutter(spec, **kwargs)


def test_make_cutter_rejects_non_string() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        make_cutter(20)  # type: ignore[arg-type]


def test_bad_params_set_directly_fail_at_fit_and_predict() -> None:
    lists = varied_lists()
    cutter = make_cutter("fixed-k:3")
    cutter.k = -1  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="k must be an integer ≥ 1, got -1"):
        cutter.predict(lists)
    with pytest.raises(ValueError, match="k must be"):
        cutter.fit(lists)


def test_spec_forms_name_each_cutter_and_its_parameter() -> None:
    forms = spec_forms()
    assert len(forms) == len(available_cutters())
    assert {"distribution", "fixed-k[:k=10]", "greedy-k[:metric=f1]", "oracle[:metric=f1]",
            "surprise[:threshold]"} <= set(forms)   # the default a bare name takes (said nowhere for fixed-k)
    assert make_cutter("fixed-k").k == 10
    assert [f.partition("[")[0] for f in forms] == list(available_cutters())


def test_register(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))

    @register("keep-two")
    class KeepTwo(Cutter):
        spec_param = ("extra", int)

        def __init__(self, *, extra: int = 0) -> None:
            self.extra = extra

        def _predict(self, lists: RankedLists) -> np.ndarray:
            return np.minimum(2 + self.extra, lists.lengths)

    assert "keep-two" in available_cutters() and "keep-two[:extra=0]" in spec_forms()

    @register("keep-shared")
    class KeepShared(Cutter):   # its spec parameter a shared one, taken by **kwargs: no default shown
        spec_param = ("extra", int)
        shared_params = ("extra",)

        def __init__(self, **kwargs: int) -> None:
            self.extra = kwargs.get("extra", 0)

        def _predict(self, lists: RankedLists) -> np.ndarray:
            return np.minimum(1 + self.extra, lists.lengths)

    assert "keep-shared[:extra]" in spec_forms()
    cutter = make_cutter("keep-two:1")
    assert isinstance(cutter, KeepTwo) and cutter.extra == 1 and KeepTwo.name == "keep-two"
    assert cutter.predict(varied_lists()).tolist() == [1, 2, 3, 3, 3, 3, 3, 3]
    with pytest.raises(ValueError, match="registered twice"):

        @register("keep-two")
        class Other(Cutter):
            pass

    with pytest.raises(TypeError, match="keyword-only"):

        @register("positional")
        class Positional(Cutter):
            def __init__(self, k: int = 1) -> None:
                self.k = k

    with pytest.raises(TypeError, match="Cutter subclass"):
        register("not-a-cutter")(dict)  # type: ignore[type-var]
    for bad in ("", "a:b", " pad"):
        with pytest.raises(ValueError, match="invalid cutter name"):
            register(bad)


def test_contract_violations_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cutter whose _predict breaks the range contract fails loudly in predict."""
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))

    @register("too-deep")
    class TooDeep(Cutter):
        def __init__(self) -> None:
            pass

        def _predict(self, lists: RankedLists) -> np.ndarray:
            return lists.lengths + 1

    with pytest.raises(ValueError, match="outside"):
        TooDeep().predict(varied_lists())


def test_neural_cutters_name_their_paper_and_are_the_models_of_train() -> None:
    from rankcut.cli.train import MODELS
    from rankcut.cutters.base import cutter_class
    from rankcut.cutters.neural import neural_cutters

    assert neural_cutters() == MODELS == ("attncut", "attncut-rc", "bicut", "choppy")
    for name in MODELS:
        assert "20" in cutter_class(name).paper  # type: ignore[attr-defined]  # author and year


@pytest.mark.parametrize("spec", ["distribution", "surprise:1.0"])
def test_a_cutter_that_reads_scores_warns_of_lists_scored_alike(spec: str) -> None:
    """Every document scored alike: the score cutters kept everything without a word (h46)."""
    from rankcut.cutters import make_cutter

    flat = lists_from_labels([[1, 0, 0, 1] * 5, [0, 1] * 10, [1, 0] * 10],
                             [[1.0] * 20, list(np.linspace(2, 1, 20)), [0.5] * 20])
    with pytest.warns(UserWarning, match=r"2 of the 3 lists score every document alike \(query 'q0', 'q2'\): "
                                         f"{spec.split(':')[0]} reads the scores alone"):
        make_cutter(spec).predict(flat)
    varied = lists_from_labels([[1, 0] * 10], [list(np.linspace(2, 1, 20))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_cutter(spec).predict(varied)
        make_cutter("fixed-k:5").predict(flat)   # reads no score: nothing to warn of
