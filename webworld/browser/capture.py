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

A capture is Chromium's raster and encoding of the whole viewport, most of a verified
step's cost beyond the bare gesture; and the same page is seen again and again (every
candidate starts on the home page, task instances share their first steps: in the 30
training worlds of 46e44e0:experiments/learning.py 28% of the step screenshots were distinct). A
:class:`ScreenshotCache` keeps a run's PNGs by a digest of everything the pixels depend on
(:data:`PIXELS_KEY_JS`: the DOM, the controls' live values, scroll offsets, focus, hover,
selection, viewport), so a page seen before is not captured again. Pages whose pixels
could depend on more (animations running, media, canvas, frames, images loading) get no
key and are always captured. tests/rl/test_reused_screenshots.py verifies a world with the
cache and without: every reused screenshot shows what a fresh capture shows (up to
Chromium's raster noise: the same page painted after another history can differ by one
level in a few antialiased pixels).
"""

from __future__ import annotations

import asyncio
import base64
import weakref
from collections import OrderedDict
from typing import Any

from playwright.async_api import CDPSession, Page

from webworld.aio import retrieve_later

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

PIXELS_KEY_JS = r"""
async () => {
  try {
    if (!(window.crypto && crypto.subtle)) return null;
    if (document.querySelector("canvas, video, audio, iframe, embed, object")) return null;
    if (Array.from(document.images).some((i) => !i.complete)) return null;
    if (document.getAnimations().some((a) => a.playState !== "finished")) return null;
    if (document.fonts && document.fonts.status !== "loaded") return null;
    const all = Array.from(document.querySelectorAll("*"));
    const index = new Map(all.map((e, i) => [e, i]));
    const at = (e) => (e ? index.get(e) ?? -1 : -1);
    const controls = Array.from(document.querySelectorAll("input, select, textarea"),
      (e) => [at(e), e.value, e.checked, e.indeterminate, e.selectedIndex]);
    const scrolled = all.filter((e) => e.scrollTop || e.scrollLeft)
      .map((e) => [at(e), e.scrollTop, e.scrollLeft]);
    const active = document.activeElement;
    const sel = getSelection();
    const selected = sel && [sel.type, sel.anchorOffset, sel.focusOffset,
                             at(sel.anchorNode && sel.anchorNode.parentElement)];
    const state = JSON.stringify([
      location.hash, innerWidth, innerHeight, devicePixelRatio, scrollX, scrollY, controls,
      scrolled, at(Array.from(document.querySelectorAll(":hover")).pop()), at(active),
      !!(active && active.matches(":focus-visible")),
      selected,
      Array.from(document.querySelectorAll("dialog"), (d) => d.matches(":modal")),
    ]);
    const text = new TextEncoder().encode(document.documentElement.outerHTML + "\u0000" + state);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", text));
    return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  } catch (e) {
    return null;
  }
}
"""
"""A digest of what the viewport's pixels depend on, or null where they may depend on more."""


class ScreenshotCache:
    """A run's screenshots by :data:`PIXELS_KEY_JS` digest, the least recently used dropped
    past ``budget_bytes``. One per run and its tabs (a site re-rendered later is a new run)."""

    def __init__(self, budget_bytes: int = 64 << 20) -> None:
        self.budget_bytes = budget_bytes
        self.hits = 0
        self.misses = 0
        self._images: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0

    def get(self, key: str | None) -> bytes | None:
        image = self._images.get(key) if key else None
        if image is None:
            self.misses += 1
            return None
        self._images.move_to_end(key)  # type: ignore[arg-type]
        self.hits += 1
        return image

    def put(self, key: str | None, image: bytes) -> None:
        if not key or key in self._images:
            return
        self._images[key] = image
        self._bytes += len(image)
        while self._bytes > self.budget_bytes and self._images:
            self._bytes -= len(self._images.popitem(last=False)[1])


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
        retrieve_later(found)  # its callers may all be cancelled (shield) before it ends
    return await asyncio.shield(found)
