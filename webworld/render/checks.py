"""Check rendered HTML against the DOM contract (:mod:`webworld.contract`).

:func:`check_page` judges any page HTML (ours, or an LLM site coder's) for one FSM state
and returns problems as sentences that say what is missing or wrong and where (element,
action, form, line). An empty list means the browser side can drive every action of the
page with the selectors the contract promises.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

from webworld import contract
from webworld.render.plan import (
    OVERLAY_KINDS,
    Use,
    element_uses,
    has_options,
    option_text,
    visible_ids,
)
from webworld.spec.models import Action, Element, Page, WorldSpec
from webworld.spec.semantics import Machine, State

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})
TEXT_INPUT_TYPES = frozenset({"", "text", "search", "email", "password", "tel", "url", "number"})
CONTROL_KINDS = {
    "button": "a <button>, <a> or submit <input>",
    "link": "a <button>, <a> or submit <input>",
    "text_input": "an <input> or <textarea>",
    "search_box": "an <input> or <textarea>",
    "checkbox": 'an <input type="checkbox">',
    "slider": 'an <input type="range">',
}


# --- a small DOM ---------------------------------------------------------------------------


@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str]
    line: int
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def get(self, name: str) -> str | None:
        return self.attrs.get(name)

    def walk(self) -> Iterator[Node]:
        for child in self.children:
            yield child
            yield from child.walk()

    def ancestors(self) -> Iterator[Node]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def inside(self, other: Node) -> bool:
        return any(a is other for a in self.ancestors())

    def all_text(self) -> str:
        return self.text + "".join(c.all_text() for c in self.children)

    def describe(self) -> str:
        extra = "".join(f' {k}="{self.attrs[k]}"' for k in ("id", "type", "name")
                        if self.attrs.get(k))
        return f"<{self.tag}{extra}> at line {self.line}"


class _TreeBuilder(HTMLParser):
    """Tolerant tree building: void elements, implied </option> / </li>, stray end tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, 0)
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("option", "optgroup") and self.stack[-1].tag == "option":
            self.stack.pop()
        if tag == "li":
            for i in range(len(self.stack) - 1, 0, -1):
                if self.stack[i].tag in ("ul", "ol", "menu"):
                    break
                if self.stack[i].tag == "li":
                    del self.stack[i:]
                    break
        values: dict[str, str] = {}
        for name, value in attrs:
            values.setdefault(name, value if value is not None else "")
        node = Node(tag, values, self.getpos()[0], parent=self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack[-1].tag == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text += data


def parse_html(html: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


# --- helpers ---------------------------------------------------------------------------------


def form_owner(node: Node) -> str | None:
    """The id of the form a control submits with: its ``form`` attribute, else the
    nearest enclosing <form>'s id ("" for a form without id)."""
    if node.get("form") is not None:
        return node.get("form")
    for anc in node.ancestors():
        if anc.tag == "form":
            return anc.get("id") or ""
    return None


def is_submit(node: Node) -> bool:
    if node.tag == "button":
        return (node.get("type") or "submit").lower() == "submit"
    return node.tag == "input" and (node.get("type") or "").lower() in ("submit", "image")


def is_text_input(node: Node) -> bool:
    if node.tag == "textarea":
        return True
    return node.tag == "input" and (node.get("type") or "").lower() in TEXT_INPUT_TYPES


def _type(node: Node) -> str:
    return (node.get("type") or "").lower()


def _step_text(action: Action, index: int) -> str:
    step = action.gui[index]
    role = "trigger" if index == len(action.gui) - 1 else f"step {index + 1}"
    value = f", {step.value!r}" if step.value is not None else ""
    key = f", key {step.key!r}" if step.key else ""
    return f"action {action.id!r} {role} {step.op}({step.element!r}{value}{key})"


def _fmt_lines(nodes: list[Node]) -> str:
    return ", ".join(str(n.line) for n in nodes)


def _value_of_option(node: Node) -> str:
    value = node.get("value")
    return value if value is not None else node.all_text().strip()


# --- the check --------------------------------------------------------------------------------


class _Checker:
    def __init__(self, html: str, spec: WorldSpec, machine: Machine, state: State, base: str
                 ) -> None:
        self.doc = parse_html(html)
        self.spec, self.machine, self.state, self.base = spec, machine, state, base
        self.page: Page = spec.page(state.page)
        self.elements = {e.id: e for e in self.page.elements}
        self.uses = element_uses(self.page)
        self.visible = visible_ids(self.page, machine, state)
        self.problems: list[str] = []
        self.nodes = list(self.doc.walk())
        self.by_ww: dict[str, list[Node]] = {}
        for node in self.nodes:
            eid = node.get(contract.ELEMENT_ATTR)
            if eid is not None:
                self.by_ww.setdefault(eid, []).append(node)
        self.bad: set[str] = set()  # elements whose node is missing or of the wrong kind

    def add(self, text: str) -> None:
        self.problems.append(text)

    def node(self, eid: str) -> Node | None:
        nodes = self.by_ww.get(eid, [])
        return nodes[0] if len(nodes) == 1 and eid not in self.bad else None

    def what(self, el: Element) -> str:
        return f"element {el.id!r} ({el.kind} {el.label!r})"

    def url(self, action: Action) -> str:
        return contract.ACTION_URL.format(base=self.base, action=action.id)

    # -- 1. presence, absence, nesting
    def presence(self) -> None:
        shown = set(self.visible)
        for eid in self.visible:
            el = self.elements[eid]
            nodes = self.by_ww.get(eid, [])
            if not nodes:
                self.bad.add(eid)
                self.add(f"{self.what(el)} is visible in this state but missing: no node has "
                         f'{contract.ELEMENT_ATTR}="{eid}"')
            elif len(nodes) > 1:
                self.bad.add(eid)
                self.add(f'{self.what(el)} must be on exactly one node, but {len(nodes)} carry '
                         f'{contract.ELEMENT_ATTR}="{eid}" (lines {_fmt_lines(nodes)})')
        for eid, nodes in self.by_ww.items():
            if eid not in self.elements:
                self.add(f'{contract.ELEMENT_ATTR}="{eid}" at line {nodes[0].line} is not an '
                         f"element of page {self.page.id!r}")
            elif eid not in shown:
                self.add(f"{self.what(self.elements[eid])} must not be rendered in this state "
                         f"({self._hidden_reason(self.elements[eid])}) but appears at line "
                         f"{nodes[0].line}")
        for eid in self.visible:
            el = self.elements[eid]
            node, parent = self.node(eid), self.node(el.parent) if el.parent else None
            if node is not None and parent is not None and not node.inside(parent):
                self.add(f"{self.what(el)} at line {node.line} must be inside its parent "
                         f"{el.parent!r} (line {parent.line})")

    def _hidden_reason(self, el: Element) -> str:
        failed = [c for c in el.visible_when if not self.machine.holds(c, self.state)]
        if failed:
            c = failed[0]
            return f"its visible_when {c.var or c.param} {c.op} {c.value!r} does not hold"
        return f"its parent {el.parent!r} is not visible"

    # -- 2. what kind of node each element is
    def kinds(self) -> None:
        for eid in self.visible:
            el, node = self.elements[eid], self.node(eid)
            if node is None:
                continue
            problem = self._kind_problem(el, node)
            if problem:
                self.bad.add(eid)
                self.add(f"{self.what(el)}: {problem}")

    def _kind_problem(self, el: Element, node: Node) -> str | None:
        kind = el.kind
        if kind in ("button", "link") and not el.options:
            if node.tag in ("button", "a") or (node.tag == "input" and _type(node) in (
                    "submit", "button", "image")):
                return None
            return (f"{contract.ELEMENT_ATTR} must be on the control itself "
                    f"({CONTROL_KINDS[kind]}), found {node.describe()}")
        if kind in ("text_input", "search_box") and not is_text_input(node):
            return (f"{contract.ELEMENT_ATTR} must be on the text field itself "
                    f"({CONTROL_KINDS[kind]}), found {node.describe()}")
        if kind == "checkbox" and not (node.tag == "input" and _type(node) == "checkbox"):
            return f'needs {CONTROL_KINDS[kind]} carrying {contract.ELEMENT_ATTR}, found {node.describe()}'
        if kind == "slider" and not (node.tag == "input" and _type(node) == "range"):
            return f'needs {CONTROL_KINDS[kind]} carrying {contract.ELEMENT_ATTR}, found {node.describe()}'
        if kind == "date_picker" and not any(
                d.get(contract.PART_ATTR) == "toggle" for d in node.walk()):
            return (f'the date picker at line {node.line} has no toggle button '
                    f'([{contract.PART_ATTR}="toggle"]) that opens its calendar')
        if kind in OVERLAY_KINDS and (node.get("role") or "") not in ("dialog", "alertdialog"):
            return (f'the {kind} container at line {node.line} needs role="dialog" or '
                    f'role="alertdialog" (with aria-modal and aria-labelledby)')
        return None

    # -- 3. options
    def options(self) -> None:
        for eid in self.visible:
            el, node = self.elements[eid], self.node(eid)
            if node is None or not has_options(el):
                continue
            if node.tag == "select":
                have = [_value_of_option(o) for o in node.walk() if o.tag == "option"]
                missing = [o for o in el.options if o not in have]
                if missing:
                    self.add(f"{self.what(el)}: the <select> at line {node.line} has no "
                             f"<option> with value {', '.join(repr(m) for m in missing)}")
                continue
            for option in el.options:
                hits = [d for d in node.walk() if d.get(contract.VALUE_ATTR) == option]
                if not hits:
                    self.add(f"{self.what(el)}: option {option!r} is missing: no "
                             f'[{contract.VALUE_ATTR}="{option}"] inside the container at '
                             f"line {node.line}")
                elif len(hits) > 1:
                    self.add(f"{self.what(el)}: option {option!r} appears {len(hits)} times "
                             f"(lines {_fmt_lines(hits)}); a click on it would be ambiguous")

    # -- 4. forms
    def forms(self) -> None:
        forms: dict[str, list[Node]] = {}
        for node in self.nodes:
            if node.tag == "form":
                forms.setdefault(node.get("id") or "", []).append(node)
        wanted = {contract.form_id(a.id): a for a in self.page.actions}
        for fid, action in wanted.items():
            found = forms.get(fid, [])
            url = self.url(action)
            if not found:
                self.add(f'action {action.id!r} ({action.label!r}) has no <form id="{fid}" '
                         f'method="post" action="{url}">')
                continue
            if len(found) > 1:
                self.add(f'<form id="{fid}"> appears {len(found)} times (lines '
                         f"{_fmt_lines(found)})")
            form = found[0]
            if (form.get("method") or "get").lower() != "post":
                self.add(f'<form id="{fid}"> at line {form.line} has method='
                         f'"{form.get("method") or ""}", expected "post"')
            if form.get("action") != url:
                self.add(f'<form id="{fid}"> at line {form.line} has action='
                         f'"{form.get("action") or ""}", expected "{url}"')
        for fid, nodes in forms.items():
            if fid not in wanted:
                self.add(f"<form{' id=' + repr(fid) if fid else ''}> at line {nodes[0].line} "
                         f"is not the form of any action of page {self.page.id!r}")

    # -- 5. gui steps
    def steps(self) -> None:
        shown = set(self.visible)
        for action in self.page.actions:
            for i, step in enumerate(action.gui):
                el = self.elements.get(step.element)
                if el is None or el.id not in shown:
                    continue
                node = self.node(el.id)
                if node is None:
                    continue
                use = Use(action, i, step)
                problem = self._step_problem(use, el, node)
                if problem:
                    self.add(f"{_step_text(action, i)}: {problem}")

    def _values(self, use: Use) -> list[str]:
        return use.domain() if use.param else [use.step.value or ""]

    def _owner_problem(self, node: Node, fid: str) -> str | None:
        owner = form_owner(node)
        if owner == fid:
            return None
        got = f'its form is "{owner}"' if owner else "it belongs to no form"
        return f'{node.describe()} must belong to form "{fid}" (form="{fid}"), but {got}'

    def _name_problem(self, node: Node, param: str | None) -> str | None:
        if param is None or node.get("name") == param:
            return None
        return (f'{node.describe()} must have name="{param}" (the parameter it fills), '
                f'found name="{node.get("name") or ""}"')

    def _step_problem(self, use: Use, el: Element, node: Node) -> str | None:
        op, fid = use.step.op, contract.form_id(use.action.id)
        if op == "click" and use.step.value is None:
            return self._click_problem(use, el, node, fid) if use.trigger else None
        if op == "click" or (op == "select" and node.tag != "select"):
            return self._choice_problem(use, el, node, fid)
        if op == "select":
            return (self._name_problem(node, use.param) or self._owner_problem(node, fid)
                    or self._submit_attr_problem(use, node, fid))
        if op == "type":
            return self._type_problem(use, el, node, fid)
        if op == "key_press" and use.trigger:
            field_node = node
            if el.kind == "date_picker":  # the container: its text field takes the key
                field_node = next((d for d in node.walk() if is_text_input(d)), node)
            if not is_text_input(field_node):
                return f"the key press needs a text field, found {node.describe()}"
            problem = self._owner_problem(field_node, fid)
            return None if problem is None else f"Enter would not submit the action: {problem}"
        if op == "drag":
            problem = self._name_problem(node, use.param) or self._owner_problem(node, fid)
            problem = problem or self._submit_attr_problem(use, node, fid)
            for attr, want in (("min", el.min), ("max", el.max)):
                if problem is None and want is not None and node.get(attr) != str(want):
                    problem = (f'{node.describe()} must have {attr}="{want}", found '
                               f'{attr}="{node.get(attr) or ""}"')
            return problem
        if op in ("check", "uncheck"):
            if not use.trigger:
                return self._owner_problem(node, fid)
            attr = contract.CHECK_ATTR if op == "check" else contract.UNCHECK_ATTR
            if node.get(attr) != fid:
                return (f'the checkbox {node.describe()} must carry {attr}="{fid}" so that '
                        f'{"checking" if op == "check" else "unchecking"} it submits the '
                        f'action, found {attr}="{node.get(attr) or ""}"')
        return None

    def _submit_attr_problem(self, use: Use, node: Node, fid: str) -> str | None:
        if not use.trigger:
            return None
        got = node.get(contract.SUBMIT_ATTR)
        if got == fid:
            return None
        if node.tag == "select":
            routed = [o for o in node.walk() if o.tag == "option"
                      and o.get("data-ww-form") == fid]
            if routed and got:
                return None
        return (f'{node.describe()} is the trigger and must carry {contract.SUBMIT_ATTR}='
                f'"{fid}", found {contract.SUBMIT_ATTR}="{got or ""}"')

    def _click_problem(self, use: Use, el: Element, node: Node, fid: str) -> str | None:
        sharing = {contract.form_id(u.action.id) for u in self.uses.get(el.id, [])
                   if u.trigger and u.step.op == "click" and u.step.value is None}
        if node.tag == "a":
            if use.action.params:
                return (f"{node.describe()} is a link, but the action has parameters: it "
                        f'needs a submit button of form "{fid}"')
            urls = {self.url(u.action) for u in self.uses.get(el.id, []) if u.trigger}
            if node.get("href") in urls:
                return None
            return (f'the link {node.describe()} goes to "{node.get("href") or ""}", expected '
                    f'"{self.url(use.action)}" (or a submit button of form "{fid}")')
        if not is_submit(node):
            return (f'{node.describe()} must be a submit button of form "{fid}" '
                    f'(<button type="submit" form="{fid}">)')
        owner = form_owner(node)
        if owner == fid or owner in sharing:
            return None
        return self._owner_problem(node, fid)

    def _choice_problem(self, use: Use, el: Element, node: Node, fid: str) -> str | None:
        for value in self._values(use):
            hits = [d for d in node.walk() if d.get(contract.VALUE_ATTR) == value]
            if len(hits) != 1:
                continue  # reported by the option check (or a value outside the options)
            control = hits[0]
            if control.tag == "input" and _type(control) == "radio":
                problem = (self._name_problem(control, use.param)
                           or self._owner_problem(control, fid))
                if problem is None and use.trigger:
                    problem = self._submit_attr_problem(use, control, fid)
            elif use.trigger:
                problem = self._submit_choice_problem(use, control, value, fid)
            else:
                problem = self._held_value_problem(use, node, fid)
            if problem:
                return f"choosing {value!r}: {problem}"
        return None

    def _submit_choice_problem(self, use: Use, control: Node, value: str, fid: str
                               ) -> str | None:
        if control.tag == "a" and not use.action.params:
            href = control.get("href")
            if href == self.url(use.action):
                return None
            return f'the link {control.describe()} goes to "{href or ""}", expected "{self.url(use.action)}"'
        if not is_submit(control):
            return (f'{control.describe()} must be a submit button of form "{fid}"'
                    + (f' with name="{use.param}" value="{value}"' if use.param else ""))
        problem = self._owner_problem(control, fid) or self._name_problem(control, use.param)
        if problem is None and use.param and control.get("value") != value:
            problem = (f'{control.describe()} must submit value="{value}", found '
                       f'value="{control.get("value") or ""}"')
        return problem

    def _held_value_problem(self, use: Use, node: Node, fid: str) -> str | None:
        """A non-trigger choice fills an input (often hidden) of the form."""
        if use.param is None:
            return None
        for d in node.walk():
            if d.tag in ("input", "select") and d.get("name") == use.param and form_owner(d) == fid:
                return None
        return (f'no input with name="{use.param}" of form "{fid}" inside the container at '
                f"line {node.line} holds the chosen value until the form is submitted")

    def _type_problem(self, use: Use, el: Element, node: Node, fid: str) -> str | None:
        field_node = node
        if el.kind == "date_picker":
            fields = [d for d in node.walk() if is_text_input(d)]
            if not fields:
                return f"the date picker at line {node.line} has no text field to type into"
            named = [d for d in fields if use.param is None or d.get("name") == use.param]
            field_node = named[0] if named else fields[0]
        problem = self._name_problem(field_node, use.param) or self._owner_problem(field_node, fid)
        if problem is None:
            return None
        for mirror in self.nodes:  # the field may fill this form through a mirror input
            if (mirror.get("data-ww-mirror") == el.id and form_owner(mirror) == fid
                    and (use.param is None or mirror.get("name") == use.param)):
                return None
        return problem

    # -- 6. CSP and dead controls
    def hygiene(self) -> None:
        get_urls = {self.url(a) for a in self.page.actions if not a.params}
        fids = {contract.form_id(a.id) for a in self.page.actions}
        ids: dict[str, list[Node]] = {}
        for node in self.nodes:
            if node.get("id"):
                ids.setdefault(node.get("id") or "", []).append(node)
            if node.get("style") is not None:
                self.add(f"inline style attribute on {node.describe()} is blocked by the CSP "
                         "(style-src 'self'): move it to the stylesheet")
            if node.tag == "style":
                self.add(f"<style> element at line {node.line} is blocked by the CSP "
                         "(style-src 'self'): use static/theme.css")
            if node.tag == "script" and (node.get("src") is None or node.text.strip()):
                self.add(f"inline <script> at line {node.line} is blocked by the CSP "
                         "(script-src 'self'): use static/site.js")
            for name in node.attrs:
                if name.startswith("on"):
                    self.add(f"inline event handler {name} on {node.describe()} is blocked by "
                             "the CSP: attach listeners in static/site.js")
                if name == contract.BID_ATTR:
                    self.add(f"{name} on {node.describe()} is reserved for the observation "
                             "script; a site must not set it")
            for attr in ("href", "src", "action", "formaction"):
                value = (node.get(attr) or "").strip()
                if value.lower().startswith("javascript:"):
                    self.add(f"{attr}={value!r} on {node.describe()} is blocked by the CSP")
                elif node.tag in ("script", "link", "img", "iframe") and value.startswith(
                        ("http:", "https:", "//")):
                    self.add(f"{node.describe()} loads an external resource {value!r}; a site "
                             "must be self-contained")
            if node.tag == "a" and node.get("href") is not None and node.get("href") not in get_urls:
                self.add(f'link {node.describe()} to "{node.get("href")}" is not an action of '
                         f"page {self.page.id!r} (dead link); links may only point at "
                         f"{contract.ACTION_URL} of an action without parameters")
            if is_submit(node):
                owner = form_owner(node)
                if owner not in fids:
                    where = f'form "{owner}"' if owner else "no form"
                    self.add(f"submit button {node.describe()} submits {where}, which is not an "
                             f"action of page {self.page.id!r} (dead button)")
        fields: dict[tuple[str, str], list[Node]] = {}
        for node in self.nodes:
            kind = _type(node)
            if (node.tag in ("input", "select", "textarea") and node.get("name")
                    and kind not in ("radio", "submit", "image", "button", "reset")
                    and node.get("disabled") is None):
                owner = form_owner(node)
                if owner in fids:
                    fields.setdefault((owner, node.get("name") or ""), []).append(node)
        for (owner, name), nodes in fields.items():
            if len(nodes) > 1:
                self.add(f'form "{owner}" has {len(nodes)} fields named "{name}" (lines '
                         f"{_fmt_lines(nodes)}); the server would get more than one value")
        for dom_id, nodes in ids.items():
            if len(nodes) > 1:
                self.add(f'id="{dom_id}" is used {len(nodes)} times (lines {_fmt_lines(nodes)}); '
                         "ids must be unique (form= and label for= refer to them)")

    def run(self) -> list[str]:
        self.presence()
        self.kinds()
        self.options()
        self.forms()
        self.steps()
        self.hygiene()
        return self.problems


def check_page(html: str, spec: WorldSpec, machine: Machine, state: State, *, base: str = ""
               ) -> list[str]:
    """Problems of ``html`` as the page of ``state``, against the DOM contract.

    Checked: every element visible in ``state`` appears on exactly one node with
    ``data-ww-id`` (and inside its parent), hidden ones are absent, controls are the
    right kind of node, every option is present (``data-ww-value`` or a native
    ``<option>``), every action has its ``<form id="ww-act-…" method="post"
    action=ACTION_URL>``, every GUI step's input has the right ``name`` and ``form``
    (and triggers the right submit hook), and nothing breaks the CSP or links nowhere.
    """
    try:
        spec.page(state.page)
    except KeyError:
        return [f"state is on page {state.page!r}, which the spec does not have"]
    return _Checker(html, spec, machine, state, base).run()


__all__ = ["Node", "check_page", "form_owner", "option_text", "parse_html"]
