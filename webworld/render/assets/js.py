# ruff: noqa: E501  (long lines are CSS / HTML / JS text, kept readable as written)
"""site.js: the small vanilla script every rendered site ships.

It submits action forms when a trigger widget changes (select, radio, slider, checkbox),
opens date-picker calendars and menus, fills hidden inputs for non-trigger choices and
keeps mirrored inputs in sync. No network besides form submission, no eval, no inline
code: it works under ``default-src 'self'``.
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
})();
"""
