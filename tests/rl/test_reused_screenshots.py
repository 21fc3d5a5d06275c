"""A verify run captures each distinct page once (webworld.browser.capture.ScreenshotCache):
every screenshot it reuses must show what a fresh capture shows, on a site that loads a page
per action and on one that updates in place.

"What it shows" allows Chromium's raster noise: the same page painted after a different
history can differ by a few levels in a few antialiased edge pixels (measured: 4 pixels of a
rounded button border, off by 1; under the full suite's load, 25 pixels of one line of text,
off by up to 4). A page shown from a wrong key differs in text or widgets: hundreds of
pixels, by far more."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.rl.conftest import Built
from webworld.browser.capture import ScreenshotCache
from webworld.verify import runner
from webworld.verify.replay import ReplayConfig


def _verify(built: Built, out: Path, reuse: bool, monkeypatch: pytest.MonkeyPatch,
            first: int | None) -> tuple[dict[str, bytes], list[ScreenshotCache]]:
    """Verify a copy of ``built``'s ``first`` candidates (all: None) into ``out``: every
    step's PNG by its path, and the run's screenshot cache (if it had one)."""
    made: list[ScreenshotCache] = []
    make = runner.screenshot_cache

    def cache(config: ReplayConfig) -> ScreenshotCache | None:
        found = make(config)
        made.extend([found] if found else [])
        return found
    world = out / built.spec.id
    world.mkdir(parents=True)
    lines = (built.trajectories / built.spec.id / "candidates.jsonl").read_text().splitlines()
    (world / "candidates.jsonl").write_text("".join(f"{line}\n" for line in lines[:first]))
    with monkeypatch.context() as patch:
        patch.setattr(runner, "screenshot_cache", cache)
        stats = runner.verify_worlds([built.site_dir], out, workers=2,
                                     config=ReplayConfig(reuse_screenshots=reuse))
    assert stats[0].failed == 0, stats[0].failures
    return {str(p.relative_to(world)): p.read_bytes() for p in world.rglob("*.png")}, made


def _difference(a: bytes, b: bytes) -> str | None:
    """None for raster noise (at most 0.01% of the pixels differ, none by more than 8 levels
    in a channel); else what differs: how many pixels, by how much, where (x0, y0, x1, y1)."""
    if a == b:
        return None
    with Image.open(io.BytesIO(a)) as x, Image.open(io.BytesIO(b)) as y:
        diff = np.abs(np.asarray(x.convert("RGB"), int) - np.asarray(y.convert("RGB"), int)).max(axis=2)
    changed = np.nonzero(diff)
    if diff.max() <= 8 and len(changed[0]) <= diff.size // 10_000:
        return None
    box = (changed[1].min(), changed[0].min(), changed[1].max(), changed[0].max())
    return f"{len(changed[0])} pixels, up to {diff.max()} levels, in {tuple(map(int, box))}"


# the swap lab has every widget and both ways of reading a page (after a load, and after a
# swap in settle): its first 12 candidates in the default run, all with -m slow, and the
# shipped flight world on a navigate site too
@pytest.mark.parametrize(("name", "first"), [
    ("lab_swap", 12), pytest.param("lab_swap", None, marks=pytest.mark.slow),
    pytest.param("flight", None, marks=pytest.mark.slow)])
def test_a_reused_screenshot_shows_what_a_capture_shows(name: str, first: int | None,
                                                       tmp_path: Path,
                                                       request: pytest.FixtureRequest,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    built: Built = request.getfixturevalue(name)
    captured, none = _verify(built, tmp_path / "captured", False, monkeypatch, first)
    reused, (cache,) = _verify(built, tmp_path / "reused", True, monkeypatch, first)
    assert none == [] and cache.hits > 0  # the run did skip captures ...
    assert sorted(reused) == sorted(captured)
    differing = {path: _difference(reused[path], captured[path]) for path in captured}
    differing = {path: what for path, what in differing.items() if what}
    assert differing == {}, differing     # ... and every step shows what it would have
    assert cache.hits + cache.misses == len(captured)
