"""The audit report (rankcut.audit.report): Markdown and HTML of a certified audit, on synthetic
runs, and the refusals that keep it to what it rebuilt from the verified certificates and the
manifest."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from audit_testdata import Data, _run_all

from rankcut.audit import workflow as wf
from rankcut.audit.designs import certificates
from rankcut.audit.folder import FrozenAudit
from rankcut.audit.manifest import load_manifest
from rankcut.audit.report import write_report
from rankcut.certify import prefixes as pf


def test_label_from_file_and_report(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "L"
    wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", max_missed=30, seed=3)
    wf.plan(audit)
    res = wf.sample(audit, excluded=20, allow_underpowered=True)
    lines = res.to_label.read_text().splitlines()
    filled = [lines[0]] + [
        ",".join([*x.split(",")[:2], "yes" if tuple(x.split(",")[:2]) in data.relevant else "no"])
        for x in lines[1:]]
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(filled[:11]) + "\n")
    first = wf.label(audit, from_file=labels)
    assert (first.recorded, first.missing) == (10, 10)
    labels.write_text("\n".join(filled) + "\n")
    assert wf.label(audit, from_file=labels).missing == 0
    wf.certify(audit)
    md = write_report(audit, tmp_path / "report.md")
    text = md.report.read_text()
    assert "Theorem 8" in text and "Assumption 1" in text and "target M0 ≤ 30" in text
    frozen, written = load_manifest(audit), json.loads(md.certificate.read_text())
    assert written["audit_id"] == frozen.audit_id
    # the report's JSON says what the audit is as the manifest froze it, the seed included
    assert {k: written.get(k) for k in ("design", "theorem", "sampling", "delta", "target", "seed")} == \
        {k: frozen[k] for k in ("design", "theorem", "sampling", "delta", "target", "seed")}
    page = write_report(audit, tmp_path / "report.html").report.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<code>M0 ≤ " in page and "<h2>Validity</h2>" in page
    with pytest.raises(ValueError, match=r"\*\.md or \*\.html"):
        write_report(audit, tmp_path / "report.txt")


def test_reports_of_families_and_bands(data: Data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fam = tmp_path / "fam"
    wf.freeze(fam, run=data.run, design="prefixes", depths=[5, 10, 20], max_missed=25, seed=2)
    _run_all(fam, data, excluded=100)
    files = write_report(fam, tmp_path / "fam.md")
    assert files.plot is not None and files.plot.read_bytes().startswith(b"\x89PNG")
    text = files.report.read_text()
    assert "| member | mean depth |" in text and "depth20" in text and "![plot](fam.png)" in text
    assert "| upper bound | outcome |" in text  # every column of the member table is named
    bands = tmp_path / "bands"
    wf.freeze(bands, run=data.run, cut=data.cut, design="stratified", bands=[5], seed=2)
    _run_all(bands, data, excluded=[10, 10])
    page = write_report(bands, tmp_path / "bands.html").report.read_text()
    assert "<h2>Bands</h2>" in page and "data:image/png;base64," in page
    # without matplotlib the report says so and carries no plot
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    files = write_report(fam, tmp_path / "bare.md")
    assert files.plot is None and "matplotlib is not installed" in files.report.read_text()
    # an edited certificate is refused
    cert = json.loads((fam / "certificate.json").read_text())
    cert["report"]["certificates"][0]["certificate"]["value"] = [0, 0, 0]
    (fam / "certificate.json").write_text(json.dumps(cert))
    with pytest.raises(ValueError, match=r"does not match its inputs .*: edited, or computed by a "
                                         r"rankcut whose bounds differ from this one's\); an edited "
                                         r"certificate is not reported \(certify again to rewrite it\)"):
        write_report(fam, tmp_path / "edited.md")


def _edit(audit: Path, change: Any) -> None:
    path = audit / "certificate.json"
    content = json.loads(path.read_text())
    change(content)
    path.write_text(json.dumps(content))


def test_the_report_prints_nothing_it_did_not_rebuild(data: Data, tmp_path: Path) -> None:
    """Verdict, chosen member, member and band tables are rebuilt from the verified certificates and
    the manifest; an edited one is refused, an edited text is not printed."""
    fam = tmp_path / "fam"
    wf.freeze(fam, run=data.run, design="prefixes", depths=[5, 10, 20], max_missed=5, seed=2)
    res = _run_all(fam, data, excluded=100)
    assert res.verdict == "no member meets M0 ≤ 5"
    original = (fam / "certificate.json").read_text()

    def restore() -> None:
        (fam / "certificate.json").write_text(original)

    for change, message in [
        (lambda c: c["members"][0].update(bound=1), r"members\[0\]\.bound: 1, rebuilt 87"),
        (lambda c: c.update(chosen=0), "its chosen is not what the certificates give"),
        (lambda c: c["verdict"].update(met=True, chosen="depth5"), "its verdict is not"),
        (lambda c: c.update(opened_at="2000-01-01T00:00:00.000000+00:00"), "opened_at .* opened.json says"),
        (lambda c: c.update(labels_hash="0" * 64), "labels_hash"),
        (lambda c: c["counts"].update(draws=99), "counts give draws = 99, but the sample holds 100 rows"),
        (lambda c: c.update(delta=0.2), "delta is 0.2, but the manifest froze 0.05"),
        (lambda c: c.pop("counts"), "holds no counts"),
    ]:
        restore()
        _edit(fam, change)
        with pytest.raises(ValueError, match=message):
            write_report(fam, tmp_path / "r.md")
    # a certificate recomputed consistently for another excluded pool: verify() passes, the
    # manifest's pool sizes do not
    restore()

    def other_pools(c: dict[str, Any]) -> None:
        entry = c["report"]["certificates"][0]["certificate"]
        forged = pf.prefix_bounds_shared_finite(**{**entry["inputs"], "excluded_sizes": [400, 300, 200]})
        c["report"]["certificates"][0]["certificate"] = forged.to_dict()

    _edit(fam, other_pools)
    with pytest.raises(ValueError, match="not those of the frozen manifest and its counts"):
        write_report(fam, tmp_path / "r.md")
    # an edited text is not printed: the rebuilt one is
    restore()
    _edit(fam, lambda c: c["verdict"].update(text="chosen: depth5 (least burden with M0 bound ≤ 5)"))
    text = write_report(fam, tmp_path / "r.md").report.read_text()
    assert "Verdict: no member meets M0 ≤ 5" in text and "chosen: depth5" not in text
    # bands of a stratified audit
    bands = tmp_path / "bands"
    wf.freeze(bands, run=data.run, cut=data.cut, design="stratified", bands=[5], seed=2)
    _run_all(bands, data, excluded=[10, 10])
    _edit(bands, lambda c: c["bands"][1].update(bound=0))
    with pytest.raises(ValueError, match=r"bands\[1\]\.bound"):
        write_report(bands, tmp_path / "b.md")
    # the curve of one cut ends at its certificate
    one = tmp_path / "one"
    wf.freeze(one, run=data.run, cut=data.cut, design="excluded", seed=2)
    _run_all(one, data, excluded=30)
    _edit(one, lambda c: c["curve"]["bound"].__setitem__(-1, 0.0))
    with pytest.raises(ValueError, match="curve does not end at the certificate"):
        write_report(one, tmp_path / "o.md")


def test_the_check_recomputes_no_certificate_it_rebuilt(data: Data, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The certificates rebuilt from the manifest and counts stand for the recomputation of the
    stored ones of the same inputs (an interleaved review's is a replay of every step): none is
    computed twice, and an edited value is still refused."""
    from rankcut.certify import result

    one = tmp_path / "one"
    wf.freeze(one, run=data.run, cut=data.cut, design="excluded", seed=2)
    _run_all(one, data, excluded=30)
    calls: list[Any] = []
    real = result.recompute
    monkeypatch.setattr(result, "recompute", lambda c: calls.append(c) or real(c))
    write_report(one, tmp_path / "one.md")
    assert calls == []
    original = (one / "certificate.json").read_text()
    _edit(one, lambda c: c["report"]["certificates"][0]["certificate"].update(value=0))
    with pytest.raises(ValueError, match="does not match its inputs"):
        write_report(one, tmp_path / "edited.md")
    # an input retyped (480 → 480.0) equals the rebuilt one to Python, not as written: recomputed,
    # and refused as the recomputation refuses it (the review of this change found it taken)
    (one / "certificate.json").write_text(original)
    inputs = json.loads(original)["report"]["certificates"][0]["certificate"]["inputs"]
    assert isinstance(inputs["corpus_size"], int)
    _edit(one, lambda c: c["report"]["certificates"][0]["certificate"]["inputs"].update(
        corpus_size=float(inputs["corpus_size"])))
    with pytest.raises(ValueError, match=r"does not match its inputs \(.*corpus_size must be"):
        write_report(one, tmp_path / "retyped.md")


