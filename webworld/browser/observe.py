"""What an agent sees: accessibility text with element ids, plus a screenshot.

One script walks the visible DOM in document order and returns one row per meaningful
node; :func:`format_rows` writes them as text, BrowserGym style::

    RootWebArea 'Harbor View Hotel'
      banner
        [1] searchbox 'Search hotels', value=''
      main
        heading 'Featured hotels'
        [4] link 'Riverside Lodge'

Interactive nodes get a numeric id (``bid``) stored in ``data-ww-bid``; ids follow
document order, so the same page in the same state always gets the same ids. The
dataset, the live environment and the fast environment (which replays captured rows,
see :mod:`webworld.rl.fast`) all write text through :func:`format_rows`, so they agree
byte for byte. :func:`compact_text` derives the compact observation mode from the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# The walk of the body, leaving out what matches ``skip`` (a CSS selector). ``capture``
# (the fast environment's capture) adds each element's document index as ``key``.
WALK_JS = r"""
(opts) => {
  const capture = !!(opts && opts.capture);
  const skip = (opts && opts.skip) || null;
  const INTERACTIVE_ROLES = new Set(["button", "link", "textbox", "searchbox", "combobox",
    "checkbox", "radio", "slider", "tab", "menuitem", "option", "switch", "spinbutton"]);
  const GROUP_ROLES = new Set(["banner", "navigation", "main", "contentinfo", "dialog",
    "alertdialog", "form", "region", "tablist", "menu", "list", "table", "complementary",
    "search", "radiogroup", "row", "alert", "status"]);
  const INPUT_ROLES = {text: "textbox", email: "textbox", tel: "textbox", password: "textbox",
    url: "textbox", number: "spinbutton", search: "searchbox", checkbox: "checkbox",
    radio: "radio", range: "slider", submit: "button", button: "button", reset: "button",
    date: "textbox"};
  const TAG_ROLES = {A: "link", BUTTON: "button", SELECT: "combobox", TEXTAREA: "textbox",
    NAV: "navigation", MAIN: "main", HEADER: "banner", FOOTER: "contentinfo", DIALOG: "dialog",
    FORM: "form", UL: "list", OL: "list", TABLE: "table", TR: "row", ASIDE: "complementary",
    H1: "heading", H2: "heading", H3: "heading", H4: "heading", H5: "heading", H6: "heading",
    IMG: "img", LI: "listitem", TD: "cell", TH: "columnheader"};
  const CONTROLS = "a[href], button, input, select, textarea, [role=button], [role=link]";
  const SKIP = new Set(["SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "HEAD", "META", "LINK"]);
  const keys = capture ? new Map(Array.from(document.querySelectorAll("*"), (e, i) => [e, i])) : null;

  function roleOf(el) {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.split(" ")[0];
    if (el.tagName === "INPUT") return INPUT_ROLES[(el.type || "text").toLowerCase()] || "textbox";
    if (el.tagName === "A" && !el.hasAttribute("href")) return "generic";
    if ((el.tagName === "HEADER" || el.tagName === "FOOTER") && el.closest("main, article, section"))
      return "generic";
    return TAG_ROLES[el.tagName] || "generic";
  }
  function isInteractive(el, role) {
    if (el.tagName === "INPUT") return el.type !== "hidden";
    return INTERACTIVE_ROLES.has(role) || el.tagName === "SELECT" || el.tagName === "TEXTAREA";
  }
  function visible(el) {
    if (!el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }
  function textOf(ids) {
    return ids.split(/\s+/).map((id) => document.getElementById(id))
      .filter(Boolean).map((e) => e.textContent).join(" ");
  }
  function nameOf(el) {
    if (el.getAttribute("aria-label")) return el.getAttribute("aria-label");
    if (el.getAttribute("aria-labelledby")) return textOf(el.getAttribute("aria-labelledby"));
    if (el.labels && el.labels.length) return Array.from(el.labels).map((l) => l.textContent).join(" ");
    if (el.tagName === "INPUT" && ["submit", "button"].includes(el.type)) return el.value;
    if (el.tagName === "IMG") return el.alt;
    return el.getAttribute("placeholder") || el.getAttribute("title") || el.textContent;
  }
  function facts(el, role, bid) {
    const r = el.getBoundingClientRect();
    const f = {bid, role, name: nameOf(el) || "", tag: el.tagName, type: (el.type || "").toLowerCase(),
      disabled: !!el.disabled, readonly: !!el.readOnly,
      checked: !!(el.checked || el.getAttribute("aria-checked") === "true"),
      value: null, selected: el.getAttribute("aria-selected") === "true",
      expanded: el.getAttribute("aria-expanded") || null,
      bbox: [r.x, r.y, r.width, r.height].map((v) => Math.round(v * 10) / 10)};
    const owner = el.closest("[data-ww-id]");
    f.ww_id = owner ? owner.getAttribute("data-ww-id") : null;
    f.ww_value = el.getAttribute("data-ww-value");
    if (role === "textbox" || role === "searchbox" || role === "spinbutton") f.value = el.value || "";
    if (role === "slider") {
      f.value = String(el.value ?? el.getAttribute("aria-valuenow"));
      f.min = el.min; f.max = el.max; f.step = el.step;
    }
    if (el.tagName === "SELECT") {
      f.value = el.selectedIndex >= 0 ? el.options[el.selectedIndex].text : "";
      f.options = Array.from(el.options, (o) => capture
        ? {text: o.text, disabled: o.disabled, value: o.value, form: o.getAttribute("data-ww-form")}
        : {text: o.text, disabled: o.disabled});
    }
    if (capture) f.key = keys.get(el);
    return f;
  }
  function ownText(el) {
    let s = "";
    for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) s += n.textContent + " ";
    return s;
  }

  document.querySelectorAll("[data-ww-bid]").forEach((e) => e.removeAttribute("data-ww-bid"));
  let next = 1;
  const rows = [[0, "root", "", document.title, null]];
  function walk(parent, depth) {
    for (const el of parent.children) {
      if (SKIP.has(el.tagName) || el.getAttribute("aria-hidden") === "true" || !visible(el) ||
          el.hasAttribute("data-ww-announce")) continue;  // a swap's announcement: for screen readers
      if (skip && el.matches(skip)) continue;
      const role = roleOf(el);
      if (isInteractive(el, role)) {
        const bid = String(next++);
        el.setAttribute("data-ww-bid", bid);
        rows.push([depth, "node", role, "", facts(el, role, bid)]);
        continue;
      }
      let d = depth;
      if (GROUP_ROLES.has(role)) {
        const label = el.getAttribute("aria-label") || (el.getAttribute("aria-labelledby")
          ? textOf(el.getAttribute("aria-labelledby")) : "");
        rows.push([depth, "group", role, label, null]);
        d = depth + 1;
      } else if (role === "heading") {
        if (!el.querySelector(CONTROLS)) {
          rows.push([depth, "heading", role, el.textContent, null]);
          continue;
        }
        rows.push([depth, "group", "heading", "", null]);  // a heading that holds a link: list the link
        d = depth + 1;
      } else if (role === "img") {
        if (el.alt) rows.push([depth, "img", role, el.alt, null]);
        continue;
      }
      const text = el.tagName === "LABEL" ? "" : ownText(el);
      if (text.trim()) rows.push([d, "text", "StaticText", text, capture ? {key: keys.get(el)} : null]);
      walk(el, d);
    }
  }
  walk(document.body, 1);
  return rows;
}
"""

MAX_TEXT = 160
CHECKABLE_ROLES = frozenset({"checkbox", "radio", "switch"})
TEXT_ROLES = frozenset({"textbox", "searchbox", "spinbutton"})

Row = list[Any]
"""``[depth, kind, role, text, facts]``; kind is root / group / heading / img / text / node."""


def clean(text: str | None) -> str:
    """One line, whitespace collapsed, at most :data:`MAX_TEXT` characters."""
    return re.sub(r"\s+", " ", text or "").strip()[:MAX_TEXT]


def quote(text: str | None) -> str:
    return "'" + clean(text).replace("\\", "\\\\").replace("'", "\\'") + "'"


def node_states(node: dict[str, Any]) -> str:
    """``, checked, value='tea'``: the state part of an interactive node's line."""
    role, out = node["role"], []
    if node.get("disabled"):
        out.append("disabled")
    if role in CHECKABLE_ROLES:
        out.append("checked" if node.get("checked") else "unchecked")
    if role in TEXT_ROLES or role == "slider" or (role == "combobox" and node.get("tag") == "SELECT"):
        out.append("value=" + quote(node.get("value") or ""))
    if node.get("selected"):
        out.append("selected")
    if node.get("expanded"):
        out.append("expanded=" + node["expanded"])
    return ", " + ", ".join(out) if out else ""


def format_rows(rows: list[Row]) -> str:
    """The observation text of a page's rows (the one formatter of webworld)."""
    lines = []
    for depth, kind, role, text, node in rows:
        pad = "  " * depth
        if kind == "root":
            lines.append("RootWebArea " + quote(text))
        elif kind == "node":
            lines.append(f"{pad}[{node['bid']}] {role} {quote(node['name'])}{node_states(node)}")
            for option in node.get("options") or ():
                lines.append(f"{pad}  option {quote(option['text'])}")
        elif kind == "group":
            lines.append(pad + role + (" " + quote(text) if clean(text) else ""))
        elif kind == "text":
            lines.append(f"{pad}{role} {quote(text)}")
        else:  # heading, img
            lines.append(f"{pad}{kind} {quote(text)}")
    return "\n".join(lines)


# --- the compact mode -------------------------------------------------------------------------

_LINE = re.compile(r"^( *)(?:\[(\d+)\] )?(\S+)(?: '((?:[^'\\]|\\.)*)')?(.*)$")
KEEP_TREES = frozenset({"dialog", "alertdialog", "alert", "status"})
"""Containers kept whole in the compact mode: dialogs and messages are what a page says."""
CHROME = frozenset({"list", "banner", "contentinfo", "complementary"})
"""Groups whose headings the compact mode leaves out (promotional lists, header, footer)."""
GROUPS = frozenset({"banner", "navigation", "main", "contentinfo", "form", "region", "tablist",
                    "menu", "list", "table", "complementary", "search", "radiogroup", "row"})
LABELLED = frozenset({"textbox", "searchbox", "spinbutton", "combobox", "radio", "checkbox",
                      "slider", "switch"})
"""Controls whose label text (just before them) the compact mode keeps."""
MAX_LABEL = 60  # longer text before a control is a paragraph, not its label


def compact_text(text: str) -> str:
    """The compact observation: interactive elements (same ids) and their list options,
    the page's headings, the label just before a form control, and dialogs and messages
    whole; page chrome (banners, footers, breadcrumbs, listing facts, the headings of
    promotional lists) is left out. A pure function of the full text, so the export, the
    dataset and both environments agree."""
    parsed = [parse_line(line) for line in text.splitlines()]
    out: list[str] = []
    kept_trees: list[int] = []  # depths of the open KEEP_TREES containers
    groups: list[tuple[int, str]] = []  # (depth, role) of the open group lines
    for i, (depth, bid, role, name, rest) in enumerate(parsed):
        while kept_trees and depth <= kept_trees[-1]:
            kept_trees.pop()
        while groups and depth <= groups[-1][0]:
            groups.pop()
        pad = "  " * len(kept_trees)
        if role == "RootWebArea":
            out.append(f"RootWebArea {_requote(name)}")
        elif role in KEEP_TREES:
            out.append(pad + role + (f" {_requote(name)}" if name is not None else ""))
            kept_trees.append(depth)
        elif bid is not None:
            out.append(f"{pad}[{bid}] {role} {_requote(name)}{rest}")
        elif role == "option" and i and _under_list(parsed, i):
            out.append(f"{pad}  option {_requote(name)}")
        elif role == "heading" and name is not None and (
                kept_trees or not any(r in CHROME for _, r in groups)):
            out.append(f"{pad}heading {_requote(name)}")
        elif role == "StaticText" and (kept_trees or _labels_next(parsed, i)):
            out.append(f"{pad}StaticText {_requote(name)}")
        elif role in GROUPS:
            groups.append((depth, role))
    return "\n".join(out)


def _requote(name: str | None) -> str:
    return "'" + (name or "").replace("\\", "\\\\").replace("'", "\\'") + "'"


def interactive_elements(text: str) -> int:
    """How many elements of a page an agent can act on: the lines with an element id."""
    return sum(1 for line in text.splitlines() if parse_line(line)[1] is not None)


def parse_line(line: str) -> tuple[int, str | None, str, str | None, str]:
    """``(depth, bid, role, name, states)`` of one line of observation text."""
    match = _LINE.match(line)
    if match is None:  # not a line of ours: keep it as text
        return 0, None, "StaticText", line.strip(), ""
    spaces, bid, role, name, rest = match.groups()
    if name is not None:
        name = re.sub(r"\\(.)", r"\1", name)
    return len(spaces) // 2, bid, role, name, rest


def named_form(action: str, page_text: str) -> str:
    """``action`` with its element named by role and accessible name
    (``click(button "Pay")``) where exactly one element of ``page_text`` has them; as it is
    otherwise (an id is then needed). The match is :func:`resolve_target`'s own."""
    from webworld.browser.actions import ActionRefused, format_named, parse_call, resolve_target

    call = parse_call(action)
    lines = [parse_line(line) for line in page_text.splitlines()]
    mine = next((ln for ln in lines if call is not None and call.bid and ln[1] == call.bid), None)
    if call is None or mine is None or not (mine[3] or "").strip():
        return action
    named = format_named(call.name, mine[2], mine[3], call.arg)
    nodes = [{"bid": ln[1], "role": ln[2], "name": ln[3]} for ln in lines if ln[1] is not None]
    parsed = parse_call(named)
    if parsed is None:  # a role the grammar has no word for
        return action
    try:
        resolve_target(parsed, nodes)
    except ActionRefused:
        return action
    return named


def _under_list(parsed: list, i: int) -> bool:
    """An ``option`` line that belongs to the list (combobox) just above it."""
    depth = parsed[i][0]
    for j in range(i - 1, -1, -1):
        d, bid, role, _, _ = parsed[j]
        if role != "option":
            return bid is not None and role == "combobox" and d == depth - 1
    return False


def _labels_next(parsed: list, i: int) -> bool:
    """Static text that labels the form control right after it (a radio group's
    question, a field's legend), and is not that control's name repeated (a radio's label
    text follows its ``[n] radio 'Yes'`` line)."""
    name = parsed[i][3]
    nxt = parsed[i + 1] if i + 1 < len(parsed) else None
    prev = parsed[i - 1] if i else None
    if len(name or "") > MAX_LABEL or nxt is None or nxt[1] is None or nxt[2] not in LABELLED \
            or nxt[3] == name:
        return False
    return not (prev is not None and prev[1] is not None and prev[3] == name)


OBSERVATION_MODES: tuple[str, ...] = ("full", "compact")


def observation_text(full_text: str, mode: str) -> str:
    """The text of an observation in ``mode`` (full or compact)."""
    if mode == "full":
        return full_text
    if mode == "compact":
        return compact_text(full_text)
    raise ValueError(f"unknown observation mode {mode!r}; choose from {', '.join(OBSERVATION_MODES)}")


# --- URLs as a policy sees them -----------------------------------------------------------------

_LOOPBACK = re.compile(r"^https?://(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?(?:/w/([a-z][a-z0-9_]*))?")


def public_url(url: str) -> str:
    """A served world's URL without the loopback port, which changes every run:
    ``http://127.0.0.1:41234/w/online_bank_easy_s0/page/home`` is shown as
    ``https://online-bank-easy-s0.webworld.test/page/home``."""
    match = _LOOPBACK.match(url)
    if match is None:
        return url
    world = match.group(1)
    host = f"{world.replace('_', '-')}.webworld.test" if world else "localhost"
    return ("https://" if world else "http://") + host + url[match.end():]


# --- reading a page ---------------------------------------------------------------------------------


@dataclass
class Observation:
    url: str                 # public form (:func:`public_url`)
    text: str                # full accessibility text
    nodes: list[dict[str, Any]] = field(default_factory=list)  # interactive nodes, by bid order
    screenshot: bytes | None = None

    def node(self, bid: str) -> dict[str, Any] | None:
        return next((n for n in self.nodes if n["bid"] == bid), None)


def observation_of(url: str, rows: list[Row], screenshot: bytes | None = None) -> Observation:
    nodes = [r[4] for r in rows if r[1] == "node"]
    for node in nodes:
        node["name"] = clean(node["name"])
    return Observation(public_url(url), format_rows(rows), nodes, screenshot)

