"""Splits by world: disjoint, deterministic, sized by the fractions, filled in order."""

from __future__ import annotations

import pytest

from webworld.data.splits import assign_splits, split_counts, world_order
from webworld.errors import UsageError

WORLDS = [f"world_{i:02d}" for i in range(20)]


def test_sizes_and_disjoint() -> None:
    splits, note = assign_splits(WORLDS, (0.8, 0.1, 0.1), seed=0)
    assert note is None
    assert {k: len(v) for k, v in splits.items()} == {"train": 16, "validation": 2, "test": 2}
    everything = [w for ws in splits.values() for w in ws]
    assert sorted(everything) == WORLDS  # each world exactly once


def test_deterministic_and_seeded() -> None:
    assert assign_splits(WORLDS, seed=3) == assign_splits(list(reversed(WORLDS)), seed=3)
    assert assign_splits(WORLDS, seed=3)[0]["test"] != assign_splits(WORLDS, seed=4)[0]["test"]


def test_order_of_a_world_does_not_depend_on_the_others() -> None:
    full = world_order(WORLDS, 7)
    assert world_order(WORLDS[:11], 7) == [w for w in full if w in WORLDS[:11]]


@pytest.mark.parametrize("n, expected", [
    (1, {"train": 1, "validation": 0, "test": 0}),
    (2, {"train": 1, "validation": 0, "test": 1}),
    (3, {"train": 1, "validation": 1, "test": 1}),
    (4, {"train": 2, "validation": 1, "test": 1}),
    (10, {"train": 8, "validation": 1, "test": 1}),
])
def test_small_counts(n: int, expected: dict[str, int]) -> None:
    counts, note = split_counts(n, (0.8, 0.1, 0.1))
    assert counts == expected
    assert (note is not None) == (n < 3)


def test_fill_note_names_the_empty_split() -> None:
    _, note = split_counts(2, (0.8, 0.1, 0.1))
    assert note is not None and "filled train, then test" in note and "validation is empty" in note


def test_zero_fraction_split_stays_empty() -> None:
    counts, note = split_counts(5, (0.9, 0.1, 0.0))
    assert counts["test"] == 0 and counts["validation"] == 1 and note is None


@pytest.mark.parametrize("bad", [(0.5, 0.5), (0.8, 0.1, 0.2), (-0.1, 0.6, 0.5), (0.0, 0.5, 0.5)])
def test_bad_fractions(bad) -> None:
    with pytest.raises(UsageError):
        assign_splits(WORLDS, bad)