def test_the_report_recounts_each_shared_reference_member(data: Data, tmp_path: Path) -> None:
    """A shared reference's effective sizes are recounted from the sample and the pools: a
    certificate.json forged consistently (counts, certificates, members, verdict all rebuilt from
    an edited n_eff) is refused."""
    fam = tmp_path / "fam"
    wf.freeze(fam, run=data.run, design="prefixes", depths=[5, 10, 20], max_missed=5, seed=2)
    _run_all(fam, data, excluded=100)
    write_report(fam, tmp_path / "ok.md")  # as certified: fine

    def forge(c: dict[str, Any]) -> None:
        stats = json.loads(json.dumps(c["counts"]))
        stats["members"]["draws"][2] += 1  # one more draw in E_3 than the sample holds
        report, findings = certificates(FrozenAudit(load_manifest(fam)), stats)
        c.update(json.loads(json.dumps({"counts": stats, "report": report.to_dict(), **findings.to_dict()})))

    _edit(fam, forge)
    with pytest.raises(ValueError, match=r"counts of draws \{'members': \[100, \d+, \d+\]\} are not those "
                                         r"of the sample"):
        write_report(fam, tmp_path / "r.md")


def test_the_report_never_writes_over_an_audit_file(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "A"
    wf.freeze(audit, run=data.run, cut=data.cut, design="excluded", seed=2)
    _run_all(audit, data, excluded=20)
    before = {f.name: f.read_bytes() for f in audit.iterdir()}
    for name in ("manifest.md", "certificate.html", "sample.md", "opened.html", "plan.md"):
        with pytest.raises(ValueError, match="a file of the audit"):
            write_report(audit, audit / name)
    assert {f.name: f.read_bytes() for f in audit.iterdir()} == before
    files = write_report(audit, audit / "report.md")  # a name of its own is fine, in the folder too
    assert files.certificate == audit / "report.json"
    # never into another audit's folder, whatever the name (its own report.json, or its files)
    other = tmp_path / "B"
    wf.freeze(other, run=data.run, cut=data.cut, design="excluded", seed=3)
    before = {f.name: f.read_bytes() for f in other.iterdir()}
    for name in ("manifest.md", "report.md", "notes.html"):
        with pytest.raises(ValueError, match=f"into {re.escape(str(other.resolve()))}, the folder of another "
                                             "audit: refused"):
            write_report(audit, other / name)
    assert {f.name: f.read_bytes() for f in other.iterdir()} == before
    assert wf.status(audit)["next"] is None


def test_the_report_replaces_only_its_own_earlier_report(data: Data, tmp_path: Path) -> None:
    """A report replaces its own earlier files (re-run after more labels), never a file it did not
    write: a user's notes, another audit's report, or a PNG without this audit's report beside it."""
    audit, other = tmp_path / "A", tmp_path / "B"
    for folder, seed in ((audit, 2), (other, 3)):
        wf.freeze(folder, run=data.run, cut=data.cut, design="excluded", seed=seed)
        _run_all(folder, data, excluded=20)
    out = tmp_path / "out"
    out.mkdir()
    first = write_report(audit, out / "report.md")
    assert first.replaced == ()
    again = write_report(audit, out / "report.md")   # its own: replaced, and said so
    assert set(again.replaced) == {out / "report.md", out / "report.json"} | (
        {out / "report.png"} if again.plot else set())
    assert write_report(audit, out / "report.html").replaced == (out / "report.json",)
    assert write_report(audit, out / "report.html").replaced == (out / "report.html", out / "report.json")

    def unchanged(name: str, content: bytes, match: str) -> None:
        (out / name).write_bytes(content)
        before = {f.name: f.read_bytes() for f in out.iterdir()}
        stem = Path(name).stem
        with pytest.raises(FileExistsError, match=match):
            write_report(audit, out / f"{stem}.md")
        assert {f.name: f.read_bytes() for f in out.iterdir()} == before   # nothing written
        for f in out.glob(f"{stem}.*"):
            f.unlink()

    mine = "exists and is not a report written by rankcut: refused"
    unchanged("notes.md", b"# my notes\n", mine)
    unchanged("notes.json", b'{"audit_id": "' + load_manifest(audit).audit_id.encode() + b'"}', mine)
    if again.plot:   # (a plot needs matplotlib)
        unchanged("notes.png", b"\x89PNG holiday", mine)   # no report beside it: not the report's plot
        upper = write_report(audit, out / "UPPER.MD")   # its plot is UPPER.png, its report UPPER.MD
        assert write_report(audit, out / "UPPER.MD").replaced == (upper.report, upper.certificate, upper.plot)
    unchanged("notes.md", b"# Audit report 0123456789ab\n", "belongs to the report of 0123456789ab")
    theirs = write_report(other, out / "theirs.md")
    with pytest.raises(FileExistsError, match=f"belongs to the report of {load_manifest(other).short_id}, "
                                              f"not of this one \\({load_manifest(audit).short_id}\\)"):
        write_report(audit, out / "theirs.html")   # the JSON beside it is the other audit's
    assert theirs.report.exists()
