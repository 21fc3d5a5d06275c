"""Spec -> site directory (Jinja2 templates, theme CSS, small JS) and page rendering.

``render_site`` writes a self-contained site; ``load_site`` opens it; ``render_page``
turns (site, FSM state) into HTML that follows :mod:`webworld.contract`; ``check_page``
says what a rendered page gets wrong against that contract.
"""

from webworld.render.checks import check_page
from webworld.render.site import SITE_FORMAT, Site, SiteError, load_site, render_site
from webworld.render.themes import THEMES, Theme, choose_theme
from webworld.render.view import RenderError, make_environment, page_context, render_page

__all__ = [
    "SITE_FORMAT", "THEMES", "RenderError", "Site", "SiteError", "Theme", "check_page",
    "choose_theme", "load_site", "make_environment", "page_context", "render_page",
    "render_site",
]
