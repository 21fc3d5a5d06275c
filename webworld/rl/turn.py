"""A policy's turn in an episode: what it reads before it acts, the one prompt that the
trainer's rollouts, the eval harness and the dataset share (:mod:`webworld.data.prompting`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from webworld.data.prompting import history_entry, prompt_messages


@dataclass
class Turn:
    """What a policy reads at one step of one episode."""

    obs: dict[str, Any]
    info: dict[str, Any]
    history: list[str] = field(default_factory=list)  # the actions so far, as the prompt lists them

    def messages(self) -> list[dict[str, str]]:
        return prompt_messages(self.obs["goal"], self.obs["axtree"], self.obs["url"],
                               self.history, error=self.obs.get("last_action_error") or None)

    def after(self, obs: dict[str, Any], info: dict[str, Any]) -> Turn:
        """The next turn, once the env answered this one's action with ``obs``: the action
        joins the history, labelled with the element as this turn's page showed it."""
        return Turn(obs, info, [*self.history, history_entry(obs["last_action"],
                                                             self.obs["axtree"])])
