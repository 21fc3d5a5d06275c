"""openenv-core's modules, imported without the package ``__init__`` files that cost the time.

``openenv.core/__init__`` imports ``openenv.core.env_server``, whose ``__init__`` imports the
Gradio web UI and FastMCP: about 17 s of CPU on 2 cores, on every server start and in every
client. webworld needs only the HTTP server, the interfaces, the types and the client (about
3 s for the server, 0.3 s for the client). :func:`load` registers those two packages bare,
their own ``__init__`` deferred: the first use of a name only the ``__init__`` defines (``from
openenv.core import GenericEnvClient``) runs it in full, so any other code sees the package as
usual. With the ``openenv`` extra absent :func:`load` returns None: the modules of
:mod:`webworld.interop.openenv` must import on the core install too.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

from webworld.errors import MissingExtraError

DEFERRED = ("openenv.core", "openenv.core.env_server")
_lock = threading.RLock()  # one package's __init__ imports the other's names


def load(name: str) -> ModuleType | None:
    """openenv's module ``name`` (``openenv.core.env_server.types``), or None without the extra."""
    if importlib.util.find_spec("openenv") is None:
        return None
    with _lock:
        for package in DEFERRED:
            if package not in sys.modules:
                _defer(package)
    return importlib.import_module(name)


def needs_openenv() -> MissingExtraError:
    """The one-line error of a use of the OpenEnv server or client on the core install."""
    return MissingExtraError("openenv", "openenv")


def _defer(package: str) -> None:
    """``package`` in ``sys.modules`` with its submodules importable and its ``__init__`` not
    yet run: a module-level ``__getattr__`` (PEP 562) runs it on the first missing name."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)

    def initialise(attr: str) -> Any:
        with _lock:
            if module.__dict__.pop("__getattr__", None) is initialise:
                spec.loader.exec_module(module)  # the package's own __init__, run now
        return getattr(module, attr)

    module.__getattr__ = initialise  # type: ignore[method-assign]
    sys.modules[package] = module
    parent, _, child = package.rpartition(".")
    setattr(sys.modules[parent], child, module)
