"""Export verified trajectories as datasets: JSONL, Parquet, a HF ``DatasetDict``, SFT chat.

Input: ``<traj_root>/<world>/verified.jsonl`` (+ ``failures.jsonl``, ``images/``), as
described in :mod:`webworld.data.records`. Output, under ``out_dir``::

    images/<world>/<trajectory>/<n>.png the screenshots: the one stored copy of each (none in a
                                        text-only export: see below)
    jsonl/<split>.jsonl                 trajectories, screenshot paths relative to out_dir
    parquet/<split>.parquet             one row per step, ``screenshot`` = that path
    hf/                                 the same rows as a DatasetDict (save_to_disk)
    sft/<split>.jsonl                   one chat per step: {"messages": [...], "screenshot": path,
                                        "detour": a step its task did without (detours.py)}
    README.md                           dataset card (Hugging Face YAML header); its pictures
                                        are screenshots of the dataset, in images/
    manifest.json                       counts, splits and files (marks the folder as ours)

Each screenshot is stored once, in ``images/``, and every format points to it with the
same relative path. The other way round (Parquet embedding the bytes, the rest pointing
into it) would suit a Hub upload, but costs every other reader: the JSONL and SFT files
would point into a Parquet row instead of a file, ``hf/`` (Arrow) could only embed a
second copy, and a trainer (TRL's ``SFTTrainer`` with a processor) wants PIL images per
chat, which plain files give without reading a Parquet column. So:
:func:`load_steps` reads ``parquet/`` or ``hf/`` with ``screenshot`` as a ``datasets``
``Image`` of the file (decoded on access; ``push_to_hub`` of it embeds the bytes, the
usual self-contained Hub layout), and :func:`load_sft_dataset` adds the images to the
chats. Read with ``datasets`` directly, the column is the path string. The verifier
writes its PNGs for speed (zlib's fastest level); the export deflates them again at the
default level, losslessly (the same filtered rows: :mod:`webworld.data.png`).

Trajectories verified with ``--no-screenshots`` have steps whose screenshot is null: they
export as they are, every format's ``screenshot`` null (no image in ``images/``, none in
``load_steps``' rows, an empty ``images`` list in ``load_sft_dataset``'s). An export with no
screenshot at all is text-only, and its card says so.

Everything is built in a temporary folder next to ``out_dir`` that then replaces it in
one rename, so a reader sees the old export or the new one, never a mix. A folder that
is not an earlier export is never replaced. The input is read twice (check and count,
then write); the second pass reads only the bytes the first pass saw, so a verifier still
appending to ``verified.jsonl`` cannot make the two disagree.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from webworld.browser.observe import (
    OBSERVATION_MODES,
    compact_text,
    interactive_elements,
    named_form,
    observation_text,
    public_url,
)
from webworld.data.card import write_card
from webworld.data.detours import detour_steps
from webworld.data.heldout import load_manifest
from webworld.data.png import compact_png
from webworld.data.prompting import history_entry, step_messages
from webworld.data.reading import JsonlRead, RecordError, iter_verified, read_failures
from webworld.data.records import VerifiedTrajectory
from webworld.data.splits import SPLITS, assign_splits, check_fractions
from webworld.data.summary import (  # noqa: F401  (the export's own names too)
    MANIFEST_KEY,
    STEP_COLUMNS,
    ExportSummary,
    SplitSummary,
    WorldSummary,
)
from webworld.data.thoughts import thought_for_step
from webworld.errors import UsageError
from webworld.fsio import atomic_write_json, replace_dir

FORMATS: tuple[str, ...] = ("jsonl", "parquet", "hf", "sft")
ACTION_FORMS: tuple[str, ...] = ("named", "ids")
"""How the SFT replies and histories write an action: ``named`` names its element by role
and accessible name where that picks one out (the id otherwise), ``ids`` always by id.
Step rows and trajectories carry both forms either way."""
CARD_PICTURES = 2  # screenshots the card shows, of as many trajectories (worlds, if there are)
MANIFEST = "manifest.json"


# --- the export -------------------------------------------------------------------------------


@dataclass
class _Scan:
    dir: Path
    read: JsonlRead
    summary: WorldSummary
    elements: list[int] = field(default_factory=list)  # interactive elements, per step


def export_dataset(traj_root: Path, out_dir: Path, *,
                   formats: set[str] | frozenset[str] = frozenset(FORMATS),
                   splits: tuple[float, float, float] = (0.8, 0.1, 0.1),
                   seed: int = 0,
                   worlds: list[str] | None = None,
                   observation: str = "full",
                   actions: str = "named",
                   console: Console | None = None,
                   progress: bool = True) -> ExportSummary:
    """Export the verified trajectories under ``traj_root`` to ``out_dir`` (see the module doc).

    Splits are by world (``splits`` = train, validation, test fractions); ``worlds`` limits
    the export to those world ids. ``observation`` (full or compact) is the page text the
    SFT prompts show, as the environments show it in the same mode; step rows carry both.
    ``actions`` (:data:`ACTION_FORMS`) is the form the SFT replies act in.
    The card's pictures are the dataset's own screenshots (none when it is text-only).
    Raises :class:`~webworld.errors.UsageError` for bad arguments and
    :class:`~webworld.data.reading.RecordError` (with file and line) for bad input.
    """
    _written_thoughts.cache_clear()  # thoughts.jsonl may have been (re)written since
    started = time.perf_counter()
    traj_root, out_dir = Path(traj_root), Path(out_dir)
    formats = _check_formats(formats)
    if observation not in OBSERVATION_MODES:
        raise UsageError(f"unknown observation mode {observation!r}; choose from "
                         f"{', '.join(OBSERVATION_MODES)}")
    if actions not in ACTION_FORMS:
        raise UsageError(f"unknown action form {actions!r}; choose from {', '.join(ACTION_FORMS)}")
    fractions = check_fractions(tuple(splits))  # type: ignore[arg-type]
    world_dirs = _discover(traj_root, worlds)
    _check_out_dir(out_dir, traj_root)

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console or Console(stderr=True),
                   transient=True, disable=not progress)
    with bar, _quiet_datasets(bool(set(formats) & {"parquet", "hf"})):
        scans = _scan(world_dirs, bar)
        summary = _plan(scans, out_dir, formats, fractions, seed)
        summary.observation, summary.actions = observation, actions
        summary.count_elements([n for scan in scans if scan.summary.split
                                for n in scan.elements])
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
        try:
            _build(tmp, scans, summary, bar)
            replace_dir(tmp, out_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    summary.seconds = time.perf_counter() - started
    return summary


def _check_formats(formats: set[str] | frozenset[str]) -> tuple[str, ...]:
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise UsageError(f"unknown format(s) {', '.join(unknown)}; choose from {', '.join(FORMATS)}")
    if not formats:
        raise UsageError(f"no format chosen; choose from {', '.join(FORMATS)}")
    return tuple(f for f in FORMATS if f in formats)


def _discover(traj_root: Path, only: list[str] | None) -> list[Path]:
    if not traj_root.exists():
        raise UsageError("no such folder (expected <root>/<world>/verified.jsonl)", str(traj_root))
    if not traj_root.is_dir():
        raise UsageError("not a folder", str(traj_root))
    found = {d.name: d for d in sorted(traj_root.iterdir())
             if d.is_dir() and (d / "verified.jsonl").is_file()}
    if not found:
        raise RecordError("no <world>/verified.jsonl in this folder: nothing was verified yet",
                          str(traj_root))
    if only:
        missing = sorted(set(only) - set(found))
        if missing:
            raise UsageError(f"no verified.jsonl for world(s) {', '.join(missing)}; "
                             f"found {', '.join(found)}", str(traj_root))
        return [found[w] for w in sorted(set(only))]
    return list(found.values())


def _check_out_dir(out_dir: Path, traj_root: Path) -> None:
    out, root = out_dir.resolve(), traj_root.resolve()
    if root == out or root.is_relative_to(out):
        raise UsageError("the output folder holds the input; choose another --out", str(out_dir))
    if out_dir.exists():
        if not out_dir.is_dir():
            raise UsageError("exists and is not a folder", str(out_dir))
        if any(out_dir.iterdir()) and not _is_export(out_dir):
            raise UsageError("exists and is not a webworld export (no manifest.json); "
                             "refusing to replace it", str(out_dir))


def _is_export(folder: Path) -> bool:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get(MANIFEST_KEY) == 1
    except (OSError, ValueError, AttributeError):
        return False


def _scan(world_dirs: list[Path], bar: Progress) -> list[_Scan]:
    """Pass 1: check every line, count, find partial lines and duplicates."""
    task = bar.add_task("checking records", total=len(world_dirs))
    scans = []
    owner: dict[str, str] = {}  # trajectory id -> world: ids are keys across the dataset
    for world_dir in world_dirs:
        bar.update(task, description=f"checking {world_dir.name}")
        summary = WorldSummary(world_dir.name)
        read = JsonlRead()
        themes: Counter[str] = Counter()
        transitions: Counter[str] = Counter()
        elements: list[int] = []
        for lineno, traj in _unique(iter_verified(world_dir, read), summary):
            first = owner.setdefault(traj["id"], world_dir.name)
            if first != world_dir.name:
                raise RecordError(f"trajectory id {traj['id']!r} is also used in world {first}",
                                  f"{world_dir / 'verified.jsonl'}:{lineno}")
            summary.trajectories += 1
            summary.steps += len(traj["steps"])
            summary.screenshots += sum(s["observation"]["screenshot"] is not None
                                       for s in traj["steps"])
            summary.fsm_steps += traj["length"]
            elements.extend(interactive_elements(s["observation"]["axtree"])
                            for s in traj["steps"])
            themes[traj["theme"]] += 1
            transitions[traj.get("transition", "navigate")] += 1
        summary.theme = themes.most_common(1)[0][0] if themes else ""
        summary.transition = transitions.most_common(1)[0][0] if transitions else "navigate"
        if read.partial_line:
            summary.skipped_lines.append(f"verified.jsonl:{read.partial_line}")
        failures, fread = read_failures(world_dir)
        summary.failures = dict(sorted(Counter(f["failure"] for f in failures).items()))
        if fread.partial_line:
            summary.skipped_lines.append(f"failures.jsonl:{fread.partial_line}")
        scans.append(_Scan(world_dir, read, summary, elements))
        bar.advance(task)
    return scans


def _unique(records: Iterator[tuple[int, VerifiedTrajectory]], summary: WorldSummary
            ) -> Iterator[tuple[int, VerifiedTrajectory]]:
    seen: set[str] = set()
    for lineno, traj in records:
        if traj["id"] in seen:
            summary.duplicates += 1
            continue
        seen.add(traj["id"])
        yield lineno, traj


def _plan(scans: list[_Scan], out_dir: Path, formats: tuple[str, ...],
          fractions: tuple[float, float, float], seed: int) -> ExportSummary:
    worlds = {s.summary.world_id: s.summary for s in scans}
    usable = [w for w, s in worlds.items() if s.trajectories]
    if not usable:
        where = scans[0].dir.parent if scans else out_dir
        raise RecordError(f"no verified trajectories in {len(scans)} verified.jsonl file(s)", str(where))
    assignment, note = assign_splits(usable, fractions, seed, held_out=load_manifest().ids())
    summary = ExportSummary(out_dir, formats, seed, fractions,
                            {s: SplitSummary() for s in SPLITS}, worlds)
    for split, names in assignment.items():
        for w in names:
            worlds[w].split = split
            summary.splits[split].worlds.append(w)
            summary.splits[split].trajectories += worlds[w].trajectories
            summary.splits[split].steps += worlds[w].steps
            summary.splits[split].screenshots += worlds[w].screenshots
    if note:
        summary.notes.append(note)
    empty = sorted(set(worlds) - set(usable))
    if empty:
        summary.notes.append(f"no verified trajectories (left out): {', '.join(empty)}")
    for w, s in worlds.items():
        for line in s.skipped_lines:
            summary.notes.append(f"{w}: skipped a partial last line ({line})")
        if s.duplicates:
            summary.notes.append(f"{w}: dropped {s.duplicates} repeated trajectory id(s)")
        if s.split and s.screenshots < s.steps:
            summary.notes.append(f"{w}: {s.steps - s.screenshots} of {s.steps} steps have no "
                                 "screenshot (verified with --no-screenshots)")
    return summary


# --- pass 2: writing --------------------------------------------------------------------------


def _build(tmp: Path, scans: list[_Scan], summary: ExportSummary, bar: Progress) -> None:
    formats = set(summary.formats)
    by_world = {s.summary.world_id: s for s in scans}
    staging = tmp / ".staging"
    staging.mkdir()
    examples: list[dict[str, Any]] = []
    written: dict[str, list[Path]] = {"images": [tmp / "images"]} if summary.screenshots else {}
    live = [s for s in SPLITS if summary.splits[s].trajectories]
    shots = bar.add_task("screenshots", total=summary.screenshots)
    copies: list[Future] = []
    # zlib and file writes let go of the GIL: the images compress on every core
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:

        def copy(src: Path, dest: Path) -> None:
            copies.append(pool.submit(_copy, src, dest))
            copies[-1].add_done_callback(lambda _: bar.advance(shots))

        for split in live:
            task = bar.add_task(f"writing {split}", total=summary.splits[split].steps)
            sink = _SplitSink(tmp, split, formats, staging, summary, copy)
            with sink:
                for w in summary.splits[split].worlds:
                    scan = by_world[w]
                    records = iter_verified(scan.dir, JsonlRead(), scan.read.end)
                    trajectories = [traj for _, traj in _unique(records, WorldSummary(w))]
                    detours = detour_steps(trajectories)
                    for traj in trajectories:
                        sink.add(traj, scan.dir, examples, lambda t=task: bar.advance(t),
                                 detours.get(traj["id"], frozenset()))
            for kind, path in sink.outputs().items():
                written.setdefault(kind, []).append(path)
            bar.remove_task(task)
        for done in copies:
            done.result()  # the first failure, if any
    bar.remove_task(shots)
    if formats & {"parquet", "hf"}:
        written.update(_write_datasets(tmp, live, summary, formats, staging, bar))
    shutil.rmtree(staging)
    written["card"] = [tmp / "README.md"]
    written["manifest"] = [tmp / MANIFEST]
    summary.paths = {k: [summary.out_dir / p.relative_to(tmp) for p in v] for k, v in written.items()}
    write_card(tmp / "README.md", summary, examples, _card_pictures(scans))
    atomic_write_json(tmp / MANIFEST, summary.to_dict())


@functools.lru_cache(maxsize=64)
def _written_thoughts(world_dir: str) -> dict[str, list[str]]:
    """Thoughts an LLM wrote for a world's trajectories (``thoughts.jsonl``), if any."""
    path = Path(world_dir) / "thoughts.jsonl"
    if not path.is_file():
        return {}
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {r["id"]: list(r["thoughts"]) for r in rows}


