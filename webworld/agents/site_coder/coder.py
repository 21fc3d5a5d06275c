"""The site coder's orchestration: ask for the style guide, then every page template
concurrently (bounded), check each and send the problems back, build the site in a staging
directory and swap it in; :func:`repair_pages` does the same for verifier failures."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from webworld.agents.client import BudgetExceeded, LLMClient, LLMError
from webworld.agents.site_coder.evaluate import MAX_PROBLEM_LINES, Evaluator, format_problems
from webworld.agents.site_coder.prompts import page_messages, repair_message, style_messages
from webworld.agents.site_coder.samples import sample_states
from webworld.agents.site_coder.style import StyleGuide, nearest_theme, style_css
from webworld.fsio import atomic_write_text, dumps_json, replace_dir
from webworld.render import assets
from webworld.render.site import SiteError, load_site, page_template, render_site
from webworld.render.themes import THEMES, choose_theme
from webworld.spec.models import WorldSpec
from webworld.spec.semantics import Machine

STAGE = "render"
CODER_GENERATOR = "webworld.agents.site_coder/1"
MAX_TEMPLATE_CHARS = 24_000


class PageTemplate(BaseModel):
    """One Jinja2 page template: reply of stage 2 (and of every repair round)."""

    template: str = Field(min_length=1, max_length=MAX_TEMPLATE_CHARS,
                          description="the complete Jinja2 source of the page template")


# --- result ------------------------------------------------------------------------------


@dataclass
class CoderResult:
    site_dir: Path
    theme: str
    """The built-in theme the site's CSS starts from (the manifest's ``theme``)."""
    style: StyleGuide | None = None
    llm_pages: list[str] = field(default_factory=list)
    """Pages whose final template is the LLM's."""
    repaired: dict[str, int] = field(default_factory=dict)
    """LLM pages that needed repair: page -> repair rounds used."""
    fallbacks: dict[str, list[str]] = field(default_factory=dict)
    """Pages that fell back to the deterministic template: page -> last problems."""
    problems: list[str] = field(default_factory=list)
    """Everything left to know: fallbacks, a rejected style guide, a spent budget."""
    stopped: str | None = None
    """Why the coder stopped asking the model early (e.g. the budget is spent)."""

    @property
    def ok(self) -> bool:
        return not self.fallbacks and not self.problems

    def report_lines(self) -> list[str]:
        """A short human report (one line each) for the CLI."""
        look = (f"style guide {self.style.label or 'untitled'!r} ({self.style.mode}, "
                f"{self.style.density}) on" if self.style else "built-in look")
        lines = [f"{self.site_dir}: {look} theme {self.theme!r}; {len(self.llm_pages)} "
                 f"page(s) written by the LLM, {len(self.fallbacks)} fell back"]
        if self.repaired:
            lines.append("repaired: " + ", ".join(f"{p} ({n} round{'s' if n > 1 else ''})"
                                                  for p, n in self.repaired.items()))
        lines += self.problems
        return lines


@dataclass
class _Run:
    client: LLMClient
    evaluator: Evaluator
    max_rounds: int
    result: CoderResult
    stopped: str | None = None
    final: dict[str, str] = field(default_factory=dict)
    """page id -> accepted LLM template source."""

    async def ask(self, messages: list[dict[str, str]]) -> str | None:
        if self.stopped:
            return None
        try:
            reply = await self.client.structured(STAGE, messages, PageTemplate)
        except BudgetExceeded as exc:
            self.stopped = self.stopped or str(exc)
            return None
        return reply.template

    async def settle(self, page_id: str, messages: list[dict[str, str]],
                     previous: str | None = None) -> None:
        """Ask for the page's template, check it, send problems back until it passes or
        the rounds are spent; record the outcome."""
        evaluator = self.evaluator
        legend = evaluator.legend(page_id)
        initial = list(messages)
        problems: list[str] = []
        for round_ in range(self.max_rounds + 1):
            try:
                source = await self.ask(messages)
            except LLMError as exc:
                problems = [f"no usable reply: {exc}"]
                break
            if source is None:
                problems = problems or [f"not written: {self.stopped}"]
                break
            problems = evaluator.problems(page_id, source)
            if previous is not None and source.strip() == previous.strip():
                problems = ["the template is unchanged, but the failures above came from it",
                            *problems]
            if not problems:
                self.final[page_id] = source
                if round_:
                    self.result.repaired[page_id] = round_
                return
            messages = [*initial,
                        {"role": "assistant", "content": json.dumps({"template": source})},
                        {"role": "user", "content": repair_message(
                            problems, legend, round_ + 1, self.max_rounds)}]
        self.result.fallbacks[page_id] = problems
        self.result.problems.append(
            f"page {page_id!r}: fell back to the deterministic template ({problems[0]}"
            f"{f' and {len(problems) - 1} more problem(s)' if len(problems) > 1 else ''})")


