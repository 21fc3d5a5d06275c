"""Chromium on a private event loop in a background thread, for synchronous callers.

Playwright's async API lets one browser step many pages at once; gymnasium's API is
synchronous. A :class:`Runtime` runs the loop in a daemon thread: ``run(coro)`` hands a
coroutine to it and waits, with a deadline, so a wedged browser is an error, not a hang.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from playwright.async_api import Browser, Playwright, async_playwright

from webworld.browser.launch import launch_browser
from webworld.errors import WebworldError

T = TypeVar("T")
DEADLINE_S = 300.0


class Runtime:
    """One Playwright and one Chromium, owned by a background event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name="webworld-browser")
        self.thread.start()
        self.playwright: Playwright | None = None
        self.browser: Browser | None = None
        try:
            self.playwright = self.run(async_playwright().start())
            self.browser = self.run(launch_browser(self.playwright))
        except BaseException:
            self.close()
            raise

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = DEADLINE_S) -> T:
        if not self.thread.is_alive():
            coro.close()
            raise WebworldError("the browser runtime is closed")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise WebworldError(f"the browser did not answer within {timeout:g} s") from None

    def close(self) -> None:
        if not self.thread.is_alive():
            return
        try:
            if self.browser is not None:
                self.run(self.browser.close(), timeout=30)
            if self.playwright is not None:
                self.run(self.playwright.stop(), timeout=30)
        except Exception:  # closing what is already gone must not hide the real error
            pass
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
