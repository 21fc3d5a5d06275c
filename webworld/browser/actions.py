"""The action language a policy speaks, BrowserGym style, and how it is carried out.

    click('12')  fill('7', 'tea')  press('7', 'Enter')  select_option('5', 'Paperback')
    hover('3')  check('9')  uncheck('9')  drag('4', '3')   # drag a slider to 3

Strings are parsed by a small tokenizer (never evaluated) and executed through a typed
dispatch table with real mouse and keyboard input.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from playwright.async_api import Locator, Page

from webworld import contract
from webworld.errors import WebworldError

ARITY = {"click": 0, "hover": 0, "check": 0, "uncheck": 0, "fill": 1, "press": 1,
         "select_option": 1, "drag": 1}
_CALL = re.compile(r"^\s*([a-z_]+)\s*\((.*)\)\s*$", re.S)
_ARG = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+))\s*(?:,|$)""", re.S)


class ActionSyntaxError(WebworldError):
    """A string that is not an action of the language."""


@dataclass(frozen=True)
class BrowserAction:
    name: str
    bid: str
    arg: str | None = None

    def __str__(self) -> str:
        args = [self.bid] + ([self.arg] if self.arg is not None else [])
        return f"{self.name}({', '.join(_quote(a) for a in args)})"


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_action(text: str) -> BrowserAction:
    """``"fill('7', 'tea')"`` -> ``BrowserAction("fill", "7", "tea")``."""
    match = _CALL.match(text)
    if not match or match.group(1) not in ARITY:
        raise ActionSyntaxError(f"not an action: {text[:80]!r}; expected one of "
                                f"{', '.join(ARITY)}")
    name, rest = match.group(1), match.group(2)
    args, pos = [], 0
    while pos < len(rest.rstrip()):
        arg = _ARG.match(rest, pos)
        if not arg or arg.end() == pos:
            raise ActionSyntaxError(f"cannot read the arguments of {text[:80]!r}")
        single, double, number = arg.groups()
        args.append(_unescape(single if single is not None else double)
                    if number is None else number)
        pos = arg.end()
    if len(args) != 1 + ARITY[name]:
        raise ActionSyntaxError(f"{name} takes {1 + ARITY[name]} argument(s), got {len(args)}")
    return BrowserAction(name, args[0], args[1] if len(args) > 1 else None)


# --- execution ----------------------------------------------------------------------------

Handler = Callable[[Page, Locator, "str | None", float], Awaitable[None]]


async def _click(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    await target.click(timeout=timeout)


async def _hover(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    # Start from outside any open menu, as a hand moving to the target would.
    await page.mouse.move(0, 0)
    await target.hover(timeout=timeout)


async def _fill(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    await target.click(timeout=timeout)
    await target.fill("", timeout=timeout)
    # key by key, as a person types; long texts get time in proportion
    await target.press_sequentially(arg or "", timeout=timeout + 50 * len(arg or ""))


async def _press(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    await target.press(arg or "Enter", timeout=timeout)


async def _select(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    await target.select_option(label=arg, timeout=timeout)


async def _set_checked(checked: bool, target: Locator, timeout: float) -> None:
    if await target.is_checked() != checked:
        await target.click(timeout=timeout)


async def _check(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    await _set_checked(True, target, timeout)


async def _uncheck(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    await _set_checked(False, target, timeout)


async def _drag(page: Page, target: Locator, arg: str | None, timeout: float) -> None:
    """Drag a range input's thumb from its current value to ``arg`` with the mouse."""
    await target.scroll_into_view_if_needed(timeout=timeout)
    box = await target.bounding_box(timeout=timeout)
    if box is None:
        raise WebworldError("the slider has no box")
    lo, hi, now = await target.evaluate(
        "e => [Number(e.min || 0), Number(e.max || 100), Number(e.value)]")
    thumb = contract.SLIDER_THUMB_PX

    def x_of(value: float) -> float:
        fraction = (value - lo) / (hi - lo) if hi > lo else 0.0
        return box["x"] + thumb / 2 + fraction * (box["width"] - thumb)

    y = box["y"] + box["height"] / 2
    await page.mouse.move(x_of(now), y)
    await page.mouse.down()
    await page.mouse.move(x_of(float(arg or lo)), y, steps=6)
    await page.mouse.up()


HANDLERS: dict[str, Handler] = {
    "click": _click, "hover": _hover, "fill": _fill, "press": _press,
    "select_option": _select, "check": _check, "uncheck": _uncheck, "drag": _drag,
}


def locate(page: Page, bid: str) -> Locator:
    return page.locator(f'[{contract.BID_ATTR}="{bid}"]')


async def execute(page: Page, action: BrowserAction, *, timeout_ms: float = 3000) -> None:
    """Carry out one action on the element the last observation called ``bid``."""
    await HANDLERS[action.name](page, locate(page, action.bid), action.arg, timeout_ms)
