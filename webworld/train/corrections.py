"""Corrections from a policy's own episodes (DAgger: Ross, Gordon and Bagnell 2011).

SFT shows a policy only the pages of verified paths, with a history of right actions. Once it
errs it reads pages and histories it never saw, and loops (after SFT, 37 of the 45 held-out
failures repeated an action). Its evaluated episodes (`webworld eval` results: the task, seed,
phrasing and actions of each) replay exactly in the fast env, so every page the policy saw can
be shown again. Where that page, in the same true state, is one the task's verified path
shows, the path's action there is the right one: each such turn becomes a supervised chat
with the policy's own history (its mistakes included) and the verified action, with the
thought the export would write for it.

Kept: turns that erred (their next page is not the path's next) and every labelled turn after
an error. Turns on the verified path with a clean history are the export's own chats already.
A page the verified path shows twice (an action that changed nothing visible) says nothing of
where on the path the policy is: never labelled.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from webworld.data.prompting import assistant_message
from webworld.data.thoughts import thought_for_step
from webworld.rl.turn import Turn

PageKey = tuple[str, str, Any]


def page_key(env: Any, obs: dict[str, Any]) -> PageKey:
    """Where an episode is: the page as the policy reads it (URL and observation text) and the
    server's true state (a page can look the same after a wrong choice: the restaurant it
    saves is not on the "Choose a list" page). ``env`` is a fast env (its episode in-process)."""
    return obs["url"], obs["axtree"], env.episode.state


def history_action(entry: str) -> str:
    """The action of a results row's history entry (``click('4')  [button 'OK']``)."""
    return entry.split("  [", 1)[0]


def path_pages(env: Any, row: dict[str, Any], steps: list[dict[str, Any]]
               ) -> tuple[dict[PageKey, int], list[PageKey]]:
    """The verified path replayed from the row's start: the step each page it shows once is
    the start of, and the key of the page after every step (the last: after the goal)."""
    obs, _ = reset(env, row)
    seen: dict[PageKey, list[int]] = {}
    after = []
    for k, step in enumerate(steps):
        seen.setdefault(page_key(env, obs), []).append(k)
        obs, *_ = env.step(step["action"])
        after.append(page_key(env, obs))
    return {key: ks[0] for key, ks in seen.items() if len(ks) == 1}, after


def reset(env: Any, row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return env.reset(seed=row["seed"], options={"task": row["task"], "intent": row["intent"]})


def episode_corrections(env: Any, row: dict[str, Any], steps: list[dict[str, Any]],
                        path: tuple[dict[PageKey, int], list[PageKey]]) -> list[dict[str, Any]]:
    """The SFT records one evaluated episode yields (see the module doc); ``path`` is
    :func:`path_pages` of its start."""
    on_path, after = path
    obs, info = reset(env, row)
    turn, erred, out = Turn(obs, info, []), False, []
    for i, entry in enumerate(row["actions"]):
        action = history_action(entry)
        k = on_path.get(page_key(env, turn.obs))
        obs, _reward, _terminated, _truncated, info = env.step(action)
        wrong = k is not None and page_key(env, obs) != after[k]
        if k is not None and (wrong or erred):
            out.append(record(row, i, turn, steps, k))
        erred = erred or wrong or k is None
        turn = turn.after(obs, info)
    return out


def record(row: dict[str, Any], i: int, turn: Turn, steps: list[dict[str, Any]], k: int
           ) -> dict[str, Any]:
    """Turn ``i`` of the row's episode as an SFT chat answered with verified step ``k``."""
    thought = thought_for_step(steps[k], turn.obs["goal"], k == len(steps) - 1)
    messages = [*turn.messages(),
                {"role": "assistant", "content": assistant_message(thought, steps[k]["action"])}]
    return {"messages": messages, "world_id": row["world"], "trajectory_id": row["key"],
            "step": i, "screenshot": None, "correction_of": history_action(row["actions"][i])}


def corrections(env: Any, rows: Iterable[dict[str, Any]],
                verified_steps: dict[str, list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """Every correction of ``rows`` (results rows of one fast ``env``'s worlds) whose task
    has a verified path in ``verified_steps`` (instance id to the shortest path's steps)."""
    paths: dict[tuple[str, int, str], tuple[dict[PageKey, int], list[PageKey]]] = {}
    for row in rows:
        steps = verified_steps.get(row["task"])
        if steps and row.get("actions") and not row.get("env_error"):
            start = (row["task"], row["seed"], row["intent"])  # policies played the same starts
            if start not in paths:
                paths[start] = path_pages(env, row, steps)
            yield from episode_corrections(env, row, steps, paths[start])


def corrected_export(data: Path, out: Path, extra: list[dict[str, Any]], *, original: float,
                     seed: int) -> dict[str, int]:
    """A copy of the export ``data`` whose ``sft/train.jsonl`` holds the corrections ``extra``
    (each chat once) and ``original`` times as many of the export's own training chats (drawn
    at random, so SFT from a warm policy keeps what it learnt), written atomically. Returns
    the counts."""
    # each chat once, in an order that does not depend on the order of the episodes
    unique = sorted({json.dumps(r["messages"]): r for r in extra}.items())
    lines = [json.dumps(r, ensure_ascii=False) for _, r in unique]
    own = (data / "sft" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    kept = random.Random(seed).sample(own, min(len(own), round(original * len(unique))))
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "sft").mkdir(parents=True)
    shutil.copy(data / "manifest.json", staging / "manifest.json")
    for split in ("validation", "test"):
        if (data / "sft" / f"{split}.jsonl").is_file():
            shutil.copy(data / "sft" / f"{split}.jsonl", staging / "sft" / f"{split}.jsonl")
    lines += kept
    random.Random(seed).shuffle(lines)
    (staging / "sft" / "train.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = {"corrections": len(unique), "original": len(kept), "from_episodes": len(extra)}
    (staging / "corrections.json").write_text(json.dumps(counts, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    staging.replace(out)
    return counts
