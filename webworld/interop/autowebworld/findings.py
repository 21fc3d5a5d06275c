"""What an import reports: coded findings located by JSON path in the source file.

An ``error`` makes the file unusable (nothing is written, exit 2). A ``warning`` marks
something carried over inexactly or re-expressed in webworld's terms: the spec is written
and the warning says what changed, so nothing is dropped silently.
"""

from __future__ import annotations

from typing import Any

from webworld.spec.io import json_path
from webworld.spec.validate import Finding, Severity

_E: Severity = "error"
_W: Severity = "warning"
CODES: dict[str, tuple[Severity, str]] = {
    "bad-json": (_E, "the file is not JSON (truncated or malformed)"),
    "bad-shape": (_E, "a field is missing or has the wrong JSON type"),
    "duplicate-id": (_E, "a page or action id is used twice"),
    "dangling-page": (_E, "a page id (initial, terminal, from, to) names no page"),
    "bad-path": (_E, "a state path that is not of the form $.name"),
    "unknown-cond": (_E, "a precondition `cond` this importer does not know"),
    "unknown-effect-op": (_E, "an effect `op` this importer does not know"),
    "unknown-gui-op": (_E, "a GUI step `op` this importer does not know"),
    "dangling-value-ref": (_E, "a `value_ref` or text placeholder naming no parameter"),
    "unsupported-type": (_E, "a signature type with no finite webworld domain (object, fractional number)"),
    "from-mismatch": (_W, "an action's `from` differs from the page that lists it (it stays on that page)"),
    "navigation-flag": (_W, "`to` names another page but `is_navigation` is false (the action stays)"),
    "type-conflict": (_W, "one variable has different types on different pages (the first is kept)"),
    "undeclared-variable": (_W, "a path in no page's signature_schema (it starts unset)"),
    "unused-variable": (_W, "a signature variable nothing reads or writes (left out: it never changes)"),
    "items-synthesized": (_W, "a placeholder such as {ITEM_ANY} given a finite list of named items"),
    "text-synthesized": (_W, "typed text with no value in the file given a realistic one"),
    "expr-approximated": (_W, "a `value_expr` (now(), append(...), gen_id()) given a finite meaning"),
    "clear-approximated": (_W, "a `clear` whose result depends on a value the action does not pin"),
    "bounded-counter": (_W, "an `inc` counter given an upper bound (domains must be finite)"),
    "enter-added": (_W, "a typing action with no trigger of its own commits with Enter"),
    "keys-merged": (_W, "focus clicks and select-all / delete keys folded into one fill"),
    "time-folded": (_W, "a date picker's hour / minute clicks folded into the date chosen"),
    "scroll-as-click": (_W, "a drag that scrolls a list becomes a click ('Scroll to' an item / 'Show more')"),
    "captcha-order": (_W, "AutoWebWorld's 'captcha last' path rule is not enforced"),
}
CODE_DESCRIPTIONS: dict[str, str] = {code: desc for code, (_, desc) in CODES.items()}


def finding(code: str, loc: tuple[Any, ...], message: str) -> Finding:
    return Finding(code, CODES[code][0], json_path(loc), message)
