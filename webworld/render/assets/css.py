# ruff: noqa: E501  (long lines are CSS / HTML / JS text, kept readable as written)
"""The site stylesheet: theme variables plus one base sheet that reads them.

Notes for the browser side: a range input has no border, padding or margin, spans its
row, and its thumb is exactly ``RANGE_THUMB_PX`` wide, so the thumb centre for value v
is at ``x + T/2 + (v - min) / (max - min) * (width - T)`` of the input's box.
"""

from __future__ import annotations

from html import escape

from webworld.render.themes import Theme
from webworld.spec.models import WorldSpec

RANGE_THUMB_PX = 18


def theme_css(theme: Theme, *, frame: bool = True) -> str:
    """The site's stylesheet: the theme's variables, then the base sheet; without ``frame``
    the classic sheet only (sites without furniture in the classic layout keep its bytes)."""
    dark = theme.mode == "dark"
    variables = {
        "bg": theme.bg, "surface": theme.surface, "surface-alt": theme.surface_alt,
        "text": theme.text, "muted": theme.muted, "border": theme.border,
        "primary": theme.primary, "primary-text": theme.primary_text, "accent": theme.accent,
        "header-bg": theme.header_bg, "header-text": theme.header_text,
        "hero-from": theme.hero_from, "hero-to": theme.hero_to, "danger": theme.danger,
        "success": theme.success, "font-body": theme.font_body,
        "font-heading": theme.font_heading, "heading-weight": str(theme.heading_weight),
        "base-size": f"{theme.base_size}px", "radius": f"{theme.radius}px",
        "radius-lg": f"{min(theme.radius * 2, 24)}px" if theme.radius else "0px",
        "nav-case": "uppercase" if theme.nav_uppercase else "none",
        "nav-spacing": "0.06em" if theme.nav_uppercase else "0",
        "shadow": ("0 1px 2px rgba(0,0,0,.5), 0 8px 24px rgba(0,0,0,.35)" if dark else
                   "0 1px 2px rgba(16,24,40,.06), 0 6px 18px rgba(16,24,40,.07)"),
        "shadow-lg": ("0 24px 64px rgba(0,0,0,.6)" if dark else
                      "0 24px 64px rgba(16,24,40,.22)"),
        "backdrop": "rgba(0,0,0,.66)" if dark else "rgba(15,23,42,.55)",
        "focus": theme.accent if dark else theme.primary,
        "danger-bg": "rgba(255,107,107,.12)" if dark else "#fdecea",
        "success-bg": "rgba(61,220,151,.14)" if dark else "#e6f4ea",
        "thumb-fade": ".85" if dark else "1",
        "range-thumb": f"{RANGE_THUMB_PX}px",
    }
    lines = [f"/* {theme.label} theme ({theme.layout}, {theme.listing}, {theme.mode}, "
             f"{theme.density}) */", ":root {"]
    lines += [f"  --{k}: {v};" for k, v in variables.items()]
    lines.append(f"  color-scheme: {theme.mode};")
    lines.append("}")
    return "\n".join(lines) + "\n" + (BASE_CSS if frame else CLASSIC_CSS)


def favicon_svg(spec: WorldSpec, theme: Theme) -> str:
    letter = escape(next((c for c in spec.name if c.isalnum()), "W").upper())
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
        f'<rect width="32" height="32" rx="8" fill="{escape(theme.primary)}"/>'
        f'<text x="16" y="22" text-anchor="middle" font-family="Arial, sans-serif" '
        f'font-size="18" font-weight="700" fill="{escape(theme.primary_text)}">{letter}</text>'
        "</svg>\n"
    )


