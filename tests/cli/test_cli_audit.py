"""`rankcut audit` from the command line: the issue's commands as written, and one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from audit_cli import run

from rankcut.audit import workflow


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A run of 10 queries × 30 documents, qrels, a cut run and two nested cut runs."""
    rng = np.random.default_rng(1)
    paths = {n: tmp_path / f for n, f in (("run", "run.txt"), ("qrels", "qrels.txt"), ("cut", "cut.run"),
                                           ("f1", "top5.run"), ("f2", "top15.run"))}
    handles = {n: open(p, "w") for n, p in paths.items()}
    for q in range(10):
        k = int(rng.integers(3, 12))
        for r in range(30):
            line = f"q{q} Q0 d{q}-{r} {r + 1} {50 - r}.5 t\n"
            handles["run"].write(line)
            for name, depth in (("cut", k), ("f1", 5), ("f2", 15)):
                if r < depth:
                    handles[name].write(line)
            if rng.random() < (0.5 if r < 6 else 0.05):
                handles["qrels"].write(f"q{q} 0 d{q}-{r} 1\n")
    for h in handles.values():
        h.close()
    return paths


def test_issue_commands_as_written(files: dict[str, Path], tmp_path: Path) -> None:
    audit = tmp_path / "AUDIT"
    code, out, err = run("freeze", "--run", files["run"], "--cut", files["cut"], "--design", "two-pool",
                         "--delta", "0.05", "--target-recall", "0.5", "--seed", "11", "--out", audit)
    assert code == 0, err
    assert "froze audit" in out and "next: rankcut audit plan" in out and "the default design" not in out
    code, out, err = run("plan", "--audit", audit)
    assert code == 0, err
    assert "planned sizes: excluded" in out and "--expected-precision" in out
    assert out.rstrip().endswith(f"next: rankcut audit sample --audit {audit}")
    code, out, err = run("sample", "--audit", audit)
    assert code == 0, err
    assert "to_label.csv" in out
    code, out, err = run("plan", "--audit", audit)    # looked at again: it says where the audit stands
    to_label = audit / "to_label.csv"
    assert code == 0 and f"next: rankcut audit label --audit {audit} --from {to_label}" in out, out
    code, out, err = run("label", "--audit", audit, "--oracle", "qrels", "--qrels", files["qrels"])
    assert code == 0, err
    assert "0 to go" in out
    code, out, err = run("certify", "--audit", audit, "--json")
    cert = json.loads(out)
    assert code == (0 if cert["verdict"]["met"] else 1), err   # a script can stop on "met" alone
    assert cert["design"] == "two-pool" and cert["verdict"]["text"].startswith("target recall ≥ 0.5")
    names = [c["name"] for c in cert["report"]["certificates"]]
    assert names == ["missed", "recall"]
    met = cert["verdict"]["met"]
    code, out, err = run("certify", "--audit", audit)
    assert code == (0 if met else 1) and "recall ≥" in out and "Corollary 11" in out
    code, out, err = run("report", "--audit", audit, "--out", tmp_path / "report.html")
    assert code == 0, err
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert json.loads((tmp_path / "report.json").read_text())["audit_id"] == cert["audit_id"]
    code, out, _ = run("report", "--audit", audit, "--out", tmp_path / "report.md", "--json")
    assert code == 0 and json.loads(out) == json.loads((tmp_path / "report.json").read_text())
    code, out, _ = run("status", "--audit", audit)
    assert code == 0 and "[x] certify" in out and out.rstrip().endswith("done")


