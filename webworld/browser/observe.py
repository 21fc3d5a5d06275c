"""What an agent sees: accessibility text with element ids, plus a screenshot.

One script walks the visible DOM in document order and writes one line per meaningful
node, BrowserGym style::

    RootWebArea 'Harbor View Hotel'
      banner
        [1] searchbox 'Search hotels', value=''
      main
        heading 'Featured hotels'
        [4] link 'Riverside Lodge'

Interactive nodes get a numeric id (``bid``) stored in ``data-ww-bid``; ids follow
document order, so the same page in the same state always gets the same ids. The
dataset and the RL environment both use exactly this text and these ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from playwright.async_api import Page

OBSERVE_JS = r"""
() => {
  const INTERACTIVE_ROLES = new Set(["button", "link", "textbox", "searchbox", "combobox",
    "checkbox", "radio", "slider", "tab", "menuitem", "option", "switch", "spinbutton"]);
  const GROUP_ROLES = new Set(["banner", "navigation", "main", "contentinfo", "dialog",
    "alertdialog", "form", "region", "tablist", "menu", "list", "table", "complementary",
    "search", "radiogroup", "row"]);
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
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 160);
  const quote = (s) => "'" + clean(s).replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'";
  const pad = (d) => "  ".repeat(d);

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
  function states(el, role) {
    const out = [];
    if (el.disabled) out.push("disabled");
    if (role === "checkbox" || role === "radio" || role === "switch")
      out.push(el.checked || el.getAttribute("aria-checked") === "true" ? "checked" : "unchecked");
    if (role === "textbox" || role === "searchbox" || role === "spinbutton")
      out.push("value=" + quote(el.value || ""));
    if (role === "slider") out.push("value=" + quote(el.value ?? el.getAttribute("aria-valuenow")));
    if (role === "combobox" && el.tagName === "SELECT")
      out.push("value=" + quote(el.selectedIndex >= 0 ? el.options[el.selectedIndex].text : ""));
    if (el.getAttribute("aria-selected") === "true") out.push("selected");
    if (el.getAttribute("aria-expanded")) out.push("expanded=" + el.getAttribute("aria-expanded"));
    return out.length ? ", " + out.join(", ") : "";
  }
  function ownText(el) {
    let s = "";
    for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) s += n.textContent + " ";
    return clean(s);
  }

  document.querySelectorAll("[data-ww-bid]").forEach((e) => e.removeAttribute("data-ww-bid"));
  let next = 1;
  const lines = ["RootWebArea " + quote(document.title)];
  const nodes = [];
  function walk(parent, depth) {
    for (const el of parent.children) {
      if (SKIP.has(el.tagName) || el.getAttribute("aria-hidden") === "true" || !visible(el)) continue;
      const role = roleOf(el);
      if (isInteractive(el, role)) {
        const bid = String(next++);
        el.setAttribute("data-ww-bid", bid);
        const r = el.getBoundingClientRect();
        const name = clean(nameOf(el));
        lines.push(pad(depth) + "[" + bid + "] " + role + " " + quote(name) + states(el, role));
        if (el.tagName === "SELECT")
          for (const o of el.options) lines.push(pad(depth + 1) + "option " + quote(o.text));
        const owner = el.closest("[data-ww-id]");
        nodes.push({bid, role, name, ww_id: owner ? owner.getAttribute("data-ww-id") : null,
                    ww_value: el.getAttribute("data-ww-value"),
                    bbox: [r.x, r.y, r.width, r.height].map((v) => Math.round(v * 10) / 10)});
        continue;
      }
      let d = depth;
      if (GROUP_ROLES.has(role)) {
        const label = el.getAttribute("aria-label") || (el.getAttribute("aria-labelledby")
          ? textOf(el.getAttribute("aria-labelledby")) : "");
        lines.push(pad(depth) + role + (label ? " " + quote(label) : ""));
        d = depth + 1;
      } else if (role === "heading") {
        if (!el.querySelector(CONTROLS)) {
          lines.push(pad(depth) + "heading " + quote(el.textContent));
          continue;
        }
        lines.push(pad(depth) + "heading");  // a heading that holds a link: list the link
        d = depth + 1;
      } else if (role === "img") {
        if (el.alt) lines.push(pad(depth) + "img " + quote(el.alt));
        continue;
      }
      const text = el.tagName === "LABEL" ? "" : ownText(el);
      if (text) lines.push(pad(d) + (role === "alert" || role === "status" ? role : "StaticText")
                           + " " + quote(text));
      walk(el, d);
    }
  }
  walk(document.body, 1);
  return {text: lines.join("\n"), nodes};
}
"""


@dataclass
class Node:
    bid: str
    role: str
    name: str
    ww_id: str | None
    ww_value: str | None
    bbox: list[float]


@dataclass
class Observation:
    url: str
    text: str
    nodes: list[Node] = field(default_factory=list)
    screenshot: bytes | None = None

    def node(self, bid: str) -> Node | None:
        return next((n for n in self.nodes if n.bid == bid), None)


async def observe(page: Page, *, screenshot: bool = True) -> Observation:
    """Assign element ids and read the page the way a policy will see it."""
    raw = await page.evaluate(OBSERVE_JS)
    nodes = [Node(**n) for n in raw["nodes"]]
    image = await page.screenshot(type="png") if screenshot else None
    return Observation(page.url, raw["text"], nodes, image)
