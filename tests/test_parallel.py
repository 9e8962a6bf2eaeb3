"""Sharded execution (rankcut.parallel): the shards and their merge without any engine, the
commands with --shards in this process, and the same commands on a local Ray instance that the
test starts. Every sharded output is compared byte for byte with the single-process one."""

from __future__ import annotations

import importlib.util
import json
import pickle
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app
from rankcut.cutters import make_cutter
from rankcut.data.synthetic import synthetic_run, write_synthetic
from rankcut.data.trec import load_trec
from rankcut.errors import ParamError
from rankcut.evaluation import evaluate_cutters
from rankcut.parallel import InProcess, OnRay, predict_sharded, shard_bounds, shard_lists

runner = CliRunner()

#: the cutters that learn nothing or learn without torch; the neural ones are checked on one fit
PLAIN_SPECS = ["fixed-k:7", "greedy-k", "oracle", "distribution", "surprise"]


def invoke(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("synthetic")
    run, qrels = write_synthetic(folder, n_queries=23, depth=40, seed=4)
    return {"run": run, "qrels": qrels, "dir": folder}


@pytest.fixture(scope="module")
def lists() -> Any:
    run, qrels = synthetic_run(23, 40, seed=4)
    # lists of different lengths, so that a shard is narrower than the whole
    run = {q: postings[: 12 + i % 29] for i, (q, postings) in enumerate(run.items())}
    return load_trec(run, qrels)


# --------------------------------------------------------------------------- without an engine
@pytest.mark.parametrize(("n", "shards"), [(1, 1), (10, 3), (10, 10), (3, 8), (23, 4)])
def test_shards_are_contiguous_near_equal_and_cover_every_query(n: int, shards: int) -> None:
    bounds = shard_bounds(n, shards)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a < b for a, b in bounds)  # never an empty shard
    assert all(b == c for (_, b), (c, _) in zip(bounds, bounds[1:], strict=False))
    sizes = [b - a for a, b in bounds]
    assert len(bounds) == min(n, shards) and max(sizes) - min(sizes) <= 1


def test_a_shard_count_below_one_is_refused(lists: Any) -> None:
    with pytest.raises(ParamError, match="shards must be an integer ≥ 1, got 0"):
        shard_bounds(5, 0)
    with pytest.raises(ParamError, match="shards must be an integer ≥ 1, got 0"):
        evaluate_cutters(["fixed-k:5"], lists, shards=0)


def test_a_parameter_error_crosses_to_a_worker_and_back_intact() -> None:
    back = pickle.loads(pickle.dumps(ParamError("shards", "shards must be an integer ≥ 1, got 0")))
    assert type(back) is ParamError and back.param == "shards" and str(back).startswith("shards must")


def test_shards_hold_the_queries_in_order(lists: Any) -> None:
    parts = shard_lists(lists, 4)
    assert [q for p in parts for q in p.qids] == list(lists.qids)
    assert shard_lists(lists, 1) == [lists]


@pytest.mark.parametrize("spec", PLAIN_SPECS)
def test_sharded_cuts_are_those_of_one_call(lists: Any, spec: str) -> None:
    cutter = make_cutter(spec)
    if cutter.requires_fit() or spec.startswith("greedy"):
        cutter.fit(lists)
    whole = cutter.predict(lists)
    for shards in (2, 5, 23):
        got = predict_sharded(cutter, lists, shards=shards, runner=InProcess())
        assert got.dtype == whole.dtype and np.array_equal(got, whole)


def test_sharded_cuts_of_a_neural_cutter_are_those_of_one_call(lists: Any) -> None:
    pytest.importorskip("torch", reason="the neural cutters need torch")
    cutter = make_cutter("attncut", epochs=2, seed=0).fit(lists)
    assert np.array_equal(predict_sharded(cutter, lists, shards=4), cutter.predict(lists))


def test_sharded_evaluation_is_that_of_one_process(lists: Any) -> None:
    specs = ["oracle", "fixed-k:5", "greedy-k", "distribution"]
    one = evaluate_cutters(specs, lists, folds=3, seed=1, baseline="greedy-k")
    sharded = evaluate_cutters(specs, lists, folds=3, seed=1, baseline="greedy-k", shards=4,
                               runner=InProcess())
    assert json.dumps(sharded.to_dict()) == json.dumps(one.to_dict())


