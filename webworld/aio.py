"""Small asyncio helpers shared by the browser, the verifier and the live env."""

from __future__ import annotations

import asyncio


def abandon(future: asyncio.Future) -> None:
    """Stop waiting for ``future``: cancel it if it is still running, and retrieve its
    outcome when it ends, so a failure nobody wants (a page closed under Ctrl-C) is not
    printed by asyncio as "Task exception was never retrieved"."""
    future.cancel()
    future.add_done_callback(_retrieve)


def retrieve_later(future: asyncio.Future) -> None:
    """Mark ``future``'s failure as seen, for a future that may never be awaited."""
    future.add_done_callback(_retrieve)


def _retrieve(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()
