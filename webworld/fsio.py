"""Atomic writes of files and folders: a reader sees the old one or the new one, never half."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterable, Iterator
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


@contextlib.contextmanager
def staging_dir(target: str | Path) -> Iterator[Path]:
    """A temporary folder next to ``target`` (same file system, so it can be renamed into
    place with :func:`replace_dir`); whatever is left of it afterwards is removed."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def replace_dir(new: str | Path, target: str | Path) -> None:
    """Put folder ``new`` at ``target``: one atomic exchange where Linux offers it (a reader
    never sees ``target`` missing), else two renames, undone if the second fails."""
    new, target = Path(new), Path(target)
    if not target.exists():
        os.rename(new, target)
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old folder
        return
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
    os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """``renameat2(RENAME_EXCHANGE)``: swap two paths atomically. False when unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0
