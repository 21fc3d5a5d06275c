# ruff: noqa: E501  (long lines are CSS / HTML / JS text, kept readable as written)
"""The shared Jinja2 templates of a rendered site (copied into every site directory).

Kept as Python strings so a plain ``pip install`` ships them without package-data setup.
"""

from __future__ import annotations

LAYOUT_HTML = r"""<!DOCTYPE html>
{% import "widgets.html" as w %}
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ page.doc_title }}</title>
<link rel="icon" href="{{ urls.icon }}" type="image/svg+xml">
<link rel="stylesheet" href="{{ urls.css }}">
<script src="{{ urls.js }}" defer></script>
</head>
<body class="{{ body_class }}" data-ww-transition="{{ transition }}">
<div class="shell">
<header class="site-header">
  <div class="header-inner">
    {{ w.brand(site) }}
    {% if regions.nav %}
    <nav class="site-nav" aria-label="Main">
      {{ w.region_nav(regions.nav) }}
    </nav>
    {% else %}
    <p class="header-note">{{ w.icon("phone") }}<span>Help line 0800 555 0199</span></p>
    {% endif %}
    <div class="sidebar-note">
      <p class="sidebar-heading">You are here</p>
      <ol class="sidebar-trail">
        {% for crumb in page.crumbs %}
        <li{% if loop.last %} class="is-current"{% endif %}>{{ crumb }}</li>
        {% endfor %}
      </ol>
    </div>
    {% if regions.header and layout.nav != "mega" %}
    <nav class="site-sections" aria-label="Sections">
      {% for v in regions.header %}{{ w.element(v) }}{% endfor %}
    </nav>
    {% endif %}
  </div>
</header>
<div class="page-body">
{% if regions.header and layout.nav == "mega" %}
<nav class="mega-menu" aria-label="Sections">
  <div class="mega-inner">
    {% for v in regions.header %}{{ w.element(v) }}{% endfor %}
  </div>
</nav>
{% endif %}
{% if regions.sidebar %}
<div class="page-columns has-sidebar">
{% if layout.sidebar != "right" %}{{ w.site_sidebar(site, regions.sidebar) }}{% endif %}
{% endif %}
<main id="main" class="site-main">
{% block main %}{% endblock %}
</main>
{% if regions.sidebar %}
{% if layout.sidebar == "right" %}{{ w.site_sidebar(site, regions.sidebar) }}{% endif %}
</div>
{% endif %}
<footer class="site-footer">
  <div class="footer-inner">
    <div class="footer-brand">
      <p class="footer-name">{{ site.name }}</p>
      <p>{{ site.footer[0] }}</p>
    </div>
    <div class="footer-col">
      <p class="footer-heading">Service</p>
      <p>{{ site.footer[1] }}</p>
    </div>
    <div class="footer-col">
      <p class="footer-heading">Payments &amp; privacy</p>
      <p>{{ site.footer[2] }}</p>
    </div>
  </div>
  {% if regions.footer %}
  <div class="footer-links">{% for v in regions.footer %}{{ w.element(v) }}{% endfor %}</div>
  {% endif %}
  <p class="footer-legal">&copy; {{ site.year }} {{ site.name }}. All rights reserved.</p>
</footer>
</div>
</div>
{{ w.region_overlays(regions.overlays, alert) }}
<div class="ww-forms" hidden>
{% for f in forms %}
<form id="{{ f.id }}" method="post" action="{{ f.url }}" novalidate aria-label="{{ f.label }}"></form>
{% endfor %}
</div>
<div class="visually-hidden" data-ww-announce aria-live="polite" aria-atomic="true"></div>
</body>
</html>
"""

