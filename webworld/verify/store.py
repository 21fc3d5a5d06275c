"""Append-only JSONL files that survive being killed and resume without duplicates."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class JsonlStore:
    """Records keyed by ``id``. A run killed mid-write leaves at most one partial last
    line; opening the store cuts it off, so the record is simply redone."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.ids: set[str] = set()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            self._recover()
        self._handle = path.open("a", encoding="utf-8")

    def _recover(self) -> None:
        data = self.path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(len(complete))
        for line in complete.decode("utf-8").splitlines():
            if line.strip():
                self.ids.add(json.loads(line)["id"])

    def append(self, record: dict[str, Any]) -> None:
        if record["id"] in self.ids:
            return
        self._handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self.ids.add(record["id"])

    def close(self) -> None:
        self._handle.close()
