# ruff: noqa: E501  (long lines are CSS / HTML / JS text, kept readable as written)
"""site.js: the small vanilla script every rendered site ships.

It submits action forms when a trigger widget changes (select, radio, slider, checkbox),
opens date-picker calendars and menus, fills hidden inputs for non-trigger choices and
keeps mirrored inputs in sync. No eval, no inline code: it works under ``default-src 'self'``.

On a site whose body says ``data-ww-transition="swap"`` it also moves between pages without a
page load: an action's form (or a link to an action) is sent with ``fetch`` to the very URL a
submit would use, marked with the ``X-WW-Swap`` header: the server answers with the next page
itself and its URL in ``X-WW-URL`` (a plain submit gets a redirect to that URL: one request
instead of two). The script puts that page's body and title in place, records its URL with
``history`` (back and reload work: they ask the server again), moves the focus to the page's
heading and announces the page in a live region. While a swap is under way ``<html>`` carries
``data-ww-busy``; when it ends the script sets ``window.__wwSwap`` (the status, or the error
when the server could not be reached) and fires ``ww:settled`` on the document: the one signal
a driver waits on. A failed request leaves the page as it was with an alert saying so. With
the script blocked, forms and links work as plain HTML (navigate).
"""

from __future__ import annotations

SITE_JS = r"""/* webworld site script: trigger widgets submit their action's form. */
(function () {
  "use strict";

  function byId(id) { return id ? document.getElementById(id) : null; }

  function submitForm(id) {
    var form = byId(id);
    if (!form || form.tagName !== "FORM") { return; }
    if (typeof form.requestSubmit === "function") { form.requestSubmit(); } else { form.submit(); }
  }

  function syncMirrors(form) {
    var mirrors = document.querySelectorAll("input[data-ww-mirror]");
    for (var i = 0; i < mirrors.length; i++) {
      var m = mirrors[i];
      if (form && m.getAttribute("form") !== form.id) { continue; }
      var src = document.querySelector('[data-ww-id="' + m.getAttribute("data-ww-mirror") + '"]');
      if (src && "value" in src) { m.value = src.value; }
    }
  }

  function closePopups(except) {
    var open = document.querySelectorAll("[data-ww-part='toggle'][aria-expanded='true']");
    for (var i = 0; i < open.length; i++) {
      if (open[i] === except) { continue; }
      open[i].setAttribute("aria-expanded", "false");
      var popup = byId(open[i].getAttribute("aria-controls"));
      if (popup) { popup.hidden = true; }
    }
    var menus = document.querySelectorAll(".menu.is-open");
    for (var j = 0; j < menus.length; j++) {
      if (except && menus[j].contains(except)) { continue; }
      menus[j].classList.remove("is-open");
      var b = menus[j].querySelector(".menu-button");
      if (b) { b.setAttribute("aria-expanded", "false"); }
    }
  }

  function togglePopup(toggle) {
    var popup = byId(toggle.getAttribute("aria-controls"));
    if (!popup) { return; }
    var opening = popup.hidden;
    closePopups(toggle);
    popup.hidden = !opening;
    toggle.setAttribute("aria-expanded", opening ? "true" : "false");
  }

  function pick(button) {
    var input = byId(button.getAttribute("data-ww-pick"));
    var value = button.getAttribute("data-ww-value");
    if (input) { input.value = value; }
    var container = button.closest("[data-ww-id]");
    if (!container) { return; }
    var all = container.querySelectorAll("[data-ww-pick]");
    for (var i = 0; i < all.length; i++) {
      var on = all[i] === button;
      all[i].classList.toggle("is-selected", on);
      all[i].classList.toggle("is-active", on);
      if (all[i].getAttribute("role") === "tab") { all[i].setAttribute("aria-selected", on ? "true" : "false"); }
    }
    var display = container.querySelector(".date-input");
    if (display) { display.value = value; }
    closePopups(null);
  }

  document.addEventListener("change", function (ev) {
    var t = ev.target;
    if (!t || !t.getAttribute) { return; }
    if (t.type === "checkbox" && (t.hasAttribute("data-ww-check") || t.hasAttribute("data-ww-uncheck"))) {
      var id = t.checked ? t.getAttribute("data-ww-check") : t.getAttribute("data-ww-uncheck");
      if (id) { submitForm(id); } else { t.checked = !t.checked; }
      return;
    }
    if (t.hasAttribute("data-ww-submit")) {
      var target = t.getAttribute("data-ww-submit");
      if (t.tagName === "SELECT") {
        var opt = t.options[t.selectedIndex];
        if (opt && opt.getAttribute("data-ww-form")) { target = opt.getAttribute("data-ww-form"); }
      }
      t.removeAttribute("data-ww-unset");
      submitForm(target);
    }
  });

  /* A slider that shows no value yet submits even when released where it started (the
     timer runs after the release's change event, which submits when the value moved). */
  var pressedRange = null;
  document.addEventListener("pointerdown", function (ev) {
    var t = ev.target;
    pressedRange = t && t.matches && t.matches("input[type=range][data-ww-submit]") ? t : null;
  }, true);
  document.addEventListener("pointerup", function () {
    var range = pressedRange;
    pressedRange = null;
    if (!range) { return; }
    window.setTimeout(function () {
      if (range.hasAttribute("data-ww-unset")) {
        range.removeAttribute("data-ww-unset");
        submitForm(range.getAttribute("data-ww-submit"));
      }
    }, 0);
  }, true);

  document.addEventListener("input", function (ev) {
    var t = ev.target;
    if (t && t.type === "range") {
      var out = document.querySelector('output[for="' + t.id + '"]');
      if (out) { out.textContent = t.value; }
    }
    if (t && t.hasAttribute && t.hasAttribute("data-ww-id")) { syncMirrors(null); }
  });

  document.addEventListener("submit", function (ev) { syncMirrors(ev.target); }, true);

  document.addEventListener("click", function (ev) {
    var t = ev.target && ev.target.closest ? ev.target : null;
    if (!t) { return; }
    var toggle = t.closest("[data-ww-part='toggle']");
    if (toggle) { togglePopup(toggle); return; }
    var picker = t.closest("[data-ww-pick]");
    if (picker) { pick(picker); return; }
    var typedBox = t.closest(".datepicker[tabindex]");
    if (typedBox && !t.closest("button, input, .date-popup")) {
      var field = typedBox.querySelector(".date-input");
      if (field) { field.focus(); }
      return;
    }
    var display = t.closest(".date-input[readonly]");
    if (display) {
      var box = display.closest(".datepicker");
      var tg = box && box.querySelector("[data-ww-part='toggle']");
      if (tg) { togglePopup(tg); }
      return;
    }
    var menuButton = t.closest(".menu-button");
    if (menuButton) {
      var menu = menuButton.closest(".menu");
      var open = !menu.classList.contains("is-open");
      closePopups(null);
      menu.classList.toggle("is-open", open);
      menuButton.setAttribute("aria-expanded", open ? "true" : "false");
      return;
    }
    if (!t.closest(".date-popup") && !t.closest(".menu")) { closePopups(null); }
  });

  document.addEventListener("mouseover", function (ev) {
    var menu = ev.target && ev.target.closest ? ev.target.closest(".menu") : null;
    var buttons = document.querySelectorAll(".menu-button");
    for (var i = 0; i < buttons.length; i++) {
      var mine = menu && menu.contains(buttons[i]);
      if (!buttons[i].closest(".menu.is-open")) {
        buttons[i].setAttribute("aria-expanded", mine ? "true" : "false");
      }
    }
  });

  /* A typed date picker's container passes focus on to its text field. */
  document.addEventListener("focusin", function (ev) {
    var t = ev.target;
    if (t && t.matches && t.matches(".datepicker[tabindex]")) {
      var field = t.querySelector(".date-input");
      if (field) { field.focus(); }
    }
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") { closePopups(null); }
  });

  /* ---- swap: pages in place ---------------------------------------------------------- */

  function swapMode() {
    return !!document.body && document.body.getAttribute("data-ww-transition") === "swap" &&
      typeof window.fetch === "function" && typeof window.DOMParser === "function";
  }

  function busy() { return document.documentElement.hasAttribute("data-ww-busy"); }

  function settle(info) {
    window.__wwSwap = info;
    document.documentElement.removeAttribute("data-ww-busy");
    document.dispatchEvent(new CustomEvent("ww:settled", {detail: info}));
  }

  function announce(text) {
    var region = document.querySelector("[data-ww-announce]");
    if (region) { region.textContent = text; }
  }

  function showPage(html, url, push) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    if (!doc.body) { throw new Error("the server sent no page"); }
    document.title = doc.title;
    document.body.replaceWith(document.adoptNode(doc.body));
    if (push && url !== location.href) { history.pushState({ww: 1}, "", url); }
    else { history.replaceState({ww: 1}, "", url); }
    window.scrollTo(0, 0);
    var heading = document.querySelector("main h1") || document.querySelector("h1");
    if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus({preventScroll: true}); }
    announce(doc.title);
  }

  function showFailure(message) {
    var main = document.querySelector("main") || document.body;
    var old = document.querySelector("[data-ww-swap-error]");
    if (old) { old.remove(); }
    var box = document.createElement("div");
    box.className = "alert";
    box.setAttribute("role", "alert");
    box.setAttribute("data-ww-swap-error", "");
    box.textContent = message;
    main.insertBefore(box, main.firstChild);
    announce(message);
  }

  function swap(url, init, push) {
    document.documentElement.setAttribute("data-ww-busy", "");
    init.credentials = "same-origin";
    init.headers = {"X-WW-Swap": "1"};  /* an action answers with its next page, no redirect */
    window.fetch(url, init).then(function (response) {
      return response.text().then(function (html) {
        var moved = response.headers.get("X-WW-URL");
        showPage(html, moved ? new URL(moved, location.href).href : (response.url || url), push);
        settle({status: response.status, url: location.href});
      });
    }).catch(function (err) {
      var why = String((err && err.message) || err);
      showFailure("The page could not be loaded (" + why + "). Please try again.");
      settle({status: 0, error: why});
    });
  }

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (ev.defaultPrevented || !swapMode() || !form || form.method.toLowerCase() !== "post") {
      return;
    }
    ev.preventDefault();
    if (busy()) { return; }  /* a second submit while the first is on its way */
    var data = new URLSearchParams(new FormData(form, ev.submitter || null));
    swap(form.action, {method: "POST", body: data}, true);
  });

  document.addEventListener("click", function (ev) {
    if (ev.defaultPrevented || !swapMode() || ev.button !== 0 || ev.metaKey || ev.ctrlKey ||
        ev.shiftKey || ev.altKey) { return; }
    var link = ev.target && ev.target.closest ? ev.target.closest("a[href]") : null;
    if (!link || link.target || link.origin !== location.origin) { return; }
    ev.preventDefault();
    if (!busy()) { swap(link.href, {method: "GET"}, true); }
  });

  window.addEventListener("popstate", function () {
    if (swapMode()) { swap(location.href, {method: "GET"}, false); }
  });
})();
"""
