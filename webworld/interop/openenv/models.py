"""The typed messages of webworld's OpenEnv server: an action, an observation, a state, and
the options of a reset.

An action is webworld's action language (:mod:`webworld.browser.actions`), as text
(``click('12')``, or a whole model reply) or as a name and its arguments, which
:func:`~webworld.browser.actions.format_action` writes as that text: the env reads either with
its one parser, so an unknown action, a wrong count of arguments or a value the element does
not take is the env's own error in the observation (``last_action_error``, ``error_code``),
as in every webworld env. Only what is not an action message at all (a number where text
goes, a field the model lacks, a message past the size limit) is refused as a request.

The observation is the env's (:func:`webworld.rl.episode.observation_dict`, by the same
names); the state says which episode this is and how far it went, never the server's state.
The classes subclass openenv's; without the ``openenv`` extra this module imports but has none.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator
from pydantic_core import PydanticCustomError

from webworld.browser.actions import ACTION_ARITY, ERROR_CODES, format_action
from webworld.interop.openenv._openenv import load, needs_openenv
from webworld.interop.trl import ActionTools, tool_action
from webworld.rl.episode import ObservationMode, RewardMode

__all__ = ["ACTION_ARGS", "ENDED_CODE", "ResetOptions", "WebworldAction", "WebworldObservation",
           "WebworldState"]

# Each action's arguments by name, the element first: the parameters of the TRL tools.
ACTION_ARGS: dict[str, tuple[str, ...]] = {
    name: tuple(inspect.signature(getattr(ActionTools, name)).parameters)[1:]
    for name in ACTION_ARITY}
ENDED_CODE = "ended"  # error_code of a step after the episode ended (or before any reset)
MAX_ACTION_CHARS = 65_536  # a long model reply fits; the env's own limits apply within
Argument = Annotated[str, Field(max_length=MAX_ACTION_CHARS)] | StrictInt
Split = Literal["train", "validation", "test", "all"]  # all: every world's instances

_types = load("openenv.core.env_server.types")


class ResetOptions(BaseModel):
    """What a reset may ask for; each unset one is the server's setting."""

    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(None, ge=0, description="seeds the draw of the task and phrasing")
    episode_id: str | None = Field(None, max_length=255)
    task: str | None = Field(None, max_length=1000, description="an instance id, "
                             "<world>/<task> or a task id (default: drawn from the split)")
    intent: str | None = Field(None, max_length=10_000, description="the phrasing (default: drawn)")
    split: Split | None = Field(None, description="where tasks are drawn from")
    observation: ObservationMode | None = Field(None, description="full or compact page text")
    reward: RewardMode | None = Field(None, description="success, or progress (shaped)")
    max_steps: int | None = Field(None, ge=1, description="default: twice the shortest path")
    screenshot: bool = Field(False, description="a PNG of the viewport with each observation "
                             "(live env only)")


if _types is not None:
    class WebworldAction(_types.Action):  # type: ignore[name-defined, misc]
        """One action: ``action`` (its text), or ``name`` and ``args``."""

        model_config = ConfigDict(json_schema_extra={
            "actions": {name: list(args) for name, args in ACTION_ARGS.items()},
            "examples": [{"action": "click('12')"}, {"action": 'click(button "Search")'},
                         {"name": "fill", "args": ['textbox "Search"', "tea"]}]})

        action: str | None = Field(None, max_length=MAX_ACTION_CHARS, description=(
            "an action such as click('12'), click(button \"Search\") or fill('7', 'tea'), or "
            "a model reply whose last 'Action:' line is one"))
        name: str | None = Field(None, pattern=r"^[A-Za-z_]+$", max_length=64,
                                 description=f"the action: {', '.join(ACTION_ARGS)}")
        args: list[Argument] = Field(default_factory=list, max_length=8, description=(
            "its arguments in order, the element first (its id, or its role and name: "
            "button \"Search\"): "
            + "; ".join(f"{n}({', '.join(a)})" for n, a in ACTION_ARGS.items())))

        @model_validator(mode="after")
        def _one_form(self) -> WebworldAction:
            if (self.action is None) == (self.name is None) or (self.action is not None
                                                                and self.args):
                # not a ValueError: OpenEnv sends a refusal's errors as JSON, and that
                # would carry the exception object, which JSON cannot (the session would end)
                raise PydanticCustomError("action_form", "give the action as text (action) "
                                          "or as name and args, one of the two")
            return self

        def text(self) -> str:
            """The action as the env reads it."""
            if self.action is not None:
                return self.action
            assert self.name is not None
            args = [str(a) for a in self.args]
            return tool_action(self.name, *args) if args else format_action(self.name)

    class WebworldObservation(_types.Observation):  # type: ignore[name-defined, misc]
        """What the env shows after a reset or a step (``reward`` and ``done`` beside it)."""

        goal: str = Field("", description="the task, as this episode phrases it")
        url: str = ""
        axtree: str = Field("", description="the page as text (full or compact), each "
                            "element with its id in brackets")
        last_action: str = Field("", description="the last action, as the env read it")
        last_action_error: str = Field("", description="why the last action failed (empty "
                                       "when it did not)")
        error_code: str = Field("", description="the failure's code: "
                                f"{', '.join((*ERROR_CODES, ENDED_CODE))}")
        success: bool = Field(False, description="the task's goal holds (server truth)")
        truncated: bool = Field(False, description="the step limit ended the episode")
        step: int = 0
        max_steps: int = 0
        screenshot: str | None = Field(None, description="the viewport as base64 PNG "
                                       "(live env, screenshot=true at reset)")

    class WebworldState(_types.State):  # type: ignore[name-defined, misc]
        """Which episode a session plays and how far it went (``episode_id``, ``step_count``)."""

        world: str = ""
        task: str = ""
        instance: str = ""
        intent: str = ""
        split: str | None = None
        max_steps: int = 0
        done: bool = True


def __getattr__(name: str) -> Any:
    if _types is None and name in __all__:
        raise needs_openenv()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