WIDGETS_HTML = r"""{#- Widgets: one macro per element kind, plus page regions. Every spec element is
    rendered by `element`, which puts data-ww-id on exactly one node. -#}

{% macro icon(name) -%}
{% if name == "search" %}<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false"><circle cx="11" cy="11" r="7" fill="none" stroke="currentColor" stroke-width="2"/><path d="M20 20l-3.6-3.6" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>
{%- elif name == "chevron" %}<svg class="icon icon-sm" viewBox="0 0 24 24" width="14" height="14" aria-hidden="true" focusable="false"><path d="M6 9l6 6 6-6" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"/></svg>
{%- elif name == "calendar" %}<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false"><rect x="3.5" y="5" width="17" height="15.5" rx="2" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M3.5 10h17M8 3v4M16 3v4" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round"/></svg>
{%- elif name == "check" %}<svg class="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false"><path d="M5 12.5l4.5 4.5L19 7.5" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round"/></svg>
{%- elif name == "x" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><path d="M6 6l12 12M18 6L6 18" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>
{%- elif name == "share" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><circle cx="18" cy="5.5" r="2.5" fill="none" stroke="currentColor" stroke-width="1.8"/><circle cx="6" cy="12" r="2.5" fill="none" stroke="currentColor" stroke-width="1.8"/><circle cx="18" cy="18.5" r="2.5" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M8.2 10.8l7.6-4.1M8.2 13.2l7.6 4.1" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>
{%- elif name == "user" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><circle cx="12" cy="8" r="4" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M4 20c1.5-4 4.5-6 8-6s6.5 2 8 6" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round"/></svg>
{%- elif name == "cart" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><path d="M3 4h2.5l2.2 11h10.6L20.5 7H7" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/><circle cx="9.5" cy="19" r="1.5" fill="currentColor"/><circle cx="17" cy="19" r="1.5" fill="currentColor"/></svg>
{%- elif name == "heart" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><path d="M12 20s-7.5-4.6-7.5-10A4.3 4.3 0 0 1 12 7.4 4.3 4.3 0 0 1 19.5 10c0 5.4-7.5 10-7.5 10z" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/></svg>
{%- elif name == "help" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="9" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M9.5 9.5a2.5 2.5 0 1 1 3.5 2.3c-.7.3-1 .9-1 1.7M12 17h.01" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round"/></svg>
{%- elif name == "alert" %}<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false"><circle cx="12" cy="12" r="9" fill="none" stroke="currentColor" stroke-width="1.9"/><path d="M12 7.5v5.5M12 16.5h.01" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round"/></svg>
{%- elif name == "back" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><path d="M15 5l-7 7 7 7" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"/></svg>
{%- elif name == "filter" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><path d="M4 6h16M7 12h10M10 18h4" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>
{%- elif name == "phone" %}<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"><path d="M6.5 3.5l3 .5 1.2 4-2 1.5a11 11 0 0 0 5.8 5.8l1.5-2 4 1.2.5 3c-.2 1.2-1.2 2-2.4 2C10.6 19.5 4.5 13.4 4.5 6c0-1.2.8-2.3 2-2.5z" fill="none" stroke="currentColor" stroke-width="1.7" stroke-linejoin="round"/></svg>
{%- elif name == "pin" %}<svg class="icon" viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false"><path d="M12 21s-6.5-6-6.5-11a6.5 6.5 0 0 1 13 0c0 5-6.5 11-6.5 11z" fill="none" stroke="currentColor" stroke-width="1.8"/><circle cx="12" cy="10" r="2.3" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>
{%- elif name == "cookie" %}<svg class="icon" viewBox="0 0 24 24" width="26" height="26" aria-hidden="true" focusable="false"><path d="M20.5 12.5A8.5 8.5 0 1 1 11.5 3.5a3 3 0 0 0 3.5 3.5 3 3 0 0 0 3 3 2.5 2.5 0 0 0 2.5 2.5z" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/><circle cx="9" cy="10" r="1.2" fill="currentColor"/><circle cx="14.5" cy="14.5" r="1.2" fill="currentColor"/><circle cx="9.5" cy="15.5" r="1.2" fill="currentColor"/></svg>
{%- endif %}
{%- endmacro %}

{% macro brand(site) %}
<div class="brand">
  <span class="brand-mark shape-{{ site.logo }}" aria-hidden="true">{{ site.initials }}</span>
  <span class="brand-text">
    <span class="brand-name">{{ site.name }}</span>
    <span class="brand-tagline">{{ site.tagline }}</span>
  </span>
</div>
{% endmacro %}

{% macro alert_box(text) %}
<div class="alert" role="alert">{{ icon("alert") }}<span>{{ text }}</span></div>
{% endmacro %}

{#- attributes of one option control (a button): submit it, pick it, or nothing -#}
{% macro choice_attrs(o) -%}
{% if o.submit %}type="submit" form="{{ o.form }}"{% if o.name %} name="{{ o.name }}" value="{{ o.value }}"{% endif %}
{%- elif o.pick %}type="button" data-ww-pick="{{ o.pick }}"
{%- else %}type="button" disabled{% endif %}
{%- endmacro %}

{% macro hidden_inputs(el) %}
{% for h in el.hidden_inputs %}
<input type="hidden" id="{{ h.dom_id }}" name="{{ h.name }}" form="{{ h.form }}" value="{{ h.value }}">
{% endfor %}
{% for m in el.mirrors %}
<input type="hidden" name="{{ m.name }}" form="{{ m.form }}" data-ww-mirror="{{ m.source }}">
{% endfor %}
{% endmacro %}

{# ---- one macro per kind ------------------------------------------------------------ #}

{% macro button(el) %}
{% if el.href %}
<a class="btn btn-{{ el.variant }}" id="{{ el.dom_id }}" href="{{ el.href }}" data-ww-id="{{ el.id }}">{% if el.variant == "back" %}{{ icon("back") }}{% elif el.icon %}{{ icon(el.icon) }}{% endif %}<span>{{ el.label }}</span></a>
{% elif el.disabled %}
<button type="button" class="btn btn-{{ el.variant }}" id="{{ el.dom_id }}" data-ww-id="{{ el.id }}" disabled>{{ el.label }}</button>
{% else %}
<button type="submit" form="{{ el.form }}" class="btn btn-{{ el.variant }}" id="{{ el.dom_id }}" data-ww-id="{{ el.id }}">{% if el.variant == "back" %}{{ icon("back") }}{% elif el.icon %}{{ icon(el.icon) }}{% endif %}<span>{{ el.label }}</span></button>
{% endif %}
{% endmacro %}

{% macro text_input(el) %}
{% set low = el.label|lower %}
<div class="field">
  <label for="{{ el.dom_id }}">{{ el.label }}</label>
  <input type="{{ 'password' if 'password' in low else 'text' }}" id="{{ el.dom_id }}" class="input"
    {%- if el.name %} name="{{ el.name }}"{% endif %}{% if el.form %} form="{{ el.form }}"{% endif %}
    {%- if el.placeholder %} placeholder="{{ el.placeholder }}"{% endif %}
    {%- if 'email' in low %} inputmode="email" autocomplete="email"{% elif 'name' in low %} autocomplete="name"{% elif 'password' in low %} autocomplete="new-password"{% else %} autocomplete="off"{% endif %}
    {%- if 'email' in low or 'password' in low %} aria-describedby="{{ el.dom_id }}-hint"{% endif %} data-ww-id="{{ el.id }}">
  {% if 'email' in low %}<p class="hint" id="{{ el.dom_id }}-hint">We'll send your confirmation to this address.</p>
  {% elif 'password' in low %}<p class="hint" id="{{ el.dom_id }}-hint">Passwords are case-sensitive.</p>{% endif %}
  {% if el.enter_submit %}<button type="submit" form="{{ el.enter_submit.form }}" class="btn btn-primary btn-small">{{ el.enter_submit.label }}</button>{% endif %}
  {{ hidden_inputs(el) }}
</div>
{% endmacro %}

{% macro search_box(el) %}
<div class="searchbar" role="search">
  <label for="{{ el.dom_id }}" class="visually-hidden">{{ el.label }}</label>
  <span class="searchbar-icon">{{ icon("search") }}</span>
  <input type="search" id="{{ el.dom_id }}" class="searchbar-input"
    {%- if el.name %} name="{{ el.name }}"{% endif %}{% if el.form %} form="{{ el.form }}"{% endif %}
    placeholder="{{ el.placeholder or el.label }}" autocomplete="off" data-ww-id="{{ el.id }}">
  {% if el.enter_submit %}<button type="submit" form="{{ el.enter_submit.form }}" class="btn btn-primary searchbar-go"><span>Search</span></button>{% endif %}
  {{ hidden_inputs(el) }}
</div>
{% endmacro %}

{% macro select(el) %}
<div class="field field-select">
  <label for="{{ el.dom_id }}">{{ el.label }}</label>
  <span class="select-wrap">
  <select id="{{ el.dom_id }}" class="input"{% if el.name %} name="{{ el.name }}"{% endif %}{% if el.form %} form="{{ el.form }}"{% endif %}{% if el.submit_form %} data-ww-submit="{{ el.submit_form }}"{% endif %} data-ww-id="{{ el.id }}">
    <option value=""{% if el.submit_form %} disabled{% endif %}{% if el.unset %} selected{% endif %}>Choose&hellip;</option>
    {% for o in el.options %}
    <option value="{{ o.value }}"{% if o.selected %} selected{% endif %}{% if o.form and o.form != el.form %} data-ww-form="{{ o.form }}"{% endif %}>{{ o.label }}</option>
    {% endfor %}
  </select>
  {{ icon("chevron") }}
  </span>
</div>
{% endmacro %}

{% macro checkbox(el) %}
<div class="field field-check">
  <label class="check" for="{{ el.dom_id }}">
    <input type="checkbox" id="{{ el.dom_id }}"
      {%- if el.check_form %} data-ww-check="{{ el.check_form }}"{% endif %}
      {%- if el.uncheck_form %} data-ww-uncheck="{{ el.uncheck_form }}"{% endif %}
      {%- if el.form %} form="{{ el.form }}"{% endif %}{% if el.required %} required{% endif %}
      {%- if el.checked %} checked{% endif %} data-ww-id="{{ el.id }}">
    <span>{{ el.label }}</span>
  </label>
</div>
{% endmacro %}

{% macro radio(el) %}
<fieldset class="field radio-group" data-ww-id="{{ el.id }}">
  <legend>{{ el.label }}</legend>
  <div class="radio-options">
  {% for o in el.options %}
    <label class="radio{% if o.selected %} is-checked{% endif %}" for="{{ o.dom_id }}">
      <input type="radio" id="{{ o.dom_id }}" value="{{ o.value }}"
        {%- if o.name %} name="{{ o.name }}"{% endif %}{% if o.form %} form="{{ o.form }}"{% endif %}
        {%- if o.submit %} data-ww-submit="{{ o.form }}"{% endif %}
        {%- if o.selected %} checked{% endif %}{% if o.disabled %} disabled{% endif %} data-ww-value="{{ o.value }}">
      <span>{{ o.label }}</span>
    </label>
  {% endfor %}
  </div>
</fieldset>
{% endmacro %}

{% macro slider(el) %}
<div class="field field-range">
  <label for="{{ el.dom_id }}">{{ el.label }}</label>
  <div class="range-row">
    <input type="range" id="{{ el.dom_id }}" class="range" min="{{ el.min }}" max="{{ el.max }}" step="{{ el.step }}" value="{{ el.value }}"
      {%- if el.name %} name="{{ el.name }}"{% endif %}{% if el.form %} form="{{ el.form }}"{% endif %}
      {%- if el.submit_form %} data-ww-submit="{{ el.submit_form }}"{% endif %}
      {%- if el.unset %} data-ww-unset=""{% endif %} data-ww-id="{{ el.id }}">
    <output for="{{ el.dom_id }}" class="range-value">{{ "–" if el.unset else el.value }}</output>
  </div>
  <div class="range-scale" aria-hidden="true"><span>{{ el.min }}</span><span>{{ el.max }}</span></div>
</div>
{% endmacro %}

{% macro date_picker(el) %}
<div class="field datepicker" role="group" aria-labelledby="{{ el.dom_id }}-label"{% if el.typed %} tabindex="-1"{% endif %} data-ww-id="{{ el.id }}">
  <span class="label" id="{{ el.dom_id }}-label">{{ el.label }}</span>
  <div class="date-control">
    <input type="text" id="{{ el.dom_id }}-input" class="input date-input" value="{{ el.value }}" placeholder="{{ el.placeholder or 'Select a date' }}" aria-labelledby="{{ el.dom_id }}-label"
      {%- if el.typed %}{% if el.name %} name="{{ el.name }}"{% endif %} form="{{ el.form }}" autocomplete="off"{% else %} readonly{% endif %}>
    {% if el.enter_submit %}<button type="submit" form="{{ el.enter_submit.form }}" class="btn btn-primary btn-small date-go">{{ el.enter_submit.label }}</button>{% endif %}
    <button type="button" class="date-toggle" data-ww-part="toggle" aria-haspopup="dialog" aria-expanded="false" aria-controls="{{ el.dom_id }}-popup" aria-label="Open calendar for {{ el.label|lower }}">{{ icon("calendar") }}</button>
  </div>
  <div class="date-popup" id="{{ el.dom_id }}-popup" role="dialog" aria-label="Choose {{ el.label|lower }}" hidden>
    {% for m in el.months %}
    <div class="month">
      <p class="month-title">{{ m.title }}</p>
      {% if m.weeks %}
      <table class="month-grid">
        <thead><tr><th abbr="Monday">Mo</th><th abbr="Tuesday">Tu</th><th abbr="Wednesday">We</th><th abbr="Thursday">Th</th><th abbr="Friday">Fr</th><th abbr="Saturday">Sa</th><th abbr="Sunday">Su</th></tr></thead>
        <tbody>
        {% for week in m.weeks %}
        <tr>
          {% for d in week %}
          <td>{% if d.option %}<button class="day is-available{% if d.option.selected %} is-selected{% endif %}" aria-label="{{ d.option.label }}" data-ww-value="{{ d.option.value }}" {{ choice_attrs(d.option) }}>{{ d.day }}</button>{% elif d.day %}<span class="day is-off">{{ d.day }}</span>{% endif %}</td>
          {% endfor %}
        </tr>
        {% endfor %}
        </tbody>
      </table>
      {% endif %}
      {% for o in m.loose %}
      <button class="day-wide{% if o.selected %} is-selected{% endif %}" data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}>{{ o.label }}</button>
      {% endfor %}
    </div>
    {% endfor %}
    <p class="date-legend">Highlighted dates are available.</p>
  </div>
  {{ hidden_inputs(el) }}
</div>
{% endmacro %}

{#- sections="accordion": the same options as stacked disclosure buttons, the selected
    one's panel (the caller's content) right under it -#}
{% macro tabs(el, sections="tabs") %}
{% if sections == "accordion" %}
<div class="accordion" role="group" aria-label="{{ el.label }}" data-ww-id="{{ el.id }}">
  {% for o in el.options %}
  <div class="accordion-item{% if o.selected %} is-open{% endif %}">
    <h2 class="accordion-heading"><button id="{{ o.dom_id }}" class="accordion-toggle{% if o.selected %} is-active{% endif %}" aria-expanded="{{ 'true' if o.selected else 'false' }}"{% if o.selected %} aria-controls="{{ el.dom_id }}-panel"{% endif %} data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}><span>{{ o.label }}</span>{{ icon("chevron") }}</button></h2>
    {% if o.selected %}
    <div class="accordion-panel" role="region" id="{{ el.dom_id }}-panel" aria-labelledby="{{ o.dom_id }}">
      {{ caller() }}
      {% for c in el.children %}{{ element(c) }}{% endfor %}
    </div>
    {% endif %}
  </div>
  {% endfor %}
  {{ hidden_inputs(el) }}
</div>
{% else %}
{% set active = el.options|selectattr("selected")|first %}
<div class="tabs">
  <div class="tablist" role="tablist" aria-label="{{ el.label }}" data-ww-id="{{ el.id }}">
  {% for o in el.options %}
    <button role="tab" id="{{ o.dom_id }}" class="tab{% if o.selected %} is-active{% endif %}" aria-selected="{{ 'true' if o.selected else 'false' }}" aria-controls="{{ el.dom_id }}-panel" data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}>{{ o.label }}</button>
  {% endfor %}
  {{ hidden_inputs(el) }}
  </div>
  <div class="tabpanel" role="tabpanel" id="{{ el.dom_id }}-panel" aria-labelledby="{{ active.dom_id }}">
    {{ caller() }}
    {% for c in el.children %}{{ element(c) }}{% endfor %}
  </div>
</div>
{% endif %}
{% endmacro %}

{% macro hover_menu(el) %}
<div class="menu" data-ww-id="{{ el.id }}">
  <button type="button" class="menu-button" id="{{ el.dom_id }}-button" aria-haspopup="menu" aria-expanded="false" aria-controls="{{ el.dom_id }}-list"><span>{{ el.label }}</span>{{ icon("chevron") }}</button>
  <ul class="menu-list" role="menu" id="{{ el.dom_id }}-list" aria-labelledby="{{ el.dom_id }}-button">
  {% for o in el.options %}
    <li role="none"><button role="menuitem" class="menu-item" data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}>{{ o.label }}</button></li>
  {% endfor %}
  {% for c in el.children %}
    <li role="none" class="menu-extra">{{ element(c) }}</li>
  {% endfor %}
  </ul>
  {{ hidden_inputs(el) }}
</div>
{% endmacro %}

{% macro option_links(el, listing) %}
{% if listing == "table" %}
<div class="listing listing-table" data-ww-id="{{ el.id }}">
  <table class="data-table">
    <thead><tr><th scope="col">{{ el.label|replace("Open ", "")|capitalize }}</th>{% for c in el.columns %}<th scope="col">{{ c }}</th>{% endfor %}</tr></thead>
    <tbody>
    {% for o in el.options %}
      <tr>
        <th scope="row"><button class="title-link" data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}>{{ o.label }}</button>{% if o.subtitle %}<span class="row-sub">{{ o.subtitle }}</span>{% endif %}</th>
        {% for f in o.fields %}<td class="cell-{{ f.cls }}">{{ f.value }}</td>{% endfor %}
      </tr>
    {% endfor %}
    </tbody>
  </table>
  {{ hidden_inputs(el) }}
</div>
{% elif listing == "list" %}
<div class="listing listing-list" data-ww-id="{{ el.id }}">
  <ul class="result-rows">
  {% for o in el.options %}
    <li class="card result-row">
      <div class="thumb thumb-{{ o.thumb }} row-thumb" aria-hidden="true"><span>{{ o.label[:1] }}</span></div>
      <div class="row-body">
        <h3 class="card-title"><button class="title-link" data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}>{{ o.label }}</button></h3>
        {% if o.subtitle %}<p class="card-sub">{{ o.subtitle }}</p>{% endif %}
        {{ facts(o.fields) }}
      </div>
    </li>
  {% endfor %}
  </ul>
  {{ hidden_inputs(el) }}
</div>
{% else %}
<div class="listing listing-cards" data-ww-id="{{ el.id }}">
  <ul class="card-grid">
  {% for o in el.options %}
    <li class="card item-card">
      <div class="thumb thumb-{{ o.thumb }}" aria-hidden="true"><span>{{ o.label[:1] }}</span></div>
      <div class="card-body">
        <h3 class="card-title"><button class="title-link" data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}>{{ o.label }}</button></h3>
        {% if o.subtitle %}<p class="card-sub">{{ o.subtitle }}</p>{% endif %}
        {{ facts(o.fields) }}
      </div>
    </li>
  {% endfor %}
  </ul>
  {{ hidden_inputs(el) }}
</div>
{% endif %}
{% endmacro %}

{#- a group of site links (navigation bar, sidebar, footer): a titled list of its options -#}
{% macro link_group(el) %}
<div class="link-group link-group-{{ el.region }}" data-ww-id="{{ el.id }}">
  <p class="link-group-title" id="{{ el.dom_id }}-title">{{ el.label }}</p>
  <ul class="link-list" aria-labelledby="{{ el.dom_id }}-title">
  {% for o in el.options %}
    <li><button class="site-link" data-ww-value="{{ o.value }}" {{ choice_attrs(o) }}>{{ o.label }}</button></li>
  {% endfor %}
  </ul>
  {{ hidden_inputs(el) }}
</div>
{% endmacro %}

{#- the site sidebar beside the main column (the layout puts it left or right) -#}
{% macro site_sidebar(site, views) %}
<aside class="site-sidebar" aria-label="More from {{ site.name }}">
  {% for v in views %}{{ element(v) }}{% endfor %}
</aside>
{% endmacro %}

{% macro element(el, listing="cards") %}
{% if el.kind == "button" or (el.kind == "link" and not el.options) %}{{ button(el) }}
{% elif el.kind == "link" and el.region in ("header", "sidebar", "footer") %}{{ link_group(el) }}
{% elif el.kind == "link" %}{{ option_links(el, listing) }}
{% elif el.kind == "text_input" %}{{ text_input(el) }}
{% elif el.kind == "search_box" %}{{ search_box(el) }}
{% elif el.kind == "select" %}{{ select(el) }}
{% elif el.kind == "checkbox" %}{{ checkbox(el) }}
{% elif el.kind == "radio" %}{{ radio(el) }}
{% elif el.kind == "slider" %}{{ slider(el) }}
{% elif el.kind == "date_picker" %}{{ date_picker(el) }}
{% elif el.kind == "tabs" %}{% call tabs(el) %}{% endcall %}
{% elif el.kind == "hover_menu" %}{{ hover_menu(el) }}
{% elif el.kind in ("modal", "cookie_banner", "permission_prompt") %}{{ overlay(el, none) }}
{% endif %}
{% if el.children and el.kind not in ("modal", "cookie_banner", "permission_prompt", "hover_menu", "tabs") %}
<div class="subgroup">{% for c in el.children %}{{ element(c, listing) }}{% endfor %}</div>
{% endif %}
{% endmacro %}

{# ---- overlays ----------------------------------------------------------------------- #}

{% macro overlay(o, alert) %}
{% set buttons = o.children|selectattr("kind", "in", ["button", "link"])|list %}
{% set others = o.children|rejectattr("kind", "in", ["button", "link"])|list %}
<div class="overlay-root{% if o.blocking %} is-blocking{% endif %}">
  {% if o.blocking %}<div class="backdrop" aria-hidden="true"></div>{% endif %}
  {% if o.kind == "cookie_banner" %}
  <section class="cookie-banner" role="dialog" aria-modal="{{ 'true' if o.blocking else 'false' }}" aria-labelledby="{{ o.title_id }}" aria-describedby="{{ o.dom_id }}-text" data-ww-id="{{ o.id }}">
    <div class="cookie-icon">{{ icon("cookie") }}</div>
    <div class="cookie-body">
      <h2 id="{{ o.title_id }}">{{ o.label }}</h2>
      <p id="{{ o.dom_id }}-text">{{ o.text }}</p>
      {% if alert and alert.overlay == o.id %}{{ alert_box(alert.text) }}{% endif %}
      {% for c in others %}{{ element(c) }}{% endfor %}
    </div>
    <div class="cookie-actions">{% for c in buttons %}{{ element(c) }}{% endfor %}</div>
  </section>
  {% elif o.kind == "permission_prompt" %}
  <section class="permission" role="alertdialog" aria-modal="{{ 'true' if o.blocking else 'false' }}" aria-labelledby="{{ o.title_id }}" aria-describedby="{{ o.dom_id }}-text" data-ww-id="{{ o.id }}">
    <div class="permission-head"><span class="permission-icon">{{ icon("pin") }}</span><h2 id="{{ o.title_id }}">{{ o.label }}</h2></div>
    {% if o.text %}<p id="{{ o.dom_id }}-text">{{ o.text }}</p>{% endif %}
    {% if alert and alert.overlay == o.id %}{{ alert_box(alert.text) }}{% endif %}
    {% for c in others %}{{ element(c) }}{% endfor %}
    <div class="permission-actions">{% for c in buttons|reverse %}{{ element(c) }}{% endfor %}</div>
  </section>
  {% else %}
  <section class="modal" role="dialog" aria-modal="{{ 'true' if o.blocking else 'false' }}" aria-labelledby="{{ o.title_id }}" data-ww-id="{{ o.id }}">
    <div class="modal-head"><h2 id="{{ o.title_id }}">{{ o.label }}</h2></div>
    <div class="modal-body">
      {% if o.text %}<p>{{ o.text }}</p>{% endif %}
      {% if "share" in o.label|lower %}<p class="share-link">{{ icon("share") }}<span>https://www.{{ o.id|replace("_", "-") }}.example/s/7f3k2</span></p>{% endif %}
      {% if alert and alert.overlay == o.id %}{{ alert_box(alert.text) }}{% endif %}
      {% for c in others %}{{ element(c) }}{% endfor %}
    </div>
    {% if buttons %}<div class="modal-foot">{% for c in buttons|reverse %}{{ element(c) }}{% endfor %}</div>{% endif %}
  </section>
  {% endif %}
</div>
{% endmacro %}

{# ---- regions and page parts ------------------------------------------------------------- #}

{% macro region_overlays(views, alert) %}
{% for o in views %}{{ overlay(o, alert) }}{% endfor %}
{% endmacro %}

{% macro region_nav(views) %}
<ul class="nav-list">
{% for v in views %}
  <li class="nav-item">{{ element(v) }}</li>
{% endfor %}
</ul>
{% endmacro %}

{% macro crumbs(page, back) %}
<div class="crumb-row">
  {% for v in back %}{{ element(v) }}{% endfor %}
  <nav class="breadcrumbs" aria-label="Breadcrumb">
    <ol>
    {% for c in page.crumbs %}
      <li{% if loop.last %} aria-current="page"{% endif %}>{{ c }}</li>
    {% endfor %}
    </ol>
  </nav>
</div>
{% endmacro %}

{% macro facts(fields) %}
{% if fields %}<dl class="facts">{% for f in fields %}<div class="fact fact-{{ f.cls }}"><dt>{{ f.key|capitalize }}</dt><dd>{{ f.value }}</dd></div>{% endfor %}</dl>{% endif %}
{% endmacro %}

{% macro summary_card(s) %}
<aside class="card summary" aria-labelledby="summary-title">
  <p class="summary-eyebrow" id="summary-title">Your selection</p>
  <div class="summary-row">
    <div class="thumb thumb-{{ s.thumb }} summary-thumb" aria-hidden="true"><span>{{ s.title[:1] }}</span></div>
    <div><p class="summary-name">{{ s.title }}</p>{% if s.subtitle %}<p class="card-sub">{{ s.subtitle }}</p>{% endif %}</div>
  </div>
  {{ facts(s.fields) }}
</aside>
{% endmacro %}

{% macro page_head(page, back, actions, alert, item, summary, summary_in_form) %}
<div class="page-head">
  {{ crumbs(page, back) }}
  {% if item %}
  <div class="item-head">
    <div class="thumb thumb-{{ item.thumb }} item-thumb" aria-hidden="true"><span>{{ item.title[:1] }}</span></div>
    <div class="item-info">
      <p class="eyebrow">{{ page.heading }}</p>
      <h1>{{ item.title }}</h1>
      {% if item.subtitle %}<p class="item-sub">{{ item.subtitle }}</p>{% endif %}
      {{ facts(item.fields) }}
      {% if actions %}<div class="page-actions">{% for v in actions %}{{ element(v) }}{% endfor %}</div>{% endif %}
    </div>
  </div>
  {% else %}
  <div class="title-row">
    <div class="title-text">
      <h1>{{ page.heading }}</h1>
      {% if page.about %}<p class="about">{{ page.about }}</p>{% endif %}
    </div>
    {% if actions %}
    <div class="page-actions">{% for v in actions %}{{ element(v) }}{% endfor %}</div>
    {% endif %}
  </div>
  {% endif %}
  {% if summary and not summary_in_form %}{{ summary_card(summary) }}{% endif %}
  {% if alert and alert.where == "main" %}{{ alert_box(alert.text) }}{% endif %}
</div>
{% endmacro %}

{% macro hero(page, hero, search, actions, alert) %}
<section class="hero" aria-labelledby="hero-title">
  <div class="hero-copy">
    <p class="eyebrow">{{ page.heading }}</p>
    <h1 id="hero-title">{{ hero.title if hero else page.heading }}</h1>
    {% if hero %}<p class="lead">{{ hero.text }}</p>{% endif %}
    {% if alert and alert.where == "main" %}{{ alert_box(alert.text) }}{% endif %}
    {% if search %}<div class="hero-search">{% for v in search %}{{ element(v) }}{% endfor %}</div>{% endif %}
    {% if actions %}<div class="hero-actions">{% for v in actions %}{{ element(v) }}{% endfor %}</div>{% endif %}
  </div>
  <div class="hero-art" aria-hidden="true"><span class="orb orb-a"></span><span class="orb orb-b"></span><span class="orb orb-c"></span></div>
</section>
<ul class="highlights" aria-label="Why choose us">
  <li class="card highlight"><span class="highlight-icon">{{ icon("check") }}</span><div><h2>Secure by design</h2><p>Your details are encrypted and never sold to anyone.</p></div></li>
  <li class="card highlight"><span class="highlight-icon">{{ icon("help") }}</span><div><h2>Help when you need it</h2><p>Real people on hand seven days a week.</p></div></li>
  <li class="card highlight"><span class="highlight-icon">{{ icon("heart") }}</span><div><h2>Loved by customers</h2><p>Rated 4.8 out of 5 by thousands of happy people.</p></div></li>
</ul>
{% endmacro %}

{% macro confirmation(page, content, back, alert) %}
<section class="confirmation card" aria-labelledby="confirm-title">
  <div class="confirm-icon">{{ icon("check") }}</div>
  <h1 id="confirm-title">{{ page.heading }}</h1>
  {% if alert and alert.where == "main" %}{{ alert_box(alert.text) }}{% endif %}
  {% for b in content %}
    {% if not (b.kind == "heading" and b.title == page.heading) %}{{ block(b, "table") }}{% endif %}
  {% endfor %}
  {% if back %}<div class="confirm-actions">{% for v in back %}{{ element(v) }}{% endfor %}</div>{% endif %}
</section>
{% endmacro %}

{% macro region_search(views) %}
<div class="search-region">{% for v in views %}{{ element(v) }}{% endfor %}</div>
{% endmacro %}

{% macro region_tabs(tab_views, panel_views, content, listing, sections="tabs") %}
{% if not tab_views %}
{{ blocks(content, listing) }}
{% if panel_views %}<div class="action-row">{% for v in panel_views %}{{ element(v) }}{% endfor %}</div>{% endif %}
{% endif %}
{% for t in tab_views %}
  {% if loop.first %}
  {% call tabs(t, sections) %}
    {{ blocks(content, listing) }}
    {% if panel_views %}<div class="action-row">{% for v in panel_views %}{{ element(v) }}{% endfor %}</div>{% endif %}
  {% endcall %}
  {% else %}
  {% call tabs(t, sections) %}<p class="muted">Choose a section to see more about this page.</p>{% endcall %}
  {% endif %}
{% endfor %}
{% endmacro %}

{% macro region_toolbar(views) %}
<div class="toolbar" role="group" aria-label="Sort and filter">
  <span class="toolbar-label">{{ icon("filter") }}<span>Refine</span></span>
  {% for v in views %}{{ element(v) }}{% endfor %}
</div>
{% endmacro %}

{% macro region_listing(views, listing) %}
{% for v in views %}
<section class="results" aria-labelledby="{{ v.dom_id }}-heading">
  <div class="results-head">
    <h2 id="{{ v.dom_id }}-heading">{{ v.text or v.label }}</h2>
    <p class="muted">{{ v.options|length }} result{{ "" if v.options|length == 1 else "s" }}</p>
  </div>
  {{ option_links(v, listing) }}
</section>
{% endfor %}
{% endmacro %}

{#- regions.toolbar and regions.listing as the layout has them: the toolbar above the
    results (filters "top"), or a filter panel in a column left of them ("left") -#}
{% macro region_results(toolbar, listing, layout) %}
{% if layout.filters == "left" and toolbar %}
<div class="refine-layout">
<aside class="filter-panel" aria-labelledby="filter-panel-title">
  <h2 class="filter-title" id="filter-panel-title">{{ icon("filter") }}<span>Filter results</span></h2>
  <div class="filter-fields" role="group" aria-label="Sort and filter">
  {% for v in toolbar %}{{ element(v) }}{% endfor %}
  </div>
</aside>
<div class="refine-results">
{{ region_listing(listing, layout.listing) }}
</div>
</div>
{% else %}
{{ region_toolbar(toolbar) }}
{{ region_listing(listing, layout.listing) }}
{%- endif %}
{% endmacro %}

{% macro region_form(groups, alert, summary) %}
<div class="form-layout{% if summary %} has-summary{% endif %}">
<div class="form-main">
{% for g in groups %}
{% if groups|length > 1 %}
<section class="card form-card" aria-labelledby="form-title-{{ loop.index }}">
  <h2 class="form-title" id="form-title-{{ loop.index }}">{{ g.title }}</h2>
{% else %}
<section class="card form-card">
{% endif %}
  {% if g.alert and alert %}{{ alert_box(alert.text) }}{% endif %}
  <div class="form-fields">
  {% for f in g.fields %}{{ element(f) }}{% endfor %}
  </div>
  {% if g.buttons %}
  <div class="form-actions">{% for b in g.buttons %}{{ element(b) }}{% endfor %}</div>
  {% endif %}
  <p class="form-note">{{ icon("check") }}<span>Your details are sent over an encrypted connection.</span></p>
</section>
{% endfor %}
</div>
{% if summary %}{{ summary_card(summary) }}{% endif %}
</div>
{% endmacro %}

{% macro region_actions(views) %}
<div class="action-row">{% for v in views %}{{ element(v) }}{% endfor %}</div>
{% endmacro %}

{% macro region_links(views) %}
<section class="related" aria-labelledby="related-heading">
  <h2 id="related-heading">See also</h2>
  <ul class="related-list">
  {% for v in views %}<li>{{ element(v) }}</li>{% endfor %}
  </ul>
</section>
{% endmacro %}

{% macro region_feedback(views) %}
<section class="feedback" aria-label="Feedback">
{% for v in views %}{{ element(v) }}{% endfor %}
</section>
{% endmacro %}

{# ---- content blocks ---------------------------------------------------------------------- #}

{% macro block(b, listing) %}
{% if b.kind == "heading" %}
<h2 class="section-title">{{ b.title or b.text }}</h2>
{% elif b.kind == "text" %}
<section class="text-block">
  {% if b.title %}<h2>{{ b.title }}</h2>{% endif %}
  {% if b.text %}<p>{{ b.text }}</p>{% endif %}
</section>
{% elif b.kind == "form_note" %}
<p class="form-note">{{ b.text or b.title }}</p>
{% elif b.kind == "list" %}
<section class="text-block">
  {% if b.title %}<h2>{{ b.title }}</h2>{% endif %}
  <ul class="bullets">{% for it in b.entries %}<li>{{ it.text }}</li>{% endfor %}</ul>
</section>
{% elif b.kind == "table" and b.pairs %}
<section class="card spec-card">
  {% if b.title %}<h2>{{ b.title }}</h2>{% endif %}
  <table class="spec-table"><tbody>
  {% for r in b.rows %}<tr><th scope="row">{{ r[0] }}</th><td>{{ r[1] }}</td></tr>{% endfor %}
  </tbody></table>
</section>
{% elif b.kind == "cards" and listing in ("cards", "list") %}
{%- set rows = listing == "list" %}
<section class="text-block">
  {% if b.title %}<h2>{{ b.title }}</h2>{% endif %}
  <ul class="{{ 'result-rows' if rows else 'card-grid' }}">
  {% for it in b.entries %}
    <li class="card {{ 'result-row' if rows else 'item-card' }}">
      <div class="thumb thumb-{{ it.thumb }}{{ ' row-thumb' if rows else '' }}" aria-hidden="true"><span>{{ it.title[:1] }}</span></div>
      <div class="{{ 'row-body' if rows else 'card-body' }}">
        <h3 class="card-title">{{ it.title }}</h3>
        {% if it.subtitle %}<p class="card-sub">{{ it.subtitle }}</p>{% endif %}
        {{ facts(it.fields) }}
      </div>
    </li>
  {% endfor %}
  </ul>
</section>
{% else %}
<section class="text-block">
  {% if b.title %}<h2>{{ b.title }}</h2>{% endif %}
  <table class="data-table">
    <thead><tr>{% for c in b.columns %}<th scope="col">{{ c }}</th>{% endfor %}</tr></thead>
    <tbody>{% for r in b.rows %}<tr>{% for cell in r %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}</tbody>
  </table>
</section>
{% endif %}
{% endmacro %}

{% macro blocks(content, listing) %}
{% for b in content %}{{ block(b, listing) }}{% endfor %}
{% endmacro %}
"""
