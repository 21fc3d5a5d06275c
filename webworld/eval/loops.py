"""Breaking a model's loops: another action where it would repeat one that got it nowhere.

After SFT, most failed episodes end in a loop: the policy repeats an action on a page that
did not change (a ``Sign in`` refused for a missing field, clicked until the step limit;
46e44e0:docs/learning_corrections.md), or goes round two actions that change nothing. Sites are
deterministic: an action taken again on the same page leads where it led before. So
``--study break_loops`` catches a reply whose action the episode already took on a page that read
the same, and plays instead the action its model samples most often among a few replies
drawn at temperature 1, those already taken there left out (the first drawn wins a tie;
seeded by the episode's seed and step). It reads only what the policy saw (its actions and
the pages it took them on), so it works the same on any site; the rows it gives are
reported apart from the replies as the model wrote them.
"""

from __future__ import annotations

import zlib
from collections import Counter
from typing import Protocol

from webworld.browser.actions import parse_reply
from webworld.errors import UsageError
from webworld.eval.policies import Policy, Reply
from webworld.rl.turn import Turn

SAMPLES = 8  # replies drawn for a looping turn: one pass of a CPU batch


class Sampler(Protocol):
    def sample(self, turns: dict[int, Turn], k: int, seed: int) -> dict[int, list[str]]: ...


def other_action(samples: list[str], taken: set[str]) -> str | None:
    """The sampled reply whose action the samples give most often, those ``taken`` left out
    (ties: the first drawn); None when every sample repeats one or has no action."""
    actions = [parse_reply(text) for text in samples]
    counts = Counter(a for a in actions if a is not None and a not in taken)
    if not counts:
        return None
    top = max(counts.values())
    return next(text for text, a in zip(samples, actions, strict=True) if counts.get(a) == top)


class LoopBreakingPolicy(Policy):
    """Another policy's replies, with actions repeated on a page that reads the same replaced
    (module doc)."""

    def __init__(self, inner: Policy, samples: int = SAMPLES) -> None:
        if not callable(getattr(inner, "sample", None)):
            raise UsageError(f"--study break_loops draws other replies from a model: hf:PATH, "
                             f"not {inner.name}")
        self.inner, self.samples = inner, samples
        self.name = f"{inner.name}, loops broken"
        self.seeds: dict[int, int] = {}
        self.taken: dict[int, dict[str, set[str]]] = {}  # slot: page text: actions taken on it
        self.broken = self.looped = 0

    def start(self, slot: int, turn: Turn, seed: int) -> None:
        self.seeds[slot] = seed
        self.taken[slot] = {}
        self.inner.start(slot, turn, seed)

    def act(self, turns: dict[int, Turn]) -> dict[int, Reply]:
        replies = self.inner.act(turns)
        pages = {slot: self.taken.setdefault(slot, {}).setdefault(turns[slot].obs["axtree"], set())
                 for slot in replies}
        looping = [slot for slot, reply in replies.items()
                   if parse_reply(reply.text) in pages[slot]]
        if looping:
            self.looped += len(looping)
            self._replace(looping, turns, replies, pages)
        for slot, reply in replies.items():
            if (action := parse_reply(reply.text)) is not None:
                pages[slot].add(action)
        return replies

    def _replace(self, looping: list[int], turns: dict[int, Turn], replies: dict[int, Reply],
                 pages: dict[int, set[str]]) -> None:
        sampler: Sampler = self.inner  # type: ignore[assignment]  # checked in __init__
        for slot in looping:
            turn = turns[slot]
            # one seed per episode and step: a rerun draws the same replies
            seed = zlib.crc32(f"{self.seeds.get(slot, 0)}:{len(turn.history)}".encode())
            drawn = sampler.sample({slot: turn}, self.samples, seed)[slot]
            other = other_action(drawn, pages[slot])
            if other is not None:
                replies[slot].text = other
                self.broken += 1

    def close(self) -> None:
        self.inner.close()