CLASSIC_CSS = r"""
/* ---- base ------------------------------------------------------------------------- */
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { font-size: var(--base-size); -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--text); font-family: var(--font-body);
  line-height: 1.5;
}
.density-dense { --gap: 12px; --pad: 14px; --section: 22px; --control-h: 36px; }
.density-airy { --gap: 20px; --pad: 22px; --section: 36px; --control-h: 44px; }
h1, h2, h3 { font-family: var(--font-heading); font-weight: var(--heading-weight); line-height: 1.2; margin: 0 0 .5em; }
h1 { font-size: 2rem; letter-spacing: -0.01em; }
h2 { font-size: 1.3rem; }
h3 { font-size: 1.05rem; }
p { margin: 0 0 .75em; }
.muted { color: var(--muted); }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; overflow: hidden;
  clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap;
}
.icon { flex: none; vertical-align: middle; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
/* a swapped-in page's heading takes the focus (for screen readers) but shows no ring: the page
   looks as it would after a page load */
h1[tabindex="-1"]:focus, h1[tabindex="-1"]:focus-visible { outline: none; }

/* ---- frame: top navigation --------------------------------------------------------- */
.shell { min-height: 100vh; }
.site-header {
  position: relative; z-index: 20; background: var(--header-bg); color: var(--header-text);
  border-bottom: 1px solid var(--border);
}
.header-inner {
  max-width: 1180px; margin: 0 auto; padding: 14px 24px; display: flex; align-items: center;
  gap: 24px; justify-content: space-between;
}
.brand { display: flex; align-items: center; gap: 12px; min-width: 0; }
.brand-mark {
  width: 40px; height: 40px; display: inline-flex; align-items: center; justify-content: center;
  background: linear-gradient(135deg, var(--primary), var(--accent)); color: var(--primary-text);
  font-weight: 800; font-size: 15px; letter-spacing: .02em; font-family: var(--font-heading);
}
.brand-mark.shape-0 { border-radius: 50%; }
.brand-mark.shape-1 { border-radius: 10px; }
.brand-mark.shape-2 { clip-path: polygon(25% 4%, 75% 4%, 100% 50%, 75% 96%, 25% 96%, 0 50%); }
.brand-mark.shape-3 { border-radius: 50% 50% 50% 8px; }
.brand-text { display: flex; flex-direction: column; min-width: 0; }
.brand-name { font-family: var(--font-heading); font-weight: 800; font-size: 1.2rem; line-height: 1.1; }
.brand-tagline { font-size: .8rem; opacity: .75; }
.site-nav { display: flex; align-items: center; }
.nav-list { list-style: none; display: flex; align-items: center; gap: 8px; margin: 0; padding: 0; flex-wrap: wrap; }
.header-note { margin: 0; display: flex; align-items: center; gap: 8px; font-size: .85rem; opacity: .8; }
.sidebar-note { display: none; }
.page-body { display: flex; flex-direction: column; min-height: calc(100vh - 70px); }
.site-main { width: 100%; max-width: 1180px; margin: 0 auto; padding: var(--section) 24px; flex: 1; }

/* ---- frame: sidebar ---------------------------------------------------------------- */
.layout-sidebar .shell { display: grid; grid-template-columns: 264px minmax(0, 1fr); }
.layout-sidebar .site-header { border-bottom: 0; border-right: 1px solid var(--border); min-height: 100vh; }
.layout-sidebar .header-inner {
  flex-direction: column; align-items: stretch; justify-content: flex-start; padding: 24px 20px;
  gap: 28px; position: sticky; top: 0;
}
.layout-sidebar .site-nav { display: block; }
.layout-sidebar .nav-list { flex-direction: column; align-items: stretch; gap: 6px; }
.layout-sidebar .nav-item > .btn, .layout-sidebar .nav-item .menu-button { width: 100%; justify-content: flex-start; }
.layout-sidebar .header-note { display: none; }
.layout-sidebar .sidebar-note { display: block; font-size: .85rem; }
.sidebar-heading { text-transform: uppercase; letter-spacing: .08em; font-size: .72rem; opacity: .65; margin-bottom: 8px; }
.sidebar-trail { list-style: none; margin: 0; padding: 0 0 0 10px; border-left: 2px solid currentColor; opacity: .8; }
.sidebar-trail li { padding: 3px 0 3px 10px; }
.sidebar-trail li.is-current { font-weight: 700; opacity: 1; }
.layout-sidebar .page-body { min-height: 100vh; }
.layout-sidebar .site-main { max-width: 1080px; margin: 0; padding: var(--section) 40px; }

/* ---- buttons and links ------------------------------------------------------------- */
.btn {
  display: inline-flex; align-items: center; justify-content: center; gap: 8px; min-height: var(--control-h);
  padding: 0 18px; border-radius: var(--radius); border: 1px solid transparent; font: inherit;
  font-weight: 600; cursor: pointer; text-decoration: none; line-height: 1.1; white-space: nowrap;
}
.btn-primary { background: var(--primary); color: var(--primary-text); }
.btn-primary:hover { filter: brightness(1.08); }
.btn-secondary { background: var(--surface); color: var(--text); border-color: var(--border); }
.btn-secondary:hover { background: var(--surface-alt); }
.btn-ghost { background: transparent; color: var(--text); border-color: var(--border); }
.btn-ghost:hover { background: var(--surface-alt); }
.btn-nav {
  background: transparent; color: inherit; border-color: transparent; text-transform: var(--nav-case);
  letter-spacing: var(--nav-spacing); font-size: .92rem;
}
.btn-nav:hover { background: rgba(127,127,127,.14); }
.site-header .btn-primary { font-size: .92rem; text-transform: var(--nav-case); letter-spacing: var(--nav-spacing); }
.btn-back, .btn-link {
  background: none; border: 0; padding: 0; min-height: 0; color: var(--primary); font-weight: 600;
}
.mode-dark .btn-back, .mode-dark .btn-link { color: var(--accent); }
.btn-back:hover, .btn-link:hover { text-decoration: underline; }
.btn-small { min-height: 32px; padding: 0 12px; font-size: .9rem; }
.btn[disabled] { opacity: .5; cursor: not-allowed; }

/* ---- page head, breadcrumbs, alerts ---------------------------------------------- */
.page-head { margin-bottom: var(--section); }
.crumb-row { display: flex; align-items: center; gap: 16px; flex-wrap: wrap; margin-bottom: 14px; font-size: .9rem; }
.breadcrumbs ol { list-style: none; display: flex; flex-wrap: wrap; margin: 0; padding: 0; color: var(--muted); }
.breadcrumbs li + li::before { content: "/" / ""; margin: 0 8px; opacity: .6; }
.breadcrumbs li[aria-current] { color: var(--text); }
.crumb-row .btn-back { padding-right: 16px; border-right: 1px solid var(--border); border-radius: 0; }
.title-row { display: flex; align-items: flex-end; justify-content: space-between; gap: 16px; flex-wrap: wrap; }
.title-row h1 { margin: 0; }
.about { margin: 6px 0 0; color: var(--muted); font-size: 1.05rem; }
.page-actions { display: flex; gap: 10px; flex-wrap: wrap; }
.alert {
  display: flex; align-items: flex-start; gap: 10px; margin: 16px 0; padding: 12px 16px;
  border-radius: var(--radius); background: var(--danger-bg); color: var(--danger);
  border: 1px solid var(--danger); font-weight: 600;
}

.item-head { display: grid; grid-template-columns: minmax(0, 340px) minmax(0, 1fr); gap: calc(var(--gap) * 1.5); align-items: start; }
.item-thumb { border-radius: var(--radius-lg); aspect-ratio: 4 / 3; font-size: 4.5rem; padding: 20px; }
.density-dense .item-thumb { aspect-ratio: 4 / 3; font-size: 3.5rem; }
.item-info .eyebrow { color: var(--muted); margin-bottom: 6px; }
.item-info h1 { margin-bottom: 6px; }
.item-sub { color: var(--muted); font-size: 1.05rem; }
.item-info .facts { margin: 10px 0 18px; gap: 10px 28px; }
.item-info .fact dd { font-size: 1.2rem; }
.summary { padding: var(--pad); align-self: start; }
.page-head .summary { max-width: 640px; margin-top: calc(var(--gap) + 8px); }
.summary-eyebrow { text-transform: uppercase; letter-spacing: .08em; font-size: .72rem; font-weight: 700; color: var(--muted); margin-bottom: 10px; }
.summary-row { display: flex; gap: 12px; align-items: center; }
.summary-thumb { width: 64px; height: 64px; flex: none; aspect-ratio: auto; border-radius: var(--radius); font-size: 1.4rem; padding: 8px; }
.density-dense .summary-thumb { aspect-ratio: auto; font-size: 1.4rem; }
.summary-name { font-weight: 700; margin: 0; }
.summary .facts { margin-top: 12px; }
.form-layout.has-summary { display: grid; grid-template-columns: minmax(0, 640px) minmax(0, 320px); gap: calc(var(--gap) * 1.5); align-items: start; }
.form-card > .alert:first-child { margin-top: 0; }

/* ---- hero (home) ------------------------------------------------------------------- */
.hero {
  position: relative; overflow: hidden; border-radius: var(--radius-lg); padding: calc(var(--section) * 1.4) 40px;
  background: linear-gradient(120deg, var(--hero-from), var(--hero-to)); color: #fff;
  display: grid; grid-template-columns: minmax(0, 1.6fr) minmax(0, 1fr); gap: 24px; margin-bottom: var(--section);
}
.hero h1 { font-size: 2.4rem; color: #fff; }
.hero .lead { font-size: 1.1rem; opacity: .92; max-width: 34em; }
.eyebrow { text-transform: uppercase; letter-spacing: .12em; font-size: .78rem; font-weight: 700; opacity: .85; margin-bottom: 10px; }
.hero-search { margin: 22px 0 8px; max-width: 560px; }
.hero-actions { display: flex; gap: 10px; flex-wrap: wrap; margin-top: 18px; }
.hero .btn-secondary { background: rgba(255,255,255,.14); color: #fff; border-color: rgba(255,255,255,.45); }
.hero .btn-secondary:hover { background: rgba(255,255,255,.24); }
.hero .btn-primary { background: #fff; color: #111; }
.hero .alert { background: #fff; }
.hero-art { position: relative; min-height: 180px; }
.orb { position: absolute; border-radius: 50%; background: rgba(255,255,255,.16); }
.orb-a { width: 220px; height: 220px; right: 10px; top: -10px; }
.orb-b { width: 120px; height: 120px; right: 170px; top: 110px; background: rgba(255,255,255,.1); }
.orb-c { width: 70px; height: 70px; right: 40px; top: 190px; background: var(--accent); opacity: .8; }

.highlights { list-style: none; margin: 0 0 var(--section); padding: 0; display: grid; gap: var(--gap); grid-template-columns: repeat(3, minmax(0, 1fr)); }
.highlight { padding: var(--pad); display: flex; gap: 14px; align-items: flex-start; }
.highlight-icon {
  flex: none; width: 40px; height: 40px; border-radius: 50%; display: inline-flex; align-items: center;
  justify-content: center; background: var(--surface-alt); color: var(--primary);
}
.mode-dark .highlight-icon { color: var(--accent); }
.highlight h2 { font-size: 1rem; margin: 0 0 4px; }
.highlight p { margin: 0; color: var(--muted); font-size: .9rem; }

/* ---- search ---------------------------------------------------------------------- */
.search-region { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; margin-bottom: var(--gap); }
.searchbar {
  position: relative; display: flex; align-items: center; flex: 1; min-width: 260px;
  background: var(--surface); border: 1px solid var(--border); border-radius: calc(var(--radius) + 4px);
  box-shadow: var(--shadow); padding: 4px;
}
.searchbar-icon { color: var(--muted); padding: 0 6px 0 10px; display: inline-flex; }
.searchbar-input {
  flex: 1; min-width: 0; border: 0; background: transparent; color: var(--text); font: inherit;
  height: calc(var(--control-h) + 4px); padding: 0 8px; outline: none;
}
.searchbar:focus-within { outline: 3px solid var(--focus); outline-offset: 1px; }
.searchbar-go { border-radius: var(--radius); }

/* ---- forms ------------------------------------------------------------------------ */
.card {
  background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius-lg);
  box-shadow: var(--shadow);
}
.form-card { padding: calc(var(--pad) * 1.3); max-width: 640px; margin-bottom: var(--section); }
.form-title { margin-bottom: 14px; }
.form-fields { display: grid; gap: var(--gap); }
.form-actions { display: flex; gap: 10px; flex-wrap: wrap; margin-top: calc(var(--gap) + 6px); }
.form-note { display: flex; align-items: center; gap: 6px; color: var(--muted); font-size: .85rem; margin: 14px 0 0; }
.form-note .icon { color: var(--success); }
.field { display: flex; flex-direction: column; gap: 6px; margin: 0; }
.field > label, .field .label, .radio-group legend { font-weight: 600; font-size: .93rem; }
.input {
  height: var(--control-h); padding: 0 12px; border: 1px solid var(--border); border-radius: var(--radius);
  background: var(--surface); color: var(--text); font: inherit; width: 100%;
}
.input::placeholder, .searchbar-input::placeholder { color: var(--muted); opacity: .85; }
.input:focus { outline: 3px solid var(--focus); outline-offset: 0; border-color: var(--primary); }
.hint { margin: 0; font-size: .82rem; color: var(--muted); }
.select-wrap { position: relative; display: block; }
.select-wrap select { appearance: none; -webkit-appearance: none; padding-right: 36px; cursor: pointer; }
.select-wrap .icon { position: absolute; right: 12px; top: 50%; transform: translateY(-50%); pointer-events: none; color: var(--muted); }
.check { display: inline-flex; align-items: center; gap: 10px; cursor: pointer; font-weight: 500; }
.check input, .radio input { width: 18px; height: 18px; margin: 0; accent-color: var(--primary); cursor: pointer; }
.radio-group { border: 0; padding: 0; min-width: 0; }
.radio-group legend { padding: 0; margin-bottom: 8px; }
.radio-options { display: flex; flex-wrap: wrap; gap: 8px; }
.radio {
  display: inline-flex; align-items: center; gap: 8px; padding: 8px 14px; border: 1px solid var(--border);
  border-radius: var(--radius); background: var(--surface); cursor: pointer;
}
.radio.is-checked { border-color: var(--primary); background: var(--surface-alt); }
.subgroup { display: flex; gap: 10px; flex-wrap: wrap; margin-top: 8px; }

/* slider: no border / padding / margin on the input; thumb exactly --range-thumb wide */
.range-row { display: flex; align-items: center; gap: 14px; }
.range {
  -webkit-appearance: none; appearance: none; flex: 1; width: 100%; height: var(--range-thumb);
  margin: 0; padding: 0; border: 0; background: transparent; cursor: pointer;
}
.range::-webkit-slider-runnable-track {
  height: 6px; border-radius: 3px; background: var(--surface-alt); box-shadow: inset 0 0 0 1px var(--border);
}
.range::-webkit-slider-thumb {
  -webkit-appearance: none; appearance: none; width: var(--range-thumb); height: var(--range-thumb);
  margin-top: -6px; border-radius: 50%; border: 0; background: var(--primary);
  box-shadow: 0 1px 3px rgba(0,0,0,.35);
}
.range::-moz-range-track { height: 6px; border-radius: 3px; background: var(--surface-alt); }
.range::-moz-range-thumb { width: var(--range-thumb); height: var(--range-thumb); border: 0; border-radius: 50%; background: var(--primary); }
.range-value {
  min-width: 40px; text-align: center; font-weight: 700; padding: 4px 8px; border-radius: var(--radius);
  background: var(--surface-alt);
}
.range-scale { display: flex; justify-content: space-between; font-size: .8rem; color: var(--muted); margin-right: 54px; }

/* date picker */
.datepicker { position: relative; max-width: 340px; }
.date-control { display: flex; gap: 6px; }
.date-input[readonly] { cursor: pointer; }
.date-toggle {
  flex: none; width: var(--control-h); height: var(--control-h); display: inline-flex; align-items: center;
  justify-content: center; border: 1px solid var(--border); border-radius: var(--radius);
  background: var(--surface-alt); color: var(--text); cursor: pointer;
}
.date-toggle[aria-expanded="true"] { border-color: var(--primary); color: var(--primary); }
.date-popup {
  position: absolute; top: calc(100% + 6px); left: 0; z-index: 80; display: flex; flex-wrap: wrap; gap: 18px;
  width: max-content; max-width: min(880px, calc(100vw - 32px)); padding: 16px; background: var(--surface);
  border: 1px solid var(--border); border-radius: var(--radius-lg); box-shadow: var(--shadow-lg);
}
.month-title { font-weight: 700; text-align: center; margin-bottom: 6px; }
.month-grid { border-collapse: collapse; }
.month-grid th { font-size: .72rem; color: var(--muted); font-weight: 600; padding: 2px 0 6px; width: 36px; }
.month-grid td { padding: 1px; text-align: center; }
.day { display: inline-flex; width: 34px; height: 34px; align-items: center; justify-content: center; border-radius: 50%; font: inherit; font-size: .88rem; }
.day.is-off { color: var(--muted); opacity: .45; }
button.day { border: 0; background: var(--surface-alt); color: var(--primary); font-weight: 700; cursor: pointer; box-shadow: inset 0 0 0 1px var(--primary); }
.mode-dark button.day { color: var(--text); }
button.day:hover, button.day.is-selected { background: var(--primary); color: var(--primary-text); }
.day-wide { display: block; margin: 4px 0; padding: 8px 12px; border: 1px solid var(--border); border-radius: var(--radius); background: var(--surface-alt); color: var(--text); font: inherit; cursor: pointer; }
.date-legend { width: 100%; margin: 0; font-size: .78rem; color: var(--muted); }

/* ---- tabs ------------------------------------------------------------------------- */
.tabs { margin-bottom: var(--section); }
.tablist { display: flex; gap: 4px; border-bottom: 2px solid var(--border); overflow-x: auto; }
.tab {
  font: inherit; font-weight: 600; color: var(--muted); background: none; border: 0;
  border-bottom: 3px solid transparent; margin-bottom: -2px; padding: 10px 16px; cursor: pointer; white-space: nowrap;
}
.tab:hover { color: var(--text); }
.tab.is-active { color: var(--primary); border-bottom-color: var(--primary); }
.mode-dark .tab.is-active { color: var(--text); border-bottom-color: var(--accent); }
.tabpanel { padding-top: var(--gap); }

/* ---- hover menu ------------------------------------------------------------------- */
.menu { position: relative; display: inline-block; }
.menu-button {
  display: inline-flex; align-items: center; gap: 6px; min-height: var(--control-h); padding: 0 14px;
  font: inherit; font-weight: 600; color: inherit; background: rgba(127,127,127,.12);
  border: 1px solid transparent; border-radius: var(--radius); cursor: pointer;
  text-transform: var(--nav-case); letter-spacing: var(--nav-spacing); font-size: .92rem;
}
.menu-list {
  display: none; position: absolute; top: 100%; left: 0; z-index: 60; min-width: 220px; margin: 0;
  padding: 6px; list-style: none; background: var(--surface); color: var(--text);
  border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow-lg);
}
.menu:hover .menu-list, .menu.is-open .menu-list { display: block; }
.menu:hover .menu-button, .menu.is-open .menu-button { background: rgba(127,127,127,.22); }
.site-nav .nav-item:last-child .menu-list, .site-nav .nav-item:nth-last-child(2) .menu-list { left: auto; right: 0; }
.layout-sidebar .menu { display: block; }
.layout-sidebar .site-nav .menu-list, .layout-sidebar .site-nav .nav-item .menu-list {
  top: 0; left: 100%; right: auto;  /* fly out beside the sidebar, never over the trigger */
}
.menu-item {
  display: block; width: 100%; text-align: left; font: inherit; color: var(--text); background: none;
  border: 0; border-radius: calc(var(--radius) - 2px); padding: 9px 12px; cursor: pointer;
}
.menu-item:hover, .menu-item:focus-visible { background: var(--surface-alt); color: var(--primary); }
.mode-dark .menu-item:hover { color: var(--text); }

/* ---- listings ---------------------------------------------------------------------- */
.toolbar {
  display: flex; align-items: center; gap: 18px; flex-wrap: wrap; padding: 12px 16px; margin-bottom: var(--gap);
  background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius);
}
.toolbar .field { flex-direction: row; align-items: center; gap: 10px; }
.toolbar .field > label { white-space: nowrap; }
.toolbar .select-wrap { min-width: 200px; }
.toolbar-label { display: inline-flex; align-items: center; gap: 6px; color: var(--muted); font-weight: 600; align-self: center; }
.results { margin-bottom: var(--section); }
.results-head { display: flex; align-items: baseline; justify-content: space-between; gap: 12px; }
.card-grid { list-style: none; margin: 0; padding: 0; display: grid; gap: var(--gap); grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); }
.item-card { overflow: hidden; display: flex; flex-direction: column; }
.thumb {
  aspect-ratio: 16 / 9; display: flex; align-items: flex-end; padding: 12px; color: rgba(255,255,255,.92);
  font-family: var(--font-heading); font-size: 2.2rem; font-weight: 800; opacity: var(--thumb-fade);
}
.density-dense .thumb { aspect-ratio: 16 / 7; font-size: 1.6rem; }
.thumb-0 { background: linear-gradient(135deg, #ff9a8b, #ff6a88 55%, #ff99ac); }
.thumb-1 { background: linear-gradient(135deg, #4facfe, #00c6fb); }
.thumb-2 { background: linear-gradient(135deg, #43e97b, #38f9d7); }
.thumb-3 { background: linear-gradient(135deg, #fa709a, #fee140); }
.thumb-4 { background: linear-gradient(135deg, #667eea, #764ba2); }
.thumb-5 { background: linear-gradient(135deg, #f6d365, #fda085); }
.thumb-6 { background: linear-gradient(135deg, #30cfd0, #330867); }
.thumb-7 { background: linear-gradient(135deg, #5ee7df, #b490ca); }
.card-body { padding: var(--pad); display: flex; flex-direction: column; gap: 6px; flex: 1; }
.card-title { margin: 0; font-size: 1.05rem; }
.card-sub { margin: 0; color: var(--muted); font-size: .9rem; }
.title-link {
  font: inherit; font-weight: 700; color: var(--primary); background: none; border: 0; padding: 0;
  text-align: left; cursor: pointer;
}
.mode-dark .title-link { color: var(--accent); }
.title-link:hover { text-decoration: underline; }
.facts { margin: auto 0 0; display: flex; flex-wrap: wrap; gap: 6px 16px; padding-top: 6px; }
.fact { display: flex; flex-direction: column; }
.fact dt { font-size: .72rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); }
.fact dd { margin: 0; font-weight: 600; }
.fact-price dd { font-size: 1.15rem; color: var(--text); }
.fact-rating dd::before, .cell-rating::before { content: "\2605\00a0"; color: #f5a623; }
.data-table { width: 100%; border-collapse: collapse; background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius); overflow: hidden; }
.data-table th, .data-table td { text-align: left; padding: 10px 14px; border-bottom: 1px solid var(--border); vertical-align: top; }
.density-dense .data-table th, .density-dense .data-table td { padding: 7px 12px; }
.data-table thead th { background: var(--surface-alt); font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); }
.data-table tbody tr:hover { background: var(--surface-alt); }
.data-table tbody th { font-weight: 600; }
.row-sub { display: block; font-weight: 400; font-size: .85rem; color: var(--muted); }
.cell-price { font-weight: 700; white-space: nowrap; }

/* ---- content ----------------------------------------------------------------------- */
.text-block { margin-bottom: var(--section); max-width: 820px; }
.text-block p { color: var(--text); opacity: .9; }
.listing-cards .text-block, .text-block:has(.card-grid), .text-block:has(.data-table) { max-width: none; }
.section-title { margin: 0 0 var(--gap); }
.spec-card { padding: var(--pad); margin-bottom: var(--section); max-width: 720px; }
.spec-table { width: 100%; border-collapse: collapse; }
.spec-table th, .spec-table td { text-align: left; padding: 9px 0; border-bottom: 1px solid var(--border); }
.spec-table tr:last-child th, .spec-table tr:last-child td { border-bottom: 0; }
.spec-table th { width: 40%; color: var(--muted); font-weight: 500; }
.bullets { padding-left: 1.2em; }
.action-row { display: flex; gap: 10px; flex-wrap: wrap; margin-bottom: var(--section); }
.related { margin-bottom: var(--section); padding-top: var(--gap); border-top: 1px solid var(--border); }
.related h2 { font-size: 1rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); }
.related-list { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 10px 28px; }
.feedback {
  display: flex; align-items: center; gap: 16px; padding: 14px 18px; margin-bottom: var(--section);
  background: var(--surface-alt); border-radius: var(--radius); max-width: 640px;
}
.feedback .radio-group { display: block; }
.feedback .radio-group legend { float: left; margin: 0 16px 0 0; padding: 6px 0 0; }
.feedback .radio-options { display: inline-flex; }
.feedback .radio { padding: 5px 14px; }

/* ---- confirmation ----------------------------------------------------------------- */
.confirmation { max-width: 640px; margin: 12px auto var(--section); padding: calc(var(--pad) * 2); text-align: center; }
.confirm-icon {
  width: 64px; height: 64px; margin: 0 auto 18px; border-radius: 50%; display: flex; align-items: center;
  justify-content: center; background: var(--success-bg); color: var(--success);
}
.confirm-icon .icon { width: 34px; height: 34px; }
.confirmation .text-block { max-width: none; margin-bottom: 18px; }
.confirm-actions { display: flex; justify-content: center; gap: 10px; margin-top: 10px; }

/* ---- overlays ---------------------------------------------------------------------- */
.overlay-root { position: fixed; inset: 0; z-index: 1000; pointer-events: none; }
.overlay-root > * { pointer-events: auto; }
.backdrop { position: fixed; inset: 0; background: var(--backdrop); }
.modal {
  position: fixed; top: 50%; left: 50%; transform: translate(-50%, -50%); width: min(500px, calc(100vw - 32px));
  max-height: calc(100vh - 48px); overflow: auto; background: var(--surface); color: var(--text);
  border-radius: var(--radius-lg); box-shadow: var(--shadow-lg); border: 1px solid var(--border);
}
.modal-head { padding: 20px 24px 0; }
.modal-head h2 { margin: 0; }
.modal-body { padding: 12px 24px 8px; }
.modal-foot { display: flex; justify-content: flex-end; gap: 10px; padding: 12px 24px 20px; }
.share-link {
  display: flex; align-items: center; gap: 10px; padding: 10px 12px; border: 1px dashed var(--border);
  border-radius: var(--radius); background: var(--surface-alt); font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .85rem;
}
.cookie-banner {
  position: fixed; left: 24px; right: 24px; bottom: 24px; margin: 0 auto; max-width: 980px; display: flex;
  gap: 20px; align-items: center; padding: 22px 26px; background: var(--surface); color: var(--text);
  border-radius: var(--radius-lg); box-shadow: var(--shadow-lg); border: 1px solid var(--border);
}
.cookie-icon { color: var(--accent); flex: none; }
.cookie-body h2 { font-size: 1.1rem; margin-bottom: 4px; }
.cookie-body p { margin: 0; color: var(--muted); font-size: .92rem; }
.cookie-actions { display: flex; flex-direction: column; gap: 8px; flex: none; }
.permission {
  position: fixed; top: 12px; left: 50%; transform: translateX(-50%); width: min(380px, calc(100vw - 24px));
  padding: 18px 20px; background: var(--surface); color: var(--text); border-radius: var(--radius);
  box-shadow: var(--shadow-lg); border: 1px solid var(--border);
}
.permission-head { display: flex; align-items: center; gap: 10px; }
.permission-head h2 { font-size: 1rem; margin: 0; }
.permission-icon { color: var(--primary); display: inline-flex; }
.permission p { color: var(--muted); font-size: .9rem; margin: 10px 0 14px; }
.permission-actions { display: flex; justify-content: flex-end; gap: 8px; }

/* ---- footer ------------------------------------------------------------------------- */
.site-footer { border-top: 1px solid var(--border); background: var(--surface); color: var(--muted); font-size: .88rem; }
.footer-inner {
  max-width: 1180px; margin: 0 auto; padding: 28px 24px 8px; display: grid; gap: 24px;
  grid-template-columns: 1.4fr 1fr 1fr;
}
.layout-sidebar .footer-inner, .layout-sidebar .footer-legal { max-width: 1080px; margin: 0; padding-left: 40px; }
.footer-name { font-family: var(--font-heading); font-weight: 800; color: var(--text); font-size: 1.05rem; }
.footer-heading { font-weight: 700; color: var(--text); text-transform: uppercase; font-size: .75rem; letter-spacing: .08em; }
.footer-legal { max-width: 1180px; margin: 0 auto; padding: 8px 24px 24px; font-size: .8rem; }

@media (max-width: 820px) {
  .layout-sidebar .shell { display: block; }
  .layout-sidebar .site-header { min-height: 0; border-right: 0; border-bottom: 1px solid var(--border); }
  .layout-sidebar .sidebar-note { display: none; }
  .hero { grid-template-columns: 1fr; padding: 28px 22px; }
  .hero-art { display: none; }
  .footer-inner, .highlights, .item-head, .form-layout.has-summary { grid-template-columns: 1fr; }
  .cookie-banner { flex-direction: column; align-items: stretch; }
}
"""