async def _style_guide(client: LLMClient, spec: WorldSpec, base_theme: str | None,
                       result: CoderResult) -> StyleGuide | None:
    try:
        return await client.structured(STAGE, style_messages(spec, base_theme), StyleGuide)
    except LLMError as exc:
        result.problems.append(f"style guide: no valid reply, the built-in theme is used ({exc})")
    except BudgetExceeded as exc:
        result.stopped = str(exc)
        result.problems.append(f"style guide: not written ({exc})")
    return None


def _check_theme(name: str | None) -> None:
    if name is not None and name not in THEMES:
        raise SiteError(f"unknown theme {name!r} (choose from {', '.join(sorted(THEMES))})")


async def code_site(client: LLMClient, spec: WorldSpec, out_dir: Path, *, max_rounds: int = 3,
                    base_theme: str | None = None, concurrency: int = 4,
                    max_states: int = 2000) -> CoderResult:
    """Write the site of ``spec`` at ``out_dir`` with LLM-written CSS and page templates.

    The site is built in a staging directory next to ``out_dir`` and swapped in only when
    complete, so a failure leaves the previous site as it was. Every page of the result
    passes the contract checks in the sample states: the LLM's template, or the
    deterministic renderer's where the LLM's could not be repaired.
    ``BudgetExceeded`` does not escape: the coder stops asking, falls back where needed
    and says so in ``result.stopped``. ``LLMError`` for one page only affects that page.
    """
    _check_theme(base_theme)
    out_dir = Path(out_dir)
    result = CoderResult(site_dir=out_dir, theme=base_theme or choose_theme(spec))
    style = await _style_guide(client, spec, base_theme, result)
    base = THEMES[base_theme] if base_theme else (nearest_theme(style) if style else
                                                  THEMES[result.theme])
    result.theme, result.style = base.name, style

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}.",
                                    suffix=".coder"))
    try:
        site_dir = render_site(spec, staging / "site", theme=base.name)
        if style is not None:
            theme, css = style_css(base, style)
            atomic_write_text(site_dir / "static" / "theme.css", css)
            atomic_write_text(site_dir / "static" / "favicon.svg", assets.favicon_svg(spec, theme))
        site = load_site(site_dir)
        machine = Machine(spec)
        evaluator = Evaluator(site, machine, sample_states(spec, machine, max_states=max_states))
        run = _Run(client, evaluator, max_rounds, result, stopped=result.stopped)
        limit = asyncio.Semaphore(max(1, concurrency))

        async def one(page_id: str) -> None:
            async with limit:
                messages = page_messages(site, machine, evaluator.samples[page_id], page_id,
                                         style, evaluator.base)
                await run.settle(page_id, messages)

        await asyncio.gather(*(one(p.id) for p in spec.pages))
        for page_id, source in run.final.items():
            atomic_write_text(site_dir / "templates" / site.manifest["pages"][page_id], source)
        result.llm_pages = [p.id for p in spec.pages if p.id in run.final]
        result.stopped = run.stopped
        if run.stopped:
            result.problems.append(f"stopped asking the model: {run.stopped}")
        _write_manifest(site_dir, result)
        replace_dir(site_dir, out_dir)  # the previous site, if any, goes with the staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return result


