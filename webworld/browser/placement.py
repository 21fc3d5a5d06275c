"""Where the pointer acts, shared by the browser tab and the fast environment's capture: the
page function that tells what covers an element's centre, and the message when it is covered.
No browser is needed to import it (the fast environment runs without one)."""

from __future__ import annotations

from typing import Any

from webworld import contract
from webworld.browser.actions import describe
from webworld.browser.observe import clean, quote

# What covers a point, as [role, label] for an error message (the capture uses it too).
COVER_FN = r"""
function coverOf(hit) {
  const CONTAINERS = ["dialog", "alertdialog", "menu", "banner", "navigation",
    "complementary", "contentinfo", "region", "alert"];
  const CONTROLS = ["button", "link", "textbox", "searchbox", "combobox", "checkbox", "radio",
    "slider", "tab", "menuitem"];
  const TAGS = {A: "link", BUTTON: "button", SELECT: "combobox", NAV: "navigation",
    HEADER: "banner", FOOTER: "contentinfo", DIALOG: "dialog", ASIDE: "complementary"};
  const labelOf = (e) => e.getAttribute("aria-label") || (e.getAttribute("aria-labelledby")
    ? e.getAttribute("aria-labelledby").split(/\s+/).map((i) => document.getElementById(i))
        .filter(Boolean).map((x) => x.textContent).join(" ") : "");
  for (let e = hit; e && e !== document.body; e = e.parentElement) {
    if (e.classList.contains(OVERLAY)) {
      const box = e.querySelector('[role="dialog"], [role="alertdialog"]');
      return box ? [box.getAttribute("role"), labelOf(box)] : ["overlay", ""];
    }
    const role = (e.getAttribute("role") || "").split(" ")[0] || TAGS[e.tagName] || "";
    if (CONTAINERS.includes(role)) return [role, labelOf(e)];
    if (CONTROLS.includes(role)) return [role, labelOf(e) || e.textContent];
  }
  return ["element", ""];
}
""".replace("OVERLAY", repr(contract.OVERLAY_CLASS))

# Scroll an element to the centre (unless in place) and test what the pointer would hit
# at its centre. The fast environment's capture runs this same function.
PLACE_FN = COVER_FN + r"""
function placeOf(el, inPlace) {
  if (!inPlace) el.scrollIntoView({block: "center", inline: "center", behavior: "instant"});
  const r = el.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  const out = {x, y, left: r.left, width: r.width};
  if (!hit || !(hit === el || el.contains(hit))) out.covered = coverOf(hit);
  return out;
}
"""


def cover_message(node: dict[str, Any], cover: list[str]) -> str:
    """``element 12 (button 'Pay') is covered by dialog 'Cookies'`` (both environments)."""
    role, label = cover
    if role == "element":
        what = "another element"
    else:
        what = f"{role} {quote(label)}" if clean(label) else role
    return f"element {describe(node)} is covered by {what}"
