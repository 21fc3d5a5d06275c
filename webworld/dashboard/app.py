"""``create_app(folders)``: the dashboard's FastAPI app. Every page is rendered on the
server from the folders; a little JS pans the graph, steps through trajectories and
reloads a page when its files change (it polls ``/api/stamp``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException as StarletteHTTPException

from webworld.dashboard import views
from webworld.dashboard.graph import GraphUnavailable, page_graph_dot, render_svg
from webworld.dashboard.reading import NotFound, StampCache, Unreadable, inside, stamp_of
from webworld.dashboard.runs import RunCatalog, curves, dataset_view
from webworld.dashboard.worlds import Folders, WorldCatalog
from webworld.errors import validation_problems
from webworld.eval.runner import traces_dir

HERE = Path(__file__).parent
CARDS_PER_PAGE = 24
ROWS_PER_PAGE = 50
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self' data:; style-src 'self' "
                               "'unsafe-inline'; script-src 'self'; connect-src 'self'; "
                               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class Dashboard:
    """The catalogs and the template environment one app serves from."""

    def __init__(self, folders: Folders) -> None:
        self.folders = folders
        self.cache = StampCache()
        self.worlds = WorldCatalog(folders, self.cache)
        self.runs = RunCatalog({"runs": folders.runs, "datasets": folders.datasets}, self.cache)
        self.templates = Environment(loader=FileSystemLoader(HERE / "templates"),
                                     autoescape=select_autoescape(default=True))
        self.templates.filters["pct"] = lambda v: f"{100 * v:.1f}%" if _is_number(v) else "-"
        self.templates.filters["num"] = lambda v, spec=".4g": format(v, spec) if _is_number(v) \
            else "-" if v is None or v == "" else str(v)

    def page(self, name: str, request: Request, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.templates.get_template(name).render(request=request, folders=self.folders,
                                                        **context)
        return HTMLResponse(html, status_code=status)

    def graph_svg(self, world: str) -> tuple[str, str]:
        """(svg, problem): the page graph, laid out once per change of the spec."""
        spec_path = self.worlds.spec_path(world)

        def draw() -> tuple[str, str]:
            try:
                return render_svg(page_graph_dot(self.worlds.spec(world))), ""
            except GraphUnavailable as exc:
                return "", str(exc)
        return self.cache.get("graph", spec_path, [spec_path], draw)


def create_app(folders: Folders) -> FastAPI:
    board = Dashboard(folders)
    app = FastAPI(title="webworld dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.board = board
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    _add_errors(app, board)
    _add_headers(app)
    _add_world_routes(app, board)
    _add_run_routes(app, board)
    _add_api_routes(app, board)
    return app


def _watch(view: str, ident: str = "") -> str:
    """The query a page polls /api/stamp with (see dashboard.js)."""
    return urlencode({"view": view, "id": ident})


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _pages(total: int, per_page: int, page: int) -> dict[str, int]:
    pages = max(1, math.ceil(total / per_page))
    page = min(max(page, 1), pages)
    return {"page": page, "pages": pages, "start": (page - 1) * per_page, "total": total}


# --- worlds ------------------------------------------------------------------------------------


def _add_world_routes(app: FastAPI, board: Dashboard) -> None:
    worlds = board.worlds

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        found = board.runs.scan()
        return board.page("home.html.j2", request, worlds=len(worlds.ids()),
                          counts={k: sum(f.kind == k for f in found)
                                  for k in ("dataset", "rl", "sft", "eval")},
                          watch=_watch("home"))

    @app.get("/worlds", response_class=HTMLResponse)
    def gallery(request: Request, q: str = Query("", max_length=200),
                page: int = Query(1, ge=1, le=1_000_000)) -> Response:
        ids = worlds.ids(q)
        paging = _pages(len(ids), CARDS_PER_PAGE, page)
        shown = ids[paging["start"]:paging["start"] + CARDS_PER_PAGE]
        return board.page("gallery.html.j2", request, cards=[worlds.card(w) for w in shown],
                          paging=paging, q=q, watch=_watch("gallery"))

    @app.get("/worlds/{world}", response_class=HTMLResponse)
    def world_page(request: Request, world: str, page: int = Query(1, ge=1, le=1_000_000)) -> Response:
        worlds.require(world)
        card = worlds.card(world)
        spec = worlds.spec(world) if worlds.spec_path(world).is_file() else None
        svg, problem = board.graph_svg(world) if spec else ("", "no spec for this world")
        trajectories = worlds.trajectories(world)
        paging = _pages(len(trajectories.verified), ROWS_PER_PAGE, page)
        return board.page(
            "world.html.j2", request, card=card, spec=spec, svg=svg, graph_problem=problem,
            shots=worlds.page_screenshots(world), paths=trajectories.task_paths(),
            verified=trajectories.verified[paging["start"]:paging["start"] + ROWS_PER_PAGE],
            paging=paging, failure_groups=trajectories.failure_groups(),
            notes=trajectories.notes, watch=_watch("world", world))

    @app.get("/worlds/{world}/graph.svg")
    def graph_file(world: str) -> Response:
        svg, problem = board.graph_svg(worlds.require(world))
        if not svg:
            raise Unreadable(problem, world)
        return Response(svg, media_type="image/svg+xml")

    @app.get("/worlds/{world}/t/{trajectory}", response_class=HTMLResponse)
    def trajectory_page(request: Request, world: str, trajectory: str) -> Response:
        worlds.require(world)
        record, failure = worlds.trajectories(world).by_id(trajectory)
        candidate = worlds.trajectories(world).candidates.get(trajectory)
        return board.page("trajectory.html.j2", request, world=world, record=record,
                          failure=failure, candidate=candidate,
                          steps=views.verified_steps(worlds, world, record, candidate),
                          planned=views.planned_steps(candidate, failure),
                          watch=_watch("world", world))

    @app.get("/files/worlds/{world}/{relative:path}")
    def world_file(world: str, relative: str) -> FileResponse:
        return FileResponse(worlds.image(world, relative), media_type="image/png")


# --- runs and datasets -------------------------------------------------------------------------


def _add_run_routes(app: FastAPI, board: Dashboard) -> None:
    runs = board.runs

    @app.get("/runs", response_class=HTMLResponse)
    def run_list(request: Request) -> Response:
        found = runs.scan()
        train = [runs.train_run(f) for f in found if f.kind in ("rl", "sft")]
        evals = [runs.eval_run(f) for f in found if f.kind == "eval"]
        return board.page("runs.html.j2", request, train=train, evals=evals,
                          summaries={e.found.id: views.eval_summary(e.records) for e in evals},
                          watch=_watch("runs"))

    @app.get("/runs/train/{run_id:path}", response_class=HTMLResponse)
    def train_page(request: Request, run_id: str) -> Response:
        run = runs.train_run(runs.get("train", run_id))
        return board.page("train.html.j2", request, run=run, charts=curves([run]),
                          evals=runs.evals_beside(run.found),
                          watch=_watch("train", run_id))

    @app.get("/runs/eval/{run_id:path}", response_class=HTMLResponse)
    def eval_page(request: Request, run_id: str) -> Response:
        run = runs.eval_run(runs.get("eval", run_id))
        traces, trace_problem = views.eval_traces(run)
        return board.page("eval.html.j2", request, run=run, summary=views.eval_summary(run.records),
                          traces=traces, trace_problem=trace_problem,
                          watch=_watch("eval", run_id))

    @app.get("/runs/compare", response_class=HTMLResponse)
    def compare_page(request: Request, run: list[str] = Query(default=[])) -> Response:
        return board.page("compare.html.j2", request, **views.comparison(runs, run))

    @app.get("/files/eval")
    def eval_file(run: str, file: str) -> FileResponse:
        found = runs.get("eval", run)
        path = inside(traces_dir(found.path), file)
        if path.suffix.lower() != ".png" or not path.is_file():
            raise NotFound(file)
        return FileResponse(path, media_type="image/png")

    @app.get("/datasets", response_class=HTMLResponse)
    def dataset_list(request: Request) -> Response:
        found = [f for f in runs.scan() if f.kind == "dataset"]
        return board.page("datasets.html.j2", request,
                          datasets=[(f, dataset_view(f, examples=0)) for f in found],
                          watch=_watch("runs"))

    @app.get("/datasets/{dataset_id:path}", response_class=HTMLResponse)
    def dataset_page(request: Request, dataset_id: str) -> Response:
        found = runs.get("dataset", dataset_id)
        return board.page("dataset.html.j2", request, found=found, view=dataset_view(found),
                          watch=_watch("dataset", dataset_id))


# --- live updates, errors, headers -------------------------------------------------------------


def _add_api_routes(app: FastAPI, board: Dashboard) -> None:
    @app.get("/api/stamp")
    def stamp(view: str = Query(..., max_length=20), id: str = Query("", max_length=500)) -> JSONResponse:
        return JSONResponse({"stamp": stamp_of(_watched(board, view, id))})

    @app.get("/favicon.ico")
    def favicon() -> RedirectResponse:
        return RedirectResponse("/static/favicon.svg")


def _watched(board: Dashboard, view: str, ident: str) -> list[Path]:
    if view in ("home", "gallery"):
        return board.worlds.watched() + (board.runs.watched() if view == "home" else [])
    if view == "world":
        return board.worlds.watched(board.worlds.require(ident))
    if view == "runs":
        return board.runs.watched()
    if view in ("train", "eval", "dataset"):
        return board.runs.watched(board.runs.get(view, ident))
    raise NotFound(view)


def _add_errors(app: FastAPI, board: Dashboard) -> None:
    def problem(request: Request, status: int, title: str, message: str) -> Response:
        if request.url.path.startswith(("/api/", "/files/")):
            return JSONResponse({"error": message}, status_code=status)
        return board.page("error.html.j2", request, status=status, title=title, message=message)

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> Response:
        return problem(request, 404, "Not found", f"Nothing here by that name: {exc}")

    @app.exception_handler(Unreadable)
    async def unreadable(request: Request, exc: Unreadable) -> Response:
        return problem(request, 422, "Cannot read this file", f"{exc.where}: {exc.message}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return problem(request, exc.status_code, "Not found" if exc.status_code == 404 else "Error",
                       str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return problem(request, 400, "Bad request",
                       f"malformed request: {validation_problems(exc, limit=5)}")


def _add_headers(app: FastAPI) -> None:
    @app.middleware("http")
    async def headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response
