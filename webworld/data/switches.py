"""The study-only switches: changes a study makes to what a policy trains on or how it is
asked, each one declared here once and shared by SFT (:class:`webworld.train.sft.SFTSettings`),
the evals (:class:`webworld.eval.runner.EvalSettings`, ``webworld eval turns``), the recipes
and the CLI (one option, ``--study NAME``, repeatable).

A command takes only the switches that mean something to it (``SFT``, ``EPISODES``,
``TURNS`` below); any other is a usage error naming the ones it takes.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from webworld.errors import UsageError


class StudySwitches(BaseModel):
    """Switches a study turns on; all off is the plain run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    relabel_ids: bool = Field(False, description="Renumber each chat's element ids at random, "
                              "in page order (SFT: every epoch; eval turns: each turn asked), so "
                              "ids are read off the page, not remembered.")
    shuffle_ids: bool = Field(False, description="Like relabel_ids, in no page order: no count "
                              "down the page gives an id, only copying it from its line does.")
    vary_values: bool = Field(False, description="Replace the value each chat types (the task "
                              "gives it) with a new one of its field every epoch, so values are "
                              "copied, not recalled.")
    move_choices: bool = Field(False, description="Move the element each chat picks (the task "
                               "names it) to a sibling's place (SFT: every epoch; eval turns: "
                               "each turn asked), so choices are read, not placed.")
    rename_choices: bool = Field(False, description="Give the element each chat picks (the task "
                                 "names it) a new name, in task and page (SFT: every epoch; eval "
                                 "turns: each turn asked), so names are found, not recalled.")
    vary_dates: bool = Field(False, description="Move the date each chat's task asks for to "
                             "another day of its month (task, calendar, reply) every epoch, so "
                             "days are read, not recalled.")
    skip_detours: bool = Field(False, description="Leave out the training chats the export "
                               "marks `detour` (steps a longer path took that its task did "
                               "without), so only needed steps are taught.")
    ground_names: bool = Field(False, description="Move a model's action to the element its "
                               "thought quotes when the id points at another (one match on the "
                               "page; webworld.eval.grounding).")
    break_loops: bool = Field(False, description="Where a model would take an action again on a "
                              "page that reads as when it took it, play the action it samples "
                              "most often among 8 replies, those taken there left out "
                              "(webworld.eval.loops).")

    @model_validator(mode="after")
    def _one_way_of_renumbering(self) -> StudySwitches:
        if self.relabel_ids and self.shuffle_ids:
            raise ValueError("relabel_ids and shuffle_ids both renumber ids: choose one")
        return self

    @classmethod
    def names(cls) -> list[str]:
        return list(cls.model_fields)

    @classmethod
    def named(cls, names: Iterable[str]) -> StudySwitches:
        """The switches ``names`` turned on (``relabel-ids`` reads as ``relabel_ids``); an
        unknown name is a usage error listing the known ones."""
        wanted = [name.strip().replace("-", "_") for name in names]
        unknown = [name for name in wanted if name not in cls.model_fields]
        if unknown:
            raise UsageError(f"unknown study switch {unknown[0]!r}; known: "
                             f"{', '.join(cls.names())}", "--study")
        return cls.model_validate(dict.fromkeys(wanted, True))

    def on(self) -> list[str]:
        """The switches turned on, in declaration order."""
        return [name for name in self.names() if getattr(self, name)]

    def outside(self, allowed: Iterable[str]) -> list[str]:
        """The switches turned on that are not among ``allowed``."""
        return [name for name in self.on() if name not in set(allowed)]

    @property
    def augments(self) -> bool:
        """Whether any switch changes the training chats each epoch."""
        return any(getattr(self, name) for name in AUGMENTATIONS)


# what changes each epoch's chats (skip_detours only filters them, once)
AUGMENTATIONS = ("relabel_ids", "shuffle_ids", "vary_values", "move_choices", "rename_choices",
                 "vary_dates")
SFT = (*AUGMENTATIONS, "skip_detours")
EPISODES = ("ground_names", "break_loops")  # `webworld eval`: wrappers round the policy
TURNS = ("relabel_ids", "shuffle_ids", "move_choices", "rename_choices", "ground_names")


def require_applicable(switches: StudySwitches, allowed: Iterable[str], command: str) -> None:
    """A ``ValueError`` (a pydantic validator's) naming the switches ``command`` does not take."""
    allowed = tuple(allowed)
    extra = switches.outside(allowed)
    if extra:
        raise ValueError(f"{', '.join(extra)} does not apply to {command} (it takes: "
                         f"{', '.join(allowed)})")
