"""rankcut.nn.inputs: which columns feed the networks, standardised on the training lists only."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rankcut.data.lists import Posting, RankedLists  # noqa: E402
from rankcut.nn.inputs import InputEncoder  # noqa: E402


def make_lists(scores: list[list[float]], sim: list[list[float]] | None = None) -> RankedLists:
    run = {f"q{i}": [Posting(f"d{j}", s, j + 1) for j, s in enumerate(row)] for i, row in enumerate(scores)}
    lists = RankedLists.from_postings(run, {q: {} for q in run})
    if sim is None:
        return lists
    feats = np.zeros((len(lists), lists.max_len, 1))
    for i, row in enumerate(sim):
        feats[i, : len(row), 0] = row
    return lists.with_features(feats, ["sim"])


TRAIN = make_lists([[4.0, 2.0, 0.0], [10.0, 6.0]], [[0.1, 0.3, 0.5], [0.7, 0.9]])


def test_columns_are_score_score_z_then_the_feature_columns() -> None:
    assert InputEncoder.fit(TRAIN).columns == ("score", "score_z", "sim")
    assert InputEncoder.fit(TRAIN, score_z=False).columns == ("score", "sim")
    # extract_features' own score columns are the same quantities: not repeated
    again = TRAIN.with_features(np.concatenate([np.zeros((2, 3, 2)), TRAIN.features], axis=2),
                                ["score", "score_z", "sim"])
    assert InputEncoder.fit(again).columns == ("score", "score_z", "sim")


def test_standardised_with_the_training_statistics() -> None:
    enc = InputEncoder.fit(TRAIN)
    # raw listed scores 4, 2, 0, 10, 6: mean 4.4, population std sqrt(11.84)
    assert enc.mean[0] == pytest.approx(4.4) and enc.std[0] == pytest.approx(np.sqrt(11.84))
    x, mask = enc.transform(TRAIN)
    assert x.dtype == torch.float32 and x.shape == (2, 3, 3)
    assert mask.dtype == torch.bool and mask.tolist() == [[True, True, True], [True, True, False]]
    listed = x[mask].double()
    assert torch.allclose(listed.mean(dim=0), torch.zeros(3, dtype=torch.float64), atol=1e-6)
    assert torch.allclose(listed.std(dim=0, unbiased=False), torch.ones(3, dtype=torch.float64), atol=1e-6)
    assert torch.all(x[1, 2] == 0)  # padding
    # score_z: within each list, (r - mean) / std, so list q1 gives ±1 before the global standardisation
    z_raw = x[1, :2, 1].double() * enc.std[1] + enc.mean[1]
    assert z_raw.tolist() == pytest.approx([1.0, -1.0])


def test_other_lists_are_encoded_with_the_training_statistics_not_their_own() -> None:
    enc = InputEncoder.fit(TRAIN)
    test = make_lists([[100.0]], [[0.5]])
    with pytest.warns(UserWarning, match="the lists' score averages 100, 27.8 training standard deviations"):
        x, _ = enc.transform(test)
    assert float(x[0, 0, 0]) == pytest.approx((100.0 - 4.4) / np.sqrt(11.84), rel=1e-6)
    assert float(x[0, 0, 1]) == pytest.approx((0.0 - enc.mean[1]) / enc.std[1], rel=1e-6)  # lone doc: z 0


def test_lists_unlike_the_training_lists_are_warned_of() -> None:
    """A model trained on one retriever's scores and given another's cut at 243 where it cut at 27,
    without a word (a walk): a column whose mean moved more than SHIFT training deviations is said."""
    rng = np.random.default_rng(0)
    train = make_lists([list(rng.normal(10.3, 3.1, 50)) for _ in range(20)])
    enc = InputEncoder.fit(train)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # lists of the same retriever: nothing to say
        enc.transform(make_lists([list(rng.normal(10.3, 3.1, 50)) for _ in range(5)]))
    other = make_lists([list(rng.uniform(-0.2, 1.0, 50)) for _ in range(5)])
    with pytest.warns(UserWarning, match=r"the lists' score averages 0\.\d+, 3\.\d training standard "
                                         r"deviations from the model's training mean \(10\.\d+ ± 3\.\d+\): "
                                         r"are these another retriever's scores"):
        enc.transform(other)


def test_a_constant_column_gets_std_one() -> None:
    lists = make_lists([[3.0, 3.0], [3.0]])
    enc = InputEncoder.fit(lists)
    assert enc.std.tolist() == [1.0, 1.0]
    assert torch.all(enc.transform(lists)[0] == 0)


def test_missing_column_at_transform_names_it() -> None:
    enc = InputEncoder.fit(TRAIN)
    message = r"column\(s\) \['sim'\], which these lists lack \(they carry: none\)"
    with pytest.raises(ValueError, match=message):
        enc.transform(make_lists([[1.0, 0.5]]))


def test_non_finite_feature_is_refused() -> None:
    lists = make_lists([[1.0, 0.5]], [[0.2, float("nan")]])
    with pytest.raises(ValueError, match=r"feature column 'sim' is not a finite number \(nan\) for query "
                       r"'q0', document 'd1' \(rank 2\)"):
        InputEncoder.fit(lists)


def test_dict_round_trip_through_json() -> None:
    enc = InputEncoder.fit(TRAIN)
    back = InputEncoder.from_dict(json.loads(json.dumps(enc.to_dict())))
    assert back == enc and back.columns == enc.columns
    assert torch.equal(back.transform(TRAIN)[0], enc.transform(TRAIN)[0])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"columns": ["score"], "mean": [0.0]}, r"lacks \['std'\]"),
        ({"columns": ["score"], "mean": [0.0], "std": [0.0]}, "std must be > 0"),
        ({"columns": ["score"], "mean": ["a"], "std": [1.0]}, "mean must be a list of finite numbers"),
        ({"columns": ["score", "sim"], "mean": [0.0], "std": [1.0, 1.0]}, "mean must hold one finite number"),
        ({"columns": ["score", "score"], "mean": [0, 0], "std": [1, 1]}, "columns must be distinct"),
        ({"columns": "score", "mean": [0.0], "std": [1.0]}, "columns must be a list"),
        ([1, 2], "input encoder must be an object"),
    ],
)
def test_from_dict_errors(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        InputEncoder.from_dict(data)  # type: ignore[arg-type]


def test_fit_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="score_z must be True or False"):
        InputEncoder.fit(TRAIN, score_z="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lists must be a RankedLists"):
        InputEncoder.fit([[1.0]])  # type: ignore[arg-type]
