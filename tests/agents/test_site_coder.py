"""The LLM site coder against a scripted OpenAI-compatible server on loopback.

The "good" replies are the deterministic renderer's own page templates (read from a site
it rendered), with a marker so the tests can tell the LLM's pages from the fallback.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import httpx
import jinja2.sandbox
import pytest

from tests.agents.scripted_llm import Reply, Script, run_to_end
from tests.conftest import make_small_world
from webworld.agents.client import LLMClient
from webworld.agents.site_coder import (
    PageTemplate,
    StyleGuide,
    code_site,
    css_problems,
    lint_template,
    repair_pages,
    sample_states,
)
from webworld.agents.site_coder.prompts import page_messages
from webworld.render import check_page, load_site, make_environment, render_page, render_site
from webworld.render.context import context_views
from webworld.render.site import page_template
from webworld.serve.app import create_app
from webworld.serve.runner import LiveServer
from webworld.spec.io import load_spec
from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine

SPECS = Path(__file__).parents[2] / "fsm_specs"

STYLE = {
    "label": "Test look",
    "palette": {"bg": "#fafafa", "surface": "#ffffff", "surface_alt": "#f0f0f4",
                "text": "#1a1a2e", "muted": "#5a5a70", "border": "#dddde6",
                "primary": "#7b2cbf", "primary_text": "#ffffff", "accent": "#ff9e00",
                "header_bg": "#240046", "header_text": "#ffffff", "hero_from": "#7b2cbf",
                "hero_to": "#c77dff"},
    "font_body": "humanist", "font_heading": "serif", "heading_weight": 700, "radius": 12,
    "nav_uppercase": False, "layout": "topnav", "listing": "cards", "mode": "light",
    "density": "airy", "extra_css": ".hero { letter-spacing: .01em; }\n.card { border-width: 2px; }",
}


@pytest.fixture
def llm(llm, tmp_path: Path):
    """The shared scripted endpoint; these clients share one cache folder."""
    script, make = llm
    return script, functools.partial(make, cache_dir=tmp_path / "llm-cache")


def deterministic_templates(spec: WorldSpec, root: Path) -> dict[str, str]:
    site = render_site(spec, root / "reference")
    manifest = json.loads((site / "manifest.json").read_text())
    return {pid: (site / "templates" / rel).read_text() for pid, rel in manifest["pages"].items()}


def marked(source: str, page_id: str) -> str:
    """A good template with a visible marker: this page came from the LLM."""
    return source.replace("{% block main %}",
                          f'{{% block main %}}\n<p class="muted">LLM page {page_id}</p>', 1)


def template(source: str) -> dict[str, str]:
    return {"template": source}


def run(client: LLMClient, coro_fn, *args: Any, **kwargs: Any):
    return run_to_end(client, coro_fn(client, *args, **kwargs))


def user_text(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


def check_site(site_dir: Path, spec: WorldSpec, pages: set[str] | None = None) -> int:
    """check_page on every sample state (with and without a refusal message): no problems."""
    site = load_site(site_dir)
    env, machine = make_environment(site), Machine(spec)
    count = 0
    for page_id, states in sample_states(spec, machine).items():
        if pages is not None and page_id not in pages:
            continue
        for state in states:
            html = render_page(site, env, machine, state)
            assert check_page(html, spec, machine, state) == [], (page_id, state)
            render_page(site, env, machine, state, error="Not now.")
            count += 1
    return count


# --- (a) a broken page is repaired ----------------------------------------------------------

BROKEN_BY_HAND = """{% extends "layout.html" %}
{% import "widgets.html" as w %}
{% block main %}
<h1>{{ page.heading }}</h1>
{{ w.element(elements.item_pick) }}
<button type="submit" form="ww-act-wrong" data-ww-id="back">Back</button>
{% endblock %}
"""


def test_broken_page_is_repaired_and_the_site_serves(llm, tmp_path: Path) -> None:
    script, make = llm
    spec = make_small_world()
    good = deterministic_templates(spec, tmp_path)
    results = marked(good["results"], "results")
    script.push(
        STYLE,
        template(marked(good["home"], "home")),
        # results: a syntax error, then an unsafe expression, then a dropped element and a
        # wrong form target, then a good template
        template(results.replace("{% block main %}", "{% block main %}\n{% if %}")),
        template(results.replace("{% block main %}", "{% block main %}\n<p>{{ ''.__class__ }}</p>")),
        template(BROKEN_BY_HAND),
        template(results),
        template(marked(good["cart"], "cart")),
        template(marked(good["done"], "done")),
    )
    out = tmp_path / "sites" / spec.id
    result = run(make(), code_site, spec, out, max_rounds=3, concurrency=1)

    assert result.repaired == {"results": 3}
    assert "repaired: results (3 rounds)" in result.report_lines()
    assert result.fallbacks == {} and result.problems == [] and result.ok
    assert result.llm_pages == ["home", "results", "cart", "done"]
    assert len(script.requests) == 8

    # what went back to the model, round by round
    syntax, unsafe, contract_ = (user_text(r) for r in script.requests[3:6])
    assert "Repair round 1 of 3" in syntax
    assert re.search(r"template syntax error at line 5: Expected an expression", syntax)
    assert "the sandbox refused an unsafe operation at line 5 of your template:" in unsafe
    assert "__class__" in unsafe
    assert ("element 'add' (button 'Add') is visible in this state but missing: no node has "
            'data-ww-id="add"') in contract_
    assert 'must belong to form "ww-act-results_back"' in contract_
    assert 'submits form "ww-act-wrong", which is not an action' in contract_
    assert "rendered line" in contract_ and "state 1: visible elements" in contract_
    # every repair request carries the original page prompt and the faulty template
    for request in script.requests[3:6]:
        assert 'Write the Jinja2 template of the page "Results"' in request["messages"][1]["content"]
        assert request["messages"][2]["role"] == "assistant"

    # the page prompt gives the contract, this page's views and the macros
    prompt = script.requests[2]["messages"][1]["content"]
    assert "PageContext: Everything a page template gets" in prompt  # from the type
    assert '"item_pick"' in prompt and '"ww-act-add_to_cart"' in prompt
    assert "w.element(el, listing=\"cards\")" in prompt and "w.region_form(" in prompt
    assert "EXACTLY ONCE" in prompt

    # the final site: LLM templates on disk, the style guide's CSS, contract holds
    assert (out / "templates" / "pages" / "results.html").read_text() == results
    css = (out / "static" / "theme.css").read_text()
    assert "--primary: #7b2cbf;" in css and ".card { border-width: 2px; }" in css
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["generator"] == "webworld.agents.site_coder/1"
    assert manifest["coder"]["llm_pages"] == result.llm_pages
    assert manifest["theme"] == result.theme
    assert check_site(out, spec) >= 4
    assert not list(out.parent.glob(f".{out.name}.*")), "the staging directory is gone"

    with LiveServer(create_app(out)) as server, httpx.Client(
            base_url=server.url, follow_redirects=True, timeout=10) as http:
        home = http.get("/")
        assert home.status_code == 200 and "LLM page home" in home.text
        assert "default-src 'self'" in home.headers["content-security-policy"]
        page = http.post("/act/search", data={"q": "shoes"})
        assert page.url.path == "/page/results" and "LLM page results" in page.text
        assert http.get("/static/theme.css").text == css


# --- (b) a page the model never fixes falls back ------------------------------------------


def test_unfixable_page_falls_back_to_the_deterministic_template(llm, tmp_path: Path) -> None:
    script, make = llm
    spec = make_small_world()
    good = deterministic_templates(spec, tmp_path)
    never = good["cart"].replace('{% extends "layout.html" %}', "")  # no layout, no forms
    script.push(
        STYLE,
        template(marked(good["home"], "home")),
        template(marked(good["results"], "results")),
        template(never), template(never),                      # cart: first try and 1 repair
        Reply("no JSON here"), Reply("still no JSON"),         # done: the client gives up
    )
    out = tmp_path / "site"
    result = run(make(max_repairs=1), code_site, spec, out, max_rounds=1, concurrency=1)

    assert result.llm_pages == ["home", "results"]
    assert set(result.fallbacks) == {"cart", "done"}
    assert any("must start with {% extends" in p for p in result.fallbacks["cart"])
    assert "no usable reply" in result.fallbacks["done"][0]
    assert not result.ok and len(result.problems) == 2
    assert result.problems[0].startswith("page 'cart': fell back to the deterministic template")
    report = result.report_lines()
    assert "2 page(s) written by the LLM, 2 fell back" in report[0]
    assert report[1:] == result.problems
    assert user_text(script.requests[4]).count("must start with {% extends") == 1

    site = load_site(out)
    plan = site.plan.pages
    for page_id in ("cart", "done"):
        on_disk = (out / "templates" / "pages" / f"{page_id}.html").read_text()
        assert on_disk == page_template(plan[page_id], home=False)
    assert json.loads((out / "manifest.json").read_text())["coder"]["fallback_pages"] == [
        "cart", "done"]
    assert check_site(out, spec) >= 4


# --- (c) unsafe extra CSS is sent back ------------------------------------------------------


@pytest.mark.parametrize("css, problem", [
    ("body { background: url(http://evil.example/x.png); }", "url(...) is not allowed"),
    ('@import "https://fonts.example/f.css";', "@import is not allowed"),
    (".x { background: url(//evil.example/a.png) }", "addresses of other hosts"),
    ("@\\69mport 'a.css';", "backslash escapes"),
    ("[data-ww-id] { display: none }", "data-ww-* attributes"),
    (".btn { pointer-events: none }", "hiding content"),
    (".a { color: red", "braces"),
])
def test_css_rules_are_checked(css: str, problem: str) -> None:
    assert any(problem in p for p in css_problems(css))
    with pytest.raises(ValueError, match="extra_css rejected"):
        StyleGuide.model_validate({**STYLE, "extra_css": css})


def test_style_label_cannot_smuggle_css() -> None:
    with pytest.raises(ValueError, match="label"):
        StyleGuide.model_validate({**STYLE, "label": "x */ @import 'a.css'; /*"})


def test_unsafe_style_guide_css_is_sent_back_for_repair(llm, tmp_path: Path) -> None:
    script, make = llm
    spec = make_small_world()
    good = deterministic_templates(spec, tmp_path)
    script.push(
        {**STYLE, "extra_css": ".hero { background: url(http://evil.example/bg.png) }"},
        {**STYLE, "extra_css": '@import url("https://cdn.example/x.css");'},
        {**STYLE, "palette": {**STYLE["palette"], "primary": "#123"}, "mode": "dark",
         "layout": "sidebar", "listing": "table", "density": "dense"},
        *(template(good[p.id]) for p in spec.pages),
    )
    out = tmp_path / "site"
    result = run(make(), code_site, spec, out, concurrency=1)

    first, second = user_text(script.requests[1]), user_text(script.requests[2])
    assert "could not be used" in first and "extra_css" in first
    assert "url(...) is not allowed" in first
    assert "@import is not allowed" in second
    assert result.ok and result.style is not None and result.style.palette.primary == "#112233"
    # the nearest built-in theme keeps the guide's structure (sidebar, table)
    site = load_site(out)
    assert (site.theme.layout, site.theme.listing) == ("sidebar", "table")
    css = (out / "static" / "theme.css").read_text()
    assert "--primary: #112233;" in css and "color-scheme: dark;" in css
    assert "http" not in css and "@import" not in css and "url(" not in css


def test_style_guide_that_never_validates_uses_the_built_in_theme(llm, tmp_path: Path) -> None:
    script, make = llm
    spec = make_small_world()
    good = deterministic_templates(spec, tmp_path)
    bad = {**STYLE, "extra_css": "@import 'x.css';"}
    script.push(bad, bad, *(template(good[p.id]) for p in spec.pages))
    out = tmp_path / "site"
    result = run(make(max_repairs=1), code_site, spec, out, concurrency=1,
                 base_theme="graphite")
    assert result.style is None and result.theme == "graphite"
    assert result.problems and result.problems[0].startswith("style guide: no valid reply")
    assert result.llm_pages == [p.id for p in spec.pages]
    assert "@import" not in (out / "static" / "theme.css").read_text()


# --- verifier failures go back to the coder -----------------------------------------------


def test_verification_failures_are_sent_back(llm, tmp_path: Path) -> None:
    script, make = llm
    spec = make_small_world()
    good = deterministic_templates(spec, tmp_path)
    script.push(STYLE, *(template(marked(good[p.id], p.id)) for p in spec.pages))
    out = tmp_path / "site"
    first = run(make(), code_site, spec, out, concurrency=1)
    assert first.ok
    before = len(script.requests)

    fixed = marked(good["results"], "results v2")
    script.push(template((out / "templates/pages/results.html").read_text()),  # unchanged
                template(fixed))
    failure = "step 2 click('add'): the button is covered by another element"
    result = run(make(), repair_pages, out, {"results": [failure], "nowhere": ["x"]},
                 max_rounds=2)
    assert result.repaired == {"results": 2} and result.fallbacks == {}
    assert (out / "templates/pages/results.html").read_text() == fixed
    sent = script.requests[before]["messages"]
    assert failure in sent[-1]["content"] and sent[-2]["role"] == "assistant"
    assert "the template is unchanged" in user_text(script.requests[before + 1])
    assert any("'nowhere'" in p for p in result.problems)
    assert result.llm_pages == [p.id for p in spec.pages]
    check_site(out, spec, {"results"})


# --- a realistic spec: the renderer's own templates pass without repairs ---------------------


class ByPage:
    """Replies chosen by the page a request is about (so pages may run concurrently)."""

    def __init__(self, script: Script, style: dict, pages: dict[str, str]) -> None:
        self.script, self.style, self.pages = script, style, pages

    def __bool__(self) -> bool:
        return True

    def popleft(self) -> Reply:
        prompt = self.script.requests[-1]["messages"][-1]["content"]
        match = re.search(r'template of the page "[^"]*" \(id (\w+),', prompt)
        if match is None:
            return Reply(json.dumps(self.style))
        return Reply(json.dumps(template(self.pages[match.group(1)])))


def test_realistic_spec_concurrent_pages_pass_first_time(llm, tmp_path: Path) -> None:
    script, make = llm
    spec = load_spec(SPECS / "online_bookstore_medium_s1.json")
    good = {pid: marked(src, pid) for pid, src in deterministic_templates(spec, tmp_path).items()}
    script.replies = ByPage(script, STYLE, good)  # type: ignore[assignment]
    out = tmp_path / "site"
    result = run(make(concurrency=4), code_site, spec, out, concurrency=4)
    assert result.ok and result.repaired == {} and len(script.requests) == 1 + len(spec.pages)
    assert result.llm_pages == [p.id for p in spec.pages]
    assert check_site(out, spec) >= len(spec.pages)


def described_views(prompt: str) -> dict[str, set[str]]:
    """The context section of a page prompt, read back: view name -> the fields it lists."""
    section = prompt.split("# The context every page template gets", 1)[1].split("\n# ", 1)[0]
    views: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in section.splitlines():
        if head := re.match(r"([A-Z][A-Za-z]+): ", line):
            current = views.setdefault(head.group(1), set())
        elif (item := re.match(r"  - (\w+): ", line)) and current is not None:
            current.add(item.group(1))
    return views


def test_the_page_prompt_names_every_field_of_the_context(tmp_path: Path) -> None:
    spec = make_small_world()
    site = load_site(render_site(spec, tmp_path / "site"))
    machine = Machine(spec)
    samples = sample_states(spec, machine)["results"]
    prompt = page_messages(site, machine, samples, "results", None, f"/w/{spec.id}")[1]["content"]
    expected = {view.__name__: set(view.model_fields) for view in context_views()}
    assert {"PageContext", "ElementView", "OptionView", "Regions"} <= set(expected)
    assert described_views(prompt) == expected
    assert "navigates: bool: " in prompt and "columns: list[str]: " in prompt


def test_page_template_reply_is_size_capped() -> None:
    with pytest.raises(ValueError):
        PageTemplate(template="x" * 30_000)


# --- what a template may not do, found before it is rendered ------------------------------

HEAD = '{% extends "layout.html" %}\n{% import "widgets.html" as w %}\n'


@pytest.mark.parametrize("body, problem", [
    ("{% block main %}{% for i in range(5) %}x{% endfor %}{% endblock %}", "range() is not allowed"),
    ("{% block main %}{{ 'a' * 9 }}{% endblock %}", "the operator * at line 3"),
    ("{% block main %}{{ 2 ** 9 }}{% endblock %}", "the operator **"),
    ("{% block main %}{{ site.name|center(99999) }}{% endblock %}", "the number 99999"),
    ('{% block main %}{% include "layout.html" %}{% endblock %}', "{% include %} at line 3"),
    ('{% block main %}{% import "pages/home.html" as h %}{% endblock %}', "only widgets.html"),
    ("{% block head %}x{% endblock %}", "no {% block main %}"),
    ("<p>{{ page.title }}</p>{% block main %}{% endblock %}", "outside {% block main %}"),
    ("{% block main %}{% for a in content recursive %}{{ loop(a.entries) }}{% endfor %}"
     "{% endblock %}", "recursive loop"),
    ("{% macro f(x) %}{{ g(x) }}{% endmacro %}{% macro g(x) %}{{ f(x) }}{% endmacro %}"
     "{% block main %}{{ f(1) }}{% endblock %}", "calls itself"),
    ("{% block main %}" + "{% for a in content %}" * 6 + "x" + "{% endfor %}" * 6
     + "{% endblock %}", "nested 6 deep"),
])
def test_lint_rejects_what_could_hang_or_escape_the_page(body: str, problem: str) -> None:
    env = jinja2.sandbox.SandboxedEnvironment()
    found = lint_template(HEAD + body, env)
    assert any(problem in p for p in found), found
    assert lint_template(HEAD + "{% block main %}{{ page.title }}{% endblock %}", env) == []
    assert "must start with" in lint_template("{% block main %}{% endblock %}", env)[0]


# --- a spent budget stops the coder cleanly -------------------------------------------------


def test_spent_budget_falls_back_and_says_so(llm, tmp_path: Path) -> None:
    script, make = llm
    spec = make_small_world()
    good = deterministic_templates(spec, tmp_path)
    script.push(STYLE, *(template(marked(good[p.id], p.id)) for p in spec.pages))
    out = tmp_path / "site"
    # every scripted reply counts 150 tokens: the style guide and one page fit
    result = run(make(budget_tokens=300), code_site, spec, out, concurrency=1)
    assert len(script.requests) == 2
    assert result.llm_pages == ["home"] and set(result.fallbacks) == {"results", "cart", "done"}
    assert result.stopped and "budget" in result.stopped
    assert any(p.startswith("stopped asking the model") for p in result.problems)
    assert check_site(out, spec) >= 4
