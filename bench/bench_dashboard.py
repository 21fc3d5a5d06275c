"""How fast the dashboard opens big folders: 100 worlds and 10,000 verified trajectories.

    .venv/bin/python bench/bench_dashboard.py                # builds a world (~1 min), then times
    .venv/bin/python bench/bench_dashboard.py --source DIR   # replicate an existing workspace's worlds

One world is generated, rendered, explored and verified in Chromium (or the first world of
``--source``); the large workspace copies it into ``--worlds`` worlds of ``--per-world``
verified trajectories each (new ids, screenshots hard-linked, stats scaled). The baseline
is the one-world workspace, timed in the same run. Times are medians of ``--repeat`` loads;
*cold* is the first load after the server starts (nothing parsed yet). Columns:

- ``http``: one GET on 127.0.0.1 (server side + transfer), ms;
- ``chromium``: ``page.goto`` until the ``load`` event in real Chromium, every card's
  screenshot included, ms;
- ``ratio``: large / baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchkit import load_note, make_console, progress_bar  # noqa: E402

from webworld.browser.launch import CHROMIUM_ARGS, chromium_path  # noqa: E402
from webworld.dashboard.app import create_app  # noqa: E402
from webworld.dashboard.worlds import Folders  # noqa: E402
from webworld.serve.runner import LiveServer  # noqa: E402


def build_source(root: Path) -> None:
    from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
    from webworld.propose.procedural import generate
    from webworld.render.site import render_site
    from webworld.spec.io import save_spec
    from webworld.verify.runner import verify_worlds

    spec = generate("online bookstore", "easy", 1).spec
    save_spec(spec, root / "fsm_specs" / f"{spec.id}.json")
    render_site(spec, root / "sites" / spec.id)
    write_candidates(explore_world(spec, ExploreConfig(max_instances=3, max_shortest=2)),
                     root / "trajectories" / spec.id)
    verify_worlds([root / "sites" / spec.id], root / "trajectories", workers=2)


def replicate(source: Path, out: Path, worlds: int, per_world: int, console) -> str:
    """``worlds`` copies of the source's first verified world; returns its id."""
    world = sorted(p.parent.name for p in (source / "trajectories").glob("*/verified.jsonl"))[0]
    spec = json.loads((source / "fsm_specs" / f"{world}.json").read_text())
    manifest = json.loads((source / "sites" / world / "manifest.json").read_text())
    records = [json.loads(line) for line in
               (source / "trajectories" / world / "verified.jsonl").read_text().splitlines()]
    stats = json.loads((source / "trajectories" / world / "explore_stats.json").read_text())
    for folder in ("fsm_specs", "sites", "trajectories"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    with progress_bar(console) as bar:
        task = bar.add_task(f"{worlds} worlds x {per_world} trajectories", total=worlds)
        for w in range(worlds):
            new = f"{world}_copy{w:03d}"
            _write_world(source / "trajectories" / world, out, new, spec, manifest, records,
                         stats, per_world)
            bar.advance(task)
    return world


def _write_world(src: Path, out: Path, new: str, spec: dict, manifest: dict,
                 records: list[dict], stats: dict, per_world: int) -> None:
    (out / "fsm_specs" / f"{new}.json").write_text(json.dumps({**spec, "id": new}))
    (out / "sites" / new).mkdir()
    (out / "sites" / new / "manifest.json").write_text(json.dumps({**manifest, "world_id": new}))
    folder = out / "trajectories" / new
    lines = []
    for t in range(per_world):
        record = json.loads(json.dumps(records[t % len(records)]))
        old_id, record["id"], record["world_id"] = record["id"], f"{record['id']}-{t:04d}", new
        (folder / "images" / record["id"]).mkdir(parents=True)
        for step in record["steps"]:
            shot = step["observation"]["screenshot"]
            step["observation"]["screenshot"] = shot.replace(old_id, record["id"])
            os.link(src / shot, folder / step["observation"]["screenshot"])
        lines.append(json.dumps(record))
    (folder / "verified.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "failures.jsonl").write_text("")
    (folder / "explore_stats.json").write_text(json.dumps({**stats, "world_id": new}))
    (folder / "verify_stats.json").write_text(json.dumps(
        {"world_id": new, "candidates": per_world, "verified": per_world, "failed": 0}))


def time_http(url: str, repeat: int) -> tuple[float, float]:
    """(cold ms, warm median ms). A new connection per GET: a reused one adds the client's
    ~40 ms delayed-ACK stall (httpx does not set TCP_NODELAY), which browsers do not see."""
    def once() -> float:
        start = time.perf_counter()
        httpx.get(url, timeout=120).raise_for_status()
        return 1000 * (time.perf_counter() - start)
    cold = once()
    return cold, statistics.median(once() for _ in range(repeat))


def time_chromium(url: str, repeat: int) -> float:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        times = []
        for _ in range(repeat):
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            start = time.perf_counter()
            page.goto(url, wait_until="load")
            times.append(1000 * (time.perf_counter() - start))
            page.context.close()
        browser.close()
    return statistics.median(times)


def measure(folders: Folders, world: str, repeat: int) -> dict[str, tuple[float, float]]:
    """Per view: (cold, warm) http ms, plus the gallery in Chromium."""
    server = LiveServer(create_app(folders)).start()
    try:
        trajectory = json.loads((folders.trajectories / world / "verified.jsonl")
                                .open().readline())["id"]
        out = {}
        for name, path in (("gallery", "/worlds"), ("gallery page 3", "/worlds?page=3"),
                           ("gallery filtered", "/worlds?q=copy05"),
                           ("world page", f"/worlds/{world}"),
                           ("trajectory", f"/worlds/{world}/t/{trajectory}")):
            out[name] = time_http(server.url + path, repeat)
        out["gallery in chromium"] = (float("nan"), time_chromium(server.url + "/worlds", repeat))
        return out
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a built workspace (default: build one)")
    parser.add_argument("--worlds", type=int, default=100)
    parser.add_argument("--per-world", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    console = make_console()
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        source = args.source or Path(tmp) / "source"
        if args.source is None:
            console.print("building one world (generate, render, explore, verify in Chromium) ...")
            build_source(source)
        large = Path(tmp) / "large"
        started = time.perf_counter()
        world = replicate(source, large, args.worlds, args.per_world, console)
        made = time.perf_counter() - started
        base = measure(Folders.under(source), world, args.repeat)
        big = measure(Folders.under(large), f"{world}_copy000", args.repeat)
        trajectories = sum(1 for _ in large.glob("trajectories/*/images/*"))
    table = Table(title=f"dashboard: {args.worlds} worlds, {trajectories:,} trajectories "
                        f"(made in {made:.0f}s) vs 1 world (baseline), ms; median of {args.repeat}")
    for column in ("view", "baseline cold", "baseline warm", "large cold", "large warm",
                   "ratio (warm)"):
        table.add_column(column, justify="left" if column == "view" else "right")
    for name, (cold, warm) in big.items():
        b_cold, b_warm = base[name]
        table.add_row(name, _ms(b_cold), _ms(b_warm), _ms(cold), _ms(warm), f"{warm / b_warm:.2f}x")
    console.print(table)
    console.print(load_note())


def _ms(value: float) -> str:
    return "-" if value != value else f"{value:.1f}"


if __name__ == "__main__":
    main()
