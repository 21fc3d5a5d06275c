"""The contract between a rendered site, the server that runs it, and the browser side.

Three parties meet here and nowhere else:

* the **renderer** (``webworld.render``, or an LLM site coder) writes HTML that follows
  the DOM rules below;
* the **server** (``webworld.serve``) answers the URLs below and owns each session's
  FSM state;
* the **browser side** (``webworld.browser``: verifier, observations, RL environment)
  finds elements and reads ground truth through the same names.

URLs are relative to a world's mount prefix ``base`` ("" when one world is served at
the root, "/w/<world_id>" when several are served by one process).

DOM rules
---------
* Every rendered spec element carries ``data-ww-id="<element id>"`` on exactly one node:
  the control itself for link / button / text_input / search_box / select / checkbox /
  slider, the container for radio / tabs / hover_menu / date_picker / modal /
  cookie_banner / permission_prompt and for option lists (a ``link`` with options).
  Elements whose ``visible_when`` does not hold are not rendered.
* Inside a container, each choice carries ``data-ww-value="<option text>"`` (radio
  inputs, tabs, menu items, result links, date-picker days). A native ``<select>``
  uses the option text as each ``<option>``'s value.
* A date picker's toggle button (which opens its calendar) carries ``data-ww-part="toggle"``.
* Every action of the page has a ``<form id="ww-act-<action id>" method="post"
  action="<ACTION_URL>">``. Its inputs may live anywhere in the page and point at it with
  ``form="ww-act-<action id>"``; an input's ``name`` is the action parameter it fills.
  The trigger is a submit control of that form. Widgets whose change is the trigger
  carry ``data-ww-submit="<form id>"`` (select, radio, slider) or
  ``data-ww-check`` / ``data-ww-uncheck`` (checkbox) and the site's JS submits the form.
* A refused action re-renders the page with its message in an element with
  ``role="alert"``; the state never appears in the DOM.
* A hover menu is an element with class ``menu`` (:data:`HOVER_MENU_CLASS`): its list
  shows while the pointer is over it or while it is open (class ``is-open``). An overlay
  (modal, cookie banner, permission prompt) sits in an element with class
  ``overlay-root`` (:data:`OVERLAY_CLASS`). The browser side uses both to decide when an
  action happens in place and to name what covers an element.
"""

from __future__ import annotations

# --- URLs (format with base=..., and page= / action= / path=) ----------------------------
WORLD_PREFIX = "/w/{world}"  # the base of a world when one process serves several
PAGE_URL = "{base}/page/{page}"
ACTION_URL = "{base}/act/{action}"
STATIC_URL = "{base}/static/{path}"
RESET_URL = "{base}/reset"
TRUTH_STATE_URL = "{base}/__truth/state"  # GET  ?session=<sid>, Authorization: Bearer <token>
TRUTH_RESET_URL = "{base}/__truth/reset"  # POST ?session=<sid>, Authorization: Bearer <token>
TRUTH_SESSION_URL = "{base}/__truth/session"  # POST ?page=<page>: a new session there (token)
HEALTH_URL = "{base}/__health"
SESSION_COOKIE = "ww_session"
TOKEN_HEADER = "Authorization"
# site.js's swap: an action sent with SWAP_HEADER is answered with the next page itself
# (its URL in SWAP_URL_HEADER) instead of a redirect to it: one request, not two
SWAP_HEADER = "X-WW-Swap"
SWAP_URL_HEADER = "X-WW-URL"

# --- DOM -------------------------------------------------------------------------------------
ELEMENT_ATTR = "data-ww-id"
VALUE_ATTR = "data-ww-value"
PART_ATTR = "data-ww-part"
SUBMIT_ATTR = "data-ww-submit"
CHECK_ATTR = "data-ww-check"
UNCHECK_ATTR = "data-ww-uncheck"
BID_ATTR = "data-ww-bid"  # set by the observation script, never by a site
HOVER_MENU_CLASS = "menu"
OVERLAY_CLASS = "overlay-root"


def form_id(action_id: str) -> str:
    return f"ww-act-{action_id}"


def element_selector(element_id: str) -> str:
    return f'[{ELEMENT_ATTR}="{element_id}"]'


def value_selector(element_id: str, value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{element_selector(element_id)} [{VALUE_ATTR}="{escaped}"]'

# Range inputs have a fixed thumb so a drag to a value lands exactly (renderer CSS).
SLIDER_THUMB_PX = 18
