"""``create_app(site_dir)``: a FastAPI app that runs one rendered world.

The server owns each session's FSM state. Every FSM action is an HTTP request to
``/act/<action>``; guards are enforced here, and a refused action re-renders the page
with its message while the state stays as it was. Ground truth is served only to holders
of the per-run token. URLs follow :mod:`webworld.contract`.
"""

from __future__ import annotations

import hmac
import html
import logging
import secrets
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from webworld import contract
from webworld.errors import validation_problems
from webworld.render.site import Site, load_site
from webworld.render.view import make_environment, render_page
from webworld.serve.handling import handle_action
from webworld.serve.sessions import Session, SessionStore
from webworld.spec.semantics import Machine

log = logging.getLogger("webworld.serve")

SECURITY_HEADERS = {
    # LLM-written pages may carry JS: it may talk to this origin only.
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
# Pages show per-session state: never cached. Static files (CSS, JS) may be, and for good
# when the URL names their version (``?v=<hash of the files>``, see Site.static_version).
NO_STORE = {"Cache-Control": "no-store"}
IMMUTABLE = {"Cache-Control": "public, max-age=31536000, immutable"}


class World:
    """Everything a request handler needs about the served world."""

    def __init__(self, site: Site, token: str) -> None:
        self.site = site
        self.machine = Machine(site.spec)
        self.env = make_environment(site)
        self.sessions = SessionStore(self.machine.initial_state())
        self.token = token
        self.actions = {a.id: (p.id, a) for p in site.spec.pages for a in p.actions}
        self.pages = {p.id for p in site.spec.pages}


def create_app(site: str | Path | Site, *, truth_token: str | None = None) -> FastAPI:
    """Build the app for one site directory (or loaded :class:`Site`)."""
    loaded = site if isinstance(site, Site) else load_site(Path(site))
    world = World(loaded, truth_token or secrets.token_urlsafe(24))
    app = FastAPI(title=loaded.spec.name, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.world = world
    app.state.truth_token = world.token
    app.mount("/static", StaticFiles(directory=loaded.root / "static"), name="static")
    _add_error_handlers(app)
    _add_security_headers(app)
    _add_site_routes(app, world)
    _add_truth_routes(app, world)
    return app


# --- helpers --------------------------------------------------------------------------


def base_of(request: Request) -> str:
    return request.scope.get("root_path", "").rstrip("/")


def page_url(request: Request, page: str) -> str:
    return contract.PAGE_URL.format(base=base_of(request), page=page)


def _redirect(url: str, session: Session | None = None, world: World | None = None,
              request: Request | None = None) -> RedirectResponse:
    response = RedirectResponse(url, status_code=303)
    if session is not None and world is not None and request is not None:
        response.set_cookie(contract.SESSION_COOKIE, world.sessions.sign(session.sid),
                            path=f"{base_of(request)}/", httponly=True, samesite="lax")
    return response


def error_page(status: int, title: str, message: str, link: str | None = None) -> HTMLResponse:
    back = f'<p><a href="{html.escape(link)}">Go to the current page</a></p>' if link else ""
    body = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{status} "
            f"{html.escape(title)}</title></head><body><main><h1>{html.escape(title)}</h1>"
            f"<p role=alert>{html.escape(message)}</p>{back}</main></body></html>")
    return HTMLResponse(body, status_code=status)


def session_of(request: Request, world: World) -> tuple[Session | None, bool]:
    """(session, forged): no cookie -> (None, False); a bad signature -> (None, True);
    a genuine cookie whose session expired -> a fresh session."""
    cookie = request.cookies.get(contract.SESSION_COOKIE)
    if not cookie:
        return None, False
    sid = world.sessions.verify(cookie)
    if sid is None:
        return None, True
    return world.sessions.get(sid) or None, False


# --- routes ---------------------------------------------------------------------------


def _add_site_routes(app: FastAPI, world: World) -> None:
    @app.get("/", include_in_schema=False)
    async def root(request: Request) -> Response:
        session, forged = session_of(request, world)
        if forged:
            return error_page(403, "Invalid session", "Your session cookie is not valid.",
                              contract.RESET_URL.format(base=base_of(request)))
        session = session or world.sessions.create()
        return _redirect(page_url(request, session.state.page), session, world, request)

    @app.get("/page/{page_id}")
    async def show_page(page_id: str, request: Request) -> Response:
        if page_id not in world.pages:
            raise HTTPException(404, f"There is no page {page_id!r} on this site.")
        session, forged = session_of(request, world)
        if forged:
            raise HTTPException(403, "Your session cookie is not valid.")
        if session is None:
            return _redirect(f"{base_of(request)}/", None)
        if session.state.page != page_id:
            return _redirect(page_url(request, session.state.page))
        return _current_page(world, session, request)

    @app.api_route("/act/{action_id}", methods=["GET", "POST"])
    async def act(action_id: str, request: Request) -> Response:
        return await _act(world, action_id, request)

    @app.get("/reset")
    async def reset(request: Request) -> Response:
        session = world.sessions.create()
        return _redirect(f"{base_of(request)}/", session, world, request)


async def _act(world: World, action_id: str, request: Request) -> Response:
    if action_id not in world.actions:
        raise HTTPException(404, f"There is no action {action_id!r} on this site.")
    session, forged = session_of(request, world)
    if forged or session is None:
        raise HTTPException(403, "This request has no valid session; open the site first.")
    try:
        form = await request.form() if request.method == "POST" else {}
    except Exception:  # python-multipart's parse errors have no common base class
        raise HTTPException(400, "The request body is not form data.") from None
    handled = handle_action(world.machine, session.state, action_id, request.method, form)
    if handled.status == 409:
        return error_page(409, "This page is out of date",
                          "That control belongs to a page you are no longer on.",
                          page_url(request, session.state.page))
    if handled.status == 405:
        raise HTTPException(405, f"Action {action_id!r} takes form data; submit its form.")
    session.state, session.flash = handled.state, handled.flash
    if request.headers.get(contract.SWAP_HEADER):  # what the redirect's GET would answer
        return _current_page(world, session, request,
                             {contract.SWAP_URL_HEADER: page_url(request, session.state.page)})
    return _redirect(page_url(request, session.state.page))


def _current_page(world: World, session: Session, request: Request,
                  headers: dict[str, str] | None = None) -> HTMLResponse:
    """The session's page, with the message of a refused action once (then it is gone)."""
    error, session.flash = session.flash, None
    body = render_page(world.site, world.env, world.machine, session.state,
                       base=base_of(request), error=error)
    return HTMLResponse(body, headers=headers)


def _add_truth_routes(app: FastAPI, world: World) -> None:
    def authorise(request: Request) -> None:
        header = request.headers.get(contract.TOKEN_HEADER, "")
        if not header.startswith("Bearer "):
            raise HTTPException(401, "Ground truth needs 'Authorization: Bearer <token>'.")
        if not hmac.compare_digest(header[len("Bearer "):].encode(), world.token.encode()):
            raise HTTPException(403, "Wrong ground-truth token.")

    def lookup(session: str) -> Session:
        sid = session.partition(".")[0]
        found = world.sessions.get(sid)
        if found is None:
            raise HTTPException(404, f"No session {sid!r}.")
        return found

    @app.get("/__truth/state")
    async def truth_state(session: str, request: Request) -> JSONResponse:
        authorise(request)
        return JSONResponse(world.machine.describe(lookup(session).state))

    @app.post("/__truth/reset")
    async def truth_reset(session: str, request: Request, page: str | None = None
                          ) -> JSONResponse:
        authorise(request)
        if page is not None and page not in world.pages:
            raise HTTPException(404, f"There is no page {page!r} on this site.")
        found = lookup(session)
        world.sessions.reset(found.sid, world.machine.initial_state(page))
        return JSONResponse(world.machine.describe(found.state))

    @app.post("/__truth/session")
    async def truth_session(request: Request, page: str | None = None) -> JSONResponse:
        """A new session at ``page``'s initial state: what an environment's reset opens."""
        authorise(request)
        if page is not None and page not in world.pages:
            raise HTTPException(404, f"There is no page {page!r} on this site.")
        session = world.sessions.create(world.machine.initial_state(page))
        return JSONResponse({"session": session.sid, "cookie": world.sessions.sign(session.sid),
                             "name": contract.SESSION_COOKIE, "path": f"{base_of(request)}/",
                             "state": world.machine.describe(session.state)})

    @app.get("/__health")
    async def health() -> dict[str, object]:
        return {"ok": True, "world": world.site.spec.id}


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if request.url.path.rstrip("/").endswith(("__health", "__truth/state", "__truth/reset",
                                                  "__truth/session")):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return error_page(exc.status_code, _TITLES.get(exc.status_code, "Error"), str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return JSONResponse({"error": f"malformed request: {validation_problems(exc, limit=5)}"},
                            status_code=400)

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("error serving %s", request.url.path)
        return error_page(500, "Something went wrong", "The server could not show this page.")


_TITLES = {400: "Bad request", 401: "Unauthorised", 403: "Forbidden", 404: "Not found",
           405: "Method not allowed", 409: "Out of date"}


def _add_security_headers(app: FastAPI) -> None:
    @app.middleware("http")
    async def headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        # decided before routing, which rewrites the scope's root_path for mounts
        static = request.url.path.startswith(f"{base_of(request)}/static/")
        caching = NO_STORE if not static else IMMUTABLE if "v" in request.query_params else {}
        response = await call_next(request)
        for name, value in {**SECURITY_HEADERS, **caching}.items():
            response.headers.setdefault(name, value)
        return response
