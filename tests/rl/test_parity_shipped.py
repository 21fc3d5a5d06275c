"""Slow: the fast env against the live env on every shipped world (fsm_specs/), on every
trajectory `webworld build` would verify there, and on random actions.

    scripts/test.sh -m slow tests/rl/test_parity_shipped.py     # ~40 min on 2 cores
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.rl.conftest import SHIPPED, Built, build, shared
from tests.rl.test_fast_env import parity
from webworld.explore.candidates import ExploreConfig
from webworld.spec.io import load_spec

# what `webworld build` keeps per world by default
BUILD = ExploreConfig(max_instances=3, max_shortest=2, max_longer=1)


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("spec_path", sorted(SHIPPED.glob("*.json")), ids=lambda p: p.stem)
def test_fast_env_equals_live_env_on_a_shipped_world(tmp_path_factory, spec_path: Path) -> None:
    spec = load_spec(spec_path)
    root = shared(tmp_path_factory, f"shipped-{spec.id}", lambda r: build(r, spec, BUILD))
    parity(Built(root, spec), random_episodes=20)
