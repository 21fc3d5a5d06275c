"""The trainer tests' fixtures: the environment tests' worlds (built once per session), and
one torch thread."""

from collections.abc import Iterator

import pytest
import torch

from tests.rl.conftest import flight, lab  # noqa: F401 (pytest fixtures)


@pytest.fixture(autouse=True, scope="module")
def one_thread() -> Iterator[None]:
    """A tiny model's matrices are too small to share: extra threads only wait on each other,
    many times slower on a busy machine (CI runs two test workers on two cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