def test_cut_and_evaluate_with_shards_write_what_one_shard_writes(files: dict[str, Path]) -> None:
    outs = []
    for shards in (1, 6):
        out = files["dir"] / f"cut-{shards}.run"
        res = invoke("cut", "--run", files["run"], "--cutter", "fixed-k:9", "--out", out, "--shards", shards)
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    base = ["evaluate", "--run", files["run"], "--qrels", files["qrels"], "--folds", "3", "--json",
            "--cutters", "oracle,fixed-k:5,greedy-k"]
    one, sharded = invoke(*base), invoke(*base, "--shards", 5)
    assert one.exit_code == sharded.exit_code == 0 and one.stdout == sharded.stdout


def test_bad_shards_and_a_missing_ray_are_one_line_errors(files: dict[str, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out = files["dir"] / "never.run"
    res = invoke("cut", "--run", files["run"], "--cutter", "fixed-k:9", "--out", out, "--shards", 0)
    assert res.exit_code == 2 and res.stderr.strip() == "error: --shards must be >= 1, got 0"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    res = invoke("cut", "--run", files["run"], "--cutter", "fixed-k:9", "--out", out, "--ray", "local")
    assert res.exit_code == 2
    assert res.stderr.strip() == "error: --ray local needs Ray: pip install 'rankcut[ray]'"
    res = invoke("certify", "audits", files["dir"], "--ray", "auto")
    assert res.exit_code == 2 and "pip install 'rankcut[ray]'" in res.stderr
    assert not out.exists()
    monkeypatch.setitem(sys.modules, "ray", None)  # the library's own check, when ray cannot be imported
    with pytest.raises(ImportError, match=r"rankcut\[ray\]"):
        OnRay("local")


# --------------------------------------------------------------------------- audits
def _audits(folder: Path, n: int, max_missed: int | None = None, delta: float = 0.05) -> list[Path]:
    """``n`` labelled excluded-pool audits of small runs, ready for certify (each excluded pool holds
    relevant items; with ``max_missed``, the frozen target)."""
    from rankcut.audit import workflow as wf

    made = []
    for a in range(n):
        run, cut, qrels = folder / f"run{a}.txt", folder / f"cut{a}.run", folder / f"qrels{a}.txt"
        with open(run, "w") as r, open(cut, "w") as c, open(qrels, "w") as j:
            for q in range(4):
                for rank in range(30):
                    line = f"q{q} Q0 d{q}-{rank} {rank + 1} {50 - rank}.5 t\n"
                    r.write(line)
                    if rank < 5 + a:
                        c.write(line)
                    j.write(f"q{q} 0 d{q}-{rank} {int(rank % (4 + a) == 0)}\n")
        audit = folder / f"audit{a}"
        wf.freeze(audit, run=run, cut=cut, design="excluded", corpus_size=200, seed=a, max_missed=max_missed,
                  delta=delta)
        wf.plan(audit)
        wf.sample(audit, excluded=40, allow_underpowered=True)
        wf.label(audit, qrels=qrels)
        made.append(audit)
    return made


def _certificates(audits: list[Path]) -> list[dict[str, Any]]:
    out = []
    for audit in audits:
        content = json.loads((audit / "certificate.json").read_text())
        content.pop("certified_at")  # the time of the certify step, the one field that differs
        out.append(content)
    return out


def test_certify_audits_certifies_each_and_reports_the_refused(tmp_path: Path) -> None:
    audits = _audits(tmp_path, 2)
    unlabelled = tmp_path / "nothing-here"
    res = invoke("certify", "audits", *audits, unlabelled, "--shards", 2)
    assert res.exit_code == 2
    assert res.stdout.count("== ") == 2 and all(f"== {a}\n" in res.stdout for a in audits)
    assert res.stderr.startswith(f"error: {unlabelled}: ")
    alone = invoke("audit", "certify", "--audit", audits[1])
    assert alone.exit_code == 0 and alone.stdout.strip() in res.stdout
    # each said "With confidence at least 0.95", which reads as all of them at once
    assert res.stdout.rstrip().endswith("Each certificate holds at its own confidence; all 2 together hold "
                                        "with confidence at least 0.9 (1 − the sum of their δ, a union "
                                        "bound), not at each one's.")
    res = invoke("certify", "audits", audits[0], audits[0])
    assert res.exit_code == 2 and res.stderr.strip() == f"error: audit folder {audits[0]} is given twice"


def test_certify_audits_rounds_the_joint_confidence_down(tmp_path: Path) -> None:
    """1 − Σδ = 0.98765433 was said "0.9877" (rounded to nearest: more than the union bound gives);
    rounded down in floats, 1 − (0.03 + 0.04) read 0.9299; three at 0.4 read "-0.2001"."""
    from rankcut.cli.certify import _joint_confidence

    res = invoke("certify", "audits", *_audits(tmp_path, 2, delta=0.006172835))
    assert "all 2 together hold with confidence at least 0.987654 (1 − the sum of their δ" in res.stdout
    assert _joint_confidence([0.03, 0.04]) == "0.93" and _joint_confidence([1e-5, 1e-5]) == "0.99998"
    assert _joint_confidence([0.4, 0.4, 0.4]) == "" and _joint_confidence([0.5, 0.5]) == ""
    (tmp_path / "loose").mkdir()
    res = invoke("certify", "audits", *_audits(tmp_path / "loose", 3, delta=0.4))
    assert ("all 3 together hold with no confidence: the union bound gives none where their δ sum to 1 or "
            "more, not at each one's.") in res.stdout


def test_certify_audits_and_audit_certify_exit_1_when_a_target_is_not_met(tmp_path: Path) -> None:
    (tmp_path / "free").mkdir()
    (tmp_path / "strict").mkdir()
    free = _audits(tmp_path / "free", 1)        # no target frozen: nothing to miss
    strict = _audits(tmp_path / "strict", 1, max_missed=0)   # its excluded pool holds relevant items
    for audit, code in ((free[0], 0), (strict[0], 1)):
        alone = invoke("audit", "certify", "--audit", audit)
        assert alone.exit_code == code, alone.output
        assert ("target M0 ≤ 0: NOT met" in alone.stdout) == (code == 1)
        assert invoke("audit", "certify", "--audit", audit, "--json").exit_code == code
    assert invoke("certify", "audits", *free).exit_code == 0
    res = invoke("certify", "audits", *free, *strict)
    assert res.exit_code == 1 and res.stdout.count("== ") == 2


# --------------------------------------------------------------------------- on Ray
@pytest.fixture(scope="module")
def ray_instance() -> Any:
    ray = pytest.importorskip("ray", reason="the Ray tests need the ray extra: pip install 'rankcut[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_on_ray_cut_and_evaluate_are_byte_identical(ray_instance: Any, files: dict[str, Path]) -> None:
    outs = []
    for extra in ([], ["--ray", "local", "--shards", 3]):
        out = files["dir"] / f"greedy{len(extra)}.run"
        res = invoke("cut", "--run", files["run"], "--train-run", files["run"], "--qrels", files["qrels"],
                     "--cutter", "greedy-k", "--out", out, *extra)
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert ray_instance.is_initialized()  # a running instance is used, and left running
    base = ["evaluate", "--run", files["run"], "--qrels", files["qrels"], "--folds", "3", "--json",
            "--cutters", "oracle,fixed-k:5,greedy-k,distribution", "--baseline", "greedy-k"]
    one, on_ray = invoke(*base), invoke(*base, "--ray", "local")
    assert one.exit_code == on_ray.exit_code == 0 and on_ray.stdout == one.stdout


def test_on_ray_a_worker_error_and_warning_reach_the_caller(ray_instance: Any, lists: Any) -> None:
    cutter = make_cutter("greedy-k").fit(lists)
    where = OnRay("local")
    blind = lists.subset(lists.qids[:3])
    with pytest.warns(UserWarning, match="from a worker"):
        assert list(where.map(warnings.warn, [("from a worker", UserWarning)])) == [None]
    with pytest.raises(ParamError, match="shards must be") as caught:
        list(where.map(shard_bounds, [(3, 0)]))
    assert caught.value.param == "shards"
    assert np.array_equal(predict_sharded(cutter, blind, shards=2, runner=where), cutter.predict(blind))


def test_on_ray_certify_audits_is_byte_identical(ray_instance: Any, tmp_path: Path) -> None:
    audits = _audits(tmp_path, 3)
    here = invoke("certify", "audits", *audits)
    first = _certificates(audits)
    on_ray = invoke("certify", "audits", *audits, "--ray", "local")
    assert here.exit_code == on_ray.exit_code == 0, on_ray.output
    assert on_ray.stdout == here.stdout
    assert _certificates(audits) == first
