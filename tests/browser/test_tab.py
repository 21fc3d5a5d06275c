"""webworld.browser.tab: an action cut short (Ctrl-C) leaves no failure unseen."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from playwright.async_api import async_playwright

from webworld.browser.actions import BrowserAction
from webworld.browser.launch import launch_browser, new_context
from webworld.browser.tab import BrowserTab
from webworld.serve.runner import LiveServer

# A click that keeps the page busy for 3 s (saying so first): the tab's settle call waits on it.
BUSY_PAGE = """<button onclick="setTimeout(() => { console.log('busy'); const t = Date.now();
  while (Date.now() - t < 3000) {} }, 0)">Busy</button>"""
HANG_GUARD_S = 60


def test_an_action_cancelled_while_settling_leaves_no_unretrieved_error() -> None:
    async def main() -> list[dict[str, Any]]:
        unseen: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: unseen.append(context))
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            tab = await BrowserTab.open(await new_context(browser))
            await tab.page.set_content(BUSY_PAGE)
            seen = await tab.observe()
            (button,) = seen.nodes
            busy, settling = asyncio.Event(), asyncio.Event()
            tab.page.on("console", lambda message: busy.set() if message.text == "busy" else None)
            tab._settle = _announcing(tab._settle, settling)  # the real one, said when it starts
            acting = asyncio.ensure_future(tab.act(BrowserAction("click", button["bid"]), seen))
            async with asyncio.timeout(HANG_GUARD_S):  # clicked, and the settle call is asked
                await asyncio.gather(busy.wait(), settling.wait())
            assert not acting.done()
            acting.cancel()  # as Ctrl-C does
            await asyncio.gather(acting, return_exceptions=True)
            await browser.close()
        # the driver is gone: every call the page had pending has failed; wait for them all
        await _the_other_tasks_done()
        gc.collect()  # an unretrieved task failure is reported when the task is freed
        await asyncio.sleep(0)  # (a turn of the loop, for a report it schedules)
        return unseen

    unseen = asyncio.run(main())
    assert not unseen, [context.get("message") for context in unseen]


def _announcing(settle: Callable[..., Awaitable[Any]], started: asyncio.Event
                ) -> Callable[..., Awaitable[Any]]:
    async def announced(**kwargs: Any) -> Any:
        started.set()
        return await settle(**kwargs)
    return announced


async def _the_other_tasks_done() -> None:
    """Wait until every task but this one has ended (holding none of them afterwards)."""
    others = asyncio.all_tasks() - {asyncio.current_task()}
    if others:
        async with asyncio.timeout(HANG_GUARD_S):
            await asyncio.wait(others)
    others.clear()


# The element under the pointer, written on the page as the pointer moves over it.
HOVER_PAGE = """<div style="position:fixed;left:0;top:0;width:60px;height:40px">corner</div>
<button style="margin:200px">Press</button><p id="over">none</p>
<script>document.addEventListener("mouseover", (e) =>
  document.getElementById("over").textContent = "over " + e.target.textContent.trim())</script>"""


def test_the_page_after_an_action_is_read_with_the_pointer_back_in_the_corner() -> None:
    """The tab parks the pointer while the page settles; what it reads must come after."""
    app = FastAPI()
    app.get("/", response_class=HTMLResponse)(lambda: HOVER_PAGE)

    async def main(url: str) -> list[str]:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                tab = await BrowserTab.open(await new_context(browser))
                await tab.goto(url)  # a document of its own: the tab's page library in it
                texts = []
                for _ in range(5):
                    seen = await tab.observe()
                    button = next(n for n in seen.nodes if n["role"] == "button")
                    await tab.act(BrowserAction("click", button["bid"]), seen)
                    texts.append((await tab.observe()).text)
                return texts
            finally:
                await browser.close()

    with LiveServer(app) as server:
        texts = asyncio.run(main(server.url + "/"))
    for text in texts:
        assert "over corner" in text and "over Press" not in text, text


FIND_PAGE = """<div class="menu"><button>Open</button></div><button class="twin">A</button>
<button class="twin">B</button><p class="text">no id</p>"""


def test_find_answers_the_same_from_the_read_and_from_its_own_call() -> None:
    """The verifier's next target, looked up by the page's read or by a call of its own."""
    app = FastAPI()
    app.get("/", response_class=HTMLResponse)(lambda: FIND_PAGE)
    selectors = [".menu", ".twin", ".absent", ".text"]

    async def main(url: str) -> tuple[list, list, list]:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            try:
                tab = await BrowserTab.open(await new_context(browser))
                await tab.goto(url)
                seen = await tab.observe()
                called = [await tab.find(s) for s in selectors]
                calls: list[str] = []
                real_call = tab._call

                async def counting(name: str, arg: object) -> object:
                    calls.append(name)
                    return await real_call(name, arg)

                tab._call = counting  # type: ignore[method-assign]
                from_read = []
                for selector in selectors:
                    tab.find_next = selector
                    await tab.observe()
                    from_read.append(await tab.find(selector))
                return called, from_read, [calls, seen.nodes]
            finally:
                await browser.close()

    with LiveServer(app) as server:
        called, from_read, (calls, nodes) = asyncio.run(main(server.url + "/"))
    bids = {n["name"]: n["bid"] for n in nodes}
    assert called == [(1, bids["Open"]), (2, bids["A"]), (0, None), (1, None)]
    assert from_read == called
    assert calls == ["read"] * len(selectors)  # the reads answered: no call of find's own