def test_sequential_is_the_default_design_and_labels_in_batches(files: dict[str, Path], tmp_path: Path
                                                                 ) -> None:
    audit = tmp_path / "S"
    code, out, err = run("freeze", "--run", files["run"], "--cut", files["cut"], "--target-recall", "0.8",
                         "--seed", "2", "--out", audit)
    assert code == 0, err
    assert "sequential design" in out and "sequential audit 0.05" in out
    # a RAG engineer's "met" on a cut of recall 0.59: said to be the review's, not the cut's (a stop-56 walk)
    assert "(the default design: its target is met by the cut read in full plus what the audit" in out
    assert "--design two-pool, its recall" in out
    code, out, err = run("plan", "--audit", audit)
    assert code == 0 and "audit labels to certify when the audit finds no relevant item" in out, err
    code, out, err = run("sample", "--audit", audit)
    assert code == 0 and "from the top: the cut's" in out, err
    n1 = json.loads((audit / "manifest.json").read_text())["pools"]["n1"]
    code, out, err = run("label", "--audit", audit, "--oracle", "qrels", "--qrels", files["qrels"],
                         "--next", n1)
    assert code == 0, err
    assert (f"the cut: all {n1} items labelled; the audit order: none of its {300 - n1} positions "
            "labelled") in out
    assert "next: rankcut audit certify" in out
    code, out, err = run("status", "--audit", audit)   # it said "positions 1–0 labelled"
    assert code == 0 and "(audit order: no position labelled)" in out, out
    code, out, err = run("certify", "--audit", audit)
    assert code == 1 and "NOT met yet after 0 of" in out and "next: label on from position 1" in out, err
    real = workflow.certify   # a warning while certifying is said, met or not (exit 1 lost it)

    def warns(*args: object, **kwargs: object) -> object:
        import warnings

        warnings.warn("--cut x.run changed after the audit was frozen, so it is not read", UserWarning,
                      stacklevel=2)
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workflow, "certify", warns)
        code, _, err = run("certify", "--audit", audit)
    assert code == 1 and err == "warning: --cut x.run changed after the audit was frozen, so it is not read\n"
    code, out, _ = run("status", "--audit", audit)
    assert "NOT met yet" in out and f"next: rankcut audit label --audit {audit} --from " in out
    code, out, err = run("label", "--audit", audit, "--from", files["qrels"], "--next", "5")
    assert code == 2 and err.startswith("error: --next is for --oracle qrels"), err
    code, out, err = run("label", "--audit", audit, "--from", files["qrels"], "--threshold", "2")
    assert code == 2 and err.startswith("error: --threshold is for --oracle qrels"), err   # was ignored
    for option in (["--from"], ["--oracle", "qrels", "--qrels"]):   # a missing file, by the option typed
        code, _, err = run("label", "--audit", audit, *option, tmp_path / "nope.txt")
        assert code == 2 and err == f"error: {option[-1]} {tmp_path / 'nope.txt'}: the file does not exist\n"


