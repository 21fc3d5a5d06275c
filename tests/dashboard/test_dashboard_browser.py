"""The dashboard in real Chromium: every view loads without a console error, the state
machine of the largest shipped world is drawn and can be zoomed and highlighted, the
trajectory viewer steps both ways, a failed trajectory shows its class, and a page
reloads while a run writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.dashboard.conftest import BUILT, Workspace, largest_shipped, serve
from webworld.browser.launch import CHROMIUM_ARGS, chromium_path
from webworld.spec.io import load_spec


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    tab = context.new_page()
    tab.problems = []  # type: ignore[attr-defined]
    tab.on("console", lambda m: tab.problems.append(f"{m.type}: {m.text}")
           if m.type in ("error", "warning") else None)
    tab.on("pageerror", lambda e: tab.problems.append(f"page error: {e}"))
    yield tab
    context.close()


def views(ws: Workspace) -> list[tuple[str, str]]:
    """(path, text the page must show) for every view of the dashboard."""
    verified = ws.verified()[0]["id"]
    largest = largest_shipped().stem
    return [
        ("/", "webworld dashboard"),
        ("/worlds", "Worlds"),
        (f"/worlds/{BUILT}", "State machine"),
        (f"/worlds/{largest}", "State machine"),
        (f"/worlds/{BUILT}/t/{verified}", "step 1 of"),
        (f"/worlds/{BUILT}/t/{ws.failed_id()}", "state_mismatch"),
        ("/datasets", "Datasets"),
        ("/datasets/webworld", "Example SFT turns"),
        ("/runs", "Eval results (2)"),
        ("/runs/train/gspo-demo", "Learning curves"),
        ("/runs/eval/oracle.jsonl", "Success by archetype"),
        ("/runs/compare?run=eval:random.jsonl&run=eval:oracle.jsonl", "B − A"),
        ("/runs/compare?run=train:gspo-demo&run=train:vespo-demo", "success rate"),
    ]


def test_every_view_loads_without_console_errors(board: str, workspace: Workspace,
                                                  page: Page) -> None:
    for path, text in views(workspace):
        response = page.goto(board + path)
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")
        assert text in page.locator("main").inner_text(), path
        broken = page.evaluate("Array.from(document.images).filter(i => i.complete && "
                               "i.naturalWidth === 0 && i.loading !== 'lazy').map(i => i.src)")
        assert broken == [], (path, broken)
        assert page.problems == [], (path, page.problems)  # type: ignore[attr-defined]


def test_graph_of_the_largest_shipped_world(board: str, page: Page) -> None:
    spec = load_spec(largest_shipped())
    page.goto(f"{board}/worlds/{largest_shipped().stem}")
    graph = page.locator("#graph svg")
    assert graph.locator("g.node").count() == len(spec.pages)
    assert graph.locator("g.edge").count() == sum(len(p.actions) for p in spec.pages)
    terminals = {p.id for p in spec.pages if p.terminal}
    drawn = {el.get_attribute("id").removeprefix("page-")
             for el in graph.locator("g.node.terminal").all()}
    assert drawn == terminals
    # zoom and pan change what is shown; fit restores it
    before = graph.get_attribute("viewBox")
    page.click("[data-zoom=in]")
    zoomed = graph.get_attribute("viewBox")
    assert float(zoomed.split()[2]) < float(before.split()[2])
    box = page.locator("#graph").bounding_box()
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 320, box["y"] + 260)
    page.mouse.up()
    assert graph.get_attribute("viewBox").split()[:2] != zoomed.split()[:2]
    page.click("[data-zoom=fit]")
    assert graph.get_attribute("viewBox") == before


def test_a_task_path_is_highlighted(board: str, workspace: Workspace, page: Page) -> None:
    page.goto(f"{board}/worlds/{BUILT}")
    paths = json.loads(page.locator("#task-paths").text_content())
    task, actions = next((t, a) for t, a in paths.items() if len(a) >= 2)
    page.select_option("#task-path", task)
    lit = {el.get_attribute("id") for el in page.locator("#graph g.edge.on").all()}
    assert lit == {f"act-{a}" for a in actions}
    assert page.locator("#graph g.node.on").count() >= 2
    page.select_option("#task-path", "")
    assert page.locator("#graph .on").count() == 0


def test_trajectory_viewer_steps_forward_and_back(board: str, workspace: Workspace,
                                                  page: Page) -> None:
    record = max(workspace.verified(), key=lambda r: len(r["steps"]))
    n = len(record["steps"])
    page.goto(f"{board}/worlds/{BUILT}/t/{record['id']}")
    shown = page.locator("section.step.shown")

    def at(i: int) -> None:
        assert page.locator("#step-label").inner_text() == f"step {i + 1} of {n}"
        assert shown.count() == 1
        assert record["steps"][i]["action"] in shown.inner_text()
        src = shown.locator("img").get_attribute("src")
        assert src.endswith(record["steps"][i]["observation"]["screenshot"])
        page.wait_for_function("() => document.querySelector('section.step.shown img')"
                               ".naturalWidth > 0")  # loaded once shown (lazy)

    at(0)
    assert page.locator("#prev-step").is_disabled()
    page.click("#next-step")
    at(1)
    page.keyboard.press("ArrowRight")
    at(2)
    page.click("#prev-step")
    at(1)
    page.keyboard.press("ArrowLeft")
    at(0)
    page.goto(f"{board}/worlds/{BUILT}/t/{record['id']}#s{n}")  # a shared link to the last step
    at(n - 1)
    assert page.locator("#next-step").is_disabled()
    assert shown.locator(".box").count() == 1  # the acted element is outlined


def test_a_failed_trajectory_shows_its_class(board: str, workspace: Workspace, page: Page) -> None:
    page.goto(f"{board}/worlds/{BUILT}")
    group = page.locator("details.failures")
    assert group.locator("summary").inner_text().split() == ["state_mismatch", "1"]
    group.locator(f"a:text('{workspace.failed_id()}')").click()
    assert page.locator("#failure-class").inner_text() == "state_mismatch"
    failed_rows = page.locator("tr.failed-step")
    assert failed_rows.count() == 1 and "failed here" in failed_rows.inner_text()
    assert "Why it failed" in page.locator(".failure-box").inner_text()


def test_eval_traces_show_their_screenshots(board: str, page: Page) -> None:
    page.goto(f"{board}/runs/eval/oracle.jsonl")
    images = page.locator("details.trace[open] img")
    assert images.count() >= 1
    images.first.scroll_into_view_if_needed()
    page.wait_for_function("() => { const i = document.querySelector('details.trace img');"
                           " return i && i.complete && i.naturalWidth > 0; }")


def test_pages_reload_while_a_run_writes(copy_of: Workspace, browser) -> None:
    server = serve(copy_of.folders)
    try:
        tab = browser.new_page()
        results = copy_of.root / "runs" / "random.jsonl"
        lines = results.read_text().splitlines()
        results.write_text("\n".join(lines[:1]) + "\n")
        tab.goto(f"{server.url}/runs/eval/{quote('random.jsonl')}")
        assert "1 episodes" in tab.locator("main").inner_text()
        tab.wait_for_selector("#live.on")
        with results.open("a") as handle:  # the eval appends its next episode
            handle.write(lines[1] + "\n")
        tab.wait_for_function("() => document.querySelector('main').innerText"
                              ".includes('2 episodes')", timeout=15_000)
        # a world gains its trajectories while the gallery is open
        tab.goto(f"{server.url}/worlds")
        tab.wait_for_selector("#live.on")
        spec = Path(copy_of.root / "fsm_specs" / f"{BUILT}.json").read_text()
        (copy_of.root / "fsm_specs" / "new_world.json").write_text(spec)
        tab.wait_for_selector("a.card[data-world=new_world]", timeout=15_000)
        tab.close()
    finally:
        server.stop()
