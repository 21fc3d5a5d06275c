"""Training runs, eval results and exported datasets, found under the served folders.

- an RL run is a folder with ``metrics.jsonl`` (``webworld train rl``), an SFT run one with
  ``sft_summary.json`` or HF checkpoints (``webworld train sft``);
- an eval result is a ``*.jsonl`` whose first line is an episode of ``webworld eval``;
- a dataset is a folder whose ``manifest.json`` is a webworld export.

Every run is named by its path relative to the served folder, and only names found by the
scan are served, so a URL cannot reach any other file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from webworld.dashboard.charts import Chart, line_chart
from webworld.dashboard.reading import (
    NotFound,
    StampCache,
    file_stamp,
    has,
    read_json_or,
    read_lines,
)
from webworld.train.metrics import CURVES

SCAN_DEPTH = 4
SHARES = {"success_rate", "ess"}  # drawn on the whole 0..1 scale
# folders that hold a run's or a build's bulk, never a run of their own
SKIP = {"checkpoints", "model", "tb", "images", "hf", "parquet", "jsonl", "sft_data", "sites",
        "trajectories", "fsm_specs", "assets", "base-model", "__pycache__", ".git", ".webworld"}


@dataclass
class Found:
    kind: str        # "rl" | "sft" | "eval" | "dataset"
    id: str          # path relative to its root, posix
    path: Path
    root: str        # which served folder: "runs" | "datasets"


@dataclass
class EvalRun:
    found: Found
    records: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        first = self.records[0] if self.records else {}
        return f"{first.get('policy', '?')} on {first.get('suite', '?')}"


@dataclass
class TrainRun:
    found: Found
    config: dict[str, Any]
    rows: list[dict[str, Any]]         # one per rollout batch (RL) or logging step (SFT)
    summary: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def algo(self) -> str:
        if self.found.kind == "sft":
            return "sft"
        return str(self.config.get("algo", "rl"))

    def series(self, key: str) -> list[tuple[float, float]]:
        return [(float(r["step"]), float(r[key])) for r in self.rows
                if isinstance(r.get(key), int | float) and isinstance(r.get("step"), int | float)]

    def table_keys(self, rows: int = 8) -> list[str]:
        """The columns of the last rows (SFT logs alternate training and validation rows);
        nested values (an RL row's per-optimiser-step ``updates``) are left to the curves."""
        return list(dict.fromkeys(k for r in self.rows[-rows:] for k, v in r.items()
                                  if not isinstance(v, list | dict)))

    def curve_keys(self) -> list[tuple[str, str]]:
        if self.found.kind == "sft":
            return [("loss", "training loss"), ("eval_loss", "validation loss"),
                    ("learning_rate", "learning rate")]
        return list(CURVES)


def curves(runs: list[TrainRun]) -> list[Chart]:
    """One panel per metric; each run a line (one run: its own curves)."""
    keys = list(dict.fromkeys(k for run in runs for k in run.curve_keys()))
    charts = [line_chart(label, {run.found.id: run.series(key) for run in runs},
                         unit=key in SHARES) for key, label in keys]
    return [c for c in charts if not c.empty]


class RunCatalog:
    def __init__(self, roots: dict[str, Path], cache: StampCache) -> None:
        self.roots, self.cache = roots, cache

    def scan(self) -> list[Found]:
        found: list[Found] = []
        for name, root in self.roots.items():
            found += [f for f in self._walk(name, root, root, 0)]
        return sorted(found, key=lambda f: (f.kind, f.id))

    def get(self, kind: str, run_id: str) -> Found:
        """Only what the scan found: anything else, ``..`` included, is a 404."""
        for found in self.scan():
            if found.id == run_id and (found.kind == kind or kind == "train" and
                                       found.kind in ("rl", "sft")):
                return found
        raise NotFound(run_id)

    def eval_run(self, found: Found) -> EvalRun:
        def load() -> EvalRun:
            lines = read_lines(found.path, _is_episode)
            return EvalRun(found, lines.records, lines.notes)
        return self.cache.get("eval", found.path, [found.path], load)

    def train_run(self, found: Found) -> TrainRun:
        if found.kind == "sft":
            state = _latest_trainer_state(found.path)
            deps = [found.path / "sft_summary.json", *([state] if state else [])]
            return self.cache.get("sft", found.path, deps, lambda: _sft_run(found, state))
        deps = [found.path / "metrics.jsonl", found.path / "config.json"]
        return self.cache.get("rl", found.path, deps, lambda: _rl_run(found))

    def evals_beside(self, found: Found) -> list[Found]:
        """Eval results next to a training run (its own folder and the one above)."""
        near = {found.path.parent, found.path}
        return [f for f in self.scan() if f.kind == "eval" and f.path.parent in near]

    def watched(self, found: Found | None = None) -> list[Path]:
        if found is None:
            return [*self.roots.values(), *(p for f in self.scan() for p in self.watched(f))]
        if found.kind == "rl":
            return [found.path / "metrics.jsonl", found.path / "config.json"]
        if found.kind == "sft":
            state = _latest_trainer_state(found.path)
            return [found.path / "sft_summary.json", found.path / "checkpoints",
                    *([state] if state else [])]
        if found.kind == "eval":
            return [found.path, found.path.with_name(found.path.name + ".traces")]
        return [found.path / "manifest.json"]

    # --- the scan --------------------------------------------------------------------------

    def _walk(self, name: str, root: Path, folder: Path, depth: int) -> Iterator[Found]:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        rel = folder.relative_to(root).as_posix()
        names = {e.name for e in entries}
        if depth and "metrics.jsonl" in names:
            yield Found("rl", rel, folder, name)
        elif depth and ("sft_summary.json" in names or _has_checkpoints(folder)):
            yield Found("sft", rel, folder, name)
        if "manifest.json" in names and _is_export(folder / "manifest.json", self.cache):
            yield Found("dataset", rel if depth else ".", folder, name)
            return
        for entry in entries:
            if entry.is_file() and entry.name.endswith(".jsonl") and entry.name != "metrics.jsonl" \
                    and _first_is_episode(Path(entry.path), self.cache):
                yield Found("eval", Path(entry.path).relative_to(root).as_posix(),
                            Path(entry.path), name)
            elif (entry.is_dir(follow_symlinks=False) and depth < SCAN_DEPTH
                  and entry.name not in SKIP and not entry.name.endswith(".traces")):
                yield from self._walk(name, root, Path(entry.path), depth + 1)


def _is_episode(record: dict[str, Any]) -> bool:
    """A line of `webworld eval`: what the tables and the comparison read."""
    return (has(record, key=str, suite=str, task=str, success=bool, failure=str, steps=int,
                time_s=(int, float), errors=list)
            and all(isinstance(e, dict) and "code" in e for e in record["errors"])
            and (record["suite"].startswith("miniwob") or has(record, world=str)))


def _first_is_episode(path: Path, cache: StampCache) -> bool:
    def check() -> bool:
        try:
            with path.open("rb") as handle:
                line = handle.readline(1 << 20)
            record = json.loads(line)
        except (OSError, ValueError):
            return False
        return isinstance(record, dict) and _is_episode(record)
    return cache.get("is-eval", path, [path], check)


def _is_export(path: Path, cache: StampCache) -> bool:
    return cache.get("is-export", path, [path],
                     lambda: isinstance(m := read_json_or(path, None), dict) and "webworld_export" in m)


def _has_checkpoints(folder: Path) -> bool:
    return any((folder / "checkpoints").glob("checkpoint-*/trainer_state.json"))


def _latest_trainer_state(folder: Path) -> Path | None:
    states = list((folder / "checkpoints").glob("checkpoint-*/trainer_state.json"))
    return max(states, key=lambda p: int(p.parent.name.rsplit("-", 1)[-1]), default=None) \
        if states else None


def _rl_run(found: Found) -> TrainRun:
    lines = read_lines(found.path / "metrics.jsonl", lambda r: has(r, step=(int, float)))
    config = read_json_or(found.path / "config.json", {})
    return TrainRun(found, config if isinstance(config, dict) else {}, lines.records,
                    lines.records[-1] if lines.records else {}, lines.notes)


def _sft_run(found: Found, state: Path | None) -> TrainRun:
    summary = read_json_or(found.path / "sft_summary.json", {})
    summary = summary if isinstance(summary, dict) else {}
    trainer = read_json_or(state, {}) if state else {}
    history = trainer.get("log_history") if isinstance(trainer, dict) else None
    rows = [r for r in history if isinstance(r, dict)] if isinstance(history, list) else []
    settings = summary.get("settings")
    notes = [] if summary else ["no sft_summary.json yet: the run is going on, or was stopped"]
    return TrainRun(found, settings if isinstance(settings, dict) else {}, rows, summary, notes)


def dataset_view(found: Found, examples: int = 3) -> dict[str, Any]:
    """What an export holds: its manifest, and the first SFT chats of its train split."""
    manifest = _tables(read_json_or(found.path / "manifest.json", {}))
    chats = []
    sft = found.path / "sft" / "train.jsonl"
    if file_stamp(sft):
        with sft.open("rb") as handle:
            for raw in handle:
                if len(chats) >= examples:
                    break
                try:
                    chat = json.loads(raw)
                except ValueError:
                    break
                if isinstance(chat, dict) and isinstance(chat.get("messages"), list):
                    chats.append([m for m in chat["messages"] if isinstance(m, dict)])
    formats = {name: (found.path / name).is_dir() for name in ("jsonl", "parquet", "hf", "sft")}
    return {"manifest": manifest, "chats": chats, "formats": formats}


def _tables(manifest: Any) -> dict[str, Any]:
    """The manifest with its tables as the page reads them (dicts of dicts, lists of names);
    anything else in their place shows as empty."""
    manifest = dict(manifest) if isinstance(manifest, dict) else {}
    for table in ("splits", "worlds"):
        rows = manifest.get(table)
        manifest[table] = {k: v for k, v in rows.items() if isinstance(v, dict)} \
            if isinstance(rows, dict) else {}
    for split in manifest["splits"].values():
        split["worlds"] = [str(w) for w in split.get("worlds", [])] \
            if isinstance(split.get("worlds"), list) else []
    for world in manifest["worlds"].values():
        world["failures"] = world["failures"] if isinstance(world.get("failures"), dict) else {}
    for key in ("formats", "fractions"):
        manifest[key] = manifest[key] if isinstance(manifest.get(key), list) else []
    return manifest
