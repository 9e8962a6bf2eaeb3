"""A readable audit report (Markdown or HTML), the certificate JSON beside it, and a plot.

The report is written from the audit folder's files, never from the labels:
``manifest.json`` (checked against its content hash), ``sample.jsonl``/``sample.json``,
``opened.json`` and ``certificate.json`` — and, for a shared reference sample, the frozen input
files (hashes checked), from which each member's effective size is recounted. Nothing in
``certificate.json`` is printed as found: every certificate in it is recomputed from its recorded inputs with
:func:`rankcut.certify.result.verify`, the certificates, verdict, member table, chosen member, band
table and notes are rebuilt from the frozen manifest and the sample's counts (``counts``) and
printed as rebuilt; a number among them (bound, input, verdict, chosen member) that differs from
what the file says is refused (an edited wording is just not printed), as is a certificate whose design, δ,
target, sample hash, labels hash or opening time disagrees with the manifest, the sample or
``opened.json``, and counts of draws that are not those of ``sample.jsonl``. Only the
bound-against-labels curve needs the labels themselves: its last point is checked against the
certificate, the rest is display. It says what was certified and under which theorem, the burden,
the missed-count or missed-mass bound, the recall bound (two-pool), which member of a nested family
was chosen and
why (Eq. 1 or Theorem 19), the joint confidence and how ``δ`` was spent, and the two conditions
the guarantee rests on (Assumptions 1 and 2, with the freeze and opening times).

The plot (matplotlib, imported lazily; when it is missing the report says so and carries no plot):

* nested families: the certified bound and the burden against the mean depth of each member;
* one cut: the bound against the labels spent, recomputed from the first ``j`` draws of the frozen
  sample — for display only (stopping early because of it is not covered, Remark 20);
* stratified: the bound of each rank band.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankcut.audit.folder import AUDIT_FILES
from rankcut.audit.manifest import (
    MANIFEST_FILE,
    load_manifest,
    read_json,
    write_json_atomic,
    write_text_atomic,
)
from rankcut.data.io import write_atomic

if TYPE_CHECKING:  # rankcut.certify loads scipy: imported where it is used
    from rankcut.certify.report import JointReport

__all__ = ["ReportFiles", "validity_lines", "write_report"]

REPORT_FORMATS = (".md", ".html")
_PLOT_NOTE = "no plot: matplotlib is not installed (pip install 'rankcut[eval]')"


@dataclass(frozen=True)
class ReportFiles:
    """The files :func:`write_report` wrote: the report, the certificate JSON and the plot (or None),
    and those of them that replaced a file of the same name."""

    report: Path
    certificate: Path
    plot: Path | None
    replaced: tuple[Path, ...] = ()
    warning: str | None = None   # labels or inputs changed since the certificate (the report says so)

    def said(self) -> str:
        """``wrote r.md and r.json and r.png (replacing the earlier r.json)``."""
        wrote = [self.report, self.certificate] + ([self.plot] if self.plot else [])
        again = f" (replacing the earlier {', '.join(map(str, self.replaced))})" if self.replaced else ""
        return f"wrote {' and '.join(map(str, wrote))}{again}"


def _normal(obj: Any) -> Any:
    """``obj`` as plain JSON data (tuples as lists, numbers as JSON reads them back)."""
    return json.loads(json.dumps(obj, allow_nan=False))


def _essential(report: Mapping[str, Any]) -> Any:
    """What a joint report certifies: δ, the budget, and per certificate its name, charges,
    function, inputs and results (not the wording)."""
    keys = ("function", "inputs", "value", "allocation", "delta", "theorem", "quantity", "side")
    return _normal({"delta": report["delta"], "budget": report["budget"],
                    "certificates": [{"name": e["name"], "charge": e["charge"],
                                      **{k: e["certificate"].get(k) for k in keys}}
                                     for e in report["certificates"]]})


def _first_difference(a: Any, b: Any, where: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{where}.{k}" if where else str(k))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return f"{where or 'value'}: {a!r}, rebuilt {b!r}"


def checked_certificate(audit_dir: str | Path) -> tuple[dict[str, Any], dict[str, Any], JointReport]:
    """The manifest, the certificate content as rebuilt and checked, and the rebuilt joint report.

    :raises ValueError: for a certificate that is not what certify wrote from this folder (edited, of
        another audit, its sample or opening changed), naming what differs.
    """
    from rankcut.audit import folder as af
    from rankcut.audit.designs import DESIGNS, certificates
    from rankcut.certify.report import JointReport
    from rankcut.certify.result import verify

    manifest = load_manifest(audit_dir)
    folder = manifest.folder
    path = folder / af.CERTIFICATE_FILE
    if not path.exists():
        raise af.AuditStepError(f"no certificate yet ({path} missing): run certify first")
    content = read_json(path, "written by certify")
    if not isinstance(content, dict) or content.get("audit_id") != manifest.audit_id:
        owner = content.get("audit_id") if isinstance(content, dict) else None
        raise ValueError(f"{path} belongs to audit {str(owner)[:12]}, not to this audit "
                         f"{manifest.short_id}: certify again")

    def refuse(what: str) -> ValueError:
        return ValueError(f"{path}: {what}; an edited certificate is not reported (certify again to "
                          "rewrite it)")

    try:
        stored = JointReport.from_dict(content["report"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:   # a key or its type edited away
        raise refuse(f"its report is not one certify writes ({type(exc).__name__}: {exc})") from None

    # what the audit is comes from the manifest: the file must agree, and the report takes the frozen
    # rule, never the file or a caller (the seed included)
    rule = {"design": manifest["design"], "theorem": manifest["theorem"], "sampling": manifest["sampling"],
            "delta": manifest["delta"], "target": manifest.get("target") or None}
    for key, frozen in rule.items():
        if content.get(key) != frozen:
            raise refuse(f"{key} is {content.get(key)!r}, but the manifest froze {frozen!r}")
    # the sample and the opening it was certified from
    info = read_json(folder / af.SAMPLE_FILE, "written by sample")
    items_path = folder / af.SAMPLE_ITEMS
    data = items_path.read_bytes() if items_path.is_file() else None   # read once: hashed, then parsed
    if data is None or hashlib.sha256(data).hexdigest() != info.get("sample_hash"):
        raise ValueError(f"{items_path} is missing or is not the sample of {folder / af.SAMPLE_FILE}")
    opened = read_json(folder / af.OPENED_FILE, "written by certify")
    for key, value, source in (("sample_hash", info.get("sample_hash"), af.SAMPLE_FILE),
                               ("sample_hash", opened.get("sample_hash"), af.OPENED_FILE),
                               ("labels_hash", opened.get("labels_hash"), af.OPENED_FILE),
                               ("opened_at", opened.get("opened_at"), af.OPENED_FILE)):
        if content.get(key) != value:
            raise refuse(f"{key} is {str(content.get(key))[:32]!r}, but {source} says {str(value)[:32]!r}")
    rows = af.rows_of(data.decode("utf-8"))
    counts = content.get("counts")
    if not isinstance(counts, dict):
        raise refuse("it holds no counts (it was not written by certify, or was edited)")
    _check_draws(counts, rows, manifest["design"], refuse, folder)
    # everything else is rebuilt from the manifest and the counts, and must be what the file says
    frozen = af.FrozenAudit(manifest)
    try:
        report, findings = certificates(frozen, counts)
        extra = findings.to_dict()
    except (KeyError, TypeError, ValueError) as exc:
        raise refuse(f"its counts do not give certificates ({exc})") from None
    again = {name: cert for name, cert, _ in report.entries}
    for name, cert, _ in stored.entries:
        try:   # the rebuilt certificate of the same inputs stands for the recomputation (verify checks)
            verify(cert, again.get(name))
        except ValueError as exc:   # edited, or computed by a rankcut whose bounds differ (verify says)
            raise refuse(f"certificate {name!r} does not match its inputs ({exc})") from None
    rebuilt_report = _normal(report.to_dict())
    rebuilt, found = _essential(rebuilt_report), _essential(content["report"])
    if rebuilt != found:
        raise refuse(f"its certificates are not those of the frozen manifest and its counts "
                     f"({_first_difference(found, rebuilt)})")
    for key in ("verdict", "members", "chosen", "bands"):
        want = _normal(extra.get(key))
        if key == "verdict" and want is not None:
            want = {k: v for k, v in want.items() if k != "text"}
        got = content.get(key)
        if key == "verdict" and isinstance(got, dict):
            got = {k: v for k, v in got.items() if k != "text"}
        if _normal(got) != want:
            raise refuse(f"its {key} is not what the certificates give ({_first_difference(got, want, key)})")
    curve = content.get("curve")
    if curve is not None:
        _check_curve(curve, report, counts, refuse)
    total = DESIGNS[manifest["design"]].total   # the sample's size, recounted, never the file's
    size = ({"draws": len(rows), "items": len({(r["query_id"], r["doc_id"]) for r in rows})}
            if total == "draws" else {total: len(rows)})
    checked = {**content, **_normal(extra), "report": rebuilt_report, "audit_id": manifest.audit_id, **rule,
               "seed": manifest["seed"], "labels": {**content.get("labels", {}), **size}}
    return manifest.to_dict(), checked, report


def _check_draws(counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], design: str,
                 refuse: Any, folder: Path) -> None:
    """The counts of draws per pool, band or member are those of ``sample.jsonl``, recounted (by the
    design: :meth:`~rankcut.audit.designs.base.Design.draw_counts`)."""
    from rankcut.audit.designs import DESIGNS

    total = DESIGNS[design].total
    if counts.get(total) != len(rows):
        raise refuse(f"its counts give {total} = {counts.get(total)}, but the sample holds {len(rows)} rows")
    got, expected = DESIGNS[design].draw_counts(counts, rows, folder)
    if got != expected:
        raise refuse(f"its counts of draws {got} are not those of the sample {expected}")


def _check_curve(curve: Mapping[str, Any], report: JointReport, counts: Mapping[str, Any],
                 refuse: Any) -> None:
    """The curve's last point is the certificate itself (its earlier points need the labels)."""
    name = "recall" if curve.get("quantity") == "recall" else "missed"
    try:
        value = float(report[name].value)
    except KeyError:
        raise refuse(f"its curve is of {curve.get('quantity')!r}, which this design does not "
                     "certify") from None
    labels, bound = list(curve.get("labels") or []), list(curve.get("bound") or [])
    end = (counts["excluded"]["labelled"] if "labelled" in (counts.get("excluded") or {}) else
           counts["steps"] if "steps" in counts else counts["draws"])   # the review: the steps read
    off = bool(labels) and (labels[-1] != end
                            or abs(float(bound[-1]) - value) > 1e-9 * max(1.0, abs(value)))
    if len(labels) != len(bound) or off:
        raise refuse("its curve does not end at the certificate")


