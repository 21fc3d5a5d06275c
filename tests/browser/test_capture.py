"""webworld.browser.capture: Playwright's screenshot, pixel for pixel, caret hidden."""

from __future__ import annotations

import asyncio
import io

import numpy as np
from PIL import Image
from playwright.async_api import Page, async_playwright

from tests.conftest import World
from webworld.browser.capture import capture_png
from webworld.browser.launch import launch_browser, new_context
from webworld.browser.tab import BrowserTab
from webworld.serve.multi import WORLD_PREFIX, create_multi_app
from webworld.serve.runner import LiveServer

# A text field with the focus and text in it: its caret blinks (every 500 ms).
ADD_FIELD_JS = """() => {
  const field = document.createElement("input");
  field.id = "ww-test-field";
  field.style.setProperty("position", "fixed");
  field.style.setProperty("top", "8px");
  field.style.setProperty("left", "8px");
  field.style.setProperty("z-index", "2147483647");
  document.body.append(field);
}"""


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


async def _differing_frames(page: Page, frames: int = 6) -> int:
    """How many of ``frames`` captures differ from page.screenshot() (which hides the caret),
    each taken just after the caret moved: a caret that moves is drawn at once, its blink
    starting again, so the frame is one where a caret not hidden shows."""
    differing = 0
    for n in range(frames):
        await page.keyboard.press("End" if n % 2 else "Home")
        ours = await capture_png(page)
        assert ours[:8] == b"\x89PNG\r\n\x1a\n"
        theirs = await page.screenshot(type="png")
        differing += not np.array_equal(_pixels(ours), _pixels(theirs))
    return differing


def test_capture_is_playwrights_screenshot_without_the_caret(bookstore: World) -> None:
    async def main() -> tuple[int, int, tuple[int, ...]]:
        with LiveServer(create_multi_app([bookstore.site_dir])) as server:
            async with async_playwright() as pw:
                browser = await launch_browser(pw)
                try:
                    tab = await BrowserTab.open(await new_context(browser))
                    await tab.goto(server.url + WORLD_PREFIX.format(world=bookstore.spec.id) + "/")
                    await tab.page.evaluate(ADD_FIELD_JS)
                    await tab.page.click("#ww-test-field")
                    await tab.page.keyboard.type("dune")
                    hidden = await _differing_frames(tab.page)
                    seen = await tab.observe(screenshot=True)
                    shape = _pixels(seen.screenshot).shape
                    # without the page library's stylesheet the caret shows in some frames
                    await tab.page.evaluate("document.adoptedStyleSheets = []")
                    shown = await _differing_frames(tab.page)
                    return hidden, shown, shape
                finally:
                    await browser.close()

    hidden, shown, shape = asyncio.run(main())
    assert hidden == 0
    assert shown > 0
    assert shape == (800, 1280, 3)