class _SplitSink:
    """Writes one split: trajectories, screenshots, SFT chats and staged step rows."""

    def __init__(self, tmp: Path, split: str, formats: set[str], staging: Path,
                 summary: ExportSummary, copy: Callable[[Path, Path], None]) -> None:
        self.tmp, self.split, self.formats = tmp, split, formats
        self.summary, self.observation, self.copy = summary, summary.observation, copy
        self.paths = {
            "jsonl": tmp / "jsonl" / f"{split}.jsonl",
            "sft": tmp / "sft" / f"{split}.jsonl",
            "rows": staging / f"{split}.jsonl",
        }
        self.wanted = {"jsonl": "jsonl" in formats, "sft": "sft" in formats,
                       "rows": bool(formats & {"parquet", "hf"})}
        self.files: dict[str, Any] = {}

    def __enter__(self) -> _SplitSink:
        for kind, path in self.paths.items():
            if self.wanted[kind]:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.files[kind] = path.open("w", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self.files.values():
            handle.close()

    def outputs(self) -> dict[str, Path]:
        return {k: self.paths[k] for k in ("jsonl", "sft") if self.wanted[k]}

    def _write(self, kind: str, record: dict[str, Any]) -> None:
        if kind in self.files:
            self.files[kind].write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")

    def add(self, traj: VerifiedTrajectory, world_dir: Path, examples: list[dict[str, Any]],
            advance: Callable[[], None], detours: frozenset[int] = frozenset()) -> None:
        """Write ``traj``'s steps to every format; ``detours``: the positions of the steps
        its task did without (:mod:`webworld.data.detours`), marked in SFT chats and steps."""
        world, intent = traj["world_id"], traj["intent"]
        folder = f"images/{world}/{safe_name(traj['id'])}"
        history: list[str] = []  # the actions, as the rows' history column keeps them
        prompt_history: list[str] = []  # as the prompt lists them (labelled)
        steps_out = []
        last = len(traj["steps"]) - 1
        for n, step in enumerate(traj["steps"]):
            obs = step["observation"]
            image = None if obs["screenshot"] is None else f"{folder}/{n}.png"
            if image is not None:
                self.copy(world_dir / obs["screenshot"], self.tmp / image)
            written = _written_thoughts(str(world_dir)).get(traj["id"], [])
            thought = (written[n] if n < len(written) else
                       thought_for_step(step, intent, n == last))
            row = step_row(traj, n, thought, history)
            named = row["action_named"]
            self.summary.named_steps += named != step["action"]
            acted = named if self.summary.actions == "named" else step["action"]
            if "sft" in self.files:
                self._write("sft", {
                    "messages": step_messages(intent, observation_text(obs["axtree"], self.observation),
                                              public_url(obs["url"]), prompt_history, thought,
                                              acted),
                    "action": step["action"], "action_named": named,
                    "screenshot": image,  # not "images": TRL would take the set for a VLM's
                    "trajectory_id": traj["id"], "world_id": world, "step": step["index"],
                    "detour": n in detours,
                })
            self._write("rows", {**row, "screenshot": image})
            _maybe_example(examples, row)
            steps_out.append({**step, "observation": {**obs, "url": public_url(obs["url"]),
                                                      "screenshot": image},
                              "action_named": named, "thought": thought, "detour": n in detours})
            history.append(step["action"])
            prompt_history.append(history_entry(acted, obs["axtree"]))
            advance()
        self._write("jsonl", {**traj, "split": self.split, "steps": steps_out})


def step_row(traj: VerifiedTrajectory, n: int, thought: str, history: list[str]) -> dict[str, Any]:
    """One per-step row (all columns of :data:`STEP_COLUMNS` except the screenshot)."""
    step = traj["steps"][n]
    obs = step["observation"]
    return {
        "trajectory_id": traj["id"], "world_id": traj["world_id"], "task_id": traj["task_id"],
        "theme": traj["theme"], "intent": traj["intent"],
        "step": step["index"], "num_steps": len(traj["steps"]), "is_last": n == len(traj["steps"]) - 1,
        "url": public_url(obs["url"]), "axtree": obs["axtree"],
        "axtree_compact": compact_text(obs["axtree"]),
        "action": step["action"], "action_named": named_form(step["action"], obs["axtree"]),
        "bid": step["bid"], "bbox": step["bbox"], "thought": thought,
        "history": list(history),
        "fsm_index": step["fsm_index"], "fsm_action": step["fsm_action"],
        "fsm_label": step["fsm_label"], "op": step["op"], "element": step["element"],
        "element_label": step["element_label"], "value": step["value"], "page": step["page"],
        "length": traj["length"], "shortest_length": traj["shortest_length"],
        "slots": json.dumps(traj["slots"], ensure_ascii=False, sort_keys=True),
    }


def step_features():  # -> datasets.Features
    """The step rows' features as stored (the screenshot is its path: see load_steps)."""
    from datasets import Features, List, Value

    string, i32 = Value("string"), Value("int32")
    types = {
        "step": i32, "num_steps": i32, "is_last": Value("bool"),
        "bbox": List(Value("float64")), "history": List(Value("string")),
        "fsm_index": i32, "length": i32, "shortest_length": i32,
    }
    return Features({name: types.get(name, string) for name in STEP_COLUMNS})


def _staged_rows(path: Path, advance: Callable[[], None]) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)
            advance()


