"""The LLM site coder: page templates and CSS for a spec, written in stages and checked.

1. **Style guide** (stage ``render``): a :class:`StyleGuide` (palette, fonts from a fixed
   list, layout, listing, mode, density, a few validated extra CSS rules). The site's CSS
   is the nearest built-in theme (:mod:`webworld.render.themes`) with the guide's palette
   and fonts, plus the extra rules.
2. **Pages**: one :class:`PageTemplate` per page, concurrently (bounded), each written
   against the typed template context (:class:`webworld.render.context.PageContext`,
   described to the model from its own fields), the element views of that page in
   sample states and the macros of the renderer's ``widgets.html``.
3. **Build**: :func:`webworld.render.site.render_site` writes the site (layout, widgets,
   JS and manifest stay the deterministic renderer's) in a staging directory; the LLM's
   page templates and the CSS replace the renderer's.
4. **Self-repair**: each template is compiled in Jinja2's sandbox and rendered in
   representative states (a bounded BFS of the FSM chosen to show every element both
   shown and hidden where the sample allows), with and without a refused-action message;
   :func:`webworld.render.checks.check_page` and an alert check judge the HTML. The exact
   problems go back to the model, up to ``max_rounds`` times; a page still broken falls
   back to the deterministic template and is reported.

:func:`repair_pages` sends browser-verification failures of an already coded site back
to the coder for the pages involved.

What a model writes is data: JSON validated by pydantic, CSS checked by rules, templates
rendered only by Jinja2's :class:`~jinja2.sandbox.SandboxedEnvironment` (with
``StrictUndefined``). Nothing a model writes is ever ``exec``'d or ``eval``'d as Python.

The parts, one module each: :mod:`.style` (stage 1 and the stylesheet) with :mod:`.css`
(the CSS rules), :mod:`.samples` (sample states), :mod:`.lint` (template checks from the
syntax tree), :mod:`.evaluate` (rendering and judging a template), :mod:`.prompts` (what
the model is told) and :mod:`.coder` (the stages put together).
"""

from webworld.agents.site_coder.coder import (
    CODER_GENERATOR,
    STAGE,
    CoderResult,
    PageTemplate,
    code_site,
    repair_pages,
)
from webworld.agents.site_coder.css import css_problems
from webworld.agents.site_coder.lint import lint_template
from webworld.agents.site_coder.samples import sample_states
from webworld.agents.site_coder.style import Palette, StyleGuide, nearest_theme, style_css

__all__ = ["CODER_GENERATOR", "STAGE", "CoderResult", "PageTemplate", "Palette", "StyleGuide",
           "code_site", "css_problems", "lint_template", "nearest_theme", "repair_pages",
           "sample_states", "style_css"]
