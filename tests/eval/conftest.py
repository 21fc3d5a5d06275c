"""Worlds for the eval tests: the widget lab of tests/rl and two held-out worlds (one of an
archetype kept out of training, one re-rendered in another look), made once per session."""

from __future__ import annotations

import pytest

from tests.rl.conftest import Built, lab, shared  # noqa: F401  (lab is a fixture)
from webworld.eval.heldout import materialise

HELDOUT_SAMPLE = ["pet_adoption_easy_s9001", "flight_booking_easy_s9005_look_midnight"]


@pytest.fixture(scope="session")
def heldout(tmp_path_factory: pytest.TempPathFactory):
    """A folder with specs/, sites/ and trajectories/ of the HELDOUT_SAMPLE worlds."""
    return shared(tmp_path_factory, "heldout", lambda root: materialise(root / "h", HELDOUT_SAMPLE)) / "h"
