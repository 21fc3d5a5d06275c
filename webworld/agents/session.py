"""One LLM session per build: shared settings, stages, ledger; runs async agent code."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from webworld.agents.config import LLMConfig
from webworld.agents.ledger import Ledger

if TYPE_CHECKING:
    from webworld.agents.client import LLMClient

R = TypeVar("R")


@dataclass
class LLMSession:
    config: LLMConfig
    stages: set[str]
    ledger: Ledger = field(default_factory=Ledger)

    def uses(self, stage: str) -> bool:
        return stage in self.stages

    def run(self, work: Callable[[LLMClient], Awaitable[R]]) -> R:
        """Run ``work(client)`` to completion; every call is booked on the session ledger."""

        from webworld.agents.client import LLMClient  # the openai SDK loads only when used

        async def go() -> R:
            client = LLMClient(self.config, self.ledger)
            try:
                return await work(client)
            finally:
                await client.close()

        return asyncio.run(go())
