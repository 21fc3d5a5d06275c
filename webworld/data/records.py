"""The records of a verified dataset, one place for their shape.

``trajectories/<world>/verified.jsonl`` holds one :class:`VerifiedTrajectory` per line,
``failures.jsonl`` one :class:`FailureRecord` per line, and ``images/<trajectory id>/``
the screenshots the steps point at (paths relative to the world folder).

A *step* is one browser action of the agent (a click, a fill, a key press ...); one FSM
action of the spec may take several (type the query, then press Enter). ``observation``
is exactly what a policy reads before acting: the accessibility text with element ids
(``[12] button 'Search'``) and the screenshot; ``action`` is the BrowserGym-style string
the policy must produce (``click('12')``, ``fill('7', 'tea')``).
"""

from __future__ import annotations

from typing import Literal, TypedDict

FailureClass = Literal[
    "element_missing",      # the target is not in the page
    "element_hidden",       # in the page but not visible
    "element_covered",      # visible but another element (an overlay) receives the click
    "state_mismatch",       # the server's true state differs from the expected state
    "navigation_timeout",   # the page did not load in time
    "server_error",         # the server answered 5xx
    "action_error",         # anything else the browser refused
]
FAILURE_CLASSES: tuple[str, ...] = FailureClass.__args__  # type: ignore[attr-defined]


class Observation(TypedDict):
    url: str
    axtree: str               # accessibility text with element ids, one node per line
    screenshot: str | None    # PNG path relative to the world folder; null: verified
                              # with --no-screenshots (a text-only step)


class VerifiedStep(TypedDict):
    index: int                # browser-action index within the trajectory
    fsm_index: int            # index of the FSM action (candidate step) it belongs to
    fsm_action: str           # spec action id
    fsm_label: str            # the action's human label ("Search books")
    op: str                   # GUI op of the spec step: click / type / select / ...
    element: str              # spec element id of the target
    element_label: str        # the target's label
    value: str | None         # typed text / chosen option, if any
    action: str               # BrowserGym-style action string, e.g. "fill('7', 'tea')"
    bid: str                  # element id in the observation the action targets
    bbox: list[float] | None  # target box [x, y, width, height] in CSS pixels
    observation: Observation  # what the agent saw before acting
    page: str                 # the true page after the step (checked against the server)


class _Since(TypedDict, total=False):
    """Keys newer records have (older ones are read as their default)."""

    transition: str           # navigate | swap: how the site moved between pages


class VerifiedTrajectory(_Since):
    id: str
    world_id: str
    task_id: str
    intent: str
    slots: dict[str, object]
    length: int               # FSM actions
    shortest_length: int
    theme: str
    viewport: list[int]       # [width, height]
    steps: list[VerifiedStep]
    final_state: dict[str, object]
    seconds: float


class FailureRecord(TypedDict):
    id: str
    world_id: str
    task_id: str
    failure: str              # one of FAILURE_CLASSES
    step: int                 # browser-action index where it failed
    fsm_action: str
    message: str
    seconds: float
