"""A page of an offline world, pictured: the held-out pet shelter's details page of one pet,
served on loopback and captured in Chromium at 1280x800. Run it with a version's code on the
path to picture that version's page text:

    .venv/bin/python scripts/page_text_screenshots.py --out docs/screenshots/page-text-after.png
    PYTHONPATH=OLD_CHECKOUT .venv/bin/python scripts/page_text_screenshots.py \\
        --out docs/screenshots/page-text-before.png    # webworld from the old checkout

(``docs/screenshots/page-text-before.png`` was made with the code before page text came from
the archetype; ``page-text-after.png`` with the code after.)
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from webworld.explore.candidates import ExploreConfig, explore_world
    from webworld.propose.procedural import generate
    from webworld.render.site import render_site
    from webworld.verify.gestures import gestures

    spec = generate("pet adoption", "easy", 9001).spec
    explored = explore_world(spec, ExploreConfig(max_instances=1, max_shortest=1, max_longer=0))
    with tempfile.TemporaryDirectory() as tmp:
        site = render_site(spec, Path(tmp) / spec.id)
        # a path to the first details page: the gestures of a candidate, up to that page
        candidate = next(c for c in explored.candidates
                         if any(s["expected"]["page"] == "detail" for s in c["steps"]))
        asyncio.run(capture_until_detail(site, spec, candidate, gestures, args.out))
    print(f"wrote {args.out}")


async def capture_until_detail(site: Path, spec, candidate, gestures, out: Path) -> None:  # type: ignore[no-untyped-def]
    from playwright.async_api import async_playwright

    from webworld.browser.launch import launch_browser, new_context
    from webworld.contract import WORLD_PREFIX
    from webworld.serve.multi import create_multi_app
    from webworld.serve.runner import LiveServer

    with LiveServer(create_multi_app([site])) as server:
        async with async_playwright() as pw:
            browser = await launch_browser(pw)
            page = await (await new_context(browser)).new_page()
            await page.goto(server.url + WORLD_PREFIX.format(world=site.name) + "/")
            for step in candidate["steps"]:
                for gui in step["gui"]:
                    for g in gestures(spec, step["page"], gui):
                        target = page.locator(g.selector)
                        if g.action == "fill":
                            await target.fill(g.arg or "")
                        elif g.action == "press":
                            await target.press(g.arg or "Enter")
                        elif g.action == "hover":
                            await target.hover()
                        else:
                            await target.click()
                        await page.wait_for_load_state("load")
                await page.wait_for_function(
                    "() => !document.documentElement.hasAttribute('data-ww-busy')")
                if step["expected"]["page"] == "detail":
                    out.write_bytes(await page.screenshot())
                    await browser.close()
                    return
            await browser.close()


if __name__ == "__main__":
    main()
