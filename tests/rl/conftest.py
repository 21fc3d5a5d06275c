"""Worlds for the environment tests: rendered, explored, verified in Chromium and captured
for the fast env, once per test session (shared by the xdist workers through a lock)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

from tests.rl.widgets import make_widget_world
from webworld.eval.heldout import Materialised
from webworld.explore.candidates import ExploreConfig, explore_world, write_candidates
from webworld.render.site import load_site, render_site
from webworld.rl.fast.capture import build_snapshot
from webworld.rl.tasks import WorldSet, load_worlds
from webworld.spec.io import load_spec
from webworld.spec.models import WorldSpec
from webworld.verify.runner import verify_worlds

SHIPPED = Path(__file__).resolve().parents[2] / "fsm_specs"


@dataclass
class Built(Materialised):
    """A world ready for the environments: ``sites/<id>/`` and ``trajectories/<id>/``."""

    spec: WorldSpec

    @property
    def site_dir(self) -> Path:
        return self.sites / self.spec.id

    def worlds(self) -> WorldSet:
        return load_worlds(self.sites, self.trajectories)


def build(root: Path, spec: WorldSpec, config: ExploreConfig, *, snapshot: bool = True) -> None:
    render_site(spec, root / "sites" / spec.id)
    write_candidates(explore_world(spec, config), root / "trajectories" / spec.id)
    stats = verify_worlds([root / "sites" / spec.id], root / "trajectories", workers=2)
    assert stats[0].failed == 0, stats[0].failures
    if snapshot:
        build_snapshot(load_site(root / "sites" / spec.id))


def shared(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder made once per test session, whichever xdist worker asks first."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by the workers of this session
    root = base / f"rl-{name}"
    with FileLock(str(root) + ".lock"):
        if not (root / ".done").exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            make(root)
            (root / ".done").touch()
    return root


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The widget lab (tests/rl/widgets.py): every client-side behaviour on one page."""
    spec = make_widget_world()
    config = ExploreConfig(max_instances=2, max_shortest=1, max_longer=1)
    return Built(shared(tmp_path_factory, "lab", lambda root: build(root, spec, config)), spec)


@pytest.fixture(scope="session")
def lab_swap(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The widget lab on a site that updates in place (``transition: swap``)."""
    spec = make_widget_world().model_copy(update={"transition": "swap"})
    config = ExploreConfig(max_instances=2, max_shortest=1, max_longer=1)
    return Built(shared(tmp_path_factory, "lab-swap", lambda root: build(root, spec, config)), spec)


@pytest.fixture(scope="session")
def flight(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A shipped world (fsm_specs/): hover menu, calendar, tabs, modal, radios."""
    spec = load_spec(SHIPPED / "flight_booking_easy_s0.json")
    config = ExploreConfig(max_instances=1, max_shortest=1, max_longer=0)
    return Built(shared(tmp_path_factory, "flight", lambda root: build(root, spec, config)), spec)


@pytest.fixture(scope="session")
def flight_swap(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The shipped flight world on a site that updates in place."""
    spec = load_spec(SHIPPED / "flight_booking_easy_s0.json").model_copy(
        update={"transition": "swap"})
    config = ExploreConfig(max_instances=1, max_shortest=1, max_longer=0)
    # only the live env plays it: no fast-env snapshot (about a minute of Chromium)
    return Built(shared(tmp_path_factory, "flight-swap",
                        lambda root: build(root, spec, config, snapshot=False)), spec)
