"""`webworld render` and `webworld serve`."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import typer

from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.errors import UsageError
from webworld.pipeline import SITES_DIR
from webworld.render.site import render_site
from webworld.render.themes import THEMES
from webworld.spec.io import load_spec


@reports_errors
def render_cmd(
    spec_paths: list[Path] = typer.Argument(..., help="World spec JSON file(s)."),
    out_dir: Path = typer.Option(SITES_DIR, "--out", "-o", help="Writes <out>/<world>/."),
    theme: str = typer.Option(None, "--theme", help=f"One of: {', '.join(THEMES)} "
                              "(default: chosen per world by its seed)."),
) -> None:
    """Render specs into self-contained site directories (templates, CSS, JS, manifest)."""
    if theme is not None and theme not in THEMES:
        raise UsageError(f"unknown theme {theme!r}; choose one of {', '.join(THEMES)}", "--theme")
    specs = [load_spec(p) for p in spec_paths]
    for spec in specs:
        path = render_site(spec, out_dir / spec.id, theme=theme)
        out.print(f"wrote {path}/ ({len(spec.pages)} pages)")


@reports_errors
def serve_cmd(
    site_dirs: list[Path] = typer.Argument(..., help="Rendered site directories."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (loopback by default)."),
    port: int = typer.Option(8000, "--port", "-p", min=0, max=65535),
    token: str = typer.Option(None, "--token", envvar="WEBWORLD_TRUTH_TOKEN",
                              help="Ground-truth token (default: a random one, printed)."),
) -> None:
    """Serve one or many worlds from one process, each at /w/<world id>/."""
    import uvicorn

    from webworld.serve.multi import WORLD_PREFIX, create_multi_app
    from webworld.serve.runner import KEEP_ALIVE_S

    app = create_multi_app(site_dirs, truth_token=token)
    if not ipaddress.ip_address(host).is_loopback:
        err.print(f"[yellow]warning:[/] serving on {host}: other machines can reach these sites")
    for world, name in app.state.worlds.items():
        out.print(f"{name}: http://{host}:{port}{WORLD_PREFIX.format(world=world)}/")
    out.print(f"ground-truth token: {app.state.truth_token}")
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_keep_alive=KEEP_ALIVE_S)
