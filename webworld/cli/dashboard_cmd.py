"""`webworld dashboard`: the local web view of a workspace's worlds, datasets and runs."""

from __future__ import annotations

import ipaddress
import shutil
from pathlib import Path

import typer

from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.errors import UsageError


@reports_errors
def dashboard_cmd(
    root: Path = typer.Argument(Path("."), help="Workspace whose fsm_specs/, sites/, "
                                "trajectories/, datasets/ and runs/ to show."),
    specs: Path = typer.Option(None, "--specs", help="Specs folder (default: ROOT/fsm_specs)."),
    sites: Path = typer.Option(None, "--sites", help="Sites folder (default: ROOT/sites)."),
    trajectories: Path = typer.Option(None, "--trajectories",
                                      help="Trajectories folder (default: ROOT/trajectories)."),
    datasets: Path = typer.Option(None, "--datasets", help="Datasets folder (default: ROOT/datasets)."),
    runs: Path = typer.Option(None, "--runs", help="Runs and eval results (default: ROOT/runs)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address (loopback by default)."),
    port: int = typer.Option(8765, "--port", "-p", min=0, max=65535),
) -> None:
    """Browse worlds, trajectories, datasets, training curves and eval results.

    Worlds as a gallery, their pages and state-machine graph; trajectories step by step.
    Pages refresh while runs write."""
    import uvicorn

    from webworld.dashboard.app import create_app
    from webworld.dashboard.worlds import Folders

    if not root.is_dir():
        raise UsageError("no such folder", str(root))
    base = Folders.under(root)
    folders = Folders(specs or base.specs, sites or base.sites, trajectories or base.trajectories,
                      datasets or base.datasets, runs or base.runs)
    if not ipaddress.ip_address(host).is_loopback:
        err.print(f"[yellow]warning:[/] serving on {host}: other machines can read these folders")
    if shutil.which("dot") is None:
        err.print("[yellow]note:[/] Graphviz is not installed (apt-get install graphviz): "
                  "state-machine graphs will not be drawn")
    out.print(f"webworld dashboard: http://{host}:{port}/")
    uvicorn.run(create_app(folders), host=host, port=port, log_level="warning")
