"""Screenshots of every dashboard view, for docs/ and the README.

    .venv/bin/python scripts/dashboard_screenshots.py WORKSPACE [--out docs/dashboard]
        [--view NAME=PATH ...]

WORKSPACE is a folder with the usual fsm_specs/, sites/, trajectories/, datasets/ and
runs/ (what `webworld build`, `eval` and `train` write). The dashboard is served on
127.0.0.1 and each view is captured in Chromium at 1400x900: the gallery, a world (its
graph with the first task's path highlighted), a verified trajectory at its third step, a
failed one, a dataset, the runs, a training run, an eval result and a comparison.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]

from webworld.browser.launch import CHROMIUM_ARGS, chromium_path
from webworld.dashboard.app import create_app
from webworld.dashboard.reading import StampCache
from webworld.dashboard.runs import RunCatalog
from webworld.dashboard.worlds import Folders, WorldCatalog
from webworld.serve.runner import LiveServer


def pick(folders: Folders) -> dict[str, str]:
    """The URL of each view, chosen from what the workspace has."""
    cache = StampCache()
    worlds = WorldCatalog(folders, cache)
    with_data = [w for w in worlds.ids() if worlds.trajectories(w).verified]
    world = max(with_data, key=lambda w: len(worlds.trajectories(w).verified))
    verified = max(worlds.trajectories(world).verified, key=lambda r: len(r["steps"]))
    failed = next(((w, worlds.trajectories(w).failures[0]["id"]) for w in with_data
                   if worlds.trajectories(w).failures), None)
    found = RunCatalog({"runs": folders.runs, "datasets": folders.datasets}, cache).scan()
    evals = [f.id for f in found if f.kind == "eval"]
    trains = [f.id for f in found if f.kind == "rl"]
    datasets = [f.id for f in found if f.kind == "dataset" and f.root == "datasets"]
    views = {"gallery": "/worlds", "world": f"/worlds/{world}",
             "trajectory": f"/worlds/{world}/t/{verified['id']}#s3", "runs": "/runs"}
    if failed:
        views["failure"] = f"/worlds/{failed[0]}/t/{failed[1]}"
    if datasets:
        views["dataset"] = f"/datasets/{datasets[0]}"
    if trains:
        views["training"] = f"/runs/train/{trains[0]}"
        views["compare-training"] = "/runs/compare?" + "&".join(f"run=train:{t}" for t in trains[:4])
    if evals:
        views["eval"] = f"/runs/eval/{max(evals, key=lambda e: 'oracle' in e)}"
    if len(evals) >= 2:
        views["compare-eval"] = f"/runs/compare?run=eval:{evals[0]}&run=eval:{evals[-1]}"
    return views


def capture(page: Page, base: str, name: str, path: str, out: Path) -> None:
    page.goto(base + path)
    page.wait_for_load_state("networkidle")
    if name == "world" and page.locator("#task-path option").count() > 1:
        page.select_option("#task-path", index=1)
        page.locator("#graph").scroll_into_view_if_needed()
    if name == "failure":
        page.locator(".failure-box").scroll_into_view_if_needed()
    page.screenshot(path=str(out / f"{name}.png"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard")
    parser.add_argument("--view", action="append", default=[], metavar="NAME=PATH",
                        help="capture PATH as NAME instead of the picked one")
    args = parser.parse_args()
    folders = Folders.under(args.workspace)
    views = {**pick(folders), **dict(v.split("=", 1) for v in args.view)}
    args.out.mkdir(parents=True, exist_ok=True)
    server = LiveServer(create_app(folders)).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            for name, path in views.items():
                capture(page, server.url, name, path, args.out)
                print(f"{name:18} {path}")
            browser.close()
    finally:
        server.stop()
    (args.out / "views.json").write_text(json.dumps(views, indent=2) + "\n")


if __name__ == "__main__":
    main()
