"""Tokens and dollars per LLM stage, shared by every client of a run."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Usage:
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    repairs: int = 0
    retries: int = 0


@dataclass
class Ledger:
    """Tokens and dollars per stage, shared by every client of a run."""

    stages: dict[str, Usage] = field(default_factory=lambda: defaultdict(Usage))
    unpriced: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, stage: str, **counts: float) -> None:
        with self._lock:
            usage = self.stages[stage]
            for name, value in counts.items():
                setattr(usage, name, getattr(usage, name) + value)

    @property
    def usd(self) -> float:
        return sum(u.usd for u in self.stages.values())

    @property
    def tokens(self) -> int:
        return sum(u.input_tokens + u.output_tokens for u in self.stages.values())

    def to_dict(self) -> dict[str, Any]:
        return {stage: vars(u) for stage, u in self.stages.items()}