def _num(x: Any) -> str:
    from rankcut.certify.result import format_bound

    return format_bound(x, "upper")


def _noun(manifest: Mapping[str, Any]) -> str:
    """An "audit", or a "review" (the interleaved design)."""
    from rankcut.audit.designs import DESIGNS

    return DESIGNS[manifest["design"]].noun


def _facts(manifest: Mapping[str, Any], content: Mapping[str, Any]) -> list[tuple[str, str]]:
    from rankcut.audit.designs import DESIGNS

    own = DESIGNS[manifest["design"]].frozen_facts(manifest)
    if own is not None:
        return own
    pools = manifest["pools"]
    items = pools["items"]
    inputs = manifest["inputs"]
    rows = [("audit id", manifest["audit_id"]),
            ("design", f"{manifest['design']} — {manifest['theorem']}"),
            ("run", inputs["run"]["path"])]
    if "cut" in inputs:
        rows.append(("cut run" if manifest.get("family") is None else "model cut", inputs["cut"]["path"]))
    if manifest.get("family"):
        rows.append(("nested family", ", ".join(manifest["family"]["names"])))
    rows += [("queries", str(pools["queries"])), ("items N", str(items))]
    if manifest.get("family") is None:
        rows.append(("burden N1", f"{pools['n1']} items ({pools['n1'] / items:.3g} of N)"))
        rows.append(("excluded pool N0", str(pools["n0"])))
    if manifest.get("corpus"):
        rows.append(("corpus", f"{manifest['corpus']['documents']} documents ({manifest['corpus']['kind']})"))
    rows += [("sampling", manifest["sampling"]), ("seed", str(manifest["seed"])),
             ("δ and its allocation", ", ".join(f"{k} {v:g}" for k, v in manifest["allocation"].items())),
             ("target", _target_text(manifest.get("target")))]
    return rows


