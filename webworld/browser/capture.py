"""The screenshot of a page's viewport: one function, so every consumer sees the same pixels.

The verifier's records, the exported dataset and the live / MiniWoB environments all take
their screenshots through :func:`capture_png`, so a policy reads in an environment exactly
the pixels the dataset shows.

It asks Chromium directly (a CDP session per page, ``Page.captureScreenshot`` of the
viewport, ``optimizeForSpeed``) rather than through ``page.screenshot()``. The image is
the same lossless PNG, pixel for pixel (tests/browser/test_capture.py checks it against
``page.screenshot(type="png")``), in less than half the time (bench/bench_verify.py, time
per screenshot: 184 ms before, 77-89 ms after, on a loaded 2-core machine):

* Playwright's screenshot costs four more round trips to the page (hide the caret in every
  frame, wait for ``document.fonts.ready``, read the layout metrics, restore the caret),
  and its style changes make Chromium restyle the page around the capture;
* Chromium's default PNG encoding (zlib's default level) is most of the cost of a
  capture; ``optimizeForSpeed`` encodes the same pixels with zlib's fastest level. The files
  are larger (about 1.6x on these sites): :func:`webworld.data.export.export_dataset`
  deflates them again, losslessly, when it writes the dataset.

What Playwright's preparation did, done once per document instead: the text caret (which
blinks, so it would make screenshots depend on timing) is hidden by a stylesheet that
:data:`HIDE_CARET_JS` adopts (a constructed sheet: the sites' CSP allows it), installed with
the tab's page library. The sites use no web fonts, so there are none to wait for.
"""

from __future__ import annotations

import asyncio
import base64
import weakref
from typing import Any

from playwright.async_api import CDPSession, Page

CAPTURE_PARAMS: dict[str, Any] = {
    "format": "png",
    "optimizeForSpeed": True,
    "captureBeyondViewport": False,
    "fromSurface": True,
}
"""``Page.captureScreenshot`` parameters: the viewport as it is painted, lossless PNG."""

# Adopted, not a <style> element: a constructed stylesheet is not blocked by the sites'
# CSP (style-src 'self') and stays out of the DOM the observation walks.
HIDE_CARET_JS = r"""
(() => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync("input, textarea, [contenteditable] { caret-color: transparent !important; }");
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
})();
"""
"""Hide the text caret of this document (run once per document, before any capture)."""

_sessions: weakref.WeakKeyDictionary[Page, asyncio.Future[CDPSession]] = \
    weakref.WeakKeyDictionary()


async def capture_png(page: Page) -> bytes:
    """The page's viewport as PNG bytes (see the module doc)."""
    result = await (await _session(page)).send("Page.captureScreenshot", CAPTURE_PARAMS)
    return base64.b64decode(result["data"])


async def _session(page: Page) -> CDPSession:
    """The page's CDP session, opened on first use (concurrent callers share one)."""
    found = _sessions.get(page)
    if found is None or (found.done() and (found.cancelled() or found.exception())):
        found = _sessions[page] = asyncio.ensure_future(page.context.new_cdp_session(page))
    return await asyncio.shield(found)
