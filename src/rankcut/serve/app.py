"""The web application of ``rankcut serve``: FastAPI routes and Jinja2 pages over a :class:`Desk`.

Security (docs/serve.md): every request needs the access token — once in the URL (``?token=``),
then as an HttpOnly, SameSite=Strict cookie — or gets 403; every POST carries the session's CSRF
token in its form and must come from this server's own origin (``Origin``, else ``Referer``);
documents are sent in pages only, never in a URL; a refused submission records nothing.

An answer (a label, or a second reading's) is always followed by a redirect to ``/``, refused or not:
the reason travels in the session and is shown above the item asked now, and a reload of that page
sends nothing again. Only a form that fails the security checks gets a page of its own (403).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from rankcut.audit.labels import reviewer_name
from rankcut.audit.options import OPTION_NAMES
from rankcut.audit.oracle import simulated_text
from rankcut.audit.report import validity_lines
from rankcut.serve.agreement import SecondReading
from rankcut.serve.desk import HOLD_S, Answer, Given
from rankcut.serve.desks import open_desk

__all__ = ["create_app"]

# no framing (the keys would work in a hidden frame), documents neither cached on disk nor sent on
# in a Referer
_HEADERS = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'",
            "Cache-Control": "no-store", "Referrer-Policy": "same-origin"}

_TEMPLATES = Jinja2Templates(directory=str(Path(__file__).with_name("templates")))


@dataclass
class Session:
    """One browser's reviewer: their name, the CSRF token of their forms, their last answer."""

    key: str  # the session cookie's value
    csrf: str
    reviewer: str | None = None
    last: Given | None = None  # the last answer, while it may be taken back
    second: bool = False  # a second reading (agreement check), not the audit's labels
    message: str | None = None  # shown once on the next page (never in a URL)