def _target_text(target: Mapping[str, Any] | None) -> str:
    if not target:
        return "none (bounds only)"
    if "recall" in target:
        return f"recall ≥ {target['recall']:g}"
    return f"at most {target['max_missed']} missed relevant items"


def _headline_rows(report: JointReport) -> list[tuple[str, str, str]]:
    return [(name, cert.headline(), cert.statement) for name, cert, _ in report.entries]


def _member_table(content: Mapping[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    members = content.get("members") or []
    if len(members) <= 1 and not content.get("bands"):
        return None
    if content.get("bands"):
        head = ["band", "ranks", "items", "sampled", "relevant", "upper bound"]
        return head, [[str(b["band"]), b["ranks"], str(b["size"]), str(b["sample"]), str(b["relevant"]),
                       _num(b["bound"])] for b in content["bands"]]
    chosen = content.get("chosen")
    head = ["member", "mean depth", "burden N1", "excluded N0", "sample", "relevant", "upper bound",
            "outcome"]
    rows = []
    for i, m in enumerate(members):
        mark = "← chosen" if chosen == i else ("" if m.get("passed") is None else
                                               ("passed" if m["passed"] else "failed"))
        bound = "not tested" if m["bound"] is None else f"{m['unit']} ≤ {_num(m['bound'])}"
        if m.get("bound_of"):   # an earlier member's bound, whose pool holds this one's
            bound += f" (as {m['bound_of']}'s, whose pool holds it)"
        rows.append([m["name"], f"{m['mean_depth']:.3g}", str(m["burden"]), str(m["n0"]), str(m["sample"]),
                     str(m["relevant"]), bound, mark])
    return head, rows


def validity_lines(manifest: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """What the certificate rests on, in words (the report's Validity section; the page's result)."""
    from rankcut.audit.designs import DESIGNS

    own = DESIGNS[manifest["design"]].validity(manifest, content)
    if own is not None:
        return own
    return [
        f"Assumption 1 (design before certification): the {_noun(manifest)} was frozen at "
        f"{manifest['frozen_at']} and "
        f"its labels were first opened at {content['opened_at']}; the sample ({content['sample_hash'][:12]}) "
        "is the one the frozen manifest and seed draw.",
        "Assumption 2 (noiseless labels): the bounds hold if every recorded label is the true relevance.",
    ]


def _relevant_draws(content: Mapping[str, Any]) -> int:
    """Relevant draws (unlabelled ones counted as the certificate counts them), from the counts."""
    counts = content["counts"]
    if "bands" in counts:
        return int(sum(counts["bands"]["relevant"]))
    if "members" in counts:
        draws, relevant = counts["members"]["draws"], counts["members"]["relevant"]
        # separate samples add up to the draws; a shared reference counts every draw in E_1 first
        return int(sum(relevant)) if sum(draws) == counts["draws"] else int(relevant[0])
    return int(sum(counts[k]["relevant"] for k in ("excluded", "included") if k in counts))


def _summary(manifest: Mapping[str, Any], content: Mapping[str, Any], report: JointReport) -> list[str]:
    from rankcut.audit.designs import DESIGNS
    from rankcut.certify.result import confidence_text

    lab, counts = content["labels"], content["counts"]
    spent = (DESIGNS[content["design"]].spent_text(counts, manifest)
             or f"Labels spent: {lab['draws']} draws, {lab['items']} distinct items; "
                f"{_relevant_draws(content)} draws counted relevant.")
    events = ", ".join(f"{e} {v:g}" for e, v in report.budget.items())
    joint = (f"Joint confidence at least {confidence_text(report.joint_delta)} (union bound over {events})."
             if len(report.budget) > 1 else
             f"Confidence at least {confidence_text(report.joint_delta)} (δ = {report.joint_delta:g}).")
    lines = [joint, spent]
    sources = content.get("label_sources") or {}
    if sources:   # every one: the report is what a team shows for who answered what
        lines.append("Labels from: " + "; ".join(f"{source} ({n:,})" for source, n in sources.items()) + ".")
    verdict = content.get("verdict")
    if verdict:
        lines.append(f"Verdict: {verdict['text']}")
    lines.extend(content.get("notes", []))
    return lines


# ---------------------------------------------------------------------------------------------
# plot


def _plot_png(content: Mapping[str, Any], manifest: Mapping[str, Any]) -> bytes | None:
    """The report's figure (:func:`report_figure`) as PNG bytes, or None when matplotlib is missing."""
    fig = report_figure(content, manifest)
    if fig is None:
        return None
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def report_figure(content: Mapping[str, Any], manifest: Mapping[str, Any]) -> Any:
    """The report's figure (a matplotlib ``Figure``), or None when matplotlib is missing. An
    interleaved review's relevant documents found are drawn in a panel of their own below the
    bound: on a second y axis of the bound's panel, the found curve's plateau read as recall
    where it met the target line."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # matplotlib is an optional extra
        return None
    from rankcut.audit.designs import DESIGNS

    curve = content.get("curve") or {}
    members = content.get("members") or []
    found = bool(curve.get("found")) and not content.get("bands") and len(members) <= 1
    fig = Figure(figsize=(6.4, 5.2 if found else 3.8))
    FigureCanvasAgg(fig)
    if found:
        ax, low = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    else:
        ax = fig.add_subplot()
    if content.get("bands"):
        bands = content["bands"]
        ax.bar([b["ranks"] for b in bands], [b["bound"] for b in bands], color="tab:blue")
        ax.set_xlabel("rank band below the cut")
        ax.set_ylabel("certified upper bound per band")
        ax.set_title("Stratified audit: bound of each band")
    elif len(members) > 1:
        tested = [m for m in members if m["bound"] is not None]
        ax.plot([m["mean_depth"] for m in tested], [m["bound"] for m in tested], "o-", color="tab:red",
                label=f"certified {members[0]['unit']} upper bound")
        ax.set_xlabel("mean depth per query (member of the family)")
        ax.set_ylabel(f"certified {members[0]['unit']} bound", color="tab:red")
        twin = ax.twinx()
        twin.plot([m["mean_depth"] for m in members], [m["burden"] for m in members], "s--", color="tab:gray",
                  label="burden N1")
        twin.set_ylabel("burden N1 (items kept)", color="tab:gray")
        target = (content.get("target") or {}).get("max_missed")
        if target is not None:
            limit = target if members[0]["unit"] == "M0" else target / content["pools"]["items"]
            ax.axhline(limit, color="tab:red", ls=":", lw=1, label="target")
        chosen = content.get("chosen")
        if chosen is not None:
            ax.axvline(members[chosen]["mean_depth"], color="tab:green", lw=1, label="chosen")
        ax.legend(loc="upper center", fontsize=8)
        ax.set_title("Certified bound and burden against prefix depth")
    else:
        quantity = curve.get("quantity", "")
        bound = f"certified {'lower' if quantity == 'recall' else 'upper'} bound on {quantity}"
        ax.plot(curve.get("labels", []), curve.get("bound", []), "o-", color="tab:red", label=bound)
        ax.set_ylabel(bound, color="tab:red")
        if quantity == "recall":
            ax.set_ylim(0, 1.02)
        if DESIGNS[content["design"]].anytime:
            adaptive = DESIGNS[content["design"]].adaptive
            rho = (content.get("target") or {}).get("recall")
            if rho is not None:
                ax.axhline(rho, color="tab:green", ls=":", lw=1, label=f"target recall {rho:g}")
            # the interleaved review in its screener's words (records in a review)
            docs = DESIGNS[content["design"]].words(manifest).items
            from matplotlib.ticker import MaxNLocator

            bottom = ax
            if found:   # the interleaved review: the relevant documents found by then, in their panel
                low.plot(curve["labels"], curve["found"], "s-", color="tab:gray", ms=4)
                low.set_ylabel(f"relevant {docs}\nfound", color="tab:gray")
                low.yaxis.set_major_locator(MaxNLocator(integer=True))
                low.set_ylim(bottom=0)   # counts start at none found
                bottom = low
            bottom.set_xlabel(f"{docs} read (screened or audited)" if adaptive
                              else "audit labels (the audit order, after the cut)")
            bottom.xaxis.set_major_locator(MaxNLocator(integer=True))   # documents read: counts
            # below the axes: inside, it hid the end of the bound
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2 if not found else -0.08), ncol=2,
                      fontsize=8, frameon=False)
            ax.set_title(f"Recall bound as the {'review' if adaptive else 'audit'} goes "
                         "(anytime-valid: every point holds)")
        else:
            ax.set_xlabel("labels spent (first j draws of the frozen sample)")
            ax.set_title("Labels spent against the bound (display only, Remark 20)")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# rendering


def render_markdown(manifest: Mapping[str, Any], content: Mapping[str, Any], report: JointReport,
                    plot: str | None) -> str:
    """The report as Markdown; ``plot`` is the PNG file name beside it, or None."""
    out = [f"# {_noun(manifest).capitalize()} report {manifest['audit_id'][:12]}", "", report.title, "",
           "## Result", ""]
    out += [f"- {line}" for line in _summary(manifest, content, report)]
    out += ["", "## Certificates", ""]
    for name, headline, statement in _headline_rows(report):
        out += [f"- **{name}**: `{headline}`  ", f"  {statement}"]
    for key, value in report.facts.items():
        out.append(f"- {key} = {value} (known exactly, no labels needed)")
    table = _member_table(content)
    if table is not None:
        head, rows = table
        out += ["", "## Members" if not content.get("bands") else "## Bands", "",
                "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", "## Plot", "", f"![plot]({plot})" if plot else _PLOT_NOTE]
    out += ["", "## What was frozen", "", "| | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in _facts(manifest, content)]
    out += ["", "## Validity", ""] + [f"- {line}" for line in validity_lines(manifest, content)]
    return "\n".join(out) + "\n"


def render_html(manifest: Mapping[str, Any], content: Mapping[str, Any], report: JointReport,
                png: bytes | None) -> str:
    """The report as one self-contained HTML page (the plot embedded as a data URI)."""
    e = html.escape

    def table(head: Sequence[str] | None, rows: Sequence[Sequence[str]]) -> str:
        h = "" if head is None else "<tr>" + "".join(f"<th>{e(c)}</th>" for c in head) + "</tr>"
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
        return f"<table>{h}{body}</table>"

    noun = _noun(manifest).capitalize()
    parts = [f"<h1>{noun} report {e(manifest['audit_id'][:12])}</h1>", f"<p>{e(report.title)}</p>",
             "<h2>Result</h2><ul>" + "".join(f"<li>{e(s)}</li>" for s in _summary(manifest, content, report))
             + "</ul>",
             "<h2>Certificates</h2><ul>"
             + "".join(f"<li><b>{e(n)}</b>: <code>{e(h)}</code><br>{e(s)}</li>"
                       for n, h, s in _headline_rows(report))
             + "".join(f"<li>{e(str(k))} = {e(str(v))} (known exactly, no labels needed)</li>"
                       for k, v in report.facts.items()) + "</ul>"]
    member_table = _member_table(content)
    if member_table is not None:
        parts.append(("<h2>Bands</h2>" if content.get("bands") else "<h2>Members</h2>")
                     + table(*member_table))
    if png is not None:
        data = base64.b64encode(png).decode("ascii")
        parts.append(f'<h2>Plot</h2><img alt="plot" src="data:image/png;base64,{data}">')
    else:
        parts.append(f"<h2>Plot</h2><p>{e(_PLOT_NOTE)}</p>")
    parts.append("<h2>What was frozen</h2>" + table(None, _facts(manifest, content)))
    parts.append("<h2>Validity</h2><ul>"
                 + "".join(f"<li>{e(s)}</li>" for s in validity_lines(manifest, content)) + "</ul>")
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
             "code{background:#f4f4f4}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{noun} "
            f"{e(manifest['audit_id'][:12])}</title><style>{style}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


def _refuse_audit_files(audit_dir: str | Path, targets: Sequence[Path]) -> None:
    """A report file must not replace a file of any audit: in this audit's folder, no name of an
    audit file (``--out AUDIT/manifest.md`` would write the certificate JSON over
    ``manifest.json``); in the folder of another audit (one holding a ``manifest.json``), nothing
    at all — that folder is the record of another audit (Assumption 1, §2.3)."""
    folder = Path(audit_dir).resolve()
    for target in targets:
        where = target.resolve()
        if where.parent == folder:
            if where.name in AUDIT_FILES:
                raise ValueError(f"the report would write {target}, a file of the audit {audit_dir}: "
                                 "refused, a report never replaces an audit's files; name the report "
                                 "otherwise (e.g. report.md)")
        elif (where.parent / MANIFEST_FILE).exists():
            raise ValueError(f"the report would write {target} into {where.parent}, the folder of another "
                             "audit: refused, a report never writes into another audit's folder (it could "
                             f"replace that audit's files); write it outside it, e.g. into {audit_dir}")


_HEADING = re.compile(r"(?:# |<h1>)\w+ report ([0-9a-f]{12})(?:</h1>)?$")


def _report_of(path: Path) -> str | None:
    """The short audit id a report file (Markdown, HTML or certificate JSON) written by
    :func:`write_report` names, or None when ``path`` is no such file.

    :raises FileExistsError: when ``path`` exists but cannot be read (nothing shows whose it is)."""
    if not path.exists():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    except OSError as err:
        raise FileExistsError(f"{path} exists and cannot be read ({err.strerror}), so it is not known to be "
                              "a report of this audit: refused; name a new report file (--out)") from None
    if path.suffix.lower() == ".json":
        try:
            content = json.loads(text)
        except ValueError:
            return None
        owner = content.get("audit_id") if isinstance(content, dict) else None
        return owner[:12] if isinstance(owner, str) and "report" in content else None
    return next((m.group(1) for line in text.splitlines()[:12] if (m := _HEADING.match(line.strip()))), None)


def _refuse_foreign(report: Path, targets: Sequence[Path], short_id: str) -> None:
    """Refuse to replace a file that is not a report of this audit (``short_id``) written before:
    a user's own ``notes.md``, a report of another audit, a PNG without this audit's report
    ``report`` beside it (the plot is written with its Markdown report, and replaced with it).
    Nothing is written before this check."""
    for target in targets:
        if not target.exists():
            continue
        owner = _report_of(report if target.suffix.lower() == ".png" else target)
        if owner is None:
            raise FileExistsError(f"{target} exists and is not a report written by rankcut: refused, a "
                                  "report never replaces a file it did not write; name a new report file "
                                  "(--out) or remove that one")
        if owner != short_id:
            raise FileExistsError(f"{target} belongs to the report of {owner}, not of this one ({short_id}): "
                                  "name a new report file (--out) or remove that one")


def _changed_since(audit_dir: str | Path) -> tuple[str | None, str | None]:
    """Refuse to report a certificate that labels read since have made out of date (sequential
    and interleaved designs: the audit goes on after a certify, and the report would say "not met"
    of an audit that is met now). Labels edited or deleted after the opening, and inputs changed
    after the freeze, do not stop the report, which is of the certificate written then: returns
    what ``status`` warns of them (None when nothing changed), for the report to say."""
    from rankcut.audit.folder import AuditStepError
    from rankcut.audit.options import spelled
    from rankcut.audit.workflow import status

    info = status(audit_dir, check_certificate=False)   # write_report has checked it
    if info.get("since_certify"):
        raise AuditStepError(f"the certificate is out of date ({info['since_certify']} read since the last "
                             f"certify): run {spelled('certify')} again, then {spelled('report')}")
    return info.get("labels_changed"), info.get("inputs_changed")


def write_report(audit_dir: str | Path, out: str | Path, notes: Sequence[str] = ()) -> ReportFiles:
    """Write the report of a certified audit (step 6).

    :param out: ``report.md`` or ``report.html``. Beside it: ``<stem>.json`` (the certificate JSON)
        and, for Markdown, ``<stem>.png`` (the plot; embedded in the HTML page instead).
    :param notes: sentences the caller adds to the report's notes, after its warnings (a review's
        answers kept and not counted, its records file changed since the start); the certificate
        JSON stays as certify wrote it.
    :raises AuditStepError: before :func:`~rankcut.audit.workflow.certify`, and after labels
        read since the last certify.
    :raises FileExistsError: for a report, JSON or plot file of that name that this audit's report
        did not write (:func:`_refuse_foreign`).
    :raises ValueError: for another format, a report, JSON or plot name that is a file of the audit
        (``manifest.json``, ``certificate.json``, …), or a certificate that does not match its
        inputs, the manifest, the sample or the opening.
    """
    path = Path(out)
    if path.suffix.lower() not in REPORT_FORMATS:
        raise ValueError(f"the report is Markdown or HTML: name it *.md or *.html, got {path.name}")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {path.parent} does not exist")
    _refuse_audit_files(audit_dir, [path, path.with_suffix(".json"), path.with_suffix(".png")])
    manifest, content, report = checked_certificate(audit_dir)
    changed, inputs_changed = _changed_since(audit_dir)
    png = _plot_png(content, manifest)
    cert_path = path.with_suffix(".json")
    plot = path.with_suffix(".png") if png is not None and path.suffix.lower() != ".html" else None
    targets = tuple(p for p in (path, cert_path, plot) if p is not None)
    _refuse_foreign(path, targets, manifest["audit_id"][:12])
    replaced = tuple(p for p in targets if p.exists())
    write_json_atomic(cert_path, content)   # the certificate as certify wrote it
    said = [] if changed is None else [
        f"the labels changed after this certificate was written ({changed}): the report is of the "
        "certificate as certify wrote it, from the labels as they were then"]
    if inputs_changed is not None:   # as status says it: certify refuses the audit now
        said.append(f"an input changed after the audit was frozen ({inputs_changed}): the report is of the "
                    "certificate as certify wrote it, from the inputs as they were then")
    warning = "; ".join(said) or None
    shown = {**content, "notes": [*([f"Warning: {warning}."] if warning else []), *notes,
                                  *content.get("notes", [])]}
    if path.suffix.lower() == ".html":
        write_text_atomic(path, render_html(manifest, shown, report, png))
    else:
        if plot is not None and png is not None:
            write_atomic(plot, png)   # a failed write leaves no temporary file behind
        write_text_atomic(path, render_markdown(manifest, shown, report,
                                                None if plot is None else plot.name))
    return ReportFiles(path, cert_path, plot, replaced, warning)
