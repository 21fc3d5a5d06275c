"""Files every rendered site carries: shared templates, the stylesheet and site.js."""

from webworld.render.assets.css import RANGE_THUMB_PX, favicon_svg, theme_css
from webworld.render.assets.js import SITE_JS
from webworld.render.assets.templates import LAYOUT_HTML, WIDGETS_HTML

__all__ = ["LAYOUT_HTML", "RANGE_THUMB_PX", "SITE_JS", "WIDGETS_HTML", "favicon_svg", "theme_css"]
