"""A vector env of N episode slots in this process: the fast env (captured pages) or the live
one (Chromium); what the trainer plays its rollouts on, and what each Ray env worker runs."""

from __future__ import annotations

from typing import Any

from webworld.rl.tasks import WorldSet


def local_vector_env(worlds: WorldSet, env: str, split: str | None, num_envs: int,
                     **settings: Any) -> Any:
    """``env`` fast or live; ``settings`` are the env's (observation, max_steps, reward)."""
    if env == "live":
        from webworld.rl.live import LiveVectorEnv

        return LiveVectorEnv(num_envs, worlds=worlds, split=split, **settings)
    from webworld.rl.fast.env import FastVectorEnv

    return FastVectorEnv(num_envs, worlds=worlds, split=split, **settings)
