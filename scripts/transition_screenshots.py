"""One world as a site that loads a page per action and as one that updates in place: the
live env plays the same verified path on both and saves the screenshot after each step; the
two must be identical pixel for pixel wherever the state is the same.

    .venv/bin/python scripts/transition_screenshots.py    # docs/screenshots/transition-*.png

Prints, per step, the action and whether the two frames are identical (exit status 1 if one
is not); saves the middle step of both.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]

from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
from webworld.render.site import render_site
from webworld.rl.live import LiveEnv
from webworld.rl.tasks import load_worlds
from webworld.spec.io import load_spec
from webworld.verify.runner import verify_worlds

WORLD = "flight_booking_easy_s0"


def frames(root: Path, transition: str) -> tuple[list[str], list[np.ndarray]]:
    spec = load_spec(ROOT / "fsm_specs" / f"{WORLD}.json").model_copy(
        update={"transition": transition})
    render_site(spec, root / "sites" / spec.id)
    write_candidates(explore_world(spec, ExploreConfig(max_instances=1, max_shortest=1,
                                                       max_longer=0)), root / "trajectories" / spec.id)
    verify_worlds([root / "sites" / spec.id], root / "trajectories", workers=1)
    env = LiveEnv(load_worlds(root / "sites", root / "trajectories"), split=None,
                  screenshot=True)
    try:
        inst = max((i for i in env.sampler.instances if i.oracle), key=lambda i: len(i.oracle[0]))
        obs, _ = env.reset(seed=0, options={"task": inst, "intent": inst.intents[0]})
        shots = [obs["screenshot"]]
        for action in inst.oracle[0]:
            shots.append(env.step(action)[0]["screenshot"])
        return ["reset", *inst.oracle[0]], shots
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        actions, navigate = frames(Path(tmp) / "navigate", "navigate")
        _, swap = frames(Path(tmp) / "swap", "swap")
    same = [np.array_equal(a, b) for a, b in zip(navigate, swap)]
    for action, equal in zip(actions, same):
        print(f"{action:40s} identical: {equal}")
    middle = len(actions) // 2
    for name, shots in (("navigate", navigate), ("swap", swap)):
        Image.fromarray(shots[middle]).save(args.out / f"transition-{name}.png", optimize=True)
    print(f"{sum(same)}/{len(same)} frames identical; step {middle} ({actions[middle]}) saved to "
          f"{args.out}/transition-navigate.png and transition-swap.png")
    if not all(same):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
