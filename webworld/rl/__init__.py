"""Reinforcement-learning environments on webworld's worlds, and on MiniWoB++.

Importing this package registers the gymnasium ids (entry points load lazily)::

    import gymnasium, webworld.rl
    env = gymnasium.make("webworld/Live-v0", sites="sites", trajectories="trajectories")
    env = gymnasium.make("webworld/Fast-v0", sites="sites", trajectories="trajectories")
    env = gymnasium.make("webworld/miniwob.click-button-v0")

or, without the import, ``gymnasium.make("webworld.rl:webworld/Live-v0", ...)``.
:func:`register_worlds` adds one id per world (``webworld/<world>-v0`` and
``webworld/<world>-fast-v0``). The classes: :class:`~webworld.rl.live.LiveEnv`,
:class:`~webworld.rl.fast.env.FastEnv`, their vector forms, and
:class:`~webworld.rl.miniwob.MiniWoBEnv`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium

NAMESPACE = "webworld"


def _register(env_id: str, entry_point: str, **kwargs: Any) -> None:
    if env_id not in gymnasium.registry:
        gymnasium.register(env_id, entry_point=entry_point, kwargs=kwargs)


def register_all() -> None:
    """The generic ids, and one per MiniWoB++ task of the ``miniwob`` wheel."""
    from webworld.rl.miniwob_tasks import miniwob_tasks

    _register(f"{NAMESPACE}/Live-v0", "webworld.rl.live:LiveEnv")
    _register(f"{NAMESPACE}/Fast-v0", "webworld.rl.fast.env:FastEnv")
    _register(f"{NAMESPACE}/MiniWoB-v0", "webworld.rl.miniwob:MiniWoBEnv")
    for task in miniwob_tasks():
        _register(f"{NAMESPACE}/miniwob.{task}-v0", "webworld.rl.miniwob:MiniWoBEnv", task=task)


def register_worlds(sites: str | Path = "sites", trajectories: str | Path = "trajectories"
                    ) -> list[str]:
    """Register ``webworld/<world>-v0`` (live) and ``webworld/<world>-fast-v0`` for every
    rendered world under ``sites``; returns the ids."""
    from webworld.rl.tasks import site_dirs

    ids = []
    for site in site_dirs(Path(sites), None):
        settings = {"sites": str(site), "trajectories": str(trajectories), "split": None}
        _register(f"{NAMESPACE}/{site.name}-v0", "webworld.rl.live:LiveEnv", **settings)
        _register(f"{NAMESPACE}/{site.name}-fast-v0", "webworld.rl.fast.env:FastEnv", **settings)
        ids += [f"{NAMESPACE}/{site.name}-v0", f"{NAMESPACE}/{site.name}-fast-v0"]
    return ids


register_all()