def _write_datasets(tmp: Path, splits: list[str], summary: ExportSummary, formats: set[str],
                    staging: Path, bar: Progress) -> dict[str, list[Path]]:
    from datasets import Dataset, DatasetDict

    features = step_features()
    built: dict[str, Dataset] = {}
    out: dict[str, list[Path]] = {}
    for split in splits:
        task = bar.add_task(f"step rows {split}", total=summary.splits[split].steps)
        ds = Dataset.from_generator(
            _staged_rows, features=features, cache_dir=str(staging / "cache"),
            gen_kwargs={"path": staging / f"{split}.jsonl", "advance": lambda t=task: bar.advance(t)},
            fingerprint=f"webworld-export-{split}-{uuid.uuid4().hex}", split=split)
        if len(ds) != summary.splits[split].steps:
            raise RuntimeError(f"{split}: {len(ds)} rows for {summary.splits[split].steps} steps")
        if "parquet" in formats:
            path = tmp / "parquet" / f"{split}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            bar.update(task, description=f"parquet {split}")
            ds.to_parquet(str(path))
            out.setdefault("parquet", []).append(path)
        built[split] = ds
        bar.remove_task(task)
    if "hf" in formats:
        DatasetDict(built).save_to_disk(str(tmp / "hf"))
        out["hf"] = [tmp / "hf"]
    built.clear()
    return out


