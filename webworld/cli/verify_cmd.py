"""`webworld verify`: replay candidates in Chromium and keep what verifies.

The work is :func:`webworld.pipeline.verify_sites`; this module parses and prints."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from webworld.cli.console import out
from webworld.cli.errors import reports_errors
from webworld.cli.options import TRAJECTORIES_DIR, RayAddress, RayInsecure, RayWorkers
from webworld.errors import UsageError
from webworld.pipeline import DEFAULT_WORKERS, SITES_DIR, BuildEvent, verify_sites

if TYPE_CHECKING:  # Playwright is imported when a command runs (`webworld train` needs none)
    from webworld.verify.runner import WorldStats

Workers = typer.Option(DEFAULT_WORKERS, "--workers", "-w", min=1, max=32,
                       help="Parallel browser contexts.")


@reports_errors
def verify_cmd(
    worlds: list[str] = typer.Argument(None, help="World ids (default: every world that has a "
                                       "site and candidates)."),
    sites_dir: Path = typer.Option(SITES_DIR, "--sites"),
    traj_dir: Path = typer.Option(TRAJECTORIES_DIR, "--trajectories"),
    workers: int = Workers,
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run failed candidates again."),
    no_screenshots: bool = typer.Option(False, "--no-screenshots"),
    ray: str = RayAddress,
    ray_workers: int = RayWorkers,
    ray_insecure: bool = RayInsecure,
) -> None:
    """Replay every candidate in real Chromium; resumable (re-running skips done work)."""
    from webworld.verify.replay import ReplayConfig

    ids = worlds or sorted(p.parent.name for p in traj_dir.glob("*/candidates.jsonl")
                           if (sites_dir / p.parent.name / "manifest.json").is_file())
    if not ids:
        raise UsageError(f"nothing to verify: no world has both {sites_dir}/<world>/ and "
                         f"{traj_dir}/<world>/candidates.jsonl")
    columns = (TextColumn("verify"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[ok]} verified"), TimeElapsedColumn())
    with Progress(*columns, console=out, transient=True) as progress:
        bar = progress.add_task("verify", total=None, ok=0)

        def tick(event: BuildEvent) -> None:
            progress.update(bar, completed=event.done, total=event.total, ok=event.verified)

        stats = verify_sites([sites_dir / w for w in ids], traj_dir, workers=workers,
                             retry_failed=retry_failed,
                             config=ReplayConfig(screenshots=not no_screenshots),
                             ray=ray, ray_workers=ray_workers, progress=tick)
    print_stats(stats)


def print_stats(stats: list[WorldStats]) -> None:
    table = Table("world", "candidates", "skipped", "verified", "failed", "failure classes",
                  "steps", title="webworld verify")
    for st in stats:
        classes = ", ".join(f"{k}: {v}" for k, v in sorted(st.failures.items())) or "-"
        table.add_row(st.world_id, str(st.candidates), str(st.skipped), str(st.verified),
                      str(st.failed), classes, str(st.steps))
    out.print(table)
    ran = sum(s.verified + s.failed for s in stats)
    ok = sum(s.verified for s in stats)
    seconds = max((s.seconds for s in stats), default=0.0)
    rate = ok / seconds if seconds else 0.0
    share = f"{100 * ok / ran:.1f}%" if ran else "n/a"
    out.print(f"{ok}/{ran} replayed candidates verified ({share}) in {seconds:.1f}s "
              f"({rate:.2f} trajectories/s)")
