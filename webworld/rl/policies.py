"""Two policies every environment supports without a model: the oracle and random.

* :class:`OraclePolicy` replays the instance's shortest verified trajectory, action by
  action: the dataset's own actions, valid in the env because the env shows the very
  observation (and ids) the dataset recorded. It scores 100% on worlds and so checks the
  harness itself.
* :class:`RandomPolicy` draws uniformly over the elements of the page and the actions
  their kind takes (options from the page's own lists); with ``invalid_rate`` it also
  writes broken ones (bad syntax, unknown ids, wrong kinds), for robustness tests.

A policy is ``reset(obs, info)`` then ``act(obs, info) -> str``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from webworld.browser.actions import KEYS, format_action
from webworld.browser.observe import parse_line
from webworld.errors import UsageError
from webworld.rl.tasks import WorldSet

WORDS = ("tea", "Dune", "London", "2", "hello@example.com", "Alex Kim", "", "yes")


@dataclass(frozen=True)
class PageElement:
    bid: str
    role: str
    name: str
    options: tuple[str, ...]


def page_elements(axtree: str) -> list[PageElement]:
    """The interactive elements of an observation text, with their list options."""
    out: list[PageElement] = []
    options: list[str] = []
    for line in axtree.splitlines():
        depth, bid, role, name, _ = parse_line(line)
        if bid is not None:
            if out and options:
                out[-1] = PageElement(out[-1].bid, out[-1].role, out[-1].name, tuple(options))
            options = []
            out.append(PageElement(bid, role, name or "", ()))
        elif role == "option" and out and out[-1].role == "combobox":
            options.append(name or "")
    if out and options:
        out[-1] = PageElement(out[-1].bid, out[-1].role, out[-1].name, tuple(options))
    return out


class OraclePolicy:
    """The verified path of the episode's instance (needs verified trajectories)."""

    def __init__(self, worlds: WorldSet) -> None:
        self.worlds = worlds
        self.path: tuple[str, ...] = ()
        self.step = 0

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        inst = self.worlds.instance(info["instance"])
        if not inst.oracle:
            raise UsageError(f"no verified trajectory for {inst.id}: the oracle replays "
                             "verified ones (run `webworld verify`)")
        self.path, self.step = inst.oracle[0], 0

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> str:
        if self.step >= len(self.path):
            return "noop()"
        self.step += 1
        return self.path[self.step - 1]


class RandomPolicy:
    """Uniform over (element, applicable action); see the module doc."""

    def __init__(self, seed: int | None = None, *, invalid_rate: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.invalid_rate = invalid_rate

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        pass

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> str:
        elements = page_elements(obs["axtree"])
        if not elements or self.rng.random() < self.invalid_rate:
            return self._invalid(elements)
        el = self.rng.choice(elements)
        return self.rng.choice(self._choices(el, elements))

    def _choices(self, el: PageElement, elements: list[PageElement]) -> list[str]:
        out = [format_action("hover", el.bid), format_action("press", el.bid, "Escape")]
        if el.role == "combobox":
            out += [format_action("select_option", el.bid, o) for o in el.options]
        elif el.role == "slider":
            out += [format_action("drag", el.bid, str(v)) for v in (0, 1, 5, 10, 50, 100)]
        else:
            out.append(format_action("click", el.bid))
        if el.role in ("textbox", "searchbox", "spinbutton"):
            texts = list(WORDS) + [e.name for e in elements if e.name][:10]
            out += [format_action("fill", el.bid, self.rng.choice(texts)),
                    format_action("press", el.bid, "Enter")]
        if el.role in ("button", "link", "tab", "menuitem"):
            out.append(format_action("press", el.bid, "Enter"))
        if el.role in ("checkbox", "radio"):
            out += [format_action("check", el.bid), format_action("uncheck", el.bid)]
        return out

    def _invalid(self, elements: list[PageElement]) -> str:
        bid = self.rng.choice(elements).bid if elements else "1"
        return self.rng.choice([
            f"clik('{bid}')", f"click({bid}", "Action: nothing to do",
            f"click('{self.rng.randint(200, 999)}')",
            format_action("fill", bid, "a\tb"), format_action("press", bid, "Tab"),
            format_action("select_option", bid, "no such option"), format_action("drag", bid, "7.5"),
            format_action("uncheck", bid), format_action("press", bid, KEYS[0]),
        ])


def make_policy(name: str, worlds: WorldSet | None = None, seed: int | None = None) -> Any:
    if name == "oracle":
        if worlds is None:
            raise UsageError("the oracle policy needs the worlds' verified trajectories")
        return OraclePolicy(worlds)
    if name == "random":
        return RandomPolicy(seed)
    raise UsageError(f"unknown policy {name!r}; choose oracle or random")