def test_family_designs(files: dict[str, Path], tmp_path: Path) -> None:
    audit = tmp_path / "P"
    code, out, err = run("freeze", "--run", files["run"], "--family", f"{files['f1']},{files['f2']}",
                         "--design", "prefixes", "--max-missed", "20", "--seed", "3", "--out", audit)
    assert code == 0, err
    assert "top5.run: burden N1 = 50" in out and "top15.run: burden N1 = 150" in out
    # an empty entry was read as '.', and said "member 2 .: the file is a folder"
    code, _, err = run("freeze", "--run", files["run"], "--family", f"{files['f1']},,{files['f2']}",
                       "--design", "prefixes", "--max-missed", "20", "--out", tmp_path / "E")
    assert code == 2 and "--family: entry 2 of" in err and "is empty" in err and not (tmp_path / "E").exists()
    assert run("plan", "--audit", audit)[0] == 0
    assert run("sample", "--audit", audit, "--excluded", "60")[0] == 0
    assert run("label", "--audit", audit, "--oracle", "qrels", "--qrels", files["qrels"])[0] == 0
    code, out, err = run("certify", "--audit", audit)
    assert code == 0, err
    assert "Corollary 18" in out
    # the verdict is the least-burden member whose simultaneous bound meets the target (Eq. 1)
    cert = json.loads(run("certify", "--audit", audit, "--json")[1])
    meets = [m for m in cert["members"] if m["bound"] <= 20]
    assert meets, "this fixture's audit meets its target"
    chosen = min(meets, key=lambda m: m["burden"])["name"]
    assert chosen == "top5.run"
    assert f"chosen: {chosen} (least burden with M0 bound ≤ 20)" in out and "no member meets" not in out
    # offsets below zero parse as values, and separate samples take one size per member
    audit = tmp_path / "F"
    code, _, err = run("freeze", "--run", files["run"], "--cut", files["cut"], "--offsets", "-2,0,3",
                       "--design", "fixed-sequence", "--reference", "separate", "--max-missed", "30",
                       "--seed", "3", "--out", audit)
    assert code == 0, err
    assert run("plan", "--audit", audit)[0] == 0
    code, out, err = run("sample", "--audit", audit, "--excluded", "30,20,10", "--allow-underpowered",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["sizes"] == {"excluded": [30, 20, 10]}


def test_label_from_file_and_interactively(files: dict[str, Path], tmp_path: Path) -> None:
    audit = tmp_path / "L"
    assert run("freeze", "--run", files["run"], "--cut", files["cut"], "--design", "excluded",
               "--seed", "5", "--out", audit)[0] == 0
    assert run("plan", "--audit", audit)[0] == 0
    code, out, err = run("sample", "--audit", audit)
    assert code == 2 and "give --excluded (no target was planned)" in err
    assert run("sample", "--audit", audit, "--excluded", "6")[0] == 0
    rows = (audit / "to_label.csv").read_text().splitlines()
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join([rows[0]] + [r.rstrip(",") + ",0" for r in rows[1:3]]) + "\n")
    code, out, err = run("label", "--audit", audit, "--from", labels)
    assert code == 0, err
    assert "2 of 6 sampled items labelled" in out
    code, out, err = run("label", "--audit", audit, "--interactive", input="y\nn\nq\n")
    assert code == 0, err
    assert "4 of 6 sampled items labelled" in out
    code, _, err = run("certify", "--audit", audit)
    assert code == 2 and err.startswith("error: the sample is incomplete: 2 of 6")
    assert "--allow-incomplete" in err and len(err.strip().splitlines()) == 1
    # --allow-incomplete: label and status said "next: rankcut audit certify" with items unlabelled,
    # a step that counts them against the cut and takes no label after it
    lax = tmp_path / "I"
    assert run("freeze", "--run", files["run"], "--cut", files["cut"], "--design", "excluded", "--seed", "5",
               "--allow-incomplete", "--out", lax)[0] == 0
    assert run("plan", "--audit", lax)[0] == 0
    assert run("sample", "--audit", lax, "--excluded", "6")[0] == 0
    rows = (lax / "to_label.csv").read_text().splitlines()
    labels.write_text("\n".join([rows[0]] + [r.rstrip(",") + ",0" for r in rows[1:3]]) + "\n")
    said = (f"next: label the 4 items left (rankcut audit label --audit {lax} --from "
            f"{lax / 'to_label.csv'}), or rankcut audit certify --audit {lax} now: --allow-incomplete "
            "counts them against the cut, and certify opens the labels for good")
    code, out, _ = run("label", "--audit", lax, "--from", labels)
    assert code == 0 and said in out, out
    code, out, _ = run("status", "--audit", lax)
    assert code == 0 and said in out, out


