"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def dumps_json(data: Any) -> str:
    """Stable, human-readable JSON (same data, same bytes)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def atomic_write_json(path: str | Path, data: Any) -> Path:
    return atomic_write_text(path, dumps_json(data))


def atomic_write_jsonl(path: str | Path, records: Iterable[Any]) -> Path:
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    return atomic_write_text(path, "".join(line + "\n" for line in lines))