def _maybe_example(examples: list[dict[str, Any]], row: dict[str, Any]) -> None:
    """Keep up to 3 example steps for the card: different ops, different trajectories."""
    if len(examples) >= 3 or any(e["op"] == row["op"] or e["trajectory_id"] == row["trajectory_id"]
                                 for e in examples):
        return
    examples.append(row)


def _card_pictures(scans: list[_Scan]) -> list[Path]:
    """The card's pictures, paths in the export: the first screenshot of
    :data:`CARD_PICTURES` trajectories, from as many worlds when there are (a text-only
    export has none)."""
    picks: list[Path] = []
    exported = [s for s in scans if s.summary.split and s.summary.screenshots]
    used: set[str] = set()
    for _ in range(CARD_PICTURES):  # a round over the worlds: one more trajectory of each
        for scan in exported:
            pick = _first_screenshot(scan, used)
            if pick is not None:
                picks.append(pick)
            if len(picks) == CARD_PICTURES:
                return picks
    return picks


def _first_screenshot(scan: _Scan, used: set[str]) -> Path | None:
    """The first screenshot of the world's first trajectory not in ``used`` (then in it)."""
    for _, traj in _unique(iter_verified(scan.dir, JsonlRead(), scan.read.end), WorldSummary("")):
        shots = [n for n, step in enumerate(traj["steps"])
                 if step["observation"]["screenshot"] is not None]
        if traj["id"] in used or not shots:
            continue
        used.add(traj["id"])
        return Path("images") / traj["world_id"] / safe_name(traj["id"]) / f"{shots[0]}.png"
    return None