@pytest.mark.parametrize(("args", "message"), [
    (["--design", "excluded", "--target-recall", "0.8"],
     "--target-recall is a target of the two-pool and sequential designs"),
    (["--design", "two-pool", "--max-missed", "3"], "--max-missed is not a target of the two-pool design"),
    (["--design", "excluded", "--depths", "5,10"], "--depths describes a nested family"),
    (["--design", "fixed-sequence", "--depths", "5,10", "--no-cut"], "give --max-missed"),
    (["--design", "two-pool", "--allocation", "excluded0.03"], "--allocation must look like"),
    (["--design", "two-pool", "--allocation", "excluded=0.04,included=0.04"], "--allocation shares sum to"),
    (["--design", "excluded", "--bands", "5,x"], "--bands must be comma-separated integers"),
    (["--design", "stratified"], "needs --bands"),
    (["--design", "excluded", "--reference", "shared"], "--reference (shared or separate samples)"),
    (["--design", "excluded", "--design-data"], "give --reuse-labels"),
    (["--design", "excluded", "--delta", "0"], r"--delta must lie in (0, 1)"),
    (["--design", "circle"], "--design must be one of excluded, two-pool"),
])
def test_freeze_refusals_name_the_option(files: dict[str, Path], tmp_path: Path, args: list[str],
                                         message: str) -> None:
    base = ["freeze", "--run", files["run"], "--out", tmp_path / "Z", "--seed", "1"]
    if "--no-cut" in args:
        args = [a for a in args if a != "--no-cut"]
    else:
        base += ["--cut", files["cut"]]
    code, out, err = run(*base, *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert message in err


def test_step_refusals(files: dict[str, Path], tmp_path: Path) -> None:
    audit = tmp_path / "S"
    code, _, err = run("plan", "--audit", audit)
    assert code == 2 and "rankcut audit freeze" in err
    args = ["freeze", "--run", files["run"], "--cut", files["cut"], "--design", "excluded",
            "--max-missed", "10", "--seed", "1", "--out", audit]
    assert run(*args)[0] == 0
    code, _, err = run(*args)
    assert code == 2 and "already holds a frozen audit" in err
    code, _, err = run("sample", "--audit", audit)
    assert code == 2 and "run rankcut audit plan first" in err
    code, _, err = run("certify", "--audit", audit)
    assert code == 2 and "run rankcut audit sample first" in err
    assert run("plan", "--audit", audit)[0] == 0
    assert run("sample", "--audit", audit)[0] == 0
    code, _, err = run("sample", "--audit", audit)
    assert code == 2 and "already drawn" in err
    code, _, err = run("label", "--audit", audit, "--oracle", "qrels")
    assert code == 2 and "--oracle qrels and --qrels go together" in err
    code, _, err = run("label", "--audit", audit, "--oracle", "judges", "--qrels", files["qrels"])
    assert code == 2 and "--oracle takes 'qrels'" in err
    code, _, err = run("label", "--audit", audit, "--interactive", "--reuse")
    assert code == 2
    assert "give exactly one label source (--from, --oracle qrels, --interactive or --reuse)" in err
    code, _, err = run("report", "--audit", audit, "--out", tmp_path / "r.md")
    assert code == 2 and "run certify first" in err
    files["cut"].write_text(files["cut"].read_text() + "q0 Q0 extra 99 0.1 t\n")
    code, _, err = run("label", "--audit", audit, "--oracle", "qrels", "--qrels", files["qrels"])
    assert code == 2 and "--cut" in err and "changed after the audit was frozen" in err


def test_reuse_of_opened_labels_warns_then_refuses(files: dict[str, Path], tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    common = ["--run", files["run"], "--cut", files["cut"], "--design", "excluded", "--seed", "4"]
    assert run("freeze", *common, "--out", old)[0] == 0
    assert run("plan", "--audit", old)[0] == 0
    assert run("sample", "--audit", old, "--excluded", "10")[0] == 0
    assert run("label", "--audit", old, "--oracle", "qrels", "--qrels", files["qrels"])[0] == 0
    assert run("certify", "--audit", old)[0] == 0
    code, _, err = run("freeze", *common, "--reuse-labels", old, "--out", new)
    assert code == 2 and "--seed 4 is the seed of audit" in err and "give another --seed" in err
    code, _, err = run("freeze", *common, "--seed", "5", "--reuse-labels", old, "--out", new)
    assert code == 0 and err.startswith("warning: ") and "certify will refuse" in err
    assert run("plan", "--audit", new)[0] == 0
    assert run("sample", "--audit", new, "--excluded", "200")[0] == 0
    code, out, _ = run("label", "--audit", new, "--reuse", "--json")
    assert code == 0 and json.loads(out)["recorded"] > 0
    assert run("label", "--audit", new, "--oracle", "qrels", "--qrels", files["qrels"])[0] == 0
    code, _, err = run("certify", "--audit", new)
    assert code == 2 and "before this audit was frozen" in err and "--design-data" in err


def test_certify_refusals_say_why(files: dict[str, Path], tmp_path: Path) -> None:
    """Every refusal of ``certify`` that the issue lists, from the shell, as one ``error:`` line:
    an input (a family member's cut run) or the manifest changed after sampling, labels outside the
    sample, labels recorded or edited after the sample was opened."""
    from rankcut.audit.labels import LabelStore

    audit = tmp_path / "C"
    assert run("freeze", "--run", files["run"], "--family", f"{files['f1']},{files['f2']}", "--design",
               "prefixes", "--seed", "8", "--out", audit)[0] == 0
    assert run("plan", "--audit", audit)[0] == 0
    assert run("sample", "--audit", audit, "--excluded", "40")[0] == 0
    assert run("label", "--audit", audit, "--oracle", "qrels", "--qrels", files["qrels"])[0] == 0

    def refused(*needles: str) -> None:
        code, out, err = run("certify", "--audit", audit)
        assert code == 2 and out == "" and err.startswith("error: ") and len(err.strip().splitlines()) == 1
        for needle in needles:
            assert needle in err, (needle, err)
        assert not (audit / "opened.json").exists()  # a refused certify opens nothing

    member = files["f2"].read_text()
    files["f2"].write_text(member.replace("d0-0 ", "d0-0x ", 1))
    refused("--family member 2", "top15.run changed after the audit was frozen")
    files["f2"].write_text(member)
    manifest = audit / "manifest.json"
    frozen = manifest.read_text()
    manifest.write_text(frozen.replace('"delta": 0.05', '"delta": 0.2'))
    refused("manifest", "changed after freeze")
    manifest.write_text(frozen)
    # the sample is opened: nothing can be labelled any more, and an edited label is refused
    code, out, err = run("certify", "--audit", audit)
    assert code == 0 and "Corollary 18" in out, err
    code, _, err = run("label", "--audit", audit, "--oracle", "qrels", "--qrels", files["qrels"],
                       "--overwrite")
    assert code == 2 and "were opened for certification at" in err
    rows = [json.loads(line) for line in (audit / "sample.jsonl").read_text().splitlines()]
    item = (rows[0]["query_id"], rows[0]["doc_id"])
    with LabelStore(audit / "labels.sqlite") as store:
        store.record([item], [1 - store.get([item])[item]], "by hand", overwrite=True)
    code, _, err = run("certify", "--audit", audit)
    assert code == 2 and "the labels changed after they were opened for certification" in err
    # a label for an item outside the sample: refused when recorded, and at certify
    other = tmp_path / "E"
    assert run("freeze", "--run", files["run"], "--cut", files["cut"], "--design", "excluded", "--seed", "2",
               "--out", other)[0] == 0
    assert run("plan", "--audit", other)[0] == 0
    assert run("sample", "--audit", other, "--excluded", "5")[0] == 0
    stray = tmp_path / "stray.csv"
    stray.write_text("query_id,doc_id,label\nq0,d0-0,1\n")  # rank 1 of q0: kept by the cut, never sampled
    code, _, err = run("label", "--audit", other, "--from", stray)
    assert code == 2 and "'d0-0' is not in the sample of this audit" in err and "nothing was recorded" in err
    assert run("label", "--audit", other, "--oracle", "qrels", "--qrels", files["qrels"])[0] == 0
    with LabelStore(other / "labels.sqlite") as store:
        store.record([("q0", "d0-0")], [1], "by hand")
    code, _, err = run("certify", "--audit", other)
    assert code == 2 and "'d0-0', which is not in the sample" in err
    assert "labels must cover exactly the sampled items" in err


def test_a_closed_stdout_is_not_reported_as_bad_input() -> None:
    """``rankcut audit sample ... | head -1``: the reader closing the pipe is no input error; the
    BrokenPipeError reaches click, which ends quietly, instead of 'error: [Errno 32] Broken pipe'."""
    from rankcut.cli.audit import _fail_cleanly

    @_fail_cleanly
    def step() -> None:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        step()


def test_label_conflicts_and_two_targets_name_the_options(review: dict[str, Path]) -> None:
    folder = review["dir"]
    code, _, err = run("freeze", "--run", review["run"], "--cut", review["run"], "--design", "excluded",
                       "--target-recall", "0.8", "--max-missed", "3", "--out", folder / "X")
    assert code == 2 and "not both (the excluded design takes --max-missed)" in err, err
    audit = folder / "S"
    cut = folder / "cut.run"
    assert run("stop", "--run", review["run"], "--qrels", review["qrels"], "--out", cut)[0] == 0
    for step in (("freeze", "--run", review["run"], "--cut", cut, "--target-recall", "0.8", "--seed", "4",
                  "--out", audit), ("plan", "--audit", audit), ("sample", "--audit", audit)):
        assert run(*step)[0] == 0
    first = (audit / "to_label.csv").read_text().splitlines()[1].split(",")
    flipped = folder / "flip.csv"
    relevant = {tuple(line.split()[::2]) for line in review["qrels"].read_text().splitlines()}
    flip = int((first[0], first[1]) not in relevant)
    flipped.write_text(f"query_id,doc_id,label\n{first[0]},{first[1]},{flip}\n")
    n1 = json.loads((audit / "manifest.json").read_text())["pools"]["n1"]
    code, _, err = run("label", "--audit", audit, "--oracle", "qrels", "--qrels", review["qrels"],
                       "--next", n1)
    assert code == 0, err
    code, _, err = run("label", "--audit", audit, "--from", flipped)
    assert code == 2 and "give --overwrite to replace it" in err, err
    assert run("certify", "--audit", audit)[0] == 1   # certified, not met yet (no audit label): not refused
    # "[ ] certify" read as never run to the e-discovery walk
    assert "  [ ] certify: run, the target not met yet\n" in run("status", "--audit", audit)[1]
    cert = audit / "certificate.json"   # an edited certificate is refused, not a certify that ran
    kept = cert.read_text()
    content = json.loads(kept)
    content["delta"] = 0.1
    cert.write_text(json.dumps(content))
    said = run("status", "--audit", audit)[1]
    assert "  [ ] certify\n" in said and "warning: " in said and "run, the target not met yet" not in said
    cert.write_text(kept)
    code, _, err = run("label", "--audit", audit, "--from", flipped)
    assert code == 2 and "a recorded label is never changed after that" in err, err


def test_graded_qrels_at_the_default_threshold_are_said_by_label(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text("".join(f"q0 Q0 d{r} {r + 1} {99 - r}.5 t\n" for r in range(40)))
    (tmp_path / "cut.run").write_text("".join(f"q0 Q0 d{r} {r + 1} {99 - r}.5 t\n" for r in range(10)))
    (tmp_path / "q.txt").write_text("".join(f"q0 0 d{r} {3 if r < 5 else 1 if r < 12 else 0}\n"
                                            for r in range(40)))
    audit = tmp_path / "A"
    for step in (["freeze", "--out", audit, "--run", tmp_path / "run.txt", "--cut", tmp_path / "cut.run",
                  "--design", "excluded", "--seed", 1], ["plan", "--audit", audit],
                 ["sample", "--audit", audit, "--excluded", 10]):
        assert run(*step)[0] == 0
    code, _, err = run("label", "--audit", audit, "--oracle", "qrels", "--qrels", tmp_path / "q.txt")
    assert code == 0, err
    assert "grades relevance up to 3; grade ≥ 1 counts as relevant (the default --threshold" in err


def test_sample_of_the_interleaved_design_says_it_froze_an_order(tmp_path: Path) -> None:
    """'drew 40 items: excluded 40, included 0 ... label the items listed in to_label.csv' and then
    'to_label.csv holds the one document the review asks for first' (the TAR practitioner walk):
    the interleaved review draws nothing to label; its sample freezes the audit order."""
    ranked = tmp_path / "topic.run"
    ranked.write_text("".join(f"T1 Q0 d{r} {r + 1} {100 - r} t\n" for r in range(40)))
    folder = tmp_path / "I"
    for step in (["freeze", "--run", ranked, "--design", "interleaved", "--target-recall", "0.8", "--seed",
                  "3", "--out", folder], ["plan", "--audit", folder]):
        code, _, err = run(*step)
        assert code == 0, err
    code, out, err = run("sample", "--audit", folder)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("froze the audit order of the collection's 40 documents (sample hash ")
    assert lines[1].startswith(f"{folder / 'to_label.csv'} holds the one document the review asks for first")
    assert "drew" not in out and "label the items listed" not in out


def test_oracle_labels_of_an_interleaved_review_draw_a_bar_on_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`audit label --oracle` of a large interleaved review records its steps one by one (128,000 at
    150,000 documents, a stop-56 walk): where bars are shown it draws one, and none under --json."""
    ranked, qrels = tmp_path / "topic.run", tmp_path / "q.txt"
    ranked.write_text("".join(f"T1 Q0 d{r} {r + 1} {100 - r} t\n" for r in range(40)))
    qrels.write_text("".join(f"T1 0 d{r} 1\n" for r in range(0, 40, 4)))
    for audit in (tmp_path / "A", tmp_path / "B"):
        freeze = ["--design", "interleaved", "--target-recall", "0.8", "--seed", "3", "--out", audit]
        for step in (["freeze", "--run", ranked, *freeze], ["plan", "--audit", audit],
                     ["sample", "--audit", audit]):
            assert run(*step)[0] == 0
    monkeypatch.setenv("RANKCUT_PROGRESS", "1")
    code, _, err = run("label", "--audit", tmp_path / "A", "--oracle", "qrels", "--qrels", qrels)
    assert code == 0 and "label: " in err and "document/s" in err, err
    code, out, err = run("label", "--audit", tmp_path / "B", "--oracle", "qrels", "--qrels", qrels, "--json")
    assert code == 0 and "label: " not in err and json.loads(out)["recorded"] > 0, err


@pytest.mark.parametrize(("design", "sizes"), [("excluded", ["--excluded", "40"]),
                                               ("two-pool", ["--excluded", "40", "--included", "10"])])
def test_with_no_target_the_next_line_names_the_sample_sizes(files: dict[str, Path], tmp_path: Path,
                                                             design: str, sizes: list[str]) -> None:
    """With no target frozen there is nothing to plan: plan's next line said `rankcut audit sample
    --audit B2`, which sample refuses without --excluded (a stop-56 walk)."""
    audit = tmp_path / design
    assert run("freeze", "--run", files["run"], "--cut", files["cut"], "--design", design, "--seed", "3",
               "--out", audit)[0] == 0
    code, out, err = run("plan", "--audit", audit)
    options = " ".join(s if s.startswith("--") else "N" for s in sizes)
    wanted = f"rankcut audit sample --audit {audit} {options}"
    assert code == 0 and f"next: {wanted}, with N the sample sizes you choose" in out, out + err
    assert f"next: {wanted}" in run("status", "--audit", audit)[1]
    assert run("sample", "--audit", audit)[0] == 2              # as printed before: refused
    code, out, err = run("sample", "--audit", audit, *sizes)    # with the sizes the line names
    assert code == 0, err
