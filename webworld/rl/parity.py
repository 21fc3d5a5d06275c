"""Does the fast environment equal the live one? Step both with the same actions and compare.

Two kinds of episodes: every verified trajectory of the worlds (which must also earn
reward 1 at its last step and 0 before, or with progress rewards sum to the distance it
covered plus 1), and seeded random action sequences from
:class:`~webworld.rl.policies.RandomPolicy`, broken actions included, each starting
part of the way along a verified path so that deep pages (forms, calendars, menus) are
reached. Every field of the
observation, the reward, ``terminated``, ``truncated`` and ``info`` must be equal.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from webworld.browser.observe import named_form
from webworld.rl.env import WebEnv
from webworld.rl.policies import RandomPolicy
from webworld.rl.tasks import TaskInstance

FIELDS = ("observation", "reward", "terminated", "truncated", "info")


@dataclass
class Mismatch:
    where: str
    action: str
    field: str
    live: Any
    fast: Any

    def __str__(self) -> str:
        head = f"{self.where}, after {self.action!r}: {self.field} differs"
        if isinstance(self.live, str) and isinstance(self.fast, str):
            diff = difflib.unified_diff(self.live.splitlines(), self.fast.splitlines(),
                                        "live", "fast", lineterm="", n=1)
            return head + "\n" + "\n".join(list(diff)[:30])
        return f"{head}: live {self.live!r}, fast {self.fast!r}"


@dataclass
class ParityReport:
    episodes: int = 0
    steps: int = 0
    named_steps: int = 0     # steps whose action named its element by role and name
    mismatches: list[Mismatch] = field(default_factory=list)
    oracle_failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.oracle_failures


def _differences(live: tuple, fast: tuple, where: str, action: str) -> list[Mismatch]:
    out = []
    obs_live, obs_fast = live[0], fast[0]
    for key in sorted(set(obs_live) | set(obs_fast)):
        if obs_live.get(key) != obs_fast.get(key):
            out.append(Mismatch(where, action, f"observation[{key!r}]", obs_live.get(key),
                                obs_fast.get(key)))
    for name, a, b in zip(FIELDS[1:], live[1:], fast[1:]):
        if a != b:
            out.append(Mismatch(where, action, name, a, b))
    return out


def compare(live: WebEnv, fast: WebEnv, instances: list[TaskInstance], *,
            random_episodes: int = 0, max_steps: int = 25, invalid_rate: float = 0.2,
            seed: int = 0, named_rate: float = 0.0,
            progress: Callable[[int], None] | None = None) -> ParityReport:
    """Step ``live`` and ``fast`` side by side (see the module doc); ``named_rate`` of the
    actions name their element by role and name instead of id where the page allows."""
    report = ParityReport()
    naming = random.Random(seed)
    for inst in instances:
        for n, path in enumerate(inst.oracle):
            where = f"{inst.id} trajectory {n}"
            _episode(live, fast, report, where, seed, {"task": inst, "intent": inst.intents[0]},
                     lambda obs, k, p=path: p[k] if k < len(p) else None, oracle=True,
                     rename=lambda a, obs: _maybe_named(a, obs, naming, named_rate))
            if progress:
                progress(report.steps)
    policy = RandomPolicy(seed, invalid_rate=invalid_rate)
    rng = random.Random(seed)
    with_paths = [i for i in instances if i.oracle]
    for e in range(random_episodes):
        # Start deep: follow a verified path part of the way, then act at random.
        inst = rng.choice(with_paths) if with_paths else None
        prefix = inst.oracle[0][:rng.randrange(len(inst.oracle[0]))] if inst else ()
        options = {"task": inst, "intent": inst.intents[0]} if inst else None

        def act(obs: dict, k: int, prefix: tuple = prefix) -> str | None:
            if k < len(prefix):
                return prefix[k]
            return policy.act(obs, {}) if k < len(prefix) + max_steps else None

        _episode(live, fast, report, f"random episode {e}", seed + e, options, act, oracle=False,
                 rename=lambda a, obs: _maybe_named(a, obs, naming, named_rate))
        if progress:
            progress(report.steps)
    return report


def _episode(live: WebEnv, fast: WebEnv, report: ParityReport, where: str, seed: int,
             options: dict[str, Any] | None, next_action: Callable[[dict, int], str | None],
             *, oracle: bool, rename: Callable[[str, dict], str] = lambda a, obs: a) -> None:
    report.episodes += 1
    a = start = live.reset(seed=seed, options=options)
    b = fast.reset(seed=seed, options=options)
    found = _differences((a[0], 0.0, False, False, a[1]), (b[0], 0.0, False, False, b[1]),
                         where, "reset")
    rewards: list[float] = []
    k = 0
    while not found:
        action = next_action(a[0], k)
        if action is None:
            break
        renamed = rename(action, a[0])
        report.named_steps += renamed != action
        action = renamed
        a, b = live.step(action), fast.step(action)
        report.steps += 1
        rewards.append(a[1])
        found = _differences(a, b, f"{where} step {k}", action)
        k += 1
        if a[2] or a[3]:
            break
    report.mismatches += found
    if oracle and not found:
        expected = _oracle_rewards_problem(rewards, live.config.reward, start[1]["distance"])
        if expected:
            report.oracle_failures.append(f"{where}: rewards {rewards} (expected {expected})")


def _maybe_named(action: str, obs: dict, rng: random.Random, rate: float) -> str:
    if rate <= 0 or rng.random() >= rate:
        return action
    return named_form(action, obs["axtree"])


def _oracle_rewards_problem(rewards: list[float], mode: str, distance: int | None) -> str:
    """'' if a verified path's rewards are right, else what they should have been: success
    rewards 0 ... 0, 1; progress rewards telescope to the distance from the start plus the
    success (Phi is 0 at the goal), the last one at least 1."""
    if mode == "success":
        return "" if rewards and rewards[-1] == 1.0 and not any(rewards[:-1]) else "0 ... 0, 1"
    fine = rewards and rewards[-1] >= 1.0 and distance is not None and \
        sum(rewards) == distance + 1
    return "" if fine else f"the last >= 1, summing to {distance} + 1"
