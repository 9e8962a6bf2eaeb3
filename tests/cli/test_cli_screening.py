"""`rankcut audit stop`: where screening stops by the pre-registered review rule, the cut run it
writes for the audit, and its refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from audit_cli import run


def test_stop_is_the_rule_on_the_screened_prefix_and_writes_the_cut(review: dict[str, Path]) -> None:
    from rankcut.certify.screening import ReviewRule, screening_stop, stop_depth

    relevant = {tuple(line.split()[::2]) for line in review["qrels"].read_text().splitlines()}
    labels = {q: np.array([(q, f"{q}-{r}") in relevant for r in range(600)], dtype=int)
              for q in ("t0", "t1", "t2")}
    want = {q: stop_depth(y) for q, y in labels.items()}
    assert all(w < 600 for w in want.values())
    # the command's defaults are the rule's defaults
    cut = review["dir"] / "cut.run"
    code, out, err = run("stop", "--run", review["run"], "--qrels", review["qrels"], "--out", cut)
    assert code == 0, err
    for q, k in want.items():
        assert f"{q}: stop screening at {k} of 600: {labels[q][:k].sum()} relevant found" in out
    kept = {q: sum(line.startswith(f"{q} ") for line in cut.read_text().splitlines()) for q in want}
    assert kept == want
    code, out, err = run("freeze", "--run", review["run"], "--cut", cut, "--target-recall", "0.8",
                         "--seed", "1", "--out", review["dir"] / "A")
    assert code == 0 and f"burden N1 = {sum(want.values())}" in out, err
    # the freeze it prints reads the run in the order the cut was taken in (without it, tied scores
    # put another document first and freeze refused the cut as no prefix)
    tied = review["dir"] / "tied.run"
    code, out, err = run("stop", "--run", review["run"], "--qrels", review["qrels"], "--ordering",
                         "trec_eval", "--out", tied)
    assert code == 0 and f"--cut {tied} --target-recall 0.8 --delta 0.05 --ordering trec_eval --out AUDIT" \
        in out, err
    # a partly screened list: the rule on the labelled prefix, then screen on
    q0 = labels["t0"]
    part = review["dir"] / "part.csv"
    rows = [f"t0,t0-{r},{q0[r]}" for r in range(want["t0"] - 1)] + ["t1,t1-0,1", "t1,t1-2,0"]
    part.write_text("query_id,doc_id,label\n" + "\n".join(rows) + "\n")
    assert screening_stop(q0[: want["t0"] - 1], 600, ReviewRule()) is None
    code, out, err = run("stop", "--run", review["run"], "--labels", part)
    assert code == 0, err
    assert f"t0: screen on — ranks 1–{want['t0'] - 1} of 600 labelled" in out
    assert "t1: screen on — ranks 1–1 of 600 labelled, 1 relevant, the rule has not stopped; 1 labels " \
           "below it wait for the gap" in out
    assert "0 of 3 queries stopped" in out
    # read past the stop (a reviewer who went on): said, and the stop stays the rule's
    past = review["dir"] / "past.csv"
    past.write_text("query_id,doc_id,label\n" + "".join(f"{q},{q}-{r},{labels[q][r]}\n" for q in labels
                                                        for r in range(want[q] + 40)))
    code, out, err = run("stop", "--run", review["run"], "--labels", past)
    assert code == 0, err
    for q, k in want.items():
        assert (f"{q}: stop screening at {k} of 600: {labels[q][:k].sum()} relevant found; audit the "
                f"{600 - k} below (40 of them labelled already: the audit takes each label when its random "
                "order reaches that document") in out
    code, out, err = run("stop", "--run", review["run"], "--labels", part, "--out", review["dir"] / "no.run")
    assert code == 0 and "screen on: read" in out and not (review["dir"] / "no.run").exists(), err


def test_stop_refusals(review: dict[str, Path]) -> None:
    bad = review["dir"] / "bad.csv"
    bad.write_text("query_id,doc_id,label\nt0,t0-0,1\nt0,nope,0\n")
    code, _, err = run("stop", "--run", review["run"], "--labels", bad)
    assert code == 2 and err.startswith(f"error: {bad}: a label for query 't0', document 'nope'"), err
    code, _, err = run("stop", "--run", review["run"])
    assert code == 2 and "give the screening labels: --labels FILE, or --qrels Q" in err
    code, _, err = run("stop", "--run", review["run"], "--labels", bad, "--qrels", review["qrels"])
    assert code == 2 and "give the screening labels once: --labels FILE, or --qrels Q to simulate a " \
        "reviewer, not both" in err, err
    for option, value, says in (("--margin", "2", "--margin must lie in [0, 1], got 2.0"),
                                ("--window", "0", "--window must be >= 1, got 0"),
                                ("--prior-scale", "-1", "--prior-scale must be a positive number"),
                                ("--target-recall", "1.5", "--target-recall must lie in (0, 1)"),
                                ("--target-recall", "1", "--target-recall must lie in (0, 1), got 1.0\n"),
                                ("--target-recall", "80", "--target-recall must lie in (0, 1), got 80.0 (a "
                                 "share, not a percentage: 0.8 for 80%)"),
                                ("--delta", "0", "--delta must lie in (0, 1)")):
        code, _, err = run("stop", "--run", review["run"], "--qrels", review["qrels"], option, value)
        assert code == 2 and err.startswith(f"error: {says}"), err


def test_stop_defaults_are_the_rules() -> None:
    import inspect

    from rankcut.certify.screening import ReviewRule
    from rankcut.cli.audit import stop

    params = inspect.signature(stop).parameters
    rule = ReviewRule()
    for option, field in (("target_recall", "target"), ("delta", "delta"), ("margin", "margin"),
                          ("window", "window"), ("prior_scale", "prior_scale"), ("lookahead", "lookahead")):
        assert params[option].default.default == getattr(rule, field), option