async def repair_pages(client: LLMClient, site_dir: Path,
                       verification_failures: dict[str, list[str]], *, max_rounds: int = 3,
                       concurrency: int = 4, max_states: int = 2000) -> CoderResult:
    """Send verifier failures (page id -> messages) back to the coder for those pages.

    A page whose new template passes the contract checks is rewritten (the caller
    verifies again); a page the model cannot fix falls back to the deterministic
    template. Pages not written by the LLM are left alone and reported.
    """
    site = load_site(Path(site_dir))
    spec, machine = site.spec, Machine(site.spec)
    coder = site.manifest.get("coder") or {}
    style = None
    if coder.get("style_guide"):
        style = StyleGuide.model_validate(coder["style_guide"])
    result = CoderResult(site_dir=site.root, theme=site.theme.name, style=style)
    llm_pages = set(coder.get("llm_pages") or [])
    evaluator = Evaluator(site, machine, sample_states(spec, machine, max_states=max_states))
    run = _Run(client, evaluator, max_rounds, result)
    limit = asyncio.Semaphore(max(1, concurrency))
    pages = {p.id for p in spec.pages}

    async def one(page_id: str, failures: list[str]) -> None:
        rel = site.manifest["pages"][page_id]
        current = (site.root / "templates" / rel).read_text(encoding="utf-8")
        fallback = page_template(site.plan.pages[page_id], home=page_id == spec.home)
        if page_id not in llm_pages or current == fallback:
            result.problems.append(f"page {page_id!r}: not written by the LLM coder, so not "
                                   f"repaired ({len(failures)} verifier failure(s))")
            return
        async with limit:
            messages = page_messages(site, machine, evaluator.samples[page_id], page_id,
                                     style, evaluator.base)
            checks = evaluator.problems(page_id, current)
            text = ("The site was driven in a real browser and these checks failed on this "
                    "page:\n" + "\n".join(f"- {f}" for f in failures[:MAX_PROBLEM_LINES]))
            if checks:
                text += "\n\nThe contract checks also report:\n" + format_problems(
                    checks, evaluator.legend(page_id))
            text += ('\n\nFix the template and reply with the complete corrected template as '
                     'JSON: {"template": "..."}.')
            messages += [{"role": "assistant", "content": json.dumps({"template": current})},
                         {"role": "user", "content": text}]
            await run.settle(page_id, messages, previous=current)
        if page_id in run.final:
            result.repaired[page_id] = result.repaired.get(page_id, 0) + 1

    unknown = sorted(set(verification_failures) - pages)
    for page_id in unknown:
        result.problems.append(f"page {page_id!r}: the spec has no such page")
    await asyncio.gather(*(one(p, f) for p, f in verification_failures.items() if p in pages))
    for page_id in verification_failures:
        if page_id in run.final:
            source = run.final[page_id]
        elif page_id in result.fallbacks:
            source = page_template(site.plan.pages[page_id], home=page_id == spec.home)
            llm_pages.discard(page_id)
        else:
            continue
        atomic_write_text(site.root / "templates" / site.manifest["pages"][page_id], source)
    result.llm_pages = [p.id for p in spec.pages if p.id in llm_pages]
    result.stopped = run.stopped
    if run.stopped:
        result.problems.append(f"stopped asking the model: {run.stopped}")
    _write_manifest(site.root, result)
    return result


def _write_manifest(site_dir: Path, result: CoderResult) -> None:
    path = site_dir / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["generator"] = CODER_GENERATOR
    manifest["coder"] = {
        "llm_pages": result.llm_pages,
        "fallback_pages": sorted(set(result.fallbacks) | set(
            (manifest.get("coder") or {}).get("fallback_pages", [])) - set(result.llm_pages)),
        "style_guide": result.style.model_dump() if result.style else None,
    }
    atomic_write_text(path, dumps_json(manifest))


