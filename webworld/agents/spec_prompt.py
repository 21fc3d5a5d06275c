"""Prompt pieces shared by the LLM proposer, improver and critic.

The JSON schema of a spec is large and says little about meaning, so the model gets a
compact hand-written description of the format and its rules, one small complete example
(an easy world from the procedural generator, content blocks stripped) and the profile's
ranges.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from webworld.propose.profiles import Profile
from webworld.spec.io import spec_to_json
from webworld.spec.models import WorldSpec

EXAMPLE_THEME = "online bookstore"
EXAMPLE_SEED = 2
EXAMPLE_INTENTS = 2

SPEC_FORMAT = """\
A world spec is ONE JSON object that describes a website as a finite-state machine.
A state is (current page, values of all variables); every domain is finite, so the
states can be enumerated by breadth-first search.

ID = lowercase snake_case matching ^[a-z][a-z0-9_]*$ (at most 80 characters).
Scalar = boolean | integer | string.

Top level: {"version": "1.0", "id": ID, "name": str, "theme": str, "description": str,
  "home": PAGE_ID, "variables": [Variable], "pages": [Page], "tasks": [Task]}

Variable: {"name": ID, "type": "bool"|"int"|"enum"|"list", "values": [Scalar],
  "min": int, "max": int, "max_length": int, "initial": value}
  bool: false/true. int: min..max (both required). enum: one of "values" or unset.
  list: distinct items from "values", at most "max_length" of them.
  "initial" is optional (default false / 0 / unset / []). Keep domains small.

Page: {"id": ID, "title": str, "role": str, "terminal": bool, "elements": [Element],
  "actions": [Action]}
  role: home, results, detail, form, cart, info, confirmation ... A terminal page is a
  success page that ends a task; it needs no actions.

Element: {"id": ID (unique on its page), "kind": KIND, "label": str, "options": [str],
  "parent": ELEMENT_ID, "visible_when": [Condition], "blocking": bool, "placeholder": str}
  KIND: link, button, text_input, search_box, select, checkbox, radio, slider,
  date_picker, tabs, modal, hover_menu, cookie_banner, permission_prompt.
  select / radio / tabs / hover_menu list every choice in "options". "parent" puts an
  element inside a modal, menu or banner; a blocking overlay (cookie_banner) hides the
  page while its visible_when holds.

Action: {"id": ID (unique in the whole spec), "label": str, "gui": [GuiStep] (at least
  one; the last step is the trigger), "params": [{"name": ID, "domain": [Scalar],
  "label": str}], "guards": [Condition], "effects": [Effect], "navigate": PAGE_ID (omit to
  stay on the page), "is_back": bool, "error_message": str}

GuiStep: {"op": "click"|"type"|"select"|"key_press"|"hover"|"drag"|"check"|"uncheck",
  "element": ELEMENT_ID of the same page, "value": str (may be "{param_name}"),
  "key": "Enter" (key_press only), "target": ELEMENT_ID (drag only)}
  type needs a text_input / search_box / date_picker; select needs a select / radio /
  tabs / date_picker and every value it can choose must be among the element's options;
  check / uncheck need a checkbox.

Condition: {"var": VARIABLE or "param": PARAMETER (exactly one), "op": "eq"|"neq"|"gt"|
  "gte"|"lt"|"lte"|"exists"|"length_gt"|"in", "value": ..., "message": str}
  exists: set / non-empty / true. A guard's "message" is the error shown when it fails.

Effect: {"op": "set"|"set_param"|"inc"|"clear"|"append", "var": VARIABLE,
  "value": Scalar, "param": PARAMETER}
  set: var := value; set_param: var := the action's parameter; inc: int var += value
  (default 1); clear: back to empty; append: add value (or the parameter) to a list var.

Task: {"id": ID, "goal": {"page": PAGE_ID, "conditions": [Condition on variables]},
  "start": PAGE_ID (default home), "slots": [VARIABLE], "bindings": {VARIABLE: value},
  "intents": [str]}
  slots: the variables whose final values make one concrete task; intents: at least one
  natural request a real user would type, naming slots as {variable}.

Rules the validator checks:
- every reference resolves (home, navigate, gui elements, {param} in step values,
  variables and parameters of conditions and effects, task pages, slots, bindings);
- ids are unique (pages, variables, tasks, actions spec-wide; elements per page);
- every page is reachable from home; every non-terminal page has an action that
  navigates elsewhere; every page except home and terminal pages has an is_back action
  that navigates (Back / Home);
- at least one terminal page; every task goal is satisfied by some state reachable
  by enabled actions from the task's start;
- initial values, effects and parameters stay inside the variables' domains; guards can
  hold; two actions of one page never share both their trigger step and their guards;
- the reachable state space stays small (keep it to a few thousand states)."""


def profile_ranges(prof: Profile) -> str:
    """The profile's ranges as the model should read them."""
    return (
        f"Complexity profile {prof.name!r}:\n"
        f"- {prof.pages[0]}-{prof.pages[1]} pages in total;\n"
        f"- {prof.actions_per_page[0]}-{prof.actions_per_page[1]} actions on every "
        "non-terminal page;\n"
        f"- exactly {prof.terminals} terminal (success) pages, one task for each;\n"
        f"- the shortest path from the initial state to each terminal page takes "
        f"{prof.path_length[0]}-{prof.path_length[1]} actions (every action counts, "
        "including accepting a cookie banner or filling a field)."
    )


def strip_for_prompt(data: dict[str, Any], *, keep_provenance: bool = False) -> dict[str, Any]:
    """A spec's JSON without content blocks (and provenance): what the model needs to see."""
    out = dict(data)
    out["pages"] = [{k: v for k, v in p.items() if k != "content"} for p in data["pages"]]
    if not keep_provenance:
        out.pop("provenance", None)
    return out


def spec_data(spec: WorldSpec) -> dict[str, Any]:
    """The canonical JSON of a spec (fields at their default value omitted)."""
    return json.loads(spec_to_json(spec))


def compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@lru_cache(maxsize=1)
def example_spec() -> str:
    """One small, complete, valid example spec (compact JSON, no content blocks)."""
    from webworld.propose.procedural import generate

    data = strip_for_prompt(spec_data(generate(EXAMPLE_THEME, "easy", EXAMPLE_SEED).spec))
    for task in data.get("tasks", []):
        task["intents"] = task["intents"][:EXAMPLE_INTENTS]
    return compact(data)
