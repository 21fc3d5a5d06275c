"""Starting Chromium through Playwright: Debian's build when present, never a download."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from webworld.errors import WebworldError

if TYPE_CHECKING:  # the fast env and the trainer import this module without Playwright
    from playwright.async_api import Browser, BrowserContext, Playwright

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--font-render-hinting=none",
    # (one flag: Chromium reads only the last --disable-features) New headless mode
    # preloads the omnibox popup (a WebUI renderer) in every window: nothing here shows
    # it, and it costs a quarter of the CPU of page loads. The back/forward cache would
    # freeze a page left by a form submission instead of ending it, and a script still
    # running there would never answer. RenderDocument (a new frame host for every
    # same-site page load) costs ~10% of the loads/s (bench/bench_env.py's live env).
    "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,BackForwardCache,RenderDocument",
]
VIEWPORT = {"width": 1280, "height": 800}


def chromium_path() -> str | None:
    """``WEBWORLD_CHROMIUM``, else /usr/bin/chromium, else None (Playwright's own build)."""
    configured = os.environ.get("WEBWORLD_CHROMIUM")
    if configured:
        if not Path(configured).is_file():
            raise WebworldError(f"WEBWORLD_CHROMIUM={configured} is not a file")
        return configured
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


async def launch_browser(playwright: Playwright) -> Browser:
    try:
        # handle_sigint off: a terminal's Ctrl-C reaches Playwright's driver too, which would
        # close the browser under the running pages (their errors classed as failed replays,
        # or an exit 1); webworld stops on the KeyboardInterrupt and closes it itself
        return await playwright.chromium.launch(executable_path=chromium_path(),
                                                args=CHROMIUM_ARGS, headless=True,
                                                handle_sigint=False)
    except Exception as exc:  # Playwright raises its own Error with a long log
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise WebworldError(f"could not start Chromium ({first}); install Debian's "
                            "chromium or set WEBWORLD_CHROMIUM") from None


async def new_context(browser: Browser) -> BrowserContext:
    """A browser context as every webworld page sees the web: one viewport, locale and zone."""
    return await browser.new_context(viewport=VIEWPORT, device_scale_factor=1, locale="en-US",
                                      timezone_id="UTC")
