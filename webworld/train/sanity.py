"""A task family where learning is certain: the check that the RL trainer still learns.

Every RL library keeps one ("it still solves CartPole"). Here it is a *button board*: one page
of K buttons whose labels are drawn from the seed, and one task naming one of them. A start
policy that knows webworld's action format but not which button the task wants succeeds at
chance (1/K); the RL loop must take it to nearly always pressing the right one. It runs through
the real pipeline (a spec rendered by the built-in renderer, explored, verified in Chromium,
captured for the fast env) and the real ``webworld train rl`` loop.

The start policy comes from :func:`format_warm_start`: supervised steps on replies that press
a button drawn uniformly at random, so it learns the reply format and nothing about which
button is right. It scores replies with the RL learner's own code (the shared system prompt
computed once per batch, logits only on the reply), so it takes seconds for ``tiny``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from webworld.browser.observe import named_form
from webworld.data.prompting import assistant_message, format_action
from webworld.spec.models import WorldSpec
from webworld.train.batch import EpisodeRecord, TurnRecord, reply_logps, turn_batch
from webworld.train.engine import stop_token_ids
from webworld.train.models import load_policy, save_policy

LABELS = ("Red", "Green", "Blue", "Yellow", "Orange", "Purple", "Silver", "Black", "White",
          "Pink", "Brown", "Teal", "Gold", "Violet", "Olive", "Navy")
THOUGHT = "I press one of the buttons."
_BUTTON = re.compile(r"\[([^\]]+)\] button ")


def board_spec(seed: int = 0, buttons: int = 4) -> WorldSpec:
    """One page of ``buttons`` buttons with seeded labels; the task names one of them."""
    if not 2 <= buttons <= len(LABELS):
        raise ValueError(f"a board has 2 to {len(LABELS)} buttons, not {buttons}")
    rng = np.random.default_rng([seed, buttons])
    labels = [LABELS[i] for i in rng.choice(len(LABELS), size=buttons, replace=False)]
    wanted = labels[int(rng.integers(buttons))]
    return WorldSpec.model_validate({
        "id": f"button_board_k{buttons}_s{seed}", "name": "Button Board",
        "theme": "button board", "home": "home",
        "variables": [{"name": "pressed", "type": "enum", "values": ["none", *labels]}],
        "pages": [
            {"id": "home", "title": "Button Board", "elements": [
                {"id": f"b{i}", "kind": "button", "label": label}
                for i, label in enumerate(labels)],
             "actions": [
                 {"id": f"press_{i}", "label": f"Press {label}",
                  "gui": [{"op": "click", "element": f"b{i}"}],
                  "effects": [{"op": "set", "var": "pressed", "value": label}],
                  "navigate": "done"} for i, label in enumerate(labels)]},
            {"id": "done", "title": "Pressed", "terminal": True,
             "content": [{"kind": "text", "title": "Pressed", "text": "Thank you."}]},
        ],
        "tasks": [{"id": "press", "goal": {"page": "done"}, "bindings": {"pressed": wanted},
                   "intents": [f"Press the {wanted} button."]}],
    })


def build_board(root: Path, spec: WorldSpec) -> Path:
    """Render, explore, verify (Chromium) and capture (fast env) ``spec`` under ``root``:
    ``root/sites/<id>/`` and ``root/trajectories/<id>/``, what ``train rl --worlds`` reads."""
    from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
    from webworld.render.site import load_site, render_site
    from webworld.rl.fast.capture import build_snapshot
    from webworld.verify.runner import verify_worlds

    site_dir = render_site(spec, root / "sites" / spec.id)
    write_candidates(explore_world(spec, ExploreConfig(max_shortest=1, max_longer=0)),
                     root / "trajectories" / spec.id)
    stats = verify_worlds([site_dir], root / "trajectories", workers=1)
    if stats[0].failed or not stats[0].verified:
        raise RuntimeError(f"the board did not verify: {stats[0].failures}")
    build_snapshot(load_site(site_dir), workers=1)
    return root



def prepare_board(work: Path, seed: int, buttons: int, model: str = "tiny",
                  warm_steps: int = 120) -> Path:
    """``work/board-k<K>-s<seed>/``: the built board and its start policy ``start-<model>/``
    (:func:`format_warm_start`), each made once; a later call finds them there."""
    root = work / f"board-k{buttons}-s{seed}"
    if not (root / ".built").is_file():
        build_board(root, board_spec(seed, buttons))
        (root / ".built").touch()
    start = root / f"start-{model}"
    if not (start / "config.json").is_file():
        torch.set_num_threads(1)
        format_warm_start(root, start, model=model, steps=warm_steps, seed=seed)
    return root

WARM_START_RATES = {"tiny": 1e-3}  # a pretrained model gets a gentler default


def format_warm_start(worlds: Path, out: Path, *, model: str = "tiny", steps: int = 120,
                      batch_size: int = 16, learning_rate: float | None = None, seed: int = 0,
                      tools: bool = False) -> Path:
    """A policy that answers in the action format and presses a button drawn at random:
    supervised on one reply per button of every task's first page. With ``tools``, the reply
    is a tool call in the chat template of :func:`webworld.interop.trl.with_tool_template`
    (the start policy of TRL's trainer). Saved to ``out``."""
    torch.manual_seed(seed)
    policy, tokenizer = load_policy(model, seed=seed)
    learning_rate = learning_rate or WARM_START_RATES.get(model, 3e-5)
    if tools:
        from webworld.interop.trl import with_tool_template

        tokenizer = with_tool_template(tokenizer)
        examples = _tool_press_examples(worlds, tokenizer)
    else:
        examples = _random_press_examples(worlds, tokenizer)
    optimizer = torch.optim.AdamW(policy.parameters(), lr=learning_rate, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    pad = tokenizer.pad_token_id
    policy.train()
    for _ in range(steps):
        # A drawn batch repeats examples when there are few (a board has one per button):
        # each distinct one runs once, weighted by its draws, which is the same loss.
        chosen, draws = np.unique(rng.choice(len(examples), size=batch_size), return_counts=True)
        batch = turn_batch([EpisodeRecord("", 0, 0, 0, [examples[i]]) for i in chosen], pad)
        weights = torch.as_tensor(draws, dtype=torch.float32)[batch.rows]
        loss = -(reply_logps(policy, batch) * weights).sum() / weights.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    save_policy(policy, tokenizer, out)
    return out


def _random_press_examples(worlds: Path, tokenizer: Any) -> list[TurnRecord]:
    """(prompt, reply) token ids: each task's first turn, answered once with every button."""
    from webworld.rl.fast.env import FastVectorEnv
    from webworld.rl.tasks import load_worlds
    from webworld.rl.turn import Turn

    world_set = load_worlds(worlds / "sites", worlds / "trajectories")
    vec = FastVectorEnv(1, worlds=world_set, split=None, observation="compact")
    stop = stop_token_ids(tokenizer)[-1]
    examples = []
    try:
        for instance in world_set.instances(None):
            obs, info = vec.reset_slots({0: instance}, {0: 0})[0]
            prompt = tokenizer.apply_chat_template(Turn(obs, info).messages(), tokenize=True,
                                                   add_generation_prompt=True, return_dict=False)
            for bid in _BUTTON.findall(obs["axtree"]):
                # by name where the page has one such button, as the prompt teaches
                reply = assistant_message(THOUGHT, named_form(format_action("click", bid),
                                                              obs["axtree"]))
                ids = tokenizer(reply, add_special_tokens=False)["input_ids"] + [stop]
                examples.append(TurnRecord(list(prompt), ids, [0.0] * len(ids)))
    finally:
        vec.close()
    if not examples:
        raise RuntimeError(f"no buttons on the first page of any task in {worlds}")
    return examples


def tool_call_tokens(tokenizer: Any, env: Any, messages: list[dict[str, Any]],
                     name: str, arguments: dict[str, str]) -> tuple[list[int], list[int]]:
    """(prompt ids, reply ids up to its stop token) of the assistant calling tool ``name``
    after ``messages``, as TRL renders them (for a supervised warm start in this format)."""
    from webworld.interop.trl import tools_of

    tools = tools_of(env)
    call = {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]}
    prompt = tokenizer.apply_chat_template(messages, tools=tools, tokenize=True,
                                           add_generation_prompt=True, return_dict=False)
    whole = tokenizer.apply_chat_template([*messages, call], tools=tools, tokenize=True,
                                          return_dict=False)
    reply = whole[len(prompt):]
    stops = stop_token_ids(tokenizer)
    end = next((i for i, t in enumerate(reply) if t in stops), len(reply) - 1)
    return list(prompt), list(reply[:end + 1])


def _tool_press_examples(worlds: Path, tokenizer: Any) -> list[TurnRecord]:
    """The same examples as tool calls, in the conversation TRL's trainer builds."""
    from webworld.data.prompting import TOOL_SYSTEM_PROMPT
    from webworld.interop.trl import environment_factory, world_folder

    env = environment_factory(worlds, split=None)()
    examples = []
    for instance in world_folder(Path(worlds).resolve()).instances(None):
        page = env.reset(instance.id, instance.intents[0])
        messages = [{"role": "system", "content": TOOL_SYSTEM_PROMPT},
                    {"role": "user", "content": f"Task: {instance.intents[0]}{page}"}]
        for bid in _BUTTON.findall(page):
            prompt, reply = tool_call_tokens(tokenizer, env, messages, "click", {"element": bid})
            examples.append(TurnRecord(prompt, reply, [0.0] * len(reply)))
    if not examples:
        raise RuntimeError(f"no buttons on the first page of any task in {worlds}")
    return examples