# --- files ------------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(text: str) -> str:
    """A file-name-safe form of an id; ids that had to change get a short hash (no clashes)."""
    import hashlib

    safe = _UNSAFE.sub("_", text).strip(".") or "_"
    if safe != text:
        safe = f"{safe[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return safe


def _copy(src: Path, dest: Path) -> None:
    """The screenshot ``src`` at ``dest``, deflated at the default level (webworld.data.png)."""
    # A copy, not a hard link: the verifier rewrites screenshots in place when it runs
    # again (same inode), which would change an export that linked them.
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(compact_png(src.read_bytes()))


@contextlib.contextmanager
def _quiet_datasets(needed: bool) -> Iterator[None]:
    """Silence the datasets library's own progress bars while ours runs."""
    if not needed:  # only jsonl / sft: datasets is not imported at all
        yield
        return
    import datasets

    was_off = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_off:
            datasets.enable_progress_bars()


# --- loading helpers ----------------------------------------------------------------------------


STEP_SOURCES = ("parquet", "hf")


def load_steps(out_dir: Path, split: str | None = None, *, source: str = "parquet",
               cache_dir: str | None = None):
    """The step rows of an export, ``screenshot`` a ``datasets.Image`` (a PIL image on access).

    ``source`` is the folder read (``parquet`` or ``hf``); ``split`` one split as a
    ``Dataset``, else every split as a ``DatasetDict``. The rows hold the screenshot's path
    relative to the export folder; here it points at the file in ``out_dir/images``.
    """
    from datasets import DatasetDict, load_dataset, load_from_disk

    out_dir = Path(out_dir).resolve()
    if source not in STEP_SOURCES:
        raise UsageError(f"unknown source {source!r}; choose from {', '.join(STEP_SOURCES)}")
    if source == "hf":
        found = load_from_disk(str(out_dir / "hf"))
    else:
        files = {s: str(out_dir / "parquet" / f"{s}.parquet") for s in SPLITS
                 if (out_dir / "parquet" / f"{s}.parquet").is_file()}
        if not files:
            raise UsageError("no parquet/<split>.parquet in this folder", str(out_dir))
        found = load_dataset("parquet", data_files=files, cache_dir=cache_dir)
    if split is not None:
        if split not in found:
            raise UsageError(f"no split {split!r}; found {', '.join(found)}", str(out_dir))
        return _with_screenshots(found[split], out_dir)
    return DatasetDict({name: _with_screenshots(ds, out_dir) for name, ds in found.items()})