FRAME_CSS = r"""
/* ---- site furniture: section bar, sidebar, footer links ----------------------------- */
.site-sections { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 18px; }
.link-group-header { display: flex; align-items: center; gap: 4px 14px; flex-wrap: wrap; }
.link-group-header .link-group-title { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.link-list { list-style: none; margin: 0; padding: 0; }
.link-group-header .link-list { display: flex; flex-wrap: wrap; gap: 2px 14px; }
.site-link {
  font: inherit; color: inherit; background: none; border: 0; padding: 3px 0; cursor: pointer;
  text-align: left; text-transform: var(--nav-case); letter-spacing: var(--nav-spacing);
}
.site-link:hover { text-decoration: underline; }
.link-group-header .site-link { font-size: .9rem; font-weight: 600; }
.link-group-title { font-weight: 700; text-transform: uppercase; font-size: .72rem; letter-spacing: .08em; margin: 0 0 6px; }
.page-columns { flex: 1; display: flex; flex-direction: column; }
.page-columns.has-sidebar {
  display: grid; grid-template-columns: 230px minmax(0, 1fr); max-width: 1180px; width: 100%;
  margin: 0 auto; gap: 8px;
}
.site-sidebar { padding: var(--section) 0 var(--section) 24px; display: flex; flex-direction: column; gap: 22px; font-size: .9rem; }
.site-sidebar .site-link { color: var(--primary); }
.footer-links {
  max-width: 1180px; margin: 0 auto; padding: 8px 24px 12px; display: grid; gap: 18px;
  grid-template-columns: repeat(auto-fit, minmax(160px, 1fr));
}
.footer-links .link-group-title { color: var(--text); }
.layout-sidebar .site-sections { flex-direction: column; align-items: stretch; }
.layout-sidebar .link-group-header, .layout-sidebar .link-group-header .link-list { flex-direction: column; align-items: flex-start; }
.layout-sidebar .footer-links { max-width: 1080px; margin: 0; padding-left: 40px; }

/* ---- layouts: results as rows ------------------------------------------------------ */
.result-rows { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: calc(var(--gap) * .75); }
.result-row { display: grid; grid-template-columns: 170px minmax(0, 1fr); overflow: hidden; }
.result-row .row-thumb { aspect-ratio: auto; height: 100%; min-height: 108px; font-size: 2rem; }
.density-dense .result-row { grid-template-columns: 132px minmax(0, 1fr); }
.density-dense .result-row .row-thumb { aspect-ratio: auto; min-height: 84px; font-size: 1.5rem; }
.row-body { padding: calc(var(--pad) * .8) var(--pad); display: flex; flex-direction: column; gap: 4px; min-width: 0; }
.row-body .facts { margin: 6px 0 0; gap: 4px 22px; padding-top: 0; }
.row-body .fact { flex-direction: row; align-items: baseline; gap: 6px; }
.row-body .fact-price { margin-left: auto; }

/* ---- layouts: filters in a panel left of the results ------------------------------- */
.refine-layout { display: grid; grid-template-columns: 236px minmax(0, 1fr); gap: calc(var(--gap) * 1.4); align-items: start; margin-bottom: var(--section); }
.filter-panel {
  padding: var(--pad); background: var(--surface); border: 1px solid var(--border);
  border-radius: var(--radius-lg); box-shadow: var(--shadow);
}
.filter-title {
  display: flex; align-items: center; gap: 8px; font-size: 1rem; margin: 0 0 14px; padding-bottom: 10px;
  border-bottom: 1px solid var(--border);
}
.filter-fields { display: flex; flex-direction: column; gap: var(--gap); }
.filter-fields .select-wrap { min-width: 0; }
.refine-results { min-width: 0; }
.refine-results > .results:last-child { margin-bottom: 0; }
.refine-results .listing-table { overflow-x: auto; }  /* a wide table scrolls, never overlaps */
/* a side-column theme has no room for four columns: there the site sidebar of a page with a
   filter panel goes under the results, its groups side by side */
.layout-sidebar.filters-left .page-columns.has-sidebar:has(.refine-layout) { grid-template-columns: minmax(0, 1fr); }
.layout-sidebar.filters-left .page-columns.has-sidebar:has(.refine-layout) .site-sidebar {
  order: 2; flex-direction: row; flex-wrap: wrap; gap: 22px 56px; padding: 0 40px var(--section);
}

/* ---- layouts: the header's link groups as an open mega-menu ------------------------ */
.mega-menu { position: relative; z-index: 10; background: var(--surface); color: var(--text); border-bottom: 1px solid var(--border); box-shadow: var(--shadow); }
.mega-inner {
  max-width: 1180px; margin: 0 auto; padding: 18px 24px 20px; display: grid; gap: 16px 36px;
  grid-template-columns: repeat(auto-fill, minmax(180px, 1fr));
}
.layout-sidebar .mega-inner { max-width: 1080px; margin: 0; padding: 18px 40px 20px; }
.mega-menu .link-group-header { display: block; }
.mega-menu .link-group:has(li:nth-child(7)) { grid-column: span 2; }
.mega-menu .link-group-header .link-group-title {
  position: static; width: auto; height: auto; overflow: visible; clip: auto; color: var(--muted);
  margin: 0 0 8px; padding-bottom: 6px; border-bottom: 2px solid var(--primary);
}
.mega-menu .link-group-header .link-list { display: block; }
.mega-menu .link-group:has(li:nth-child(7)) .link-list { columns: 2; column-gap: 36px; }
.mega-menu .link-group-header .site-link { display: block; font-weight: 500; padding: 4px 0; }
.mega-menu .link-group-header .site-link:hover { color: var(--primary); }

/* ---- layouts: sections as an accordion --------------------------------------------- */
.accordion { margin-bottom: var(--section); background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius-lg); }
.accordion-item + .accordion-item { border-top: 1px solid var(--border); }
.accordion-heading { margin: 0; font-size: 1rem; }
.accordion-toggle {
  display: flex; width: 100%; align-items: center; justify-content: space-between; gap: 12px;
  padding: 14px 18px; font: inherit; font-weight: 600; color: var(--text); background: none; border: 0;
  border-radius: var(--radius-lg); cursor: pointer; text-align: left;
}
.accordion-toggle:hover { background: var(--surface-alt); }
.accordion-toggle .icon { transform: rotate(-90deg); color: var(--muted); }
.accordion-toggle[aria-expanded="true"] { color: var(--primary); border-radius: var(--radius-lg) var(--radius-lg) 0 0; }
.mode-dark .accordion-toggle[aria-expanded="true"] { color: var(--accent); }
.accordion-toggle[aria-expanded="true"] .icon { transform: none; color: inherit; }
.accordion-panel { padding: 4px 18px var(--pad); }
.accordion-panel > :last-child { margin-bottom: 0; }
.accordion-panel .spec-card { box-shadow: none; }

/* ---- layouts: the site sidebar right of the main column ---------------------------- */
.sidebar-right .page-columns.has-sidebar { grid-template-columns: minmax(0, 1fr) 230px; }
.sidebar-right .site-sidebar { padding: var(--section) 24px var(--section) 0; }

@media (max-width: 820px) {
  .page-columns.has-sidebar, .sidebar-right .page-columns.has-sidebar, .refine-layout { grid-template-columns: 1fr; }
  .result-row, .density-dense .result-row { grid-template-columns: 110px minmax(0, 1fr); }
  .mega-menu .link-group:has(li:nth-child(7)) { grid-column: auto; }
}
"""

BASE_CSS = CLASSIC_CSS + FRAME_CSS
"""The whole base sheet: :data:`CLASSIC_CSS` (the sheet of sites before furniture and layouts,
kept byte for byte) and :data:`FRAME_CSS` (site furniture and the layouts' rules)."""