def create_app(folder: str | Path, token: str, *, hold_s: float = HOLD_S,
               options: Mapping[str, str] | None = None) -> FastAPI:
    """The application over the audit ``folder``, reachable with ``token``.

    :param hold_s: how long an item asked of one reviewer is not asked of another (seconds).
    :param options: how the page's refusals and notes name steps and options while it answers a
        request (:data:`~rankcut.audit.options.OPTION_NAMES`: ``rankcut serve`` gives rankcut audit's
        table, or rankcut review's for a review folder; ``None``: the Python names).

    :raises ValueError: as ``rankcut audit label`` refuses the folder (no sample, changed inputs).
    """
    desk = open_desk(folder, hold_s=hold_s)
    # cookies are not told apart by port: each server names its own, so that two of them on one
    # machine (two audits) do not overwrite each other's
    tag = hashlib.sha256(token.encode()).hexdigest()[:10]
    token_cookie, session_cookie = f"rankcut_token_{tag}", f"rankcut_session_{tag}"
    reading = SecondReading(desk)
    sessions: dict[str, Session] = {}
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return _TEMPLATES.TemplateResponse(request, name, {"desk": desk, **context}, status_code=status)

    def refuse(request: Request, status: int, message: str) -> HTMLResponse:
        return page(request, "message.html", status, refusal=message)

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        given = request.query_params.get("token")
        if given is not None and _same(given, token):
            # the token leaves the address bar: a cookie carries it from now on
            response: Response = RedirectResponse(request.url.remove_query_params("token").path, 303)
            response.set_cookie(token_cookie, token, httponly=True, samesite="strict")
            return response
        if not _same(request.cookies.get(token_cookie, ""), token):
            # nothing of the audit (not even its id) without the token
            return HTMLResponse("<!DOCTYPE html><title>rankcut</title><p>access refused: open the address "
                                "rankcut serve printed (it holds the access token)</p>", 403)
        if request.method == "POST" and not _same_origin(request):
            return refuse(request, 403, "refused: the form was not sent from this page (cross-site request)")
        session_id = request.cookies.get(session_cookie)
        if session_id not in sessions:
            session_id = secrets.token_urlsafe(24)
            sessions[session_id] = Session(key=session_id, csrf=secrets.token_urlsafe(24))
        request.state.session = sessions[session_id]
        spoken = OPTION_NAMES.set(options)   # the request's context: the page's handlers see it
        try:
            response = await call_next(request)
        finally:
            OPTION_NAMES.reset(spoken)
        response.set_cookie(session_cookie, session_id, httponly=True, samesite="strict")
        response.headers.update(_HEADERS)
        return response

    def form_ok(request: Request, csrf: str) -> bool:
        return _same(csrf, request.state.session.csrf)

    def back(message: str | None, session: Session, to: str = "/") -> RedirectResponse:
        session.message = message
        return RedirectResponse(to, 303)

    @app.get("/", response_class=HTMLResponse)
    def label_page(request: Request) -> HTMLResponse:
        session: Session = request.state.session
        message, session.message = session.message, None
        if session.reviewer is None:
            return page(request, "name.html", session=session, message=message)
        if session.second:
            try:
                desk.check_current()
                item = reading.ask(session.reviewer, session.key)
                agreement = reading.agreement()
            except ValueError as err:
                return refuse(request, 409, str(err))
            return page(request, "second.html", session=session, message=message, item=item,
                        position=None if item is None else desk.index[item], agreement=agreement)
        try:
            standing = desk.standing(session.key, session.reviewer)
        except ValueError as err:
            return refuse(request, 409, str(err))
        return page(request, "label.html", session=session, s=standing, message=message,
                    can_undo=desk.can_undo(session.last))

    @app.post("/reviewer")
    def reviewer(request: Request, name: str = Form(""), second: str = Form(""),
                 csrf: str = Form("")) -> Response:
        session: Session = request.state.session
        if not form_ok(request, csrf):
            return refuse(request, 403, "refused: the form's session token is missing or wrong (reload the "
                                        "page); nothing was recorded")
        try:
            session.reviewer = reviewer_name(name)
            session.second = second == "1"
        except ValueError as err:
            return back(str(err), session)
        return back(None, session)

    @app.post("/answer")
    def answer(request: Request, csrf: str = Form(""), audit_id: str = Form(""), sample_hash: str = Form(""),
               position: str = Form(""), query_id: str = Form(""), doc_id: str = Form(""),
               label: str = Form("")) -> Response:
        session: Session = request.state.session
        if not form_ok(request, csrf):
            return refuse(request, 403, "refused: the form's session token is missing or wrong (reload the "
                                        "page); nothing was recorded")
        if session.reviewer is None:
            return back("give your name before labelling", session)
        try:
            given = desk.record(Answer(audit_id, sample_hash, position, query_id, doc_id, label),
                                session.reviewer, session.key)
        except ValueError as err:   # said above the item asked now; a reload sends nothing again
            return back(str(err), session)
        session.last = given
        if given.ahead:
            return back(f"kept your answer for record {given.item[1]} (read ahead): it is recorded when the "
                        "review asks for that record", session)
        kept = (None if not given.kept else
                f"recorded the answer{'s' if len(given.kept) > 1 else ''} known for the "
                f"record{'s' if len(given.kept) > 1 else ''} the review asked for next (read ahead, or "
                "given in a batch file, and kept in pending-labels.csv; or the prior knowledge): "
                f"{', '.join(given.kept)}")
        return back(kept, session)

    @app.post("/second")
    def second_answer(request: Request, csrf: str = Form(""), audit_id: str = Form(""),
                      sample_hash: str = Form(""), position: str = Form(""), query_id: str = Form(""),
                      doc_id: str = Form(""), label: str = Form("")) -> Response:
        session: Session = request.state.session
        if not form_ok(request, csrf):
            return refuse(request, 403, "refused: the form's session token is missing or wrong (reload the "
                                        "page); nothing was recorded")
        if session.reviewer is None or not session.second:
            return back("this session is not a second reading: nothing was recorded", session)
        try:
            reading.record(Answer(audit_id, sample_hash, position, query_id, doc_id, label),
                           session.reviewer, session.key)
        except ValueError as err:
            return back(str(err), session)
        return back(None, session)

    @app.post("/undo")
    def undo(request: Request, csrf: str = Form("")) -> Response:
        session: Session = request.state.session
        if not form_ok(request, csrf):
            return refuse(request, 403, "refused: the form's session token is missing or wrong; nothing was "
                                        "changed")
        if session.last is None:
            return back("there is no answer of yours that can be undone now", session)
        try:
            said = desk.undo(session.last, session.key)
        except ValueError as err:   # why not: said above the item asked now
            return back(f"there is no answer of yours that can be undone now: {err}", session)
        session.last = None   # one answer back, as in the terminal: the one before it stays
        return back(said, session)

    def acted(request: Request, csrf: str, unchanged: str, act: Callable[[], str | None],
              to: str = "/") -> Response:
        """A button that acts on the whole folder: refused without the form's token (nothing was
        ``unchanged``) or when ``act`` refuses; else back to ``to``, saying what ``act`` returns."""
        if not form_ok(request, csrf):
            return refuse(request, 403, "refused: the form's session token is missing or wrong; nothing was "
                                        f"{unchanged}")
        try:
            said = act()
        except ValueError as err:
            return refuse(request, 409, str(err))
        return back(said, request.state.session, to)

    @app.post("/certify")
    def certify(request: Request, csrf: str = Form("")) -> Response:
        def run() -> None:
            desk.certify()
        return acted(request, csrf, "certified", run, "/result")

    @app.post("/read-on")
    def read_on(request: Request, csrf: str = Form("")) -> Response:
        return acted(request, csrf, "changed", desk.read_on)

    @app.get("/result", response_class=HTMLResponse)
    def result(request: Request) -> HTMLResponse:
        content = desk.certificate()
        if content is None:
            return refuse(request, 404, "no certificate yet: certify the audit first")
        try:
            plot, stale = desk.plot_png() is not None, None
        except ValueError as err:   # out of date (labels read since): the certificate, said so, no report
            plot, stale = False, str(err)
        simulated = simulated_text(content.get("label_sources") or {})
        means = [*([simulated] if simulated else []), *content.get("notes", []), *desk.report_notes(),
                 *validity_lines(desk.audit.manifest.to_dict(), content)]
        return page(request, "result.html", c=content, plot=plot, stale=stale, means=means)

    @app.get("/certificate.json")
    def certificate_json() -> Response:
        content = desk.certificate()
        if content is None:
            return JSONResponse({"error": "no certificate yet"}, 404)
        return JSONResponse(content, headers={"Content-Disposition": "attachment; filename=certificate.json"})

    @app.get("/plot.png")
    def plot(request: Request) -> Response:
        try:
            png = desk.plot_png()
        except ValueError as err:
            return refuse(request, 409, str(err))
        return Response(png, media_type="image/png") if png is not None else Response(status_code=404)

    @app.get("/report.html", response_class=HTMLResponse)
    def report(request: Request) -> Response:
        try:
            text = desk.report_html()
        except ValueError as err:
            return refuse(request, 409, str(err))
        return HTMLResponse(text, headers={"Content-Disposition": "attachment; filename=report.html"})

    return app


def _same(given: str, secret: str) -> bool:
    """A constant-time comparison of a token sent (any text, non-ASCII included) with a secret."""
    return secrets.compare_digest(given.encode("utf-8"), secret.encode("utf-8"))


def _same_origin(request: Request) -> bool:
    """The POST came from a page of this server: its ``Origin`` (else ``Referer``) is this host."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source:
        return False
    parts = urlsplit(source)
    return f"{parts.scheme}://{parts.netloc}" == f"{request.url.scheme}://{request.url.netloc}"
