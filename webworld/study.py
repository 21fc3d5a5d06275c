"""What the studies in experiments/ share: `webworld` commands run as resumable stages with
their wall times, and a report page whose generated part is rewritten while the reading a
person wrote under it is kept.

A study is a folder, experiments/<study>/, with its script (run.py), its records and its
REPORT.md; it imports this module, never another study.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from webworld.fsio import atomic_write_bytes, atomic_write_json

READING = "<!-- the reading below is written by hand; the script keeps it -->"
HEARTBEAT_S = 60.0  # how often a running stage logs its wall time so far


def webworld_command(*args: str) -> list[str]:
    """The argv of a `webworld` command in this interpreter (no installed script needed)."""
    return [sys.executable, "-m", "webworld", *args]


def write_keeping_reading(path: Path, generated: str) -> None:
    """Write a page's generated part; what a person wrote under :data:`READING` (the reading
    of the numbers) survives the rewrite."""
    earlier = path.read_text(encoding="utf-8") if path.is_file() else ""
    reading = earlier.split(READING, 1)[1] if READING in earlier else "\n\nReading: (to write)\n"
    atomic_write_bytes(path, (generated + READING + reading).encode())


class Stages:
    """Runs `webworld` commands once each from ``root``, logging command and wall time to
    ``work/stages.json``. A stage whose output is there and which is logged as ended is
    skipped; one cut short runs again (the long commands resume from their checkpoints) and
    its wall time adds up. While a stage runs, its wall is logged every :data:`HEARTBEAT_S`,
    marked ``"ended": false``, so the time of a run killed with its session still counts."""

    def __init__(self, work: Path, root: Path, env: dict[str, str] | None = None,
                 after: Callable[[], None] | None = None) -> None:
        self.work, self.root, self.env, self.after = work, root, env, after
        self.log_path = work / "stages.json"
        self.log: dict[str, dict[str, Any]] = self._read()

    def _read(self) -> dict[str, dict[str, Any]]:
        return json.loads(self.log_path.read_text()) if self.log_path.is_file() else {}

    def done(self, name: str, output: Path) -> bool:
        return output.exists() and self.log.get(name, {}).get("ended", name in self.log)

    def run(self, name: str, args: list[str], done: Path) -> None:
        """Run ``webworld ARGS`` as stage ``name`` unless ``done`` shows it ran."""
        if self.done(name, done):
            return
        print(f"== {name}: webworld {' '.join(args)}", flush=True)
        started = time.perf_counter()
        earlier = self.log.get(name, {}).get("wall", 0.0)  # a resumed stage adds its time
        env = {**os.environ, **self.env} if self.env else None
        command = webworld_command(*args)
        with subprocess.Popen(command, cwd=self.root, env=env) as process:
            while True:
                try:
                    code = process.wait(timeout=HEARTBEAT_S)
                    break
                except subprocess.TimeoutExpired:
                    self._log(name, args, earlier + time.perf_counter() - started, ended=False)
        self._log(name, args, earlier + time.perf_counter() - started, ended=code == 0)
        if code != 0:
            raise subprocess.CalledProcessError(code, command)
        if self.after:
            self.after()

    def _log(self, name: str, args: list[str], wall: float, *, ended: bool) -> None:
        self.log = self._read()  # another run of the study (a stage beside this one) may have logged
        self.log[name] = {"command": "webworld " + " ".join(args), "wall": wall,
                          **({} if ended else {"ended": False})}
        atomic_write_json(self.log_path, self.log)


def rl_run(out: Path, worlds: Path, flags: list[str], root: Path) -> dict[str, Any]:
    """Run (or resume, or just read) ``webworld train rl`` on the fast env of ``worlds`` into
    ``out``, one torch thread, from ``root``: its command, wall time (``out/study.json``),
    config and metrics rows."""
    command = ["train", "rl", "--worlds", os.path.relpath(worlds, root), "--split", "all",
               "--env", "fast", "--out", os.path.relpath(out, root), *flags]
    log = out / "study.json"
    if not ((out / "model" / "config.json").is_file() and log.is_file()):
        resume = ["--resume"] if (out / "checkpoints").is_dir() else []
        started = time.perf_counter()
        subprocess.run(webworld_command(*command, *resume), check=True, cwd=root,
                       env={**os.environ, "OMP_NUM_THREADS": "1"},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        earlier = json.loads(log.read_text())["wall"] if log.is_file() else 0.0
        atomic_write_json(log, {"command": "webworld " + " ".join(command),
                                "wall": earlier + time.perf_counter() - started})
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if x.strip()]
    config = json.loads((out / "config.json").read_text())
    return {"rows": rows, "config": config, **json.loads(log.read_text())}
