"""What the experiment scripts share: resumable stages of `webworld` commands with their wall
times, and docs whose generated part is rewritten while the hand-written reading is kept."""

from __future__ import annotations

import argparse
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
    of the numbers) survives the rewrite, and so does a measured row whose results files are
    gone (see :func:`keep_measured_rows`)."""
    earlier = path.read_text(encoding="utf-8") if path.is_file() else ""
    reading = earlier.split(READING, 1)[1] if READING in earlier else "\n\nReading: (to write)\n"
    generated, kept = keep_measured_rows(generated, earlier.split(READING, 1)[0])
    for line in kept:
        print(f"{path.name}: kept from the page, its results not found: {line[:100]}")
    atomic_write_bytes(path, (generated + READING + reading).encode())


def record_parser(work: Path, record: Path, doc: Path) -> argparse.ArgumentParser:
    """The options every experiment that keeps a record shares: where it runs, where its
    record goes, the page it writes, and writing that page from the record alone."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=work)
    parser.add_argument("--record", type=Path, default=record)
    parser.add_argument("--doc", type=Path, default=doc)
    parser.add_argument("--table-only", action="store_true", help="the page from the record")
    return parser


def require(needed: tuple[Path, ...], scripts: str) -> None:
    """Stop with what is missing and which experiment ``scripts`` make it, where a path an
    experiment builds on is not here."""
    for path in needed:
        if not path.exists():
            raise SystemExit(f"{rel(path)}: not here; run {scripts} first")


def stage_rows(log: dict[str, dict]) -> list[str]:
    """A page's "Stages" section: each logged stage, its wall time (whole seconds) and command."""
    return ["## Stages", "", "| stage | wall (s) | command |", "|---|---|---|",
            *[f"| {name}{'' if s.get('ended', True) else ' (cut short)'} | {int(s['wall'])} | "
              f"`{s['command']}` |" for name, s in log.items()]]


NOT_RUN = "not run yet"


def keep_measured_rows(generated: str, earlier: str) -> tuple[str, list[str]]:
    """``generated`` with each line that says a run is :data:`NOT_RUN` replaced by the
    earlier page's measured line of that row, if it had one: a page written again from a
    record that lacks some results (a run folder lost with its machine, a record made
    later) keeps what was measured instead of blanking it. A row is its first cells in the
    table of the same header (a table line up to the first cell that says so), or a list
    line's label; a row two lines of a table share ("the same, grounded by name" under two
    runs) is not one row, and is left as it is. Returns the text and the lines kept."""
    lines, before = generated.split("\n"), earlier.splitlines()
    tables, headers = _table_rows(before), _headers(lines)
    kept: list[str] = []

    def measured(line: str, header: str | None) -> str:
        cut = line.find(f" {NOT_RUN}")
        if cut < 0:
            return line
        key = line[:cut]
        if header is not None:  # "| label | split |"
            rows = [e for e in tables.get(header, []) if e.startswith(key)]
            shared = sum(g.startswith(key) for g, h in zip(lines, headers) if h == header) > 1
            found = [] if shared or len(rows) > 1 else \
                [e for e in rows if not e[len(key):].lstrip().startswith(NOT_RUN)]
        elif line.startswith("- "):  # "- label: not run yet" against "- label (`run/`): ..."
            label = key.rstrip(":")
            found = [e for e in before if e.startswith((label + " (", label + ":"))
                     and NOT_RUN not in e]
        else:
            found = []
        if len(found) != 1:
            return line
        kept.append(found[0])
        return found[0]

    return "\n".join(measured(line, h) for line, h in zip(lines, headers, strict=True)), kept


def _headers(lines: list[str]) -> list[str | None]:
    """Each line's table header (the first line of its run of ``|`` lines), None outside tables."""
    out: list[str | None] = []
    for i, line in enumerate(lines):
        inside = line.startswith("|") and i > 0 and lines[i - 1].startswith("|")
        out.append((out[-1] if inside else line) if line.startswith("|") else None)
    return out


