"""webworld through OpenEnv: an environment server over the worlds of a `webworld build`
output, and the client to it (with TRL's environment on top).

    webworld env serve WORLDS --port 8000        # openenv-core's server, one episode a session

    from webworld.interop.openenv import WebworldClient, environment_factory
    with WebworldClient("http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=0)
        result = env.step("click('12')")
    GRPOTrainer(..., environment_factory=environment_factory("http://127.0.0.1:8000"))

:mod:`.models` holds the typed messages, :mod:`.server` the server, :mod:`.client` the clients.
The names below are imported on first use: openenv is the optional ``openenv`` extra.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "WebworldAction": "models", "WebworldObservation": "models", "WebworldState": "models",
    "ResetOptions": "models",
    "WebworldEnvironment": "server", "create_app": "server",
    "WebworldClient": "client", "WebworldServerEnv": "client", "environment_factory": "client",
    "EnvServerError": "client", "EnvServerGone": "client",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
