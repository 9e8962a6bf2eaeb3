"""Every frozen input is parsed in full at freeze: a bad file is refused before its hash is frozen."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.audit import workflow
from rankcut.cli.audit import app


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    run, cut = tmp_path / "run.txt", tmp_path / "cut.run"
    lines = [f"q{q} Q0 d{q}-{r} {r + 1} {20 - r} t\n" for q in range(2) for r in range(20)]
    run.write_text("".join(lines))
    cut.write_text("".join(line for line in lines if int(line.split()[3]) <= 4))
    return run, cut


@pytest.mark.parametrize("content, says", [
    ('{"query_id": "q0", "doc_id": "d0-5", "text": "fine"}\n{"query_id": "q0", "doc_id": "d0-6", "text"\n',
     r"line 2: not valid JSON"),
    ('{"query_id": "q0", "doc_id": "d0-5", "text": 3}\n', r"line 1: 'text' must be a string"),
    ('{"query_id": "q0", "doc_id": "d0-5", "text": "a"}\n{"query_id": "q0", "doc_id": "d0-5", "text": "b"}\n',
     r"line 2: query 'q0', document 'd0-5' is given twice"),
    ('{"query_id": "q0", "doc_id": "d0-5", "text": "a", "query": "x"}\n'
     '{"query_id": "q0", "doc_id": "d0-6", "text": "b", "query": "y"}\n',
     r"line 2: query 'q0' has a different text than on line 1"),
])
def test_a_malformed_texts_file_is_refused_at_freeze(runs: tuple[Path, Path], tmp_path: Path, content: str,
                                                     says: str) -> None:
    run, cut = runs
    texts = tmp_path / "texts.jsonl"
    texts.write_text(content)
    audit = tmp_path / "A"
    with pytest.raises(ValueError, match=rf"texts .*texts.jsonl, {says}"):
        workflow.freeze(audit, run=run, cut=cut, design="excluded", max_missed=5, seed=1, texts=texts)
    assert not audit.exists()   # nothing written: the folder is made only once every input parsed
    res = CliRunner().invoke(app, ["freeze", "--run", str(run), "--cut", str(cut), "--design", "excluded",
                                   "--max-missed", "5", "--seed", "1", "--texts", str(texts), "--out",
                                   str(audit)])
    assert res.exit_code == 2 and res.stderr.startswith(f"error: --texts {texts}, line"), res.stderr
    assert not audit.exists()


def test_a_good_texts_file_still_reaches_the_list_to_label(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run, cut = runs
    texts = tmp_path / "texts.jsonl"
    texts.write_text("".join(f'{{"query_id": "q{q}", "doc_id": "d{q}-{r}", "text": "t{q}-{r}"}}\n'
                             for q in range(2) for r in range(20)))
    workflow.freeze(tmp_path / "A", run=run, cut=cut, design="excluded", max_missed=5, seed=1, texts=texts)
    workflow.plan(tmp_path / "A")
    to_label = workflow.sample(tmp_path / "A").to_label
    assert to_label.read_text().splitlines()[0].endswith(",text")


def test_texts_of_other_documents_are_refused_and_missing_ones_warned_of(runs: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    """Texts of another run (DL20's audit frozen with DL19's texts) were frozen without a word, and
    every item was then labelled by id alone; a few missing texts were blank without a word."""
    run, cut = runs
    other = tmp_path / "other.jsonl"
    other.write_text("".join(f'{{"query_id": "x{q}", "doc_id": "d{q}-{r}", "text": "t"}}\n'
                             for q in range(2) for r in range(20)))
    res = CliRunner().invoke(app, ["freeze", "--run", str(run), "--cut", str(cut), "--design", "excluded",
                                   "--max-missed", "5", "--seed", "1", "--texts", str(other), "--out",
                                   str(tmp_path / "A")])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert (f"--texts {other} holds no text for 40 of the 40 documents the run lists (e.g. query 'q0', "
            "document 'd0-0'): the texts of another run or topic set?") in res.stderr
    assert not (tmp_path / "A").exists()
    some = tmp_path / "some.jsonl"
    some.write_text("".join(f'{{"query_id": "q{q}", "doc_id": "d{q}-{r}", "text": "t"}}\n'
                            for q in range(2) for r in range(20) if (q, r) != (1, 7)))
    with pytest.warns(workflow.AuditWarning, match=r"holds no text for 1 of the 40 documents the run lists "
                                                   r"\(e\.g\. query 'q1', document 'd1-7'\): they are shown"):
        workflow.freeze(tmp_path / "B", run=run, cut=cut, design="excluded", max_missed=5, seed=1, texts=some)


def test_a_warning_about_the_run_names_the_run(tmp_path: Path) -> None:
    """A RAG engineer's walk: freeze warned "the scores rise with the rank column in 1 of the 2
    queries" without saying of which file, where evaluate and cut name it."""
    run, cut = tmp_path / "neg.run", tmp_path / "cut.run"
    sign = {0: -1, 1: 1}   # q0's scores negated
    lines = [f"q{q} Q0 d{q}-{r} {r + 1} {(20 - r) * sign[q]} t\n" for q in range(2) for r in range(20)]
    run.write_text("".join(lines))
    cut.write_text("".join(lines[16:24]))   # the 4 highest scores of each: q0's last ranks, q1's first
    with pytest.warns(UserWarning, match=rf"^{run}: the scores rise with the rank column in 1 of the 2"):
        workflow.freeze(tmp_path / "A", run=run, cut=cut, design="excluded", max_missed=5, seed=1)
