"""Several worlds from one process: each mounted at ``/w/<world id>``."""

from __future__ import annotations

import html
import secrets
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from webworld.contract import WORLD_PREFIX
from webworld.errors import UsageError
from webworld.render.site import load_site
from webworld.serve.app import SECURITY_HEADERS, create_app


def create_multi_app(site_dirs: list[Path], *, truth_token: str | None = None) -> FastAPI:
    """One app serving every site; all worlds share the ground-truth token."""
    token = truth_token or secrets.token_urlsafe(24)
    root = FastAPI(title="webworld", docs_url=None, redoc_url=None, openapi_url=None)
    root.state.truth_token = token
    root.state.worlds = {}
    for site_dir in site_dirs:
        site = load_site(Path(site_dir))
        world_id = site.spec.id
        if world_id in root.state.worlds:
            raise UsageError(f"world {world_id!r} is given twice", str(site_dir))
        root.state.worlds[world_id] = site.spec.name
        root.mount(WORLD_PREFIX.format(world=world_id), create_app(site, truth_token=token))

    @root.get("/")
    async def index() -> HTMLResponse:
        items = "".join(
            f'<li><a href="{WORLD_PREFIX.format(world=w)}/">{html.escape(name)}</a></li>'
            for w, name in root.state.worlds.items()
        )
        return HTMLResponse(f"<!doctype html><html lang=en><head><meta charset=utf-8>"
                            f"<title>webworld</title></head><body><main><h1>Worlds</h1>"
                            f"<ul>{items}</ul></main></body></html>", headers=SECURITY_HEADERS)

    return root