def _with_screenshots(ds, out_dir: Path):  # Dataset -> Dataset
    """``screenshot`` as an Image of ``out_dir / path`` (a table operation: nothing is
    written next to the loaded files)."""
    from datasets import Image

    order = ds.column_names
    paths = [None if p is None else str(out_dir / p)  # None: a step verified without one
             for p in ds.select_columns("screenshot").to_dict()["screenshot"]]
    ds = ds.remove_columns("screenshot").add_column("screenshot", paths)
    return ds.cast_column("screenshot", Image()).select_columns(order)


def load_sft_dataset(out_dir: Path, split: str = "train", *, with_images: bool = False,
                     cache_dir: str | None = None):
    """``sft/<split>.jsonl`` as a ``datasets.Dataset`` ready for ``trl.SFTTrainer``.

    The records are text chats (a text-only model trains on them as they are) with the
    screenshot's path relative to the export folder (null in a text-only export).
    ``with_images`` adds an ``images`` column of PIL images for a vision-language model and
    its processor (an empty list for a step without a screenshot).
    """
    from datasets import Image, List, load_dataset

    out_dir = Path(out_dir).resolve()
    ds = load_dataset("json", data_files={split: str(out_dir / "sft" / f"{split}.jsonl")},
                      split=split, cache_dir=cache_dir)
    if not with_images:
        return ds
    if _is_text_only(out_dir):
        raise UsageError("a text-only export (verified with --no-screenshots): no "
                         "screenshots to add as images", str(out_dir))
    ds = ds.map(lambda r: {"images": [str(out_dir / r["screenshot"])] if r["screenshot"] else []})
    return ds.cast_column("images", List(Image()))


def _is_text_only(out_dir: Path) -> bool:
    """Whether the export in ``out_dir`` has no screenshot at all (its manifest says so)."""
    try:
        manifest = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return manifest.get("screenshots", 1) == 0 and manifest.get("steps", 0) > 0