def _table_rows(lines: list[str]) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line, header in zip(lines, _headers(lines), strict=True):
        if header is not None:
            rows.setdefault(header, []).append(line)
    return rows


class Stages:
    """Runs `webworld` commands once each, logging command and wall time to stages.json; a
    stage whose output is there and which is logged as ended is skipped, one cut short is run
    again (the long ones resume from their checkpoints) and its wall time added up. While a
    stage runs its wall is logged every :data:`HEARTBEAT_S` seconds, marked ``"ended":
    false``, so the time of a segment killed with its session still counts."""

    HEARTBEAT_S = 60.0

    def __init__(self, work: Path, env: dict[str, str] | None = None,
                 after: Callable[[], None] | None = None) -> None:
        self.work, self.env, self.after = work, env, after  # after: called when a stage ends
        self.log_path = work / "stages.json"
        self.log = json.loads(self.log_path.read_text()) if self.log_path.is_file() else {}

    def done(self, name: str, output: Path) -> bool:
        return output.exists() and self.log.get(name, {}).get("ended", name in self.log)

    def restore(self, record: Path, outputs: dict[str, Path]) -> bool:
        """Take from ``record`` (a copy of this folder's results, :func:`keep_record`) the
        stages ``outputs`` names, each with its output file (a path under both folders), all
        or none: each must be logged there as ended, have its file there, and not be logged
        here. A run folder made again on a new machine lost its weights, not its scores: a
        stage taken back is not run again, nor the training only it needed."""
        logged = json.loads((record / "stages.json").read_text()) \
            if (record / "stages.json").is_file() else {}
        if not outputs or any(
                name in self.log or not logged.get(name, {}).get("ended", name in logged)
                or not (record / path).is_file() for name, path in outputs.items()):
            return False
        for name, path in outputs.items():
            (self.work / path).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(self.work / path, (record / path).read_bytes())
            self.log[name] = logged[name]
        atomic_write_json(self.log_path, self.log)
        return True

    def run(self, name: str, args: list[str], done: Path) -> None:
        if self.done(name, done):
            return
        print(f"== {name}: webworld {' '.join(args)}", flush=True)
        started = time.perf_counter()
        earlier = self.log.get(name, {}).get("wall", 0.0)  # a resumed stage adds its time
        env = {**os.environ, **self.env} if self.env else None
        command = [sys.executable, "-c", "from webworld.cli.main import app; app()", *args]
        with subprocess.Popen(command, cwd=ROOT, env=env) as process:
            while True:
                try:
                    code = process.wait(timeout=self.HEARTBEAT_S)
                    break
                except subprocess.TimeoutExpired:
                    self._log(name, args, earlier + time.perf_counter() - started, ended=False)
        wall = earlier + time.perf_counter() - started
        self._log(name, args, wall, ended=code == 0)
        if code != 0:
            raise subprocess.CalledProcessError(code, command)
        if self.after:
            self.after()

    def _log(self, name: str, args: list[str], wall: float, *, ended: bool) -> None:
        # read again: another run of the script (a stage started beside this one) may have
        # logged since
        self.log = json.loads(self.log_path.read_text()) if self.log_path.is_file() else {}
        self.log[name] = {"command": "webworld " + " ".join(args), "wall": wall,
                          **({} if ended else {"ended": False})}
        atomic_write_json(self.log_path, self.log)


def keep_record(work: Path, record: Path, patterns: tuple[str, ...]) -> None:
    """Copy a run folder's small results files (``patterns``, globs under ``work``) to
    ``record``, the same paths under it: committed, they let the docs be written again from
    them after the run folder, which holds weights and is never committed, is gone. The stage
    log is merged, not replaced: a run folder made again on a new machine logs only the stages
    it ran, and the record keeps the earlier ones'."""
    for path in sorted(p for pattern in patterns for p in work.glob(pattern) if p.is_file()):
        target = record / path.relative_to(work)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.name == "stages.json" and target.is_file():
            atomic_write_json(target, {**json.loads(target.read_text()),
                                       **json.loads(path.read_text())})
        else:
            atomic_write_bytes(target, path.read_bytes())
