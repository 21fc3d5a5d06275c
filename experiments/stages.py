"""What the experiment scripts share: resumable stages of `webworld` commands with their wall
times, and docs whose generated part is rewritten while the hand-written reading is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webworld.fsio import atomic_write_bytes, atomic_write_json  # noqa: E402

READING = "<!-- the reading below is written by hand; the script keeps it -->"


def rel(path: Path) -> str:
    return os.path.relpath(path, ROOT)


def write_keeping_reading(path: Path, generated: str) -> None:
    """Write a doc's generated part; what a person wrote under :data:`READING` (the reading
    of the numbers) survives the rewrite."""
    earlier = path.read_text(encoding="utf-8") if path.is_file() else ""
    reading = earlier.split(READING, 1)[1] if READING in earlier else "\n\nReading: (to write)\n"
    atomic_write_bytes(path, (generated + READING + reading).encode())


class Stages:
    """Runs `webworld` commands once each, logging command and wall time to stages.json; a
    stage whose output is there and which is logged is skipped, one cut short is run again
    (the long ones resume from their checkpoints) and its wall time added up."""

    def __init__(self, work: Path, env: dict[str, str] | None = None,
                 after: Callable[[], None] | None = None) -> None:
        self.work, self.env, self.after = work, env, after  # after: called when a stage ends
        self.log_path = work / "stages.json"
        self.log = json.loads(self.log_path.read_text()) if self.log_path.is_file() else {}

    def done(self, name: str, output: Path) -> bool:
        return output.exists() and name in self.log

    def run(self, name: str, args: list[str], done: Path) -> None:
        if self.done(name, done):
            return
        print(f"== {name}: webworld {' '.join(args)}", flush=True)
        started = time.perf_counter()
        env = {**os.environ, **self.env} if self.env else None
        subprocess.run([sys.executable, "-c", "from webworld.cli.main import app; app()", *args],
                       check=True, cwd=ROOT, env=env)
        wall = time.perf_counter() - started
        # read again: another run of the script (a stage started beside this one) may have
        # logged since
        self.log = json.loads(self.log_path.read_text()) if self.log_path.is_file() else {}
        earlier = self.log.get(name, {}).get("wall", 0.0)  # a resumed stage adds its time
        self.log[name] = {"command": "webworld " + " ".join(args), "wall": earlier + wall}
        atomic_write_json(self.log_path, self.log)
        if self.after:
            self.after()


def keep_record(work: Path, record: Path, patterns: tuple[str, ...]) -> None:
    """Copy a run folder's small results files (``patterns``, globs under ``work``) to
    ``record``, the same paths under it: committed, they let the docs be written again from
    them after the run folder, which holds weights and is never committed, is gone."""
    for path in sorted(p for pattern in patterns for p in work.glob(pattern) if p.is_file()):
        target = record / path.relative_to(work)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, path.read_bytes())
