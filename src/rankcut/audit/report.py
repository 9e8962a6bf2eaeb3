"""A readable audit report (Markdown or HTML), the certificate JSON beside it, and a plot.

The report is written from the audit folder's files only — ``manifest.json`` (checked against its
content hash) and ``certificate.json`` (every certificate in it is recomputed from its recorded
inputs with :func:`rankcut.certify.result.verify`, so an edited number is refused) — never from
the labels. It says what was certified and under which theorem, the burden, the missed-count or
missed-mass bound, the recall bound (two-pool), which member of a nested family was chosen and
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
import html
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankcut.audit.manifest import load_manifest, read_json, write_json_atomic, write_text_atomic

if TYPE_CHECKING:  # rankcut.certify loads scipy: imported where it is used
    from rankcut.certify.report import JointReport

__all__ = ["ReportFiles", "write_report"]

REPORT_FORMATS = (".md", ".html")
_PLOT_NOTE = "no plot: matplotlib is not installed (pip install 'rankcut[eval]')"


@dataclass(frozen=True)
class ReportFiles:
    """The files :func:`write_report` wrote: the report, the certificate JSON and the plot (or None)."""

    report: Path
    certificate: Path
    plot: Path | None


def _load(audit_dir: str | Path) -> tuple[dict[str, Any], dict[str, Any], JointReport]:
    from rankcut.audit.workflow import CERTIFICATE_FILE, AuditStepError
    from rankcut.certify.report import JointReport
    from rankcut.certify.result import verify

    manifest = load_manifest(audit_dir)
    path = manifest.folder / CERTIFICATE_FILE
    if not path.exists():
        raise AuditStepError(f"no certificate yet ({path} missing): run certify first")
    content = read_json(path, "written by certify")
    if content.get("audit_id") != manifest.audit_id:
        raise ValueError(f"{path} belongs to audit {str(content.get('audit_id'))[:12]}, not to this audit "
                         f"{manifest.short_id}: certify again")
    report = JointReport.from_dict(content["report"])
    for name, cert, _ in report.entries:
        try:
            verify(cert)
        except ValueError as exc:
            raise ValueError(f"{path}: certificate {name!r} does not match its inputs ({exc})") from None
    return manifest.to_dict(), content, report


def _num(x: Any, side: str = "upper") -> str:
    from rankcut.certify.result import format_bound

    return format_bound(x, side)


def _facts(manifest: Mapping[str, Any], content: Mapping[str, Any]) -> list[tuple[str, str]]:
    pools = manifest["pools"]
    items = pools["items"]
    inputs = manifest["inputs"]
    rows = [("audit id", manifest["audit_id"]),
            ("design", f"{manifest['design']} — {content['theorem']}"),
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
        rows.append([m["name"], f"{m['mean_depth']:.3g}", str(m["burden"]), str(m["n0"]), str(m["sample"]),
                     str(m["relevant"]), bound, mark])
    return head, rows


def _validity(manifest: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    return [
        f"Assumption 1 (design before certification): the audit was frozen at {manifest['frozen_at']} and "
        f"its labels were first opened at {content['opened_at']}; the sample ({content['sample_hash'][:12]}) "
        "is the one the frozen manifest and seed draw.",
        "Assumption 2 (noiseless labels): the bounds hold if every recorded label is the true relevance.",
    ]


def _summary(content: Mapping[str, Any], report: JointReport) -> list[str]:
    from rankcut.certify.result import confidence_text

    lab = content["labels"]
    lines = [f"Joint confidence at least {confidence_text(report.joint_delta)} "
             f"(union bound over {', '.join(f'{e} {v:g}' for e, v in report.budget.items())}).",
             f"Labels spent: {lab['draws']} draws, {lab['items']} distinct items, {lab['relevant']} "
             "relevant."]
    verdict = content.get("verdict")
    if verdict:
        lines.append(f"Verdict: {verdict['text']}")
    lines.extend(content.get("notes", []))
    return lines


# ---------------------------------------------------------------------------------------------
# plot


def _plot_png(content: Mapping[str, Any]) -> bytes | None:
    """The report's figure as PNG bytes, or None when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # matplotlib is an optional extra
        return None
    fig = Figure(figsize=(6.4, 3.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    members = content.get("members") or []
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
        curve = content.get("curve") or {}
        ax.plot(curve.get("labels", []), curve.get("bound", []), "o-", color="tab:red")
        ax.set_xlabel("labels spent (first j draws of the frozen sample)")
        quantity = curve.get("quantity", "")
        ax.set_ylabel(f"certified {'lower' if quantity == 'recall' else 'upper'} bound on {quantity}")
        ax.set_title("Labels spent against the bound (display only, Remark 20)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# rendering


def render_markdown(manifest: Mapping[str, Any], content: Mapping[str, Any], report: JointReport,
                    plot: str | None) -> str:
    """The report as Markdown; ``plot`` is the PNG file name beside it, or None."""
    out = [f"# Audit report {manifest['audit_id'][:12]}", "", report.title, "", "## Result", ""]
    out += [f"- {line}" for line in _summary(content, report)]
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
    out += ["", "## Validity", ""] + [f"- {line}" for line in _validity(manifest, content)]
    return "\n".join(out) + "\n"


def render_html(manifest: Mapping[str, Any], content: Mapping[str, Any], report: JointReport,
                png: bytes | None) -> str:
    """The report as one self-contained HTML page (the plot embedded as a data URI)."""
    e = html.escape

    def table(head: Sequence[str] | None, rows: Sequence[Sequence[str]]) -> str:
        h = "" if head is None else "<tr>" + "".join(f"<th>{e(c)}</th>" for c in head) + "</tr>"
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows)
        return f"<table>{h}{body}</table>"

    parts = [f"<h1>Audit report {e(manifest['audit_id'][:12])}</h1>", f"<p>{e(report.title)}</p>",
             "<h2>Result</h2><ul>" + "".join(f"<li>{e(s)}</li>" for s in _summary(content, report)) + "</ul>",
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
    parts.append("<h2>Validity</h2><ul>" + "".join(f"<li>{e(s)}</li>" for s in _validity(manifest, content))
                 + "</ul>")
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
             "code{background:#f4f4f4}")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Audit "
            f"{e(manifest['audit_id'][:12])}</title><style>{style}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


def write_report(audit_dir: str | Path, out: str | Path) -> ReportFiles:
    """Write the report of a certified audit (step 6).

    :param out: ``report.md`` or ``report.html``. Beside it: ``<stem>.json`` (the certificate JSON)
        and, for Markdown, ``<stem>.png`` (the plot; embedded in the HTML page instead).
    :raises AuditStepError: before :func:`~rankcut.audit.workflow.certify`.
    :raises ValueError: for another format, or a certificate that does not match its inputs.
    """
    path = Path(out)
    if path.suffix.lower() not in REPORT_FORMATS:
        raise ValueError(f"the report is Markdown or HTML: name it *.md or *.html, got {path.name}")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {path.parent} does not exist")
    manifest, content, report = _load(audit_dir)
    png = _plot_png(content)
    cert_path = path.with_suffix(".json")
    write_json_atomic(cert_path, content)
    plot_path: Path | None = None
    if path.suffix.lower() == ".html":
        write_text_atomic(path, render_html(manifest, content, report, png))
    else:
        if png is not None:
            plot_path = path.with_suffix(".png")
            tmp = plot_path.with_name(f".{plot_path.name}.tmp")
            tmp.write_bytes(png)
            tmp.replace(plot_path)
        write_text_atomic(path, render_markdown(manifest, content, report,
                                                None if plot_path is None else plot_path.name))
    return ReportFiles(path, cert_path, plot_path)
