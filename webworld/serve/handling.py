"""What the server does with an action request, as a pure function of the state.

The site server (:mod:`webworld.serve.app`) and the fast environment (which has no
server) both call :func:`handle_action`, so a form submitted in either leads to the same
state and the same message on the next page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from webworld.spec.models import Action, Parameter, Scalar
from webworld.spec.semantics import Machine, State


@dataclass(frozen=True)
class Handled:
    """The outcome of one action request."""

    status: int              # 303: go to the state's page; 405 / 409: an error page
    state: State
    flash: str | None = None  # the message the next page shows (a refused action)


def coerce(param: Parameter, raw: str) -> tuple[bool, Scalar | None]:
    """Map submitted text onto the parameter's domain (option texts are ``str(value)``)."""
    for value in param.domain:
        if str(value) == raw:
            return True, value
    return False, None


def read_params(action: Action, form: Mapping[str, Any]) -> tuple[dict[str, Scalar], str | None]:
    """Bound parameters, or the message a site shows for a field left empty or a value
    outside the domain. ``form`` maps a field name to its (last) submitted value."""
    params: dict[str, Scalar] = {}
    for param in action.params:
        raw = form.get(param.name)
        label = (param.label or param.name).lower()
        if not isinstance(raw, str) or not raw.strip():
            return {}, f"Please fill in {label}."
        ok, value = coerce(param, raw.strip())
        if not ok:
            return {}, f"“{raw.strip()[:60]}” is not a valid {label}."
        params[param.name] = value  # type: ignore[assignment]
    return params, None


def handle_action(machine: Machine, state: State, action_id: str, method: str,
                  form: Mapping[str, Any]) -> Handled:
    """Fire ``action_id`` from ``state`` with the submitted ``form`` (the action exists)."""
    page_id, action = machine.actions[action_id]
    if state.page != page_id:
        return Handled(409, state)
    if method == "GET" and action.params:
        return Handled(405, state)
    params, problem = read_params(action, form)
    if problem is not None:
        return Handled(303, state, problem)
    result = machine.step(state, action_id, params)
    return Handled(303, result.state) if result.ok else Handled(303, state, result.message)
