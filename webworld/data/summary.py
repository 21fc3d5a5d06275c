"""What an export is, in numbers and columns: its summary (splits, worlds, counts; the
manifest's contents) and the step rows' columns. The export writes them, the dataset card shows
them."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_KEY = "webworld_export"


@dataclass
class WorldSummary:
    world_id: str
    theme: str = ""
    transition: str = "navigate"      # how the site moves between pages (navigate | swap)
    split: str | None = None          # None: no verified trajectories, not exported
    trajectories: int = 0
    steps: int = 0
    screenshots: int = 0              # steps with a screenshot (none: verified --no-screenshots)
    fsm_steps: int = 0                # sum of the trajectories' FSM lengths
    failures: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0               # repeated trajectory ids dropped (first one kept)
    skipped_lines: list[str] = field(default_factory=list)  # trailing partial lines

    @property
    def mean_length(self) -> float:
        return self.fsm_steps / self.trajectories if self.trajectories else 0.0


@dataclass
class SplitSummary:
    worlds: list[str] = field(default_factory=list)
    trajectories: int = 0
    steps: int = 0
    screenshots: int = 0


@dataclass
class ExportSummary:
    out_dir: Path
    formats: tuple[str, ...]
    seed: int
    fractions: tuple[float, float, float]
    splits: dict[str, SplitSummary]
    worlds: dict[str, WorldSummary]
    observation: str = "full"         # the observation text of the SFT prompts
    actions: str = "named"            # the action form the SFT replies and histories use
    named_steps: int = 0              # steps whose element a role and name pick out alone
    paths: dict[str, list[Path]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    elements_per_page: dict[str, int] = field(default_factory=dict)  # p10 / median / p90 / max

    def count_elements(self, counts: list[int]) -> None:
        """Keep the distribution of interactive elements over the exported steps' pages."""
        if not counts:
            return
        ranked = sorted(counts)

        def at(q: float) -> int:  # nearest rank
            return ranked[min(len(ranked) - 1, max(0, math.ceil(q * len(ranked)) - 1))]

        self.elements_per_page = {"p10": at(0.1), "median": at(0.5), "p90": at(0.9),
                                  "max": ranked[-1]}

    @property
    def trajectories(self) -> int:
        return sum(s.trajectories for s in self.splits.values())

    @property
    def steps(self) -> int:
        return sum(s.steps for s in self.splits.values())

    @property
    def screenshots(self) -> int:
        """Steps with a screenshot; 0: a text-only export (verified with --no-screenshots)."""
        return sum(s.screenshots for s in self.splits.values())

    @property
    def text_only(self) -> bool:
        return self.screenshots == 0

    def split_of(self, world_id: str) -> str | None:
        return self.worlds[world_id].split

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, paths relative to ``out_dir``, no timings (same input, same bytes)."""
        return {
            MANIFEST_KEY: 1,
            "formats": list(self.formats),
            "seed": self.seed,
            "fractions": list(self.fractions),
            "observation": self.observation,
            "actions": self.actions,
            "named_steps": self.named_steps,
            "splits": {k: asdict(v) for k, v in self.splits.items()},
            "worlds": {k: {**asdict(v), "mean_length": round(v.mean_length, 3)}
                       for k, v in self.worlds.items()},
            "paths": {k: [_rel(p, self.out_dir) for p in v] for k, v in self.paths.items()},
            "notes": list(self.notes),
            "trajectories": self.trajectories,
            "steps": self.steps,
            "screenshots": self.screenshots,
            "elements_per_page": dict(self.elements_per_page),
        }


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


STEP_COLUMNS: dict[str, str] = {
    "trajectory_id": "id of the verified trajectory",
    "world_id": "the synthetic site (splits are by world)",
    "task_id": "task of the world spec",
    "theme": "what the site is, e.g. online bookstore",
    "intent": "the instruction given to the agent",
    "step": "browser-action index within the trajectory",
    "num_steps": "browser actions in the trajectory",
    "is_last": "true for the step that completes the task",
    "url": "page URL before the action",
    "axtree": "accessibility text the agent reads, element ids in brackets",
    "axtree_compact": "the compact observation mode of the same page (same ids)",
    "screenshot": "PNG of the viewport before the action: its path in the export folder "
                  "(images/...; an image through load_steps); null if verified without "
                  "screenshots",
    "action": "the action to predict, by id: click('12')",
    "action_named": "the same action naming its element by role and accessible name, "
                    "click(button \"Pay\"), where exactly one element of the page has "
                    "them; the id form where several do",
    "bid": "element id the action targets",
    "bbox": "target box [x, y, width, height] in CSS pixels (null if unknown)",
    "thought": "short rationale, written from the step's fields",
    "history": "earlier actions of the trajectory",
    "fsm_index": "index of the FSM action this step belongs to",
    "fsm_action": "spec action id",
    "fsm_label": "spec action label",
    "op": "GUI op: click / type / select / key_press / hover / drag / check / uncheck",
    "element": "spec element id of the target",
    "element_label": "label of the target",
    "value": "typed text / chosen option (null if none)",
    "page": "true page after the step",
    "length": "FSM actions in the trajectory",
    "shortest_length": "FSM actions on a shortest path for the task",
    "slots": "task slot values (JSON)",
}
