"""One browser page that a policy (or the verifier) acts on, one action at a time.

:meth:`BrowserTab.act` carries out an action of :mod:`webworld.browser.actions` the way a
person would, by rules exact enough that the fast environment can reproduce them
without a browser (:mod:`webworld.rl.fast`):

1. the rules of :func:`~webworld.browser.actions.check_action` on the observed element;
2. the action happens *in place* when the last action hovered an element of a hover
   menu and the target is in that menu too; otherwise the pointer first rests at the
   top-left corner (closing a hovered menu) and the target is scrolled to the centre;
3. the target's centre must not be covered by another element (an overlay, an open menu);
4. the gesture: a real mouse click / move / drag at that point, or Playwright's fill,
   press and select on the element (fill clicks into the field first);
5. after every action but a hover the pointer rests at the corner again;
6. if the action submitted a form or followed a link, wait for the next page: its load, or on a
   site that updates in place (``swap``) the end of site.js's swap (its ``ww:settled``).

A refused action raises :class:`~webworld.browser.actions.ActionRefused`; a page that
does not load raises :class:`NavigationError`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from webworld import contract
from webworld.aio import abandon
from webworld.browser.actions import (ActionRefused, BrowserAction, check_action, describe,
                                      resolve_target)
from webworld.browser.capture import HIDE_CARET_JS, PIXELS_KEY_JS, ScreenshotCache, capture_png
from webworld.browser.observe import WALK_JS, Observation, observation_of
from webworld.browser.placement import PLACE_FN, cover_message
from webworld.errors import WebworldError

PARK = (0, 0)
"""Where the pointer rests between actions (the page's top-left corner)."""

# The tab's page functions, installed once in every document (an init script, so each
# call sends a name, not a function's source to compile; CDP scripts are exempt from the
# site's CSP). A listener on window marks a submit or a followed link (it runs after the
# site's own, on document, and sees a cancelled event), so the tab knows a load is coming.
# The library also hides the text caret, for webworld.browser.capture's screenshots.
PAGE_LIBRARY_JS = "(() => { if (window.__ww) return;" + HIDE_CARET_JS + PLACE_FN + r"""
  window.__wwNav = 0;
  // Whether the pointer last moved to the corner (the tab's park), and who waits for it.
  window.__wwParked = true;
  window.__wwOnPark = null;
  addEventListener("mousemove", (e) => {
    window.__wwParked = e.clientX === 0 && e.clientY === 0;
    const then = window.__wwParked ? window.__wwOnPark : null;
    if (then) { window.__wwOnPark = null; then(); }
  }, true);
  addEventListener("submit", (e) => { if (!e.defaultPrevented) window.__wwNav = 1; });
  addEventListener("click", (e) => {
    const a = e.target && e.target.closest ? e.target.closest("a[href]") : null;
    if (a && !e.defaultPrevented) window.__wwNav = 1;
  });
  const byBid = (bid) => document.querySelector('[data-ww-bid="' + bid + '"]');
  const pixelsKey = PIXELS_KEY;
  window.__ww = {
    walk: WALK,
    // the rows, and with opts.key the digest of what the pixels depend on (capture.py)
    // with opts.find, the match of that selector too (see find)
    read: async (opts) => ({rows: window.__ww.walk(opts), key: opts.key ? await pixelsKey() : null,
                            find: opts.find || null, found: opts.find ? window.__ww.find(opts.find) : null}),
    // How many elements match a CSS selector, and the id of the first (its own, or of the
    // first element with an id inside it; null when it got none: not visible).
    find: (selector) => {
      const found = document.querySelectorAll(selector);
      if (!found.length) return [0, null];
      const own = found[0].getAttribute("BID");
      const inner = own ? null : found[0].querySelector("[BID]");
      return [found.length, own || (inner ? inner.getAttribute("BID") : null)];
    },
    // Where the pointer will act. With the pointer on a hovered element (hovering), an
    // action in that element's hover menu happens in place; any other must first wait
    // for the pointer to leave (needsPark), so no scrolling happens under it.
    place: ([bid, hovering, markHover]) => {
      window.__wwSwap = null;  // a new action: what an earlier swap did is told already
      const el = byBid(bid);
      if (!el) return {missing: true};
      let inPlace = false;
      if (hovering) {
        const hovered = document.querySelector("[data-ww-hovered]");
        const menu = hovered ? hovered.closest(MENU) : null;
        inPlace = !!(menu && menu.contains(el));
        if (!inPlace) return {needsPark: true};
      }
      const out = placeOf(el, inPlace);
      out.inPlace = inPlace;
      if (el.type === "range")
        Object.assign(out, {min: Number(el.min || 0), max: Number(el.max || 100), now: Number(el.value)});
      if ("checked" in el) out.checked = el.checked;
      if (markHover && !out.covered) {
        document.querySelectorAll("[data-ww-hovered]").forEach((e) => e.removeAttribute("data-ww-hovered"));
        el.setAttribute("data-ww-hovered", "");
      }
      return out;
    },
    // After a macrotask (site.js's release timer runs first): a page load is coming
    // ({pending}), or the page as it is now ({rows}), once a swap site.js started (a page
    // put in place without a load) has ended ({rows, swap: what it did}) and, with
    // opts.parking, the pointer has come back to the corner and a macrotask has passed
    // (as if the tab had parked it first); past PARK_WAIT_MS without it, {unparked}.
    settle: (opts) => new Promise((r) => setTimeout(() => {
      if (window.__wwNav === 1) return r({pending: true});
      const done = async (unparked) => {
        const swap = window.__wwSwap || null;
        window.__wwSwap = null;
        r({...(await window.__ww.read(opts)), swap, unparked});
      };
      const parked = () => {
        if (!opts.parking || window.__wwParked) return done(false);
        const late = setTimeout(() => { window.__wwOnPark = null; done(true); }, PARK_WAIT_MS);
        window.__wwOnPark = () => { clearTimeout(late); setTimeout(() => done(false), 0); };
      };
      if (document.documentElement.hasAttribute("data-ww-busy"))
        document.addEventListener("ww:settled", parked, {once: true});
      else parked();
    }, 0)),
  };
})();""".replace("WALK", WALK_JS.strip()).replace("MENU", repr("." + contract.HOVER_MENU_CLASS)) \
    .replace("PIXELS_KEY", PIXELS_KEY_JS.strip()).replace("PARK_WAIT_MS", "2000") \
    .replace("BID", contract.BID_ATTR)


# The answer comes back as one JSON string: Playwright's client checks a structured result
# value by value against its protocol, which cost more Python CPU than anything else in a
# step (a page's rows are thousands of values); json.loads reads the string in C.
_CALL_JS = "async ([n, a]) => window.__ww ? JSON.stringify({v: await window.__ww[n](a)}) : null"


class NavigationError(WebworldError):
    """The page did not load after an action: the server stopped answering or failed."""


class PageGone(PlaywrightError):
    """A call into a page that did not answer (the page went away under it)."""


@dataclass
class TabConfig:
    action_timeout_ms: float = 3000
    navigation_timeout_ms: float = 10000


@dataclass
class Outcome:
    """What an action did: whether a new page loaded, and its HTTP status."""

    navigated: bool
    status: int | None = None


class BrowserTab:
    """A Playwright page plus the pointer rules above; one per concurrent episode."""

    def __init__(self, page: Page, config: TabConfig | None = None, *,
                 skip: str | None = None, shots: ScreenshotCache | None = None) -> None:
        self.page = page
        self.config = config or TabConfig()
        self.skip = skip  # parts of the page an observation leaves out (a CSS selector)
        self.shots = shots  # screenshots of pages seen before, by what their pixels depend on
        self.hovered = False           # the last action was a hover: the pointer is on the page
        # a CSS selector each read of the page also looks up (see find), and what it found
        self.find_next: str | None = None
        self._found: tuple[str, list] | None = None
        self._read_after_action: dict | None = None  # the page's rows (and key) read then
        self._loaded = asyncio.Event()
        self._leaving = asyncio.Event()  # a page load started (a document request)
        self._status: int | None = None
        self._failed: str | None = None
        page.on("load", lambda _: self._loaded.set())
        # a page load starts with a document request (a history.pushState of a swap, which
        # Playwright also reports as a frame navigation, loads nothing)
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("requestfailed", self._on_request_failed)

    @classmethod
    async def open(cls, context: BrowserContext, config: TabConfig | None = None, *,
                   skip: str | None = None, shots: ScreenshotCache | None = None) -> BrowserTab:
        """A new page of ``context`` that watches for page loads (call once per context)."""
        await context.add_init_script(PAGE_LIBRARY_JS)
        return cls(await context.new_page(), config, skip=skip, shots=shots)

    def _on_request(self, request: Any) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self._leaving.set()

    def _on_response(self, response: Any) -> None:
        request = response.request
        if request.resource_type == "document" and request.frame == self.page.main_frame:
            self._status = response.status

    def _on_request_failed(self, request: Any) -> None:
        if request.resource_type == "document" and request.frame == self.page.main_frame:
            self._failed = f"{request.url}: {request.failure}"
            self._loaded.set()

    # --- navigation -----------------------------------------------------------------------------

    async def goto(self, url: str) -> Outcome:
        """Open ``url`` and wait for it to load; the pointer rests at the corner."""
        self.hovered, self._read_after_action = False, None
        try:
            response = await self.page.goto(url, wait_until="load",
                                            timeout=self.config.navigation_timeout_ms)
        except PlaywrightTimeout:
            raise NavigationError(f"{url} did not load within "
                                  f"{self.config.navigation_timeout_ms / 1000:g} s") from None
        except PlaywrightError as exc:
            raise NavigationError(f"cannot open {url}: {_first_line(exc)}") from None
        await self.page.mouse.move(*PARK)
        return Outcome(True, response.status if response else None)

    async def observe(self, *, screenshot: bool = False) -> Observation:
        """Assign element ids and read the page (webworld.browser.observe), with a
        screenshot (webworld.browser.capture) if asked."""
        read, self._read_after_action = self._read_after_action, None
        try:
            read, image = await self._read(read, screenshot)
        except PlaywrightError as exc:
            if not _is_navigation(exc):
                raise
            # a script of the page navigated: read the next page once it has loaded
            await self.page.wait_for_load_state("load", timeout=self.config.navigation_timeout_ms)
            read, image = await self._read(None, screenshot)
        self._found = (read["find"], read["found"]) if read.get("find") else None
        return observation_of(self.page.url, read["rows"], image)

    async def find(self, selector: str) -> tuple[int, str | None]:
        """How many elements of the page last observed match ``selector``, and the id of
        the first (its own, or a container's first inside it: a hover menu is acted on
        through its trigger button; None: not visible). Free when the observation's read
        looked it up (``find_next`` was this selector); else one call to the page."""
        if self._found is not None and self._found[0] == selector:
            count, bid = self._found[1]
        else:
            count, bid = await self._call("find", selector)
        return count, bid

    async def screenshot(self) -> bytes:
        """The viewport as PNG, as an observation shows it."""
        return await capture_png(self.page)

    async def _read(self, read: dict | None, screenshot: bool) -> tuple[dict, bytes | None]:
        """The page's read (rows, pixels key, found; unless read already) and its
        screenshot. With a screenshot
        cache, the screenshot of a page seen before is the cached one; without, the two
        are asked for at once: the walk only marks elements with ids, which changes no
        pixel, so the capture's frame is the same whichever of the two the page runs first."""
        if read is None and screenshot and self.shots is None:
            return await self._read_with_capture()
        read = read or await self._call("read", self._read_options())
        if not screenshot:
            return read, None
        image = self.shots.get(read["key"]) if self.shots is not None else None
        if image is None:
            image = await self.screenshot()
            if self.shots is not None:
                self.shots.put(read["key"], image)
        return read, image

    async def _read_with_capture(self) -> tuple[dict, bytes]:
        """The read and a fresh screenshot, asked for at once."""
        read, image = await asyncio.gather(self._call("read", self._read_options()),
                                           self.screenshot(), return_exceptions=True)
        for outcome in (read, image):  # the walk's failure first: it may be a page load
            if isinstance(outcome, BaseException):
                raise outcome
        return read, image

    def _read_options(self) -> dict[str, Any]:
        """What the page library's read and settle take: with a cache, the pixels' key too;
        the selector to look up (its answer names it: a read kept for later still says
        what it looked up)."""
        return {"skip": self.skip, "key": self.shots is not None, "find": self.find_next}

    async def _call(self, name: str, arg: Any) -> Any:
        """``window.__ww[name](arg)``; on a document the init script did not reach, the
        library is installed first. A page that does not answer in time (one going away
        under a page load that Chromium froze rather than ended) raises
        :class:`PageGone`: evaluate itself has no deadline."""
        found = await self._evaluate(_CALL_JS, [name, arg])
        if found is None:
            await self._evaluate(PAGE_LIBRARY_JS, None)
            found = await self._evaluate(_CALL_JS, [name, arg])
        return json.loads(found).get("v")

    async def _evaluate(self, script: str, arg: Any) -> Any:
        try:
            async with asyncio.timeout(self.config.navigation_timeout_ms / 1000):
                return await self.page.evaluate(script, arg)
        except TimeoutError:
            raise PageGone("the page did not answer") from None

    # --- acting ----------------------------------------------------------------------------------

    async def act(self, action: BrowserAction, seen: Observation) -> Outcome:
        """Carry out ``action`` on the page last observed as ``seen`` (see the module doc)."""
        action = resolve_target(action, seen.nodes)  # a role and name -> its id
        node = seen.node(action.bid)
        check_action(action, node)
        assert node is not None
        self._read_after_action = None
        hover = action.name == "hover"
        try:
            place = await self._call("place", [action.bid, self.hovered, hover])
            if place.get("needsPark"):  # leave the hovered element before scrolling
                await self.page.mouse.move(*PARK)
                self.hovered = False
                place = await self._call("place", [action.bid, False, hover])
        except PageGone as exc:
            raise NavigationError(f"the page stopped answering ({exc})") from None
        if place.get("missing"):
            raise ActionRefused("unknown_id", f"element {describe(node)} is no longer on the page")
        if place.get("covered"):
            raise ActionRefused("covered", cover_message(node, place["covered"]))
        self._loaded.clear()
        self._leaving.clear()
        self._status, self._failed = None, None
        pointer_away = self.hovered  # a hover left it on the page
        moved = await self._gesture(action, place)
        self.hovered = hover
        if hover or not (moved or pointer_away):
            return await self._settle()
        # After any other action the pointer goes back to the corner. A mouse move reaches
        # the page with its next frame (up to 16 ms), so it goes while the page settles
        # (a swap's request); the page's read waits for it.
        parking = asyncio.ensure_future(self.page.mouse.move(*PARK))
        try:
            outcome = await self._settle(parking=True)
            await parking
        finally:
            abandon(parking)
        if self._read_after_action is not None and self._read_after_action.get("unparked"):
            self._read_after_action = None  # read before the pointer left: observe reads again
        return outcome

    async def _gesture(self, action: BrowserAction, place: dict[str, Any]) -> bool:
        """Carry out the action at its place; whether the pointer moved (press and select
        leave it where it was, and so does a check box already as asked)."""
        mouse, timeout = self.page.mouse, self.config.action_timeout_ms
        target = self.page.locator(f'[{contract.BID_ATTR}="{action.bid}"]')
        x, y = place["x"], place["y"]
        try:
            if action.name == "click":
                await mouse.click(x, y)
            elif action.name == "hover":
                await mouse.move(x, y)
            elif action.name == "fill":
                await mouse.click(x, y)
                await target.fill(action.arg or "", timeout=timeout)
            elif action.name == "press":
                await target.press(action.arg or "Enter", timeout=timeout)
            elif action.name == "select_option":
                await target.select_option(label=action.arg, timeout=timeout)
            elif action.name in ("check", "uncheck"):
                if place.get("checked") == (action.name == "check"):
                    return False
                await mouse.click(x, y)
            elif action.name == "drag":
                await self._drag(place, float(action.arg or 0))
        except PlaywrightError as exc:
            if _is_navigation(exc):
                return True  # the page is already on its way to the next one
            raise ActionRefused("browser", f"{action}: {_first_line(exc)}") from None
        return action.name not in ("press", "select_option")

    async def _drag(self, place: dict[str, Any], value: float) -> None:
        """Drag a range input's thumb from its current value to ``value`` with the mouse."""
        lo, hi, thumb = place["min"], place["max"], contract.SLIDER_THUMB_PX

        def x_of(v: float) -> float:
            fraction = (v - lo) / (hi - lo) if hi > lo else 0.0
            return place["left"] + thumb / 2 + fraction * (place["width"] - thumb)

        mouse = self.page.mouse
        await mouse.move(x_of(place["now"]), place["y"])
        await mouse.down()
        await mouse.move(x_of(value), place["y"], steps=6)
        await mouse.up()

    async def _settle(self, *, parking: bool = False) -> Outcome:
        """Wait for the page load the action started, if it started one; else keep the
        page's rows for the next :meth:`observe` (one call to the page, not two). The
        page is asked after a macrotask (site.js's release timer runs first) while the
        tab watches for a page load: whichever comes first decides."""
        asked = asyncio.ensure_future(self._call("settle", {**self._read_options(),
                                                            "parking": parking}))
        leaving = asyncio.ensure_future(self._leaving.wait())
        try:
            await asyncio.wait({asked, leaving}, timeout=self.config.navigation_timeout_ms / 1000,
                               return_when=asyncio.FIRST_COMPLETED)
            settled = _result(asked) if asked.done() else {"pending": True}
        finally:  # unanswered, the document is going away (or the run is): drop the answer
            leaving.cancel()
            abandon(asked)
        if not settled.get("pending") and not self._leaving.is_set() and not self._loaded.is_set():
            self._read_after_action = settled
            return self._swapped(settled.get("swap"))
        try:
            async with asyncio.timeout(self.config.navigation_timeout_ms / 1000):
                await self._loaded.wait()
        except TimeoutError:
            raise NavigationError("the next page did not load within "
                                  f"{self.config.navigation_timeout_ms / 1000:g} s") from None
        if self._failed is not None:
            raise NavigationError(f"the site did not answer ({self._failed})")
        self.hovered = False
        return Outcome(True, self._status)


    def _swapped(self, swap: dict[str, Any] | None) -> Outcome:
        """What the action did when no page loaded: nothing beyond the page, or a swap (the
        next page put in place: a page change, like a load); a swap the server never
        answered is a :class:`NavigationError`, the page saying so too."""
        if swap is None:
            return Outcome(False)
        if swap.get("error"):
            raise NavigationError(f"the site did not answer ({swap['error']})")
        self.hovered = False
        return Outcome(True, swap.get("status"))


def _result(task: asyncio.Future) -> dict[str, Any]:
    """A settle call's answer; a page that went away means a load is coming."""
    try:
        return task.result()
    except PlaywrightError as exc:
        if not _is_navigation(exc):
            raise
        return {"pending": True}


def _is_navigation(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, PageGone) or "context was destroyed" in text \
        or "navigation" in text.lower()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
