"""The module verifiers imports for the taskset id ``webworld-verifiers`` (its loader maps an
id to a top-level module and reads that module's ``__all__``): a fresh ``vf-eval`` process or
prime-rl's env workers find webworld's environment here. It lives in
:mod:`webworld.interop.verifiers`."""

from webworld.interop.verifiers import *  # noqa: F403
from webworld.interop.verifiers import __all__  # noqa: F401
